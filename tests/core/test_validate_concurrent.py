"""Issue 10 item 6: readers never see half a write.

A real writer process plants in a loop while `vine validate` runs in a loop (and
while `vine adopt` runs, the issue's case): validate must report no false error,
and say that a writer is active and that it checked the last committed state. A
catalog reader must see each write whole: a branch's coverage always matches the
children rows it sees, and every row's file is on disk.

The notes are named so they sort before their folder's `_index.md`: a reader of
the files then reads the index last, long after it listed the folder, which is
how a file-by-file validate saw entries that "point to no node".
"""
from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from monkeyllm_core import parse_node
from monkeyllm_core.forest.branches import coverage_text
from monkeyllm_core.forest.catalog import CATALOG_PATH
from monkeyllm_core.forest.validate import check_forest

WRITER = """
import sys
from pathlib import Path
from monkeyllm_core import Vine

root, stop, flush_every = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
with Vine(root) as vine:
    vine.plant({"id": "log/_index", "title": "Log", "summary": "The log, by day."})
    vine.flush()
    for i in range(100_000):
        if stop.exists():
            break
        if i % 40 == 0:
            vine.plant({"id": f"log/{i:05d}/_index", "title": f"Batch {i}", "summary": f"Batch {i}."})
        vine.plant({"id": f"log/{i:05d}-entry", "type": "note", "title": f"Entry {i}",
                    "summary": f"Log entry {i}.", "body": f"# Entry {i}\\n\\nThe entry.\\n"})
        if flush_every and i % flush_every == 0:
            vine.flush()  # the writer checkpoints: HEAD moves on while validate runs
        if i == 0:
            print("planting", flush=True)
"""

COUNTS = re.compile(r"^validate: (\d+) node\(s\), (\d+) error\(s\), (\d+) warning\(s\)$", re.M)


