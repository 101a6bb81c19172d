"""query and tend do bounded work on hostile SQL: real SQLite, real payload files.

The progress handler counts VM instructions, and one function call over a huge
value is one instruction, so SQLite's own limits are the bound on what a statement
can build. These tests assert the bound itself (an error code, a size), never a time.
"""
from __future__ import annotations

import sqlite3
import tracemalloc
from pathlib import Path

import pytest

from monkeyllm_core.errors import VineError
from monkeyllm_core.hashing import sha256_file
from monkeyllm_core.data.sample_map import render_sample_rows
from monkeyllm_core.data.query import MAX_VALUE_BYTES, MIN_COLUMN_LIMIT, run_query
from monkeyllm_core.data.tend import run_tend

needs_setlimit = pytest.mark.skipif(
    not hasattr(sqlite3.Connection, "setlimit"),
    reason="Python 3.10 has no Connection.setlimit: values are bounded only by SQLite's build",
)


@pytest.fixture
def notes_db(tmp_path: Path) -> Path:
    path = tmp_path / "notes.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        connection.execute("INSERT INTO notes VALUES (1, 'short note')")
    connection.close()
    return path


def error_of(call, *args) -> VineError:
    with pytest.raises(VineError) as caught:
        call(*args)
    return caught.value


GROWTH = {
    "hex of a huge random blob": "SELECT hex(randomblob(450000000))",
    "zeroblob": "SELECT zeroblob(2000000)",
    "randomblob": "SELECT length(randomblob(2000000))",
    "replace growth": "SELECT length(replace(hex(zeroblob(400000)), '0', '000'))",
    "concatenation": "SELECT length(hex(zeroblob(300000)) || hex(zeroblob(300000)))",
    "group_concat growth": (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 100000) "
        "SELECT length(group_concat('eighteen-chars-ab')) FROM r"
    ),
}


@needs_setlimit
@pytest.mark.parametrize("sql", GROWTH.values(), ids=GROWTH.keys())
def test_a_value_past_one_mib_is_refused_with_the_cap_named(notes_db: Path, sql: str) -> None:
    error = error_of(run_query, notes_db, sql)
    assert error.code == "E_QUERY_INVALID"
    assert str(error) == "SQL error: a value would exceed 1 MiB (string or blob too big)"
    assert "length()" in error.hint


@needs_setlimit
def test_a_value_under_the_cap_is_still_answered(notes_db: Path) -> None:
    result = run_query(notes_db, f"SELECT length(zeroblob({MAX_VALUE_BYTES - 1})) AS n")
    assert result["rows"] == [[MAX_VALUE_BYTES - 1]]


@needs_setlimit
def test_printf_padding_past_the_cap_builds_nothing(notes_db: Path) -> None:
    # SQLite answers NULL instead of building a 2 MB string.
    assert run_query(notes_db, "SELECT printf('%.*c', 2000000, 'x') AS s")["rows"] == [[None]]


@needs_setlimit
def test_a_stored_text_over_the_cap_cannot_be_read(notes_db: Path) -> None:
    with sqlite3.connect(notes_db) as connection:
        connection.execute("INSERT INTO notes VALUES (2, ?)", ("x" * (MAX_VALUE_BYTES + 10),))
    connection.close()
    assert run_query(notes_db, "SELECT id FROM notes ORDER BY id")["rows"] == [[1], [2]]
    assert error_of(run_query, notes_db, "SELECT length(body) FROM notes").code == "E_QUERY_INVALID"


@needs_setlimit
def test_one_value_cannot_be_copied_into_thousands_of_columns(notes_db: Path) -> None:
    copies = ", ".join(["b"] * 2000)
    error = error_of(run_query, notes_db, f"WITH x(b) AS (SELECT zeroblob(1000000)) SELECT {copies} FROM x")
    assert error.code == "E_QUERY_INVALID"
    assert str(error) == "SQL error: too many columns in result set"
    assert f"at most {MIN_COLUMN_LIMIT} columns" in error.hint


@needs_setlimit
def test_a_table_wider_than_the_column_cap_still_answers_select_star(tmp_path: Path) -> None:
    path = tmp_path / "survey.db"
    width = MIN_COLUMN_LIMIT + 44
    with sqlite3.connect(path) as connection:
        connection.execute(f"CREATE TABLE survey ({', '.join(f'q{i} INTEGER' for i in range(width))})")
        connection.execute(f"INSERT INTO survey (q0, q{width - 1}) VALUES (1, 2)")
    connection.close()
    result = run_query(path, "SELECT * FROM survey")
    assert len(result["columns"]) == width
    assert result["row_count"] == 1 and result["rows"][0][-1] == 2


@needs_setlimit
def test_a_broken_view_does_not_lower_the_column_cap_below_a_wide_table(tmp_path: Path) -> None:
    path = tmp_path / "survey.db"
    width = MIN_COLUMN_LIMIT + 44
    with sqlite3.connect(path) as connection:
        connection.execute(f"CREATE TABLE survey ({', '.join(f'q{i}' for i in range(width))})")
        connection.execute("CREATE TABLE gone (x)")
        connection.execute("CREATE VIEW stale AS SELECT x FROM gone")
        connection.execute("DROP TABLE gone")
        connection.execute("INSERT INTO survey (q0) VALUES (1)")
    connection.close()
    assert len(run_query(path, "SELECT * FROM survey")["columns"]) == width


