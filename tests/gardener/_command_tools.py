"""Command-hook tools made under tmp_path for the command hook tests: a Python script
(``make_tool``), the template that runs it on ``{input}`` and ``{output}``
(``template_for``) and a source file for it to convert (``source_file``)."""
from __future__ import annotations

import re
import shlex
import sys
import textwrap
from pathlib import Path

# How errors name a tool run by this interpreter (argv[0] of every template), as a regex.
TOOL_NAME = re.escape(Path(sys.executable).name)


def make_tool(tmp_path: Path, name: str, body: str) -> Path:
    tool = tmp_path / "tools" / f"{name}.py"
    tool.parent.mkdir(exist_ok=True)
    tool.write_text("import sys, os, time, subprocess\n" + textwrap.dedent(body), encoding="utf-8")
    return tool


def template_for(tool: Path, *extra: str) -> str:
    parts = [shlex.quote(sys.executable), shlex.quote(str(tool)), '"{input}"', '"{output}"']
    return " ".join(parts + [shlex.quote(item) for item in extra])


def source_file(tmp_path: Path, name: str = "contract.pdf", content: bytes = b"%PDF-1.4 fake") -> Path:
    folder = tmp_path / "source"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_bytes(content)
    return path
