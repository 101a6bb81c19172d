"""run_tend (monkeyllm_core/data/tend.py) on real SQLite files: row writes and their
verbs, the statements refused, hints, rollback on failure or timeout, one journal file."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from monkeyllm_core.data.dataset import create_dataset
from monkeyllm_core.errors import VineError
from monkeyllm_core.hashing import sha256_file
from monkeyllm_core.data.tend import run_tend

SCHEMA = {
    "clients": {
        "columns": {"name": "TEXT", "site": "TEXT", "segment": "TEXT", "order": "INTEGER"},
        "primary_key": ["name"],
    }
}
ROWS = {"clients": [["Acme", "acme.example", "industry", 1], ["Initech", "initech.example", "retail", 2]]}


@pytest.fixture
def clients_db(tmp_path):
    db = tmp_path / "prospecting.db"
    create_dataset(db, SCHEMA, ROWS)
    return db


def client_rows(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as connection:
        return connection.execute('SELECT name, site, segment, "order" FROM clients ORDER BY name').fetchall()


def tend_error(db: Path, sql: str, **options) -> VineError:
    with pytest.raises(VineError) as caught:
        run_tend(db, sql, **options)
    return caught.value


@pytest.mark.parametrize(
    ("sql", "expected", "after"),
    [
        ("INSERT INTO clients VALUES ('Globex', 'globex.example', 'retail', 3)", ("INSERT", 1), 3),
        ("INSERT INTO clients VALUES ('G1', 'a', 'b', 3), ('G2', 'a', 'b', 4);", ("INSERT", 2), 4),
        ("INSERT OR REPLACE INTO clients VALUES ('Acme', 'new.example', 'retail', 9)", ("INSERT", 1), 2),
        ("REPLACE INTO clients VALUES ('Acme', 'new.example', 'retail', 9)", ("REPLACE", 1), 2),
        ("UPDATE clients SET segment = 'industry' WHERE name = 'Initech'", ("UPDATE", 1), 2),
        ('update clients set "order" = "order" + 10 where 1 = 1', ("UPDATE", 2), 2),
        ("DELETE FROM clients WHERE segment = 'retail'", ("DELETE", 1), 1),
        ("DELETE FROM clients WHERE name = 'nobody'", ("DELETE", 0), 2),
        ("INSERT INTO clients VALUES ('R', 'r', 'r', 5) RETURNING name", ("INSERT", 1), 3),
    ],
)
def test_row_writes_report_verb_and_rows_affected(clients_db, sql, expected, after):
    assert run_tend(clients_db, sql) == expected
    assert len(client_rows(clients_db)) == after


def test_written_rows_are_really_there(clients_db):
    run_tend(clients_db, "UPDATE clients SET segment = 'industry', \"order\" = 7 WHERE name = 'Initech'")
    assert ("Initech", "initech.example", "industry", 7) in client_rows(clients_db)


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE clients SET segment = 'x'",
        "DELETE FROM clients",
        "DELETE FROM clients -- WHERE name = 'Acme'",
        "UPDATE clients SET segment = (SELECT segment FROM clients WHERE name = 'Acme')",
        "DELETE FROM clients WHERE name = 'Acme'; DELETE FROM clients",
        "CREATE TABLE extra (a TEXT)",
        "DROP TABLE clients",
        "ALTER TABLE clients ADD COLUMN x TEXT",
        "PRAGMA journal_mode = WAL",
        "ATTACH DATABASE 'other.db' AS other",
        "DETACH other",
        "BEGIN",
        "COMMIT",
        "ROLLBACK",
        "SAVEPOINT s",
        "VACUUM",
        "SELECT * FROM clients",
        "WITH x AS (SELECT 1) DELETE FROM clients WHERE 1 = 1",
        "INSERT INTO clients VALUES ('a', 'b', 'c', 1); DROP TABLE clients",
    ],
)
def test_forbidden_statements_are_refused_and_change_nothing(clients_db, sql):
    before = sha256_file(clients_db)
    assert tend_error(clients_db, sql).code == "E_QUERY_FORBIDDEN"
    assert sha256_file(clients_db) == before


def test_missing_where_hint_says_how_to_mean_every_row(clients_db):
    error = tend_error(clients_db, "DELETE FROM clients")
    assert "WHERE" in error.message and "WHERE 1 = 1" in error.hint


def test_failure_half_way_rolls_back_every_row(clients_db):
    before = sha256_file(clients_db)
    # The first new row inserts, the second collides with Acme: nothing may remain.
    error = tend_error(
        clients_db,
        "INSERT INTO clients SELECT 'New', 'n', 'n', 1 UNION ALL SELECT 'Acme', 'a', 'a', 2",
    )
    assert error.code == "E_QUERY_INVALID"
    assert "UNIQUE constraint failed" in error.message
    assert sha256_file(clients_db) == before
    assert len(client_rows(clients_db)) == 2


def test_unknown_column_hint_names_the_tables_columns(clients_db):
    error = tend_error(clients_db, "UPDATE clients SET tier = 'gold' WHERE name = 'Acme'")
    assert error.code == "E_QUERY_INVALID"
    assert error.hint == 'Columns: clients(name, site, segment, "order").'


def test_unknown_table_hint_names_the_real_tables(clients_db):
    error = tend_error(clients_db, "INSERT INTO prospects VALUES (1)")
    assert error.hint == "Tables: clients."


def test_endless_write_times_out_and_rolls_back(clients_db):
    before = sha256_file(clients_db)
    error = tend_error(
        clients_db,
        "INSERT INTO clients (name) SELECT 'n' || i FROM "
        "(WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n)",
        timeout_s=0.3,
    )
    assert error.code == "E_TIMEOUT"
    assert sha256_file(clients_db) == before


def test_payload_stays_one_rollback_journal_file(clients_db):
    run_tend(clients_db, "INSERT INTO clients VALUES ('Z', 'z', 'z', 0)")
    assert sorted(p.name for p in clients_db.parent.iterdir()) == ["prospecting.db"]
    with sqlite3.connect(clients_db) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_tend_in_a_folder_with_uri_characters(tmp_path):
    folder = tmp_path / "a#b?c%20d"
    folder.mkdir()
    db = folder / "d.db"
    create_dataset(db, SCHEMA)
    assert run_tend(db, "INSERT INTO clients VALUES ('x', 'y', 'z', 1)") == ("INSERT", 1)
    assert client_rows(db) == [("x", "y", "z", 1)]


def test_missing_payload_is_not_found_and_not_created(tmp_path):
    assert tend_error(tmp_path / "gone.db", "INSERT INTO t VALUES (1)").code == "E_NOT_FOUND"
    assert not (tmp_path / "gone.db").exists()