@needs_setlimit
def test_a_statement_longer_than_the_cap_is_refused(notes_db: Path) -> None:
    error = error_of(run_query, notes_db, "SELECT '" + "x" * (MAX_VALUE_BYTES + 1) + "' AS s")
    assert error.code == "E_QUERY_INVALID"
    assert str(error) == "SQL error: the statement is longer than 1 MiB"


def test_rows_are_held_one_at_a_time_not_in_batches(notes_db: Path) -> None:
    # 300 rows of 1 MB blobs: fetched in batches of 256 they held ~256 MB at once.
    sql = (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 300) "
        "SELECT zeroblob(1000000) AS b FROM r"
    )
    tracemalloc.start()
    try:
        result = run_query(notes_db, sql)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result["rows"][0] == ["<blob 1000000 bytes>"]
    assert result["row_count"] == 200 and result["limited"] is True
    assert peak < 16 * 1_000_000


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT fts3_tokenizer('simple')",
        "SELECT hex(FTS3_TOKENIZER('porter')) AS pointer",
        "SELECT id FROM notes WHERE fts3_tokenizer('simple') IS NOT NULL",
        "SELECT load_extension('/tmp/evil.so')",
    ],
)
def test_functions_that_reach_outside_the_dataset_are_forbidden(notes_db: Path, sql: str) -> None:
    error = error_of(run_query, notes_db, sql)
    assert error.code == "E_QUERY_FORBIDDEN"
    name = "load_extension" if "load_extension" in sql else "fts3_tokenizer"
    assert str(error) == f"SQL refused: {name}() is not allowed"


def test_a_payload_view_cannot_smuggle_a_denied_function(notes_db: Path) -> None:
    # SQLite refuses it inside a view itself ("unsafe use"); it is a refusal all the same.
    with sqlite3.connect(notes_db) as connection:
        connection.execute("CREATE VIEW leak AS SELECT fts3_tokenizer('simple') AS pointer")
    connection.close()
    error = error_of(run_query, notes_db, "SELECT * FROM leak")
    assert error.code == "E_QUERY_FORBIDDEN"
    assert "fts3_tokenizer()" in str(error)


# --- tend gets the same bounds -------------------------------------------------


@needs_setlimit
def test_tend_refuses_a_huge_value_and_leaves_the_payload_unchanged(notes_db: Path) -> None:
    before = sha256_file(notes_db)
    error = error_of(run_tend, notes_db, "INSERT INTO notes VALUES (3, hex(randomblob(450000000)))")
    assert error.code == "E_QUERY_INVALID"
    assert "exceed 1 MiB" in str(error)
    assert sha256_file(notes_db) == before


def test_tend_refuses_fts3_tokenizer_and_leaves_the_payload_unchanged(notes_db: Path) -> None:
    before = sha256_file(notes_db)
    error = error_of(run_tend, notes_db, "INSERT INTO notes VALUES (3, hex(fts3_tokenizer('simple')))")
    assert error.code == "E_QUERY_FORBIDDEN"
    assert str(error) == "SQL refused: fts3_tokenizer() is not allowed"
    assert sha256_file(notes_db) == before


def test_tend_writes_a_value_under_the_cap(notes_db: Path) -> None:
    assert run_tend(notes_db, "INSERT INTO notes VALUES (3, hex(zeroblob(400000)))") == ("INSERT", 1)
    assert run_query(notes_db, "SELECT length(body) FROM notes WHERE id = 3")["rows"] == [[800000]]


# --- through the real CLI ------------------------------------------------------


def test_vine_query_refuses_fts3_tokenizer_in_one_line(vine, brain) -> None:
    vine.plant({
        "id": "clients", "type": "dataset", "title": "Clients", "summary": "Prospects of 2026.",
        "schema": {"clients": {"columns": {"name": "TEXT"}, "primary_key": ["name"]}},
        "rows": {"clients": [["Acme"]]},
    })
    vine.close()
    result = brain.cli("query", "clients", "SELECT hex(fts3_tokenizer('simple')) AS pointer")
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert line.startswith("error E_QUERY_FORBIDDEN: SQL refused: fts3_tokenizer() is not allowed (")
    assert "raw pointers" in line
    assert result.stdout == ""


def test_the_engines_own_reads_are_not_capped(notes_db: Path) -> None:
    # The caps are for a caller's SQL: the Sample rows map of a dataset holding a
    # 2 MB note is still drawn (its cell shortened by the map, not refused).
    with sqlite3.connect(notes_db) as connection:
        connection.execute("INSERT INTO notes VALUES (2, ?)", ("long " * 400_000,))
    connection.close()
    section = render_sample_rows(notes_db)
    assert "### notes — 2 rows" in section
    assert "short note" in section
