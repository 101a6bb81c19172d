"""Command hooks do bounded work: real tools (small Python scripts) in real
subprocesses, the real ``vine`` CLI for what a user sees in the report."""
from __future__ import annotations

import os
import re
import sys
import textwrap
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import yaml

from monkeyllm_gardener.command_hooks import DEFAULT_OUTPUT_LIMIT_MB, CommandConverter
from monkeyllm_gardener.config import ConfigError, GardenerConfig
from monkeyllm_gardener.conversion import ConversionError

from _command_tools import TOOL_NAME, make_tool, source_file, template_for  # tests/gardener is on sys.path
from processes import wait_gone

SETTING = "command_output_limit_mb in _meta/gardener.yaml"
linux_only = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="the tree kill reads /proc")


def conversion_error(converter: CommandConverter, source: Path) -> str:
    with pytest.raises(ConversionError) as caught:
        converter.convert(source)
    message = str(caught.value)
    assert "\n" not in message
    return message


# --- output caps -------------------------------------------------------------------

ENDLESS_PRINTER = """
    with open(sys.argv[3], "w") as handle:
        handle.write(str(os.getpid()))
    chunk = b"x" * (1 << 20)
    while True:  # a gigabyte and beyond: only the cap stops it
        sys.stdout.buffer.write(chunk)
"""


