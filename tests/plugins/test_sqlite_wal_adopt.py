"""A SQLite source is never written to, and its payload never grows side files.

Through the real ``vine`` CLI: a WAL database an application still holds open, with
committed rows only in its ``-wal`` file, is adopted; nothing appears or changes
beside it, every committed row is in the payload, the payload is in rollback-journal
mode, and queries on a read-only forest leave no ``-wal``/``-shm``/``-journal``.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest

from monkeyllm_core.data.sqlite_copy import journal_versions, snapshot_database

SIDE_SUFFIXES = ("-wal", "-shm", "-journal")


def folder_state(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def open_wal_database(db: Path, rows: int) -> sqlite3.Connection:
    """A WAL database with ``rows`` committed rows, the last half only in its -wal file;
    the returned connection keeps it open (an application still using it)."""
    db.parent.mkdir(parents=True, exist_ok=True)
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, label TEXT)")
    half = rows // 2
    writer.executemany("INSERT INTO events VALUES (?, ?)", [(i, f"e{i}") for i in range(1, half + 1)])
    writer.commit()
    writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    writer.executemany("INSERT INTO events VALUES (?, ?)", [(i, f"e{i}") for i in range(half + 1, rows + 1)])
    writer.commit()
    assert db.with_name(db.name + "-wal").stat().st_size > 0
    return writer


def side_files(forest: Path) -> list[str]:
    return sorted(p.relative_to(forest).as_posix() for p in forest.rglob("*")
                  if p.name.endswith(SIDE_SUFFIXES) and ".git" not in p.parts)


def make_read_only(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        mode = path.lstat().st_mode
        if not stat.S_ISLNK(mode):
            path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def make_writable(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        mode = path.lstat().st_mode
        if not stat.S_ISLNK(mode):
            path.chmod(mode | stat.S_IWUSR)


def test_a_wal_database_in_use_adopts_whole_without_writing_beside_it(vine_cli: Any, tmp_path: Path) -> None:
    source = tmp_path / "export"
    db = source / "live.db"
    writer = open_wal_database(db, rows=40)
    forest = tmp_path / "forest"
    try:
        assert vine_cli("init", "--forest", forest, "--title", "T").returncode == 0
        before = folder_state(source)

        adopt = vine_cli("adopt", source, "--forest", forest, "--json")

        after = folder_state(source)
    finally:
        writer.close()
    assert adopt.returncode == 0, adopt.stdout + adopt.stderr
    report = json.loads(adopt.stdout)
    assert report["planted"] == ["live"]
    assert after == before  # no -wal/-shm/-journal created, no byte changed
    payload = forest / "live.db"
    assert journal_versions(payload) == (1, 1)  # rollback journal, not WAL
    text = (forest / "live.md").read_text(encoding="utf-8")
    assert "### events — 40 rows" in text

    make_read_only(forest)
    try:
        count = vine_cli("query", "live", "SELECT COUNT(*), MAX(id) FROM events", "--forest", forest)
        last = vine_cli("query", "live", "SELECT label FROM events WHERE id = 40", "--forest", forest)
    finally:
        make_writable(forest)
    assert count.returncode == 0, count.stderr
    assert json.loads(count.stdout)["rows"] == [[40, 40]]  # the rows still in the -wal included
    assert json.loads(last.stdout)["rows"] == [["e40"]]
    assert side_files(forest) == []


def test_a_rollback_database_is_copied_byte_for_byte(tmp_path: Path) -> None:
    db = tmp_path / "plain.db"
    connection = sqlite3.connect(db)
    connection.execute("CREATE TABLE t (x)")
    connection.execute("INSERT INTO t VALUES (1)")
    connection.commit()
    connection.close()
    target = tmp_path / "out" / "copy.db"
    target.parent.mkdir()

    snapshot_database(db, target)

    assert target.read_bytes() == db.read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["out", "plain.db"]
    assert sorted(os.listdir(target.parent)) == ["copy.db"]  # the work folder is gone


def test_a_wal_database_snapshot_holds_every_row_in_rollback_mode(tmp_path: Path) -> None:
    db = tmp_path / "src" / "live.db"
    writer = open_wal_database(db, rows=10)
    try:
        before = folder_state(db.parent)
        target = tmp_path / "copy.db"
        snapshot_database(db, target)
        assert folder_state(db.parent) == before
    finally:
        writer.close()
    assert journal_versions(target) == (1, 1)
    check = sqlite3.connect(f"file:{target}?mode=ro", uri=True)
    try:
        assert check.execute("SELECT COUNT(*) FROM events").fetchone() == (10,)
    finally:
        check.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy.db", "src"]  # no work folder left


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes through chmod")
def test_a_read_only_source_folder_still_adopts(vine_cli: Any, tmp_path: Path) -> None:
    source = tmp_path / "export"
    db = source / "live.db"
    open_wal_database(db, rows=6).close()  # closing checkpoints: a plain WAL-mode file
    make_read_only(source)
    forest = tmp_path / "forest"
    try:
        assert vine_cli("init", "--forest", forest, "--title", "T").returncode == 0
        adopt = vine_cli("adopt", source, "--forest", forest, "--json")
    finally:
        make_writable(source)
    assert adopt.returncode == 0, adopt.stdout + adopt.stderr
    assert json.loads(adopt.stdout)["planted"] == ["live"]


def test_a_wal_database_planted_through_the_engine_lands_in_rollback_mode(tmp_path: Path) -> None:
    from monkeyllm_core import NodeWrite, PayloadSpec, Vine, init_forest

    forest = init_forest(tmp_path / "forest", "T")
    db = tmp_path / "src" / "live.db"
    writer = open_wal_database(db, rows=8)
    try:
        before = folder_state(db.parent)
        with Vine(forest) as engine:
            engine.plant(NodeWrite(passport={"id": "live", "type": "dataset", "title": "Live",
                                             "summary": "Events of the live app.", "payload": "live.db",
                                             "payload_type": "sqlite"},
                                   payload=PayloadSpec(source=db)))
        assert folder_state(db.parent) == before
    finally:
        writer.close()
    assert journal_versions(forest / "live.db") == (1, 1)
    assert "### events — 8 rows" in (forest / "live.md").read_text(encoding="utf-8")
    assert side_files(forest) == []


def test_rows_committed_to_the_wal_after_an_adopt_reach_the_forest_on_sync(vine_cli: Any, tmp_path: Path) -> None:
    # An application that keeps its database open commits into the -wal only: the
    # main file's bytes, size and mtime stay the same, and sync must still see it.
    source = tmp_path / "export"
    db = source / "live.db"
    writer = open_wal_database(db, rows=10)
    writer.execute("PRAGMA wal_autocheckpoint=0")
    forest = tmp_path / "forest"
    try:
        assert vine_cli("init", "--forest", forest, "--title", "T").returncode == 0
        adopt = vine_cli("adopt", source, "--forest", forest, "--json")
        assert adopt.returncode == 0, adopt.stdout + adopt.stderr
        main_before = (db.stat().st_size, db.stat().st_mtime_ns, hashlib.sha256(db.read_bytes()).digest())
        writer.execute("INSERT INTO events VALUES (11, 'e11')")
        writer.commit()
        wal = db.with_name(db.name + "-wal")
        later = db.stat().st_mtime_ns + 2_000_000_000
        os.utime(wal, ns=(later, later))  # a coarse-clock file system: the -wal visibly newer
        assert (db.stat().st_size, db.stat().st_mtime_ns, hashlib.sha256(db.read_bytes()).digest()) == main_before

        sync = vine_cli("sync", source, "--forest", forest, "--json")
        again = vine_cli("sync", source, "--forest", forest, "--json")
    finally:
        writer.close()
    assert sync.returncode == 0, sync.stdout + sync.stderr
    assert json.loads(sync.stdout)["updated"] == ["live"]
    assert "### events — 11 rows" in (forest / "live.md").read_text(encoding="utf-8")
    count = vine_cli("query", "live", "SELECT COUNT(*) FROM events", "--forest", forest)
    assert json.loads(count.stdout)["rows"] == [[11]]
    assert json.loads(again.stdout)["unchanged"] == ["live"]  # nothing new in the -wal: no reconversion
