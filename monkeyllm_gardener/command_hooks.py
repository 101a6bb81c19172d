"""Command hooks: an external tool named in ``_meta/gardener.yaml`` converts one extension.

    converters:
      ".pdf": '"/opt/tools/pdf2md" "{input}" "{output}"'

Safety rules, because the file name is attacker-controlled text:

- the template is split ONCE, with ``shlex.split``, when the config is loaded; per
  file, ``{input}`` and ``{output}`` are substituted inside the argv items, in one
  pass (a file named ``{output}.pdf`` stays literal) and never re-split;
- no shell ever runs (``shell=False``), so ``;``, ``$( )`` or backticks in a name
  are just characters;
- the input path is passed absolute, so a file named ``-rf`` or ``--help.pdf``
  cannot be read as an option;
- the tool runs in its own session (process group) from a fresh temp directory;
  on timeout the whole group is killed, so a tool's children cannot outlive it.

The tool writes markdown to ``{output}`` or prints it to stdout and exits zero.
A first line ``# Title`` becomes the node title; the body is kept intact.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from monkeyllm_gardener.conversion import Conversion, ConversionError

CONFIG_HINT = "fix converters in _meta/gardener.yaml"
_PLACEHOLDER = re.compile(r"\{(input|output)\}")
_STDERR_TAIL_LINES = 2
_STDERR_TAIL_CHARS = 300
# After SIGKILL to the group, how long to wait for the pipes to close.
_REAP_SECONDS = 5.0


class CommandTemplateError(ValueError):
    """A command hook's template in _meta/gardener.yaml cannot be used."""


def normalize_extension(extension: str) -> str:
    """``"PDF"``, ``"pdf"`` and ``".pdf"`` all mean ``".pdf"``; anything else is refused."""
    text = str(extension).strip().lower()
    if text and not text.startswith("."):
        text = "." + text
    if len(text) < 2 or any(ch in text for ch in "/\\ \t\n\r\0") or ".." in text:
        raise CommandTemplateError(
            f"command hook extension {extension!r} is not an extension like '.pdf' ({CONFIG_HINT})"
        )
    return text


def parse_template(extension: str, template: str) -> tuple[str, ...]:
    """Split the template into argv once; it must name a tool and use ``{input}``."""
    if not isinstance(template, str) or not template.strip():
        raise CommandTemplateError(f"command hook for {extension}: empty command ({CONFIG_HINT})")
    try:
        argv = tuple(shlex.split(template))
    except ValueError as exc:
        raise CommandTemplateError(
            f"command hook for {extension}: cannot parse command ({exc}; {CONFIG_HINT})"
        ) from None
    if not argv:
        raise CommandTemplateError(f"command hook for {extension}: empty command ({CONFIG_HINT})")
    if _PLACEHOLDER.search(argv[0]):
        raise CommandTemplateError(
            f"command hook for {extension}: the tool itself cannot be a placeholder ({CONFIG_HINT})"
        )
    if not any("{input}" in item for item in argv[1:]):
        raise CommandTemplateError(
            f"command hook for {extension}: the command never passes {{input}} ({CONFIG_HINT})"
        )
    return argv


def substitute(argv: tuple[str, ...], input_path: str, output_path: str) -> list[str]:
    """Fill the placeholders inside each argv item, one pass, no re-splitting."""
    values = {"input": input_path, "output": output_path}
    return [_PLACEHOLDER.sub(lambda match: values[match.group(1)], item) for item in argv]


def title_from_markdown(markdown: str) -> str | None:
    """A first line ``# Title`` (after leading blank lines) is the title."""
    for line in markdown.splitlines():
        if not line.strip():
            continue
        # Parsed by hand, not with one "#\s+(.+?)\s*#*\s*$" pattern: that backtracks
        # in cubic time on a long run of spaces and hung on a 5 KB title line.
        if not re.match(r"#\s", line):
            return None
        text = line[1:].strip()
        bare = text.rstrip("#")
        if bare != text and bare[-1:].isspace():
            text = bare.strip()
        return text or None
    return None