def test_a_tool_printing_without_end_is_stopped_at_the_cap(tmp_path: Path) -> None:
    pid_file = tmp_path / "printer.pid"
    tool = make_tool(tmp_path, "printer", ENDLESS_PRINTER)
    converter = CommandConverter(".pdf", template_for(tool, str(pid_file)), 30, output_limit_mb=2)
    tracemalloc.start()
    try:
        message = conversion_error(converter, source_file(tmp_path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert message == (
        f"{Path(sys.executable).name} printed more than 2 MB on contract.pdf: it was stopped; "
        f"raise {SETTING} if such output is expected"
    )
    assert peak < 1 << 20  # streamed to disk in chunks, never held
    assert wait_gone(int(pid_file.read_text()), seconds=5.0)


def test_output_file_over_the_cap_is_refused_unread(tmp_path: Path) -> None:
    tool = make_tool(tmp_path, "big_file", """
        with open(sys.argv[2], "wb") as out:
            out.write(b"# Huge\\n" + b"y" * (3 << 20))
    """)
    converter = CommandConverter(".pdf", template_for(tool), 30, output_limit_mb=2)
    message = conversion_error(converter, source_file(tmp_path))
    assert re.fullmatch(
        rf"{TOOL_NAME} wrote more than 2 MB to \{{output\}} for contract\.pdf: refused unread; "
        rf"raise {re.escape(SETTING)} if such output is expected",
        message,
    )


def test_output_just_under_the_cap_converts(tmp_path: Path) -> None:
    tool = make_tool(tmp_path, "near_cap", """
        sys.stdout.write("# Near the cap\\n\\n" + "z" * ((1 << 20) - 100) + "\\n")
    """)
    conversion = CommandConverter(".pdf", template_for(tool), 30, output_limit_mb=1).convert(source_file(tmp_path))
    assert conversion.title == "Near the cap"
    assert len(conversion.markdown) == (1 << 20) - 100 + len("# Near the cap\n\n\n")


def test_a_stderr_flood_keeps_only_its_tail(tmp_path: Path) -> None:
    tool = make_tool(tmp_path, "noisy", """
        for _ in range(20000):
            sys.stderr.write("warning: glyph table damaged " + "." * 1000 + "\\n")
        sys.stderr.write("error: no text layer\\n")
        sys.exit(4)
    """)
    message = conversion_error(CommandConverter(".pdf", template_for(tool), 30), source_file(tmp_path))
    assert message.startswith(f"{Path(sys.executable).name} exited with status 4 on contract.pdf: ")
    assert message.endswith("error: no text layer")
    assert len(message) < 500


def test_the_default_cap_is_64_mb() -> None:
    assert DEFAULT_OUTPUT_LIMIT_MB == 64
    assert CommandConverter(".pdf", "/opt/pdf2md {input}", 30).output_limit == 64 * 1024 * 1024


def test_a_cap_that_is_not_positive_is_refused_at_load() -> None:
    with pytest.raises(Exception, match=r"output limit must be positive, got 0 \(fix command_output_limit_mb"):
        CommandConverter(".pdf", "/opt/pdf2md {input}", 30, output_limit_mb=0)


# --- what {output} may be -------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "make", "problem"),
    [
        ("symlink", 'os.symlink(sys.argv[3], sys.argv[2])', "a symbolic link"),
        ("hardlink", 'os.link(sys.argv[3], sys.argv[2])', "a hard link to another file"),
        ("fifo", 'os.mkfifo(sys.argv[2])', "not a regular file"),
        ("directory", 'os.mkdir(sys.argv[2])', "not a regular file"),
    ],
)
def test_an_output_that_is_not_a_regular_file_of_its_own_is_refused(
    tmp_path: Path, kind: str, make: str, problem: str
) -> None:
    secret = tmp_path / "home" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY----- top secret\n", encoding="utf-8")
    tool = make_tool(tmp_path, f"plant_{kind}", make + "\n")
    converter = CommandConverter(".pdf", template_for(tool, str(secret)), 30)
    message = conversion_error(converter, source_file(tmp_path))
    assert message == (
        f"{Path(sys.executable).name} left {{output}} as {problem} for contract.pdf: refused, "
        "it could point anywhere; the tool must write a regular file"
    )
    assert "secret" not in message


# --- the whole descendant tree ---------------------------------------------------------

SETSID_GRANDCHILD = """
    # fork, setsid in the child, fork again: the grandchild is in no group of ours.
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            if sys.argv[4] == "detach":
                devnull = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(devnull, fd)
            with open(sys.argv[3] + ".tmp", "w") as handle:
                handle.write(str(os.getpid()))
            os.rename(sys.argv[3] + ".tmp", sys.argv[3])
            time.sleep(60)
        os._exit(0)
    while not os.path.exists(sys.argv[3]):
        time.sleep(0.01)
    if sys.argv[5] == "hang":
        time.sleep(60)
    print("# Converted\\n\\nThe tool is done; its grandchild is not.")
"""


@linux_only
def test_a_setsid_grandchild_dies_with_the_timeout(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    tool = make_tool(tmp_path, "daemonizer", SETSID_GRANDCHILD)
    converter = CommandConverter(".pdf", template_for(tool, str(pid_file), "keep-pipes", "hang"), 1.5)
    message = conversion_error(converter, source_file(tmp_path))
    assert re.fullmatch(rf"{TOOL_NAME} timed out after 1\.5s on contract\.pdf", message)
    grandchild = int(pid_file.read_text())
    assert os.getpgid(os.getpid()) != grandchild  # it really had left our groups
    assert wait_gone(grandchild, seconds=5.0)


@linux_only
@pytest.mark.parametrize("pipes", ["keep-pipes", "detach"])
def test_a_setsid_grandchild_dies_after_a_normal_exit(tmp_path: Path, pipes: str) -> None:
    # keep-pipes: the grandchild still holds stdout, which used to block until the timeout.
    pid_file = tmp_path / "grandchild.pid"
    tool = make_tool(tmp_path, "daemonizer", SETSID_GRANDCHILD)
    converter = CommandConverter(".pdf", template_for(tool, str(pid_file), pipes, "exit"), 30)
    conversion = converter.convert(source_file(tmp_path))
    assert conversion.title == "Converted"
    assert wait_gone(int(pid_file.read_text()), seconds=1.0)


# --- settings and the real CLI --------------------------------------------------------


def write_config(forest: Path, config: dict[str, Any]) -> None:
    (forest / "_meta/gardener.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


@pytest.mark.parametrize("value", [0, -5, "lots", True, float("inf")])
@pytest.mark.parametrize(("key", "unit", "default"), [
    ("command_output_limit_mb", "MB", 64), ("command_timeout", "seconds", 120)])
def test_a_bad_hook_bound_setting_is_a_clear_config_error(
    tmp_path: Path, value: Any, key: str, unit: str, default: int
) -> None:
    (tmp_path / "_meta").mkdir()
    write_config(tmp_path, {key: value})
    with pytest.raises(ConfigError) as caught:
        GardenerConfig.load(tmp_path)
    assert caught.value.message == f"_meta/gardener.yaml: {key} must be a positive number of {unit}, got {value!r}"
    assert caught.value.hint == f"e.g. {key}: {default} (the default)"


def test_the_output_limit_setting_is_read_in_mb(tmp_path: Path) -> None:
    (tmp_path / "_meta").mkdir()
    assert GardenerConfig.load(tmp_path).command_output_limit_mb == DEFAULT_OUTPUT_LIMIT_MB
    write_config(tmp_path, {"command_output_limit_mb": 8.5})
    assert GardenerConfig.load(tmp_path).command_output_limit_mb == 8.5


def test_a_200_mb_printer_fails_its_file_and_plants_nothing_that_size(vine_cli: Any, cli: Any, forest: Path,
                                                                      tmp_path: Path) -> None:
    tool = cli.write(tmp_path / "tools/flood.py", textwrap.dedent("""
        import sys
        if sys.argv[1].endswith("big.pdf"):
            chunk = b"# Flood\\n" + b"w" * (1 << 20)
            for _ in range(200):
                sys.stdout.buffer.write(chunk)
        else:
            print("# Small report\\n\\nRevenue grew in March 2026.")
    """))
    write_config(forest, {"converters": {".pdf": f'"{sys.executable}" "{tool}" "{{input}}"'}})
    source = tmp_path / "export"
    cli.write(source / "big.pdf", b"%PDF-1.4 fake")
    cli.write(source / "small.pdf", b"%PDF-1.4 fake")
    report = vine_cli.adopt(source, forest, expect=1).json()
    assert [cli.node(forest, node)["source_path"] for node in report["planted"]] == ["small.pdf"]
    [error] = report["errors"]
    assert "big.pdf" in error
    assert f"printed more than {DEFAULT_OUTPUT_LIMIT_MB} MB on big.pdf" in error
    assert SETTING in error
    largest = max(path.stat().st_size for path in forest.rglob("*") if path.is_file() and ".git" not in path.parts)
    assert largest < 1 << 20
    vine_cli.assert_consistent(forest)


def test_the_output_limit_setting_reaches_the_hooks_of_an_adopt(vine_cli: Any, cli: Any, forest: Path,
                                                                 tmp_path: Path) -> None:
    tool = cli.write(tmp_path / "tools/three_mb.py", textwrap.dedent("""
        import sys
        sys.stdout.buffer.write(b"# Report\\n" + b"w" * (3 << 20))
    """))
    write_config(forest, {"converters": {".pdf": f'"{sys.executable}" "{tool}" "{{input}}"'},
                          "command_output_limit_mb": 2})
    source = tmp_path / "export"
    cli.write(source / "report.pdf", b"%PDF-1.4 fake")
    report = vine_cli.adopt(source, forest, expect=1).json()
    [error] = report["errors"]
    assert "printed more than 2 MB on report.pdf" in error and SETTING in error
    # raising the setting retries the file at once, though the file did not change
    config = yaml.safe_load((forest / "_meta/gardener.yaml").read_text(encoding="utf-8"))
    write_config(forest, {**config, "command_output_limit_mb": 8})  # adopt recorded its source there
    result = vine_cli("sync", "--forest", forest, "--json")
    assert result.returncode == 0, result.describe()
    report = result.json()
    assert report["planted"] == ["report"] and report["errors"] == []