def start_planting_writer(root: Path, tmp_path: Path, flush_every: int) -> tuple[subprocess.Popen[str], Path]:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    stop = tmp_path / "stop-writing"
    writer = subprocess.Popen([sys.executable, str(script), str(root), str(stop), str(flush_every)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert writer.stdout is not None and writer.stdout.readline() == "planting\n", writer.stderr
    return writer, stop


def stop_writer(writer: subprocess.Popen[str], stop: Path) -> None:
    stop.touch()
    _, err = writer.communicate(timeout=120)
    assert writer.returncode == 0, err


def assert_clean_but_big(brain) -> None:
    """git status clean, validate without errors (a big branch is a needs_split warning)."""
    assert brain.status() == ""
    assert [line for line in brain.findings() if not line.startswith("warning needs_split ")] == []


def test_validate_in_a_loop_beside_a_planting_writer_reports_no_false_error(brain, tmp_path):
    writer, stop = start_planting_writer(brain.root, tmp_path, flush_every=25)
    runs = []
    try:
        while len(runs) < 8:
            result = brain.cli("validate")
            assert writer.poll() is None, "the writer stopped before validate was done"
            runs.append(result)
    finally:
        stop_writer(writer, stop)
    committed_counts = []
    for result in runs:
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stdout + result.stderr
        assert not any(line.startswith("error ") for line in result.stdout.splitlines()), result.stdout
        note = result.stdout.splitlines()[0]
        assert note.startswith(f"note: a writer is active (pid {writer.pid} on "), result.stdout
        assert "checked the last committed state" in note and "not checked:" in note
        nodes, errors, _ = map(int, COUNTS.search(result.stdout).groups())
        committed_counts.append(nodes)
    assert committed_counts == sorted(committed_counts) and committed_counts[-1] > committed_counts[0]
    # the writer is gone: the files are checked again, and they are whole
    final = brain.cli("validate")
    assert final.returncode == 0 and "note:" not in final.stdout, final.stdout
    with brain.open(writable=False) as reader:
        assert COUNTS.search(final.stdout).group(1) == str(len(reader.node_files()))
    assert_clean_but_big(brain)


def test_validate_during_an_adopt_reports_no_false_error(brain, tmp_path, vine_cli):
    source = tmp_path / "export" / "log"
    source.mkdir(parents=True)
    for i in range(600):
        (source / f"2026-03-{i:03d}.md").write_text(f"# Entry {i}\n\nThe log entry {i} for March 2026.\n")
    adopt = vine_cli.popen("adopt", tmp_path / "export", "--forest", brain.root, "--jobs", "1")
    seen_writer = 0
    try:
        while adopt.poll() is None:
            result = brain.cli("validate")
            assert result.returncode == 0, result.stdout + result.stderr
            assert not any(line.startswith("error ") for line in result.stdout.splitlines()), result.stdout
            seen_writer += result.stdout.startswith(f"note: a writer is active (pid {adopt.pid} ")
    finally:
        out, err = adopt.communicate(timeout=300)
    assert adopt.returncode == 0, out + err
    assert seen_writer >= 1  # validate did run while the adopt wrote
    assert_clean_but_big(brain)


def test_a_killed_writers_lock_card_does_not_count_as_a_writer(brain, tmp_path):
    script = tmp_path / "killed.py"
    script.write_text("import os, sys\nfrom monkeyllm_core import Vine\n"
                      "vine = Vine(sys.argv[1])\n"
                      "vine.plant({'id': 'doomed', 'type': 'note', 'title': 'Doomed', 'summary': 'Never committed.'})\n"
                      "os._exit(9)\n")
    subprocess.run([sys.executable, str(script), str(brain.root)], check=False)
    assert '"pid"' in (brain.root / ".vine.lock").read_text()  # the card stays, its writer is dead
    result = brain.cli("validate")
    assert result.returncode == 0 and "note:" not in result.stdout, result.stdout
    assert "validate: 2 node(s)" in result.stdout  # the files as they are: doomed.md is on disk


BROKEN_POLICY = ["error E_FRONTMATTER policy: policy.md: invalid YAML at line 3",
                 "error E_BRANCH _index: entry [[policy]] points to no node"]


def test_while_a_writer_holds_the_forest_validate_checks_what_is_committed(brain, make_note):
    with brain.open() as vine:
        vine.plant(make_note("policy"))
    writer = brain.open()
    try:
        # a hand edit on disk, not committed: while the writer works it is not what validate checks
        path = brain.root / "policy.md"
        path.write_text("---\nid: [unclosed\n---\n\nbody\n")
        with brain.open(writable=False) as reader:
            checked = check_forest(reader)
        assert checked.findings == []
        assert checked.note is not None and checked.note.startswith(f"a writer is active (pid {os.getpid()} on ")
        assert f"commit {brain.head()[:12]}" in checked.note
        result = brain.cli("validate")
        assert result.returncode == 0 and result.stdout.startswith("note: a writer is active"), result.stdout
        # what is committed is checked: a broken passport in HEAD is reported
        brain.git("add", "policy.md")
        brain.git("-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "-m", "hand edit")
        with brain.open(writable=False) as reader:
            lines = [f.line() for f in check_forest(reader).findings]
        assert lines == BROKEN_POLICY
    finally:
        writer.close()
    result = brain.cli("validate")
    assert result.returncode == 1 and "note:" not in result.stdout
    assert result.stdout.splitlines()[:2] == BROKEN_POLICY


def test_a_catalog_reader_sees_each_write_whole(brain, tmp_path):
    writer, stop = start_planting_writer(brain.root, tmp_path, flush_every=0)
    catalog = sqlite3.connect(f"file:{brain.root / CATALOG_PATH}?mode=ro", uri=True)
    # one statement is one snapshot: each branch's coverage beside the children it has
    survey = ("SELECT b.id, b.coverage, "
              "(SELECT COUNT(*) FROM nodes c WHERE c.parent = b.id AND c.kind = 'banana'), "
              "(SELECT COUNT(*) FROM nodes c WHERE c.parent = b.id AND c.kind = 'branch') "
              "FROM nodes b WHERE b.kind = 'branch'")
    half_writes, missing_files, sizes, verified = [], [], set(), set()
    try:
        deadline = time.monotonic() + 60
        while len(sizes) < 30 and time.monotonic() < deadline:
            for branch, coverage, leaves, subs in catalog.execute(survey).fetchall():
                if coverage != coverage_text(leaves, subs):
                    half_writes.append((branch, coverage, leaves, subs))
            rows = catalog.execute("SELECT id, summary FROM nodes WHERE kind = 'banana'").fetchall()
            for node_id, summary in rows:
                if node_id in verified:
                    continue  # the writer never rewrites a leaf: once whole, always whole
                path = brain.root / f"{node_id}.md"
                if not path.is_file() or parse_node(path.read_text()).frontmatter["summary"] != summary:
                    missing_files.append(node_id)
                verified.add(node_id)
            sizes.add(len(rows))
    finally:
        catalog.close()
        stop_writer(writer, stop)
    assert half_writes == [] and missing_files == []
    assert len(sizes) >= 30  # the reader really ran beside the writer