def _stderr_tail(stderr: bytes) -> str:
    text = stderr.decode("utf-8", errors="replace")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    tail = " | ".join(lines[-_STDERR_TAIL_LINES:])
    if len(tail) > _STDERR_TAIL_CHARS:
        tail = "..." + tail[-_STDERR_TAIL_CHARS:]
    return tail or "no stderr"


class CommandConverter:
    """Converts files of one extension by running an external tool (see module doc)."""

    def __init__(self, extension: str, template: str, timeout: float = 120.0) -> None:
        self.extension = normalize_extension(extension)
        self.template = template
        self.argv = parse_template(self.extension, template)
        if not timeout or timeout <= 0:
            raise CommandTemplateError(
                f"command hook for {self.extension}: timeout must be positive, got {timeout!r}"
            )
        self.timeout = float(timeout)
        self.name = f"command hook for {self.extension}"
        self.extensions = (self.extension,)
        self.tool = os.path.basename(self.argv[0]) or self.argv[0]

    def __repr__(self) -> str:
        return f"CommandConverter({self.extension!r}, {self.template!r}, {self.timeout!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CommandConverter) and (
            (self.extension, self.template, self.timeout)
            == (other.extension, other.template, other.timeout)
        )

    def __hash__(self) -> int:
        return hash((self.extension, self.template, self.timeout))

    def convert(self, path: Path) -> Conversion:
        source = Path(path)
        # Absolute: a name like "-rf" or "--help.pdf" can never look like an option.
        input_path = os.path.abspath(source)
        workdir = tempfile.mkdtemp(prefix="monkeyllm-command-")
        try:
            output_path = os.path.join(workdir, "output.md")
            argv = substitute(self.argv, input_path, output_path)
            stdout, stderr, status = self._run(argv, workdir, source.name)
            if status != 0:
                how = f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
                raise ConversionError(f"{self.tool} {how} on {source.name}: {_stderr_tail(stderr)}")
            raw = _read_output(output_path) or stdout
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        markdown = self._decode(raw, source.name)
        if not markdown.strip():
            raise ConversionError(f"{self.tool} produced no output for {source.name}")
        return Conversion(
            kind="markdown",
            node_type="document",
            title=title_from_markdown(markdown),
            markdown=markdown,
        )

    def _run(self, argv: list[str], workdir: str, filename: str) -> tuple[bytes, bytes, int]:
        try:
            process = subprocess.Popen(
                argv,
                shell=False,
                cwd=workdir,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise ConversionError(
                f"command hook for {self.extension}: tool not found: {self.argv[0]} "
                f"(install it or {CONFIG_HINT})"
            ) from None
        except PermissionError:
            raise ConversionError(
                f"command hook for {self.extension}: tool is not executable: {self.argv[0]} "
                f"(chmod +x it or {CONFIG_HINT})"
            ) from None
        except OSError as exc:
            raise ConversionError(
                f"command hook for {self.extension}: cannot run {self.argv[0]}: "
                f"{exc.strerror or exc} ({CONFIG_HINT})"
            ) from None
        try:
            stdout, stderr = process.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            raise ConversionError(
                f"{self.tool} timed out after {self.timeout:g}s on {filename}"
            ) from None
        except BaseException:
            # Ctrl-C while the tool runs: never leave its process group behind.
            _kill_group(process)
            raise
        return stdout, stderr, process.returncode

    def _decode(self, raw: bytes, filename: str) -> str:
        try:
            return raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ConversionError(
                f"{self.tool} wrote output that is not UTF-8 for {filename} "
                f"(invalid byte at offset {exc.start}): make the tool emit UTF-8"
            ) from None


def _read_output(output_path: str) -> bytes:
    try:
        with open(output_path, "rb") as handle:
            return handle.read()
    except OSError:
        # Missing (the tool printed to stdout instead) or not a regular file.
        return b""


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the tool's whole session, then reap it.

    The leader is not reaped yet (still a zombie at worst), so its pid, which is
    also the group id, cannot have been reused by an unrelated process.
    """
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.communicate(timeout=_REAP_SECONDS)
    except subprocess.TimeoutExpired:
        # A grandchild that left the group still holds our pipes: stop waiting for it.
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
        process.wait()
