"""Issue 10 end to end: `vine adopt` killed with SIGKILL, the real CLI each time.

A kill of the main process alone (what the OOM killer does) leaves no converter
worker or git child alive and the forest unlocked; what was planted before the
kill stays planted (the next sync plants only the rest); and the kill harness
(`scripts/kill_harness.py`) passes a few trials of its three kill modes.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from processes import alive

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "scripts" / "kill_harness.py"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


SLOW_TOOL = """
import sys, time
time.sleep(0.25)  # a slow converter: the adopt is still running when the test kills it
print("# Scan " + sys.argv[1].rsplit("/", 1)[-1] + "\\n\\nA scanned page of March 2026.")
"""


def make_export(root: Path, files: int = 160) -> Path:
    for i in range(files):
        folder = root / ("data" if i % 2 else "notes") / f"part-{i % 4}"
        folder.mkdir(parents=True, exist_ok=True)
        if i % 4 == 3:
            (folder / f"scan-{i}.slow").write_text("page")
        elif i % 2:
            (folder / f"ledger-{i}.csv").write_text(
                "id,customer,total\n" + "".join(f"{k},C{k % 7},{k * 1.5}\n" for k in range(300)))
        else:
            (folder / f"note-{i}.md").write_text(f"# Note {i}\n\nThe meeting of March 2026 about item {i}.\n")
    return root


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (workers, git children)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    fields = fh.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != b"Z":
                children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def nodes_on_branch(forest: Path) -> set[str]:
    listed = subprocess.run(["git", "ls-tree", "-r", "--name-only", "HEAD"], cwd=forest, capture_output=True,
                            text=True).stdout.split()
    return {rel[:-3] for rel in listed if rel.endswith(".md") and not rel.endswith("_index.md")
            and not rel.startswith("_meta/")}


def kill_mid_adopt(vine_cli: Any, export: Path, forest: Path) -> tuple[set[int], set[str]]:
    """Start an adopt, wait until its workers run and some nodes are on the branch,
    SIGKILL the main process alone; return its descendants then and the nodes on the branch."""
    proc = vine_cli.popen("adopt", export, "--forest", forest, "--json", "--jobs", "2")
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            below = descendants(proc.pid)
            if len(below) >= 2 and len(nodes_on_branch(forest)) >= 3:
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the adopt ended before workers ran with nodes already on the branch"
        below = descendants(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    return below, nodes_on_branch(forest)


def test_a_killed_vine_leaves_no_process_and_no_lock_and_keeps_what_it_planted(vine_cli: Any, cli: Any,
                                                                             tmp_path: Path) -> None:
    export = make_export(tmp_path / "export")
    forest = vine_cli.init(tmp_path / "forest")
    tool = tmp_path / "slow_tool.py"
    tool.write_text(SLOW_TOOL, encoding="utf-8")
    (forest / "_meta/gardener.yaml").write_text(
        f"converters:\n  '.slow': '\"{sys.executable}\" \"{tool}\" \"{{input}}\"'\n", encoding="utf-8")
    below, planted_before = kill_mid_adopt(vine_cli, export, forest)
    assert below, "no worker was running at the kill"
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in below) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in below if alive(pid)], "workers or git children outlived the killed vine"
    assert planted_before  # on the branch while the adopt ran: planted means committed

    finished = vine_cli.sync(forest).json()  # not E_LOCKED: nobody holds the lock
    assert not set(finished["planted"]) & planted_before  # nothing planted twice
    assert set(finished["planted"]) | planted_before == nodes_on_branch(forest)
    assert len(nodes_on_branch(forest)) == len(cli.source_files(export))
    again = vine_cli.sync(forest).json()
    assert again["planted"] == [] and again["updated"] == []
    vine_cli.assert_consistent(forest)


def test_the_kill_harness_finds_every_promise_kept(vine_cli: Any, tmp_path: Path) -> None:
    """Three trials, one per kill mode, on a small export: each check of the harness."""
    proc = subprocess.run([sys.executable, str(HARNESS), "--builtin", "30", "--trials", "3", "--seed", "7",
                           "--work", str(tmp_path / "work")],
                          env=vine_cli.env({"PYTHONPATH": str(ROOT)}), capture_output=True, text=True, timeout=600)
    lines = proc.stdout.strip().splitlines()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [line.split(":", 1)[0] for line in lines[1:4]] == ["trial 0 (main)", "trial 1 (group)", "trial 2 (sync)"]
    assert all(line.endswith(": whole") for line in lines[1:4]), proc.stdout
    assert lines[-1].startswith("trials: 3, kills landed: ") and lines[-1].endswith("failures: 0")
    assert not lines[-1].startswith("trials: 3, kills landed: 0 ")  # at least one kill hit a running vine
