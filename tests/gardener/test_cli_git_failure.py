"""A git failure is an expected error: one line, exit 2, no traceback, forest as before."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any


def test_a_repository_git_cannot_write_gives_one_line_and_changes_nothing(vine_cli: Any, tmp_path: Path) -> None:
    forest = vine_cli.init(tmp_path / "forest", title="T")
    source = tmp_path / "export" / "notes"
    source.mkdir(parents=True)
    (source / "a.md").write_text("# A\n\nA note about the plan for March 2026.\n")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=forest, capture_output=True, text=True).stdout
    # git's pack folder cannot be written (it is a file), while git still reads
    # HEAD's objects through an alternate object store
    objects = forest / ".git" / "objects"
    aside = tmp_path / "objects-aside"
    shutil.copytree(objects, aside)
    (objects / "info").mkdir(exist_ok=True)
    (objects / "info" / "alternates").write_text(f"{aside}\n")
    shutil.rmtree(objects / "pack")
    (objects / "pack").write_text("not a folder")
    result = vine_cli("adopt", tmp_path / "export", "--forest", forest)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and result.stderr.startswith("error: ")
    assert not (forest / "notes").exists()  # the failed branch plant was rolled back
    (objects / "pack").unlink()
    shutil.copytree(aside / "pack", objects / "pack")
    (objects / "info" / "alternates").unlink()
    assert subprocess.run(["git", "rev-parse", "HEAD"], cwd=forest, capture_output=True, text=True).stdout == head
    assert subprocess.run(["git", "status", "--porcelain"], cwd=forest, capture_output=True, text=True).stdout == ""
