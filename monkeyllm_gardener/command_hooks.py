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
- the tool runs in its own session (process group) from a fresh temp directory.

Bounded work, because a tool fed a hostile file can misbehave:

- time: at ``command_timeout`` the tool's whole descendant tree is killed;
- output: stdout is streamed to an unnamed temp file, never held in a pipe buffer
  or in memory, and past ``command_output_limit_mb`` (default 64, in MiB) the tool
  is killed and that file fails with a one-line error naming the cap and the
  setting; a ``{output}`` file over the cap is refused the same way, from its size,
  before it is read. stderr keeps only its last few KiB. The converted markdown is
  therefore never larger than the cap;
- ``{output}`` is read only when it is a regular file of its own: a symbolic link
  (it could point at ``~/.ssh``), a hard link, a FIFO or a directory there is
  refused (lstat first, then opened with O_NOFOLLOW and checked again);
- the descendant tree: a child that calls ``setsid()`` leaves the process group,
  so the group kill alone misses it. Every run exports a random token in the
  tool's environment (``MONKEYLLM_HOOK_RUN``), which children inherit through
  fork, setsid and exec; on timeout, on the output cap and after a normal exit,
  every process whose ``/proc/<pid>/environ`` carries the token is killed, round
  after round until none is left (the token is checked again after a pidfd is
  taken, and the signal goes through it, so a reused pid is never hit). This is
  Linux-only; elsewhere only the process group is killed. A descendant that execs
  with a scrubbed environment escapes it; the tool is the user's own, and a
  subreaper or a cgroup would reach into the whole Gardener process or need
  privileges.

The tool writes markdown to ``{output}`` or prints it to stdout and exits zero.
A first line ``# Title`` becomes the node title; the body is kept intact.
"""
from __future__ import annotations

import os
import re
import secrets
import selectors
import shlex
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from pathlib import Path
from typing import BinaryIO

from monkeyllm_gardener.conversion import Conversion, ConversionError
from monkeyllm_gardener.extensions import normalize_extension
from monkeyllm_gardener.host.spec import DEFAULT_OUTPUT_LIMIT_MB

CONFIG_HINT = "fix converters in _meta/gardener.yaml"
_PLACEHOLDER = re.compile(r"\{(input|output)\}")
_STDERR_TAIL_LINES = 2
_STDERR_TAIL_CHARS = 300
# After the SIGKILLs, how long to wait for the tool itself to be reaped.
_REAP_SECONDS = 5.0
OUTPUT_LIMIT_SETTING = "command_output_limit_mb in _meta/gardener.yaml"
RUN_TOKEN_ENV = "MONKEYLLM_HOOK_RUN"
_CHUNK_BYTES = 64 * 1024
_STDERR_KEEP_BYTES = 8 * 1024  # the report shows 300 characters of it
_POLL_SECONDS = 0.1
_KILL_ROUNDS = 50  # each round kills what the last one's forks left; a fork bomb still ends


class CommandTemplateError(ValueError):
    """A command hook's template in _meta/gardener.yaml cannot be used."""


