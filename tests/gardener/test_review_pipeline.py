"""Defects found in review of the pipeline, through the real `vine` CLI: a refused
--dest must not be recorded, one bad passport must not abort a sync, and a source
whose conversion changes kind must not leave a stale payload posing as current."""
from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml


def _git(forest: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=forest, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _passport(forest: Path, node_id: str) -> dict[str, Any]:
    text = (forest / f"{node_id}.md").read_text(encoding="utf-8")
    return yaml.safe_load(text[4:text.index("\n---\n", 4)])


def _notes(source: Path, count: int = 3) -> Path:
    source.mkdir()
    for i in range(1, count + 1):
        (source / f"n{i}.md").write_text(f"# Note {i}\n\nThe fact number {i}.\n", encoding="utf-8")
    return source


@pytest.mark.parametrize("dest", ["../x", "a//b", "_meta", ".git", "_derived/x", "a/_index"])
def test_refused_dest_is_not_recorded_and_sync_and_adopt_still_work(vine: Any, forest: Path, tmp_path: Path,
                                                                     dest: str) -> None:
    source = _notes(tmp_path / "src")
    refused = vine("adopt", source, "--forest", forest, "--dest", dest)
    assert refused.returncode == 2, refused.describe()
    assert refused.stderr.startswith("error"), refused.describe()
    assert not (forest / "_meta" / "gardener.yaml").exists() or "src" not in (
        forest / "_meta" / "gardener.yaml").read_text(encoding="utf-8")
    vine.adopt(source, forest, "--dest", "docs")
    vine.sync(forest)
    vine.assert_consistent(forest)


def test_a_bad_passport_of_a_vanished_file_does_not_abort_the_sync(vine: Any, forest: Path, tmp_path: Path) -> None:
    source = _notes(tmp_path / "src")
    vine.adopt(source, forest)
    path = forest / "n1.md"
    text = path.read_text(encoding="utf-8")
    long_summary = "x" * 300
    lines = [f"summary: {long_summary}" if line.startswith("summary:") else line for line in text.split("\n")]
    path.write_text("\n".join(lines), encoding="utf-8")
    _git(forest, "-c", "user.name=me", "-c", "user.email=me@example.com", "commit", "-qam", "hand edit")
    (source / "n1.md").unlink()
    (source / "n2.md").write_text("# Note 2\n\nA changed fact.\n", encoding="utf-8")
    (source / "n4.md").write_text("# Note 4\n\nA new fact.\n", encoding="utf-8")
    result = vine.sync(forest, expect=1)
    report = result.json()
    assert report["planted"] == ["n4"] and report["updated"] == ["n2"]
    assert any(line.startswith("n1") and "summary" in line for line in report["errors"]), report
    assert _git(forest, "status", "--porcelain") == ""


def test_dataset_source_that_stops_being_a_table_keeps_its_payload_and_says_so(vine: Any, forest: Path,
                                                                               tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "d.json").write_text('[{"a": 1, "b": 2}, {"a": 3, "b": 4}]', encoding="utf-8")
    vine.adopt(source, forest)
    before = _passport(forest, "d")
    db_before = (forest / "d.db").read_bytes()
    (source / "d.json").write_text('{"config": {"x": 1}}', encoding="utf-8")
    result = vine.sync(forest, expect=1)
    report = result.json()
    assert report["updated"] == []
    assert any(line.startswith("d.json:") and "dataset" in line for line in report["errors"]), report
    assert _passport(forest, "d") == before
    assert (forest / "d.db").read_bytes() == db_before
    with sqlite3.connect(forest / "d.db") as db:
        assert db.execute("SELECT COUNT(*) FROM d").fetchone()[0] == 2
    vine.assert_consistent(forest)


def test_note_source_that_becomes_a_table_is_not_silently_retyped(vine: Any, forest: Path, tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "d.json").write_text('{"config": {"x": 1}}', encoding="utf-8")
    vine.adopt(source, forest)
    before = (forest / "d.md").read_bytes()
    (source / "d.json").write_text('[{"a": 1, "b": 2}]', encoding="utf-8")
    report = vine.sync(forest, expect=1).json()
    assert any(line.startswith("d.json:") for line in report["errors"]), report
    assert (forest / "d.md").read_bytes() == before
    assert not (forest / "d.db").exists()
    vine.assert_consistent(forest)
