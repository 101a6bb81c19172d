"""Command hooks run real tools: small Python scripts under tmp_path, started with
the test's own interpreter, never through a shell."""
from __future__ import annotations

import json
import os
import re
import shlex
import sys
import time
from pathlib import Path

import pytest

from monkeyllm_gardener.command_hooks import CommandConverter, CommandTemplateError
from monkeyllm_gardener.conversion import ConversionError
from monkeyllm_gardener.host import PluginHost

from _command_tools import TOOL_NAME, make_tool, source_file, template_for  # tests/gardener is on sys.path
from processes import wait_gone

ECHO_ARGV_TOOL = """
    # Writes the argv it received as JSON, so the test sees exactly what arrived.
    with open(sys.argv[2], "w", encoding="utf-8") as out:
        out.write("# Received\\n\\n" + __import__("json").dumps(sys.argv[1:]))
"""


def test_tool_output_file_becomes_a_document_with_its_title(tmp_path: Path) -> None:
    tool = make_tool(tmp_path, "pdf2md", """
        data = open(sys.argv[1], "rb").read()
        with open(sys.argv[2], "w", encoding="utf-8") as out:
            out.write("# Master Agreement\\n\\nSigned in 2026. Bytes: %d\\n" % len(data))
    """)
    converter = CommandConverter(".pdf", template_for(tool), 30)
    conversion = converter.convert(source_file(tmp_path))
    assert conversion.kind == "markdown"
    assert conversion.node_type == "document"
    assert conversion.title == "Master Agreement"
    # The body is kept intact, heading included.
    assert conversion.markdown.startswith("# Master Agreement\n")
    assert "Bytes: 13" in conversion.markdown


def test_stdout_is_used_when_the_tool_writes_no_output_file(tmp_path: Path) -> None:
    tool = make_tool(tmp_path, "to_stdout", """
        print("Plain text from stdout, no heading.")
    """)
    conversion = CommandConverter(".pdf", template_for(tool), 30).convert(source_file(tmp_path))
    assert conversion.markdown.strip() == "Plain text from stdout, no heading."
    assert conversion.title is None


@pytest.mark.parametrize(
    "hostile_name",
    [
        "a; cd ~; touch PWNED.pdf",
        "$(cd ~; touch PWNED2).pdf",
        "`cd ~; touch PWNED3`.pdf",
        "-rf.pdf",
        "--help.pdf",
        "{output}.pdf",
        "it's \"quoted\" & <odd>.pdf",
    ],
)
def test_hostile_file_names_reach_the_tool_literally_and_run_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hostile_name: str
) -> None:
    # A shell would expand ~ to this HOME: any injected `touch` would land here
    # (a file name cannot hold a slash, hence the `cd ~`).
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    tool = make_tool(tmp_path, "echo_argv", ECHO_ARGV_TOOL)
    source = source_file(tmp_path, hostile_name)

    conversion = CommandConverter(".pdf", template_for(tool), 30).convert(source)

    received = json.loads(conversion.markdown.split("\n\n", 1)[1])
    assert received[0] == os.path.abspath(source)  # one argv item, absolute, untouched
    assert len(received) == 2
    assert received[1].endswith("output.md")
    assert not list(tmp_path.rglob("PWNED*"))
    assert not list(Path.cwd().glob("PWNED*"))


def test_non_zero_exit_carries_the_tools_stderr(tmp_path: Path) -> None:
    tool = make_tool(tmp_path, "pdf2md", """
        sys.stderr.write("reading xref table\\nerror: bad xref at offset 42\\n")
        sys.exit(3)
    """)
    with pytest.raises(ConversionError) as caught:
        CommandConverter(".pdf", template_for(tool), 30).convert(source_file(tmp_path))
    message = str(caught.value)
    assert re.match(rf"^{TOOL_NAME} exited with status 3 on contract\.pdf: ", message)
    assert "error: bad xref at offset 42" in message
    assert "\n" not in message


def test_tool_that_prints_nothing_fails_with_no_output(tmp_path: Path) -> None:
    tool = make_tool(tmp_path, "silent", """
        open(sys.argv[2], "w").close()  # an empty output file and empty stdout
    """)
    with pytest.raises(ConversionError, match=rf"^{TOOL_NAME} produced no output for contract\.pdf$"):
        CommandConverter(".pdf", template_for(tool), 30).convert(source_file(tmp_path))


