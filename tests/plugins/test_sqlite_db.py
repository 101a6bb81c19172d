from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import pluggy
import pytest

from monkeyllm_gardener import hookspecs
from monkeyllm_gardener.conversion import ConversionError
from monkeyllm_plugins import sqlite_db
from monkeyllm_plugins.sqlite_db import SqliteConverter



def make_crm_db(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    connection.executescript(
        """
        CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
        CREATE TABLE "order" (id INTEGER PRIMARY KEY, customer_id INTEGER, total REAL);
        CREATE TABLE "my table" ("my column" TEXT);
        CREATE INDEX orders_by_customer ON "order"(customer_id);
        CREATE VIEW big_orders AS SELECT * FROM "order" WHERE total > 100;
        INSERT INTO customers VALUES (1, 'Northwind'), (2, 'Contoso');
        INSERT INTO "order" VALUES (1, 1, 1240.0), (2, 2, 80.5);
        INSERT INTO "my table" VALUES ('x');
        """
    )
    connection.commit()
    connection.close()
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_database_with_tables_index_and_view_is_adopted_whole_as_a_dataset(tmp_path):
    db = make_crm_db(tmp_path / "crm.db")
    before = sha256(db)

    conversion = SqliteConverter().convert(db)

    assert conversion.kind == "payload"
    assert conversion.payload_type == "sqlite"
    assert conversion.payload_path == db
    assert conversion.node_type == "dataset"
    assert conversion.title == "crm"
    assert conversion.warnings == ()
    assert conversion.schema is None and conversion.rows is None  # nothing rebuilt
    assert sha256(db) == before  # read-only: not even a journal touched the file
    assert sorted(os.listdir(tmp_path)) == ["crm.db"]


@pytest.mark.parametrize("folder", ["we#ird?%dir", "100%", "a b#c", "q?mode=rw"])
def test_uri_syntax_in_folder_names_is_percent_encoded(tmp_path, folder):
    db = make_crm_db(tmp_path / folder / "data.sqlite3")

    conversion = SqliteConverter().convert(db)

    assert conversion.payload_path == db
    assert conversion.title == "data"
    assert sorted(os.listdir(tmp_path / folder)) == ["data.sqlite3"]


def test_database_without_tables_fails_with_nothing_to_query(tmp_path):
    db = tmp_path / "empty.db"
    connection = sqlite3.connect(db)
    connection.execute("PRAGMA user_version = 7")  # forces a real, table-less file
    connection.commit()
    connection.close()

    with pytest.raises(ConversionError) as raised:
        SqliteConverter().convert(db)

    assert str(raised.value) == "empty.db: database has no tables: nothing to query"


BAD_HEADER_FILES = [
    pytest.param(b"id,name\n1,Northwind\n", id="csv-renamed-db"),
    pytest.param(os.urandom(4096), id="encrypted-looking-random-bytes"),
    pytest.param(b"SQLite format 3", id="header-cut-short"),
]


@pytest.mark.parametrize("content", BAD_HEADER_FILES)
def test_file_that_is_not_sqlite_fails_with_bad_header(tmp_path, content):
    fake = tmp_path / "Thumbs.db"
    fake.write_bytes(content)

    with pytest.raises(ConversionError) as raised:
        SqliteConverter().convert(fake)

    message = str(raised.value)
    assert message.startswith("Thumbs.db: not a SQLite database (bad header)")
    assert "encrypted" in message
    assert "\n" not in message


def test_zero_byte_db_fails_naming_the_empty_file(tmp_path):
    empty = tmp_path / "zero.db"
    empty.write_bytes(b"")

    with pytest.raises(ConversionError, match=r"^zero\.db: not a SQLite database \(bad header\): the file is empty$"):
        SqliteConverter().convert(empty)


def test_corrupt_database_behind_a_valid_header_fails_clearly(tmp_path):
    db = make_crm_db(tmp_path / "broken.db")
    data = bytearray(db.read_bytes())
    data[100:] = b"\xa5" * (len(data) - 100)  # keep the header, wreck every page
    db.write_bytes(bytes(data))

    with pytest.raises(ConversionError) as raised:
        SqliteConverter().convert(db)

    message = str(raised.value)
    assert message.startswith("broken.db: corrupt or encrypted SQLite database (")
    assert "\n" not in message


def open_wal_writer(db: Path) -> sqlite3.Connection:
    """A WAL database whose last commit is only in its -wal file (the writer stays open,
    as an application using the database would)."""
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("CREATE TABLE events (id INTEGER)")
    writer.commit()
    writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    writer.execute("INSERT INTO events VALUES (1), (2)")  # lands in live.db-wal only
    writer.commit()
    assert (db.parent / (db.name + "-wal")).stat().st_size > 0
    return writer


def test_rows_still_in_the_wal_file_are_read_and_nothing_appears_beside_the_source(tmp_path):
    db = tmp_path / "live.db"
    writer = open_wal_writer(db)
    try:
        before = {name: sha256(tmp_path / name) for name in os.listdir(tmp_path)}

        conversion = SqliteConverter().convert(db)

        after = {name: sha256(tmp_path / name) for name in os.listdir(tmp_path)}
    finally:
        writer.close()
    assert after == before  # no new file, no changed byte beside the source
    assert conversion.warnings == ()
    assert conversion.structure["samples"]["events"] == [[1], [2]]


def test_tables_only_in_the_wal_file_are_found(tmp_path):
    db = tmp_path / "fresh.db"
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("CREATE TABLE events (id INTEGER)")
    writer.execute("INSERT INTO events VALUES (7)")
    writer.commit()
    try:
        conversion = SqliteConverter().convert(db)
    finally:
        writer.close()
    assert conversion.structure["tables"] == {"events": ["id"]}
    assert conversion.structure["samples"]["events"] == [[7]]


def test_broken_view_is_a_warning_and_the_database_still_plants(tmp_path):
    db = make_crm_db(tmp_path / "crm.db")
    connection = sqlite3.connect(db)
    connection.execute("CREATE TABLE scratch (x)")
    connection.execute("CREATE VIEW stale AS SELECT x FROM scratch")
    connection.execute("DROP TABLE scratch")  # the view now names a missing table
    connection.commit()
    connection.close()

    conversion = SqliteConverter().convert(db)

    assert conversion.payload_type == "sqlite"
    assert conversion.warnings == (
        "crm.db: view 'stale' cannot be read here (no such table: main.scratch); "
        "the rest of the database is adopted",
    )


def test_converter_registers_through_the_public_hook():
    manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    manager.add_hookspecs(hookspecs)
    manager.register(sqlite_db)
    registered = []

    manager.hook.register_converters(register=lambda converter, priority=0.0: registered.append((converter, priority)))

    [(converter, priority)] = registered
    assert converter.name == "sqlite"
    assert tuple(converter.extensions) == (".db", ".sqlite", ".sqlite3")
    assert tuple(converter.requires) == ()
    assert converter.install_hint == 'pip install "monkeyllm[ingest]"'
    assert priority == 0.0


def test_unreadable_path_fails_with_one_line(tmp_path):
    with pytest.raises(ConversionError, match=r"^gone\.db: cannot read the file \(No such file or directory\)$"):
        SqliteConverter().convert(tmp_path / "gone.db")


def test_virtual_table_of_a_missing_module_is_a_warning(tmp_path):
    db = make_crm_db(tmp_path / "search.db")
    connection = sqlite3.connect(db)
    connection.execute("PRAGMA writable_schema=ON")  # as if made by a SQLite with the module
    connection.execute(
        "INSERT INTO sqlite_master(type, name, tbl_name, rootpage, sql) VALUES "
        "('table', 'docs', 'docs', 0, 'CREATE VIRTUAL TABLE docs USING nosuchmodule(body)')"
    )
    connection.commit()
    connection.close()

    conversion = SqliteConverter().convert(db)

    assert conversion.warnings == (
        "search.db: table 'docs' cannot be read here (no such module: nosuchmodule); "
        "the rest of the database is adopted",
    )


def test_leftover_rollback_journal_is_warned_about(tmp_path):
    db = make_crm_db(tmp_path / "crm.db")
    (tmp_path / "crm.db-journal").write_bytes(b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7" + b"\x00" * 504)

    conversion = SqliteConverter().convert(db)

    assert conversion.warnings == (
        "crm.db: a crm.db-journal file sits beside it (an interrupted transaction); the copy "
        "holds the database as it is on disk, without rolling it back; open it once with "
        "sqlite3 and sync again",
    )


def test_the_conversion_carries_tables_views_columns_and_samples(tmp_path: Path) -> None:
    db = tmp_path / "crm.db"
    conn = sqlite3.connect(db)
    conn.execute('CREATE TABLE "order" (id INTEGER, note TEXT, pic BLOB)')
    conn.executemany('INSERT INTO "order" VALUES (?, ?, ?)', [(i, f"n{i}", b"\x00" * i) for i in range(5)])
    conn.execute('CREATE VIEW recent AS SELECT id FROM "order" WHERE id > 2')
    conn.commit()
    conn.close()
    structure = SqliteConverter().convert(db).structure
    assert structure["tables"] == {"order": ["id", "note", "pic"]}
    assert structure["views"] == {"recent": ["id"]}
    assert structure["samples"]["order"] == [[0, "n0", "<blob 0 bytes>"], [1, "n1", "<blob 1 bytes>"],
                                             [2, "n2", "<blob 2 bytes>"]]
    assert structure["samples"]["recent"] == [[3], [4]]


def test_database_with_a_view_that_never_ends_is_adopted_with_a_warning(vine_cli: Any, tmp_path: Path) -> None:
    export = tmp_path / "export"
    export.mkdir()
    with sqlite3.connect(export / "crm.db") as db:
        db.execute("CREATE TABLE customers(name TEXT)")
        db.execute("INSERT INTO customers VALUES ('Northwind')")
        db.execute(
            "CREATE VIEW forever AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
            "SELECT x FROM c ORDER BY x DESC"
        )
    db_file = export / "crm.db"
    started = time.monotonic()
    forest, report = vine_cli.adopt_into_new_forest(export, timeout=60)
    assert time.monotonic() - started < 30
    assert report["planted"] == ["crm"]
    assert any("forever" in line and "first rows" in line for line in report["warnings"]), report
    assert (forest / "crm.db").read_bytes() == db_file.read_bytes()