def checked_extension(extension: str) -> str:
    """``normalize_extension(extension)`` (``"PDF"``, ``"pdf"`` and ``".pdf"`` all mean
    ``".pdf"``), refused when it is not an extension at all."""
    text = normalize_extension(extension)
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

    def __init__(
        self, extension: str, template: str, timeout: float = 120.0,
        output_limit_mb: float = DEFAULT_OUTPUT_LIMIT_MB,
    ) -> None:
        self.extension = checked_extension(extension)
        self.template = template
        self.argv = parse_template(self.extension, template)
        if not timeout or timeout <= 0:
            raise CommandTemplateError(
                f"command hook for {self.extension}: timeout must be positive, got {timeout!r}"
            )
        if not output_limit_mb or output_limit_mb <= 0:
            raise CommandTemplateError(
                f"command hook for {self.extension}: output limit must be positive, got "
                f"{output_limit_mb!r} (fix {OUTPUT_LIMIT_SETTING})"
            )
        self.timeout = float(timeout)
        self.output_limit_mb = output_limit_mb
        self.output_limit = int(output_limit_mb * 1024 * 1024)
        self.name = f"command hook for {self.extension}"
        self.extensions = (self.extension,)
        self.tool = os.path.basename(self.argv[0]) or self.argv[0]

    def __repr__(self) -> str:
        return (f"CommandConverter({self.extension!r}, {self.template!r}, {self.timeout!r}, "
                f"{self.output_limit_mb!r})")

    def _key(self) -> tuple[str, str, float, float]:
        return (self.extension, self.template, self.timeout, self.output_limit_mb)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CommandConverter) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def convert(self, path: Path) -> Conversion:
        source = Path(path)
        # Absolute: a name like "-rf" or "--help.pdf" can never look like an option.
        input_path = os.path.abspath(source)
        workdir = tempfile.mkdtemp(prefix="monkeyllm-command-")
        try:
            # stdout lands in an unnamed file outside the tool's directory, so the
            # tool can neither see it nor swap it for a link.
            with tempfile.TemporaryFile(prefix="monkeyllm-stdout-") as stdout_sink:
                output_path = os.path.join(workdir, "output.md")
                argv = substitute(self.argv, input_path, output_path)
                stderr, status = self._run(argv, workdir, source.name, stdout_sink)
                if status != 0:
                    how = f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
                    raise ConversionError(f"{self.tool} {how} on {source.name}: {_stderr_tail(stderr)}")
                raw = self._read_output_file(output_path, source.name)
                if not raw:
                    stdout_sink.seek(0)
                    raw = stdout_sink.read(self.output_limit + 1)
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

    def _start(self, argv: list[str], workdir: str, token: str) -> subprocess.Popen[bytes]:
        try:
            return subprocess.Popen(
                argv,
                shell=False,
                cwd=workdir,
                env={**os.environ, RUN_TOKEN_ENV: token},
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

    def _run(self, argv: list[str], workdir: str, filename: str, stdout_sink: BinaryIO) -> tuple[bytes, int]:
        """Run the tool to the end; return (stderr tail, exit status).

        Whatever happens (exit, timeout, output cap, Ctrl-C), no process of the
        tool's tree is left running afterwards.
        """
        token = secrets.token_hex(16)
        process = self._start(argv, workdir, token)
        try:
            stderr, outcome = _pump(process, stdout_sink, token, self.timeout, self.output_limit)
        finally:
            _kill_tree(process, token)
        if outcome == "timeout":
            raise ConversionError(f"{self.tool} timed out after {self.timeout:g}s on {filename}")
        if outcome == "too_big":
            raise ConversionError(
                f"{self.tool} printed more than {self.output_limit_mb:g} MB on {filename}: "
                f"it was stopped; raise {OUTPUT_LIMIT_SETTING} if such output is expected"
            )
        return stderr, process.returncode

    def _read_output_file(self, output_path: str, filename: str) -> bytes:
        """The bytes the tool wrote to ``{output}``; b"" when it wrote none there."""
        try:
            info = os.lstat(output_path)
        except FileNotFoundError:
            return b""  # the tool printed to stdout instead
        self._check_output_file(info, filename)
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            descriptor = os.open(output_path, flags)
        except OSError as exc:  # swapped for a link since the lstat: O_NOFOLLOW refuses it
            raise ConversionError(
                f"{self.tool} left an {{output}} that cannot be opened safely for {filename}: "
                f"{exc.strerror or exc}; the tool must write a regular file"
            ) from None
        with os.fdopen(descriptor, "rb") as handle:
            self._check_output_file(os.fstat(handle.fileno()), filename)
            data = handle.read(self.output_limit + 1)
        if len(data) > self.output_limit:  # it grew after the check
            raise self._output_file_too_big(filename)
        return data

    def _check_output_file(self, info: os.stat_result, filename: str) -> None:
        if stat.S_ISLNK(info.st_mode):
            problem = "a symbolic link"
        elif not stat.S_ISREG(info.st_mode):
            problem = "not a regular file"
        elif info.st_nlink > 1:
            problem = "a hard link to another file"
        else:
            if info.st_size > self.output_limit:
                raise self._output_file_too_big(filename)
            return
        raise ConversionError(
            f"{self.tool} left {{output}} as {problem} for {filename}: refused, it could point "
            "anywhere; the tool must write a regular file"
        )

    def _output_file_too_big(self, filename: str) -> ConversionError:
        return ConversionError(
            f"{self.tool} wrote more than {self.output_limit_mb:g} MB to {{output}} for {filename}: "
            f"refused unread; raise {OUTPUT_LIMIT_SETTING} if such output is expected"
        )

    def _decode(self, raw: bytes, filename: str) -> str:
        try:
            return raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ConversionError(
                f"{self.tool} wrote output that is not UTF-8 for {filename} "
                f"(invalid byte at offset {exc.start}): make the tool emit UTF-8"
            ) from None


# --- running the tool -----------------------------------------------------------


def _pump(
    process: subprocess.Popen[bytes], stdout_sink: BinaryIO, token: str, timeout: float, limit: int,
) -> tuple[bytes, str]:
    """Copy the tool's stdout to ``stdout_sink`` until both pipes close.

    Returns (the tail of stderr, outcome): "exited", "timeout", or "too_big" when
    stdout passed ``limit`` bytes. Nothing is held in memory beyond one chunk and
    the stderr tail.
    """
    deadline = time.monotonic() + timeout
    assert process.stdout is not None and process.stderr is not None
    stdout_fd, stderr_fd = process.stdout.fileno(), process.stderr.fileno()
    stderr_tail = bytearray()
    written = 0
    with selectors.DefaultSelector() as selector:
        selector.register(stdout_fd, selectors.EVENT_READ)
        selector.register(stderr_fd, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return bytes(stderr_tail), "timeout"
            if not selector.get_map():  # both pipes closed: the tool is exiting, or closed them and runs on
                if _has_exited(process):
                    return bytes(stderr_tail), "exited"
                time.sleep(min(remaining, 0.005))
                continue
            for key, _ in selector.select(min(remaining, _POLL_SECONDS)):
                chunk = os.read(key.fd, _CHUNK_BYTES)
                if not chunk:
                    selector.unregister(key.fd)
                elif key.fd == stdout_fd:
                    written += len(chunk)
                    if written > limit:
                        return bytes(stderr_tail), "too_big"
                    stdout_sink.write(chunk)
                else:
                    stderr_tail += chunk
                    del stderr_tail[:-_STDERR_KEEP_BYTES]
            if selector.get_map() and _has_exited(process):
                # The tool is done but something it started still holds the pipes.
                _kill_leftovers(process, token)


def _has_exited(process: subprocess.Popen[bytes]) -> bool:
    """True once the tool exited, without reaping it: its pid stays ours until _kill_tree."""
    try:
        return os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except (AttributeError, ChildProcessError):  # no waitid on this platform
        return process.poll() is not None


def _kill_tree(process: subprocess.Popen[bytes], token: str) -> None:
    """SIGKILL the tool's session and every process carrying its run token, then reap it.

    The leader is not reaped before the group kill (still a zombie at worst), so
    its pid, which is also the group id, cannot have been reused.
    """
    _kill_leftovers(process, token)
    try:
        process.wait(timeout=_REAP_SECONDS)
    except subprocess.TimeoutExpired:
        pass
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def _kill_leftovers(process: subprocess.Popen[bytes], token: str) -> None:
    """SIGKILL the tool's process group, then whatever left it but kept the token."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    _kill_marked(token)


def _kill_marked(token: str) -> None:
    """SIGKILL every process whose environment carries this run's token (Linux /proc)."""
    marker = f"{RUN_TOKEN_ENV}={token}".encode()
    for _ in range(_KILL_ROUNDS):
        killed = [pid for pid in _pids() if _kill_if_marked(pid, marker)]
        if not killed:
            return
        time.sleep(0.01)  # let the killed die before the next scan finds their children


def _pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit() and int(name) != os.getpid()]
    except OSError:  # no /proc: only the process group kill applies
        return []


def _kill_if_marked(pid: int, marker: bytes) -> bool:
    """Kill ``pid`` if its environment holds ``marker``; True when a signal was sent.

    Where pidfds exist, one is taken after the first match and the environment read
    again through the same pid, so a pid reused in between is never signalled.
    """
    if not _carries(pid, marker):
        return False
    try:
        pidfd = os.pidfd_open(pid) if hasattr(os, "pidfd_open") else None
    except OSError:  # gone already
        return False
    try:
        if pidfd is None:
            os.kill(pid, signal.SIGKILL)
            return True
        if not _carries(pid, marker):
            return False
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        return True
    except OSError:  # exited meanwhile, or not ours to kill
        return False
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _carries(pid: int, marker: bytes) -> bool:
    """True when process ``pid`` was started with ``marker`` in its environment."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return marker in handle.read().split(b"\0")  # a zombie's environ reads empty
    except OSError:  # gone, or another user's
        return False