def test_missing_tool_names_the_tool_and_the_fix(tmp_path: Path) -> None:
    missing = tmp_path / "opt" / "pdf2md"
    converter = CommandConverter(".pdf", f'"{missing}" "{{input}}" "{{output}}"', 30)
    with pytest.raises(ConversionError) as caught:
        converter.convert(source_file(tmp_path))
    assert str(caught.value) == (
        f"command hook for .pdf: tool not found: {missing} "
        "(install it or fix converters in _meta/gardener.yaml)"
    )


def test_hanging_tool_is_killed_at_the_timeout(tmp_path: Path) -> None:
    tool = make_tool(tmp_path, "hang", "time.sleep(60)\n")
    converter = CommandConverter(".pdf", template_for(tool), 0.5)
    started = time.monotonic()
    with pytest.raises(ConversionError, match=rf"^{TOOL_NAME} timed out after 0\.5s on contract\.pdf$"):
        converter.convert(source_file(tmp_path))
    assert time.monotonic() - started < 10


def test_timeout_kills_the_tools_children_too(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    tool = make_tool(tmp_path, "spawner", """
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        with open(sys.argv[3], "w") as handle:
            handle.write(str(child.pid))
        time.sleep(60)
    """)
    converter = CommandConverter(".pdf", template_for(tool, str(pid_file)), 1.0)
    with pytest.raises(ConversionError, match="timed out after 1s"):
        converter.convert(source_file(tmp_path))
    assert wait_gone(int(pid_file.read_text()), seconds=5.0)


def test_output_that_is_not_utf8_is_a_clear_error(tmp_path: Path) -> None:
    tool = make_tool(tmp_path, "latin", """
        with open(sys.argv[2], "wb") as out:
            out.write("# Caf\\u00e9\\n".encode("latin-1"))
    """)
    with pytest.raises(ConversionError, match=rf"^{TOOL_NAME} wrote output that is not UTF-8 for contract\.pdf"):
        CommandConverter(".pdf", template_for(tool), 30).convert(source_file(tmp_path))


@pytest.mark.parametrize(
    ("extension", "template", "problem"),
    [
        (".pdf", '"/opt/pdf2md "{input}"', "cannot parse command"),
        (".pdf", "/opt/pdf2md --stdin", "never passes {input}"),
        (".pdf", "   ", "empty command"),
        (".pdf", '"{input}" "{output}"', "tool itself cannot be a placeholder"),
        ("../pdf", "/opt/pdf2md {input}", "is not an extension"),
    ],
)
def test_unusable_templates_are_refused_at_load(extension: str, template: str, problem: str) -> None:
    with pytest.raises(CommandTemplateError, match=problem):
        CommandConverter(extension, template, 30)


def test_extension_keys_are_normalized() -> None:
    assert CommandConverter("PDF", "/opt/pdf2md {input}", 30).extensions == (".pdf",)


def test_a_bad_template_is_a_load_error_not_a_crash(tmp_path: Path) -> None:
    tool = make_tool(tmp_path, "pdf2md", 'print("# Doc")\n')
    host = PluginHost(
        command_converters={".pdf": template_for(tool), ".rtf": '"/opt/rtf2md "{input}"'},
        load_entry_points=False,
        builtins=(),
    )
    assert [c.name for c in host.claimants(".pdf")] == ["command hook for .pdf"]
    assert host.claimants(".rtf") == []
    [problem] = host.load_errors
    assert problem.plugin == "_meta/gardener.yaml"
    assert "cannot parse command" in problem.error


def test_tool_printing_a_title_with_a_long_run_of_spaces_converts_quickly(tmp_path: Path) -> None:
    tool = tmp_path / "pdf2md.py"
    tool.write_text(
        "import sys\n"
        "sys.stdout.write('# Annual' + ' ' * 20000 + 'report\\n\\nRevenue grew in March 2026.\\n')\n",
        encoding="utf-8",
    )
    source = tmp_path / "report.pdf"
    source.write_bytes(b"%PDF-1.4 fake")
    template = f"{shlex.quote(sys.executable)} {shlex.quote(str(tool))} {{input}}"
    started = time.monotonic()
    conversion = CommandConverter(".pdf", template, timeout=30).convert(source)
    assert time.monotonic() - started < 10
    assert conversion.title is not None
    assert conversion.title.split() == ["Annual", "report"]
    assert "Revenue grew in March 2026." in conversion.markdown
