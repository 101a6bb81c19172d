"""Command hooks found in review: a real tool in a subprocess, hostile output."""
from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

from monkeyllm_gardener.command_hooks import CommandConverter


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
