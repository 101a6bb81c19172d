"""Nothing changes for users but time: the bundled fixtures/export adopted by the
serial path (``--jobs 1``: every conversion in the writer) and by the process pool
(``--jobs 2``: forked workers, results planted as they come back in walk order)
makes the same forest, to the byte: every committed file, the commits in order,
and every payload outside git (the datasets' SQLite files, the media). And that
forest is the one the code before issue 16 wrote: its digest is stored beside
this file (``fixtures_forest_digest.json``).

Issue 16 rebuilt the conversion stage's timing (the pool's window, what the
writer does while it waits, the plugin host built on first need); the old code
against the new one is compared the same way by ``bench/bench_ingest_floor.py``.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sqlite3
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


# -- the forest the previous code wrote, kept as a digest -------------------------------------
DIGEST_FILE = Path(__file__).with_name("fixtures_forest_digest.json")
UPDATE_DIGEST = "MONKEYLLM_UPDATE_FOREST_DIGEST"


def normalized_text(text: str, export: Path) -> str:
    """What differs between two honest adopts of fixtures/export, replaced: today's
    date, where the checkout is, and the files' checkout times."""
    text = re.sub(r"\b(created|updated): '\d{4}-\d{2}-\d{2}'", r"\1: '<today>'", text)
    text = text.replace(export.as_uri(), "file://<export>").replace(str(export), "<export>")
    text = re.sub(r"\bsource_mtime: [0-9.e+]+", "source_mtime: <mtime>", text)
    # a dataset's SQLite file holds the library's version in its header: rows are digested below
    return re.sub(r"\bpayload_hash: [0-9a-f]{64}", "payload_hash: <sha256>", text)


def dataset_rows(path: Path) -> str:
    """A SQLite payload as its schema and every row with each value's type, in rowid order."""
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        lines = []
        for kind, name, sql in db.execute("SELECT type, name, sql FROM sqlite_master ORDER BY type, name"):
            lines.append(f"{kind} {name}: {sql}")
            if kind == "table":
                quoted = '"' + name.replace('"', '""') + '"'
                for row in db.execute(f"SELECT * FROM {quoted}"):  # noqa: S608 (a name read from the file)
                    lines.append(repr([(type(value).__name__, value) for value in row]))
    return "\n".join(lines)


def forest_digest(forest: Path, export: Path) -> dict[str, str]:
    """SHA-256 of each file of the forest (text normalized, datasets by their rows, media
    by their bytes) and of the commit subjects in order."""
    digests = {"(commits)": sha256("\n".join(reversed(commit_messages(forest))).encode())}
    for rel, data in snapshot(forest).items():
        if rel.endswith(".db"):
            digests[rel] = sha256(dataset_rows(forest / rel).encode())
        elif rel.endswith((".md", ".yaml", ".gitignore")):
            digests[rel] = sha256(normalized_text(data.decode("utf-8"), export).encode())
        else:
            digests[rel] = sha256(data)
    return digests


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_fixtures_forest_is_the_one_the_previous_code_wrote(vine_cli: Any, tmp_path: Path) -> None:
    """Issue 16's promise, nothing changes for users but time, against the code
    before it: the digest of the fixtures' forest is stored beside this test. A change
    that means to alter what adopt writes refreshes it (run this test with
    MONKEYLLM_UPDATE_FOREST_DIGEST=1) and its diff shows which files changed."""
    forest, _ = adopted_with(vine_cli, tmp_path, "2")
    digests = forest_digest(forest, EXPORT.resolve())
    if os.environ.get(UPDATE_DIGEST):
        DIGEST_FILE.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    stored = json.loads(DIGEST_FILE.read_text(encoding="utf-8"))
    changed = sorted(rel for rel in stored.keys() | digests.keys() if stored.get(rel) != digests.get(rel))
    assert not changed, (f"adopt of fixtures/export wrote other bytes than before in {changed}; if that is "
                         f"meant, rerun with {UPDATE_DIGEST}=1 and commit {DIGEST_FILE.name}")
