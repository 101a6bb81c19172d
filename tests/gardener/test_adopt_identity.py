"""Nothing changes for users but time: the bundled fixtures/export adopted by the
serial path (``--jobs 1``: every conversion in the writer) and by the process pool
(``--jobs 2``: forked workers, results planted as they come back in walk order)
makes the same forest, to the byte: every committed file, the commits in order,
and every payload outside git (the datasets' SQLite files, the media).

Issue 16 rebuilt the conversion stage's timing (the pool's window, what the
writer does while it waits, the plugin host built on first need); the old code
against the new one is compared the same way by ``bench/bench_ingest_floor.py``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from cli_helpers import NO_THIRD_PARTY_PLUGINS, REPO, commit_messages, git, snapshot

EXPORT = REPO / "fixtures" / "export"


def adopted_with(vine_cli: Any, root: Path, jobs: str) -> tuple[Path, dict[str, Any]]:
    forest = vine_cli.init(root / f"forest-jobs-{jobs}", title="Ops brain", env=NO_THIRD_PARTY_PLUGINS)
    report = vine_cli.adopt(EXPORT, forest, "--jobs", jobs, expect=1, env=NO_THIRD_PARTY_PLUGINS,
                            timeout=300).json()
    return forest, report


def test_the_serial_and_the_pooled_adopt_make_the_same_forest_to_the_byte(vine_cli: Any, tmp_path: Path) -> None:
    serial, serial_report = adopted_with(vine_cli, tmp_path, "1")
    pooled, pooled_report = adopted_with(vine_cli, tmp_path, "2")
    assert serial_report == pooled_report
    assert len(serial_report["planted"]) >= 12 and serial_report["errors"]  # the broken workbook
    assert git(serial, "ls-tree", "-r", "HEAD") == git(pooled, "ls-tree", "-r", "HEAD")
    assert commit_messages(serial) == commit_messages(pooled)
    assert snapshot(serial) == snapshot(pooled)  # committed files and payloads alike
    assert git(serial, "status", "--porcelain") == git(pooled, "status", "--porcelain") == ""
