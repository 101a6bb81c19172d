from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from monkeyllm_core.errors import VineError
from monkeyllm_core.hashing import sha256_file
from monkeyllm_core.data.sample_map import describe_tables, render_map, render_query_manual, render_sample_rows
from monkeyllm_core.data.sqlnames import quote_identifier


def make_db(path: Path, statements: list[str], rows: dict[str, list[tuple]] | None = None) -> Path:
    connection = sqlite3.connect(path)
    for statement in statements:
        connection.execute(statement)
    for table, table_rows in (rows or {}).items():
        for row in table_rows:
            marks = ", ".join("?" for _ in row)
            connection.execute(f"INSERT INTO {quote_identifier(table)} VALUES ({marks})", row)
    connection.commit()
    connection.close()
    return path


def example_queries(manual: str) -> list[str]:
    """Every bullet under 'Example queries:', code span fences of any length."""
    block = manual.split("Example queries:\n", 1)[1].split("\n\n", 1)[0]
    queries = []
    for line in block.splitlines():
        match = re.fullmatch(r"- (`+)(.*)\1", line)
        assert match, line
        body = match.group(2)
        if len(body) > 2 and body.startswith(" ") and body.endswith(" "):
            body = body[1:-1]
        queries.append(body)
    return queries


INVOICES = [
    "CREATE TABLE invoices_2026_q1 (invoice_id TEXT, customer TEXT, issued_on TEXT, total_usd REAL, status TEXT)",
]
INVOICE_ROWS = {
    "invoices_2026_q1": [
        ("INV-1041", "Northwind", "2026-01-04", 1240.0, "F"),
        ("INV-1042", "Contoso", "2026-01-04", 880.5, "A"),
        ("INV-1043", "Fabrikam", "2026-01-07", 15300.0, "F"),
    ]
}


def test_map_of_the_format_example_matches_forest_format(tmp_path):
    db = make_db(tmp_path / "invoices.db", INVOICES, INVOICE_ROWS)
    assert render_query_manual(db) == (
        "## Query manual\n\n"
        "Tables:\n"
        "- `invoices_2026_q1(invoice_id TEXT, customer TEXT, issued_on TEXT, total_usd REAL, status TEXT)`\n\n"
        "Example queries:\n"
        "- `SELECT * FROM invoices_2026_q1 LIMIT 5`\n"
        "- `SELECT COUNT(*) FROM invoices_2026_q1`\n"
    )
    assert render_sample_rows(db) == (
        "## Sample rows\n\n"
        "### invoices_2026_q1 — 3 rows\n\n"
        "| invoice_id | customer | issued_on | total_usd | status |\n"
        "| --- | --- | --- | --- | --- |\n"
        "| INV-1041 | Northwind | 2026-01-04 | 1240.0 | F |\n"
        "| INV-1042 | Contoso | 2026-01-04 | 880.5 | A |\n"
        "| INV-1043 | Fabrikam | 2026-01-07 | 15300.0 | F |\n"
    )


AWKWARD = ["order", "select", "my table", "2026 sales", 'a"b', "🍌 bananas", "a`b", "`edge`", "group"]


@pytest.fixture
def awkward_db(tmp_path):
    statements = []
    rows = {}
    for index, name in enumerate(AWKWARD):
        other = AWKWARD[(index + 1) % len(AWKWARD)]
        statements.append(f"CREATE TABLE {quote_identifier(name)} ({quote_identifier(name)} TEXT, {quote_identifier(other)} INTEGER)")
        rows[name] = [(f"v{index}", index)]
    statements.append(f'CREATE VIEW "my view" AS SELECT {quote_identifier("order")} FROM {quote_identifier("order")}')
    return make_db(tmp_path / "awkward db.db", statements, rows)


def test_every_example_query_runs_on_awkward_names(awkward_db):
    manual = render_query_manual(awkward_db)
    queries = example_queries(manual)
    assert len(queries) == 2 * len(AWKWARD)
    connection = sqlite3.connect(awkward_db)
    for query in queries:
        connection.execute(query).fetchall()  # raises if any example does not run
    counts = [connection.execute(q).fetchone()[0] for q in queries if "COUNT" in q]
    assert counts == [1] * len(AWKWARD)


def test_table_signatures_quote_awkward_names_so_they_can_be_copied(awkward_db):
    manual = render_query_manual(awkward_db)
    assert '- `"order"("order" TEXT, "select" INTEGER)`' in manual
    assert '- `"2026 sales"("2026 sales" TEXT, "a""b" INTEGER)`' in manual
    assert '- ``"a`b"("a`b" TEXT, "`edge`" INTEGER)``' in manual


def test_views_are_listed_as_views_with_columns(awkward_db):
    manual = render_query_manual(awkward_db)
    assert '- `"my view"("order" TEXT)` (view)' in manual
    assert describe_tables(awkward_db)["views"] == {"my view": ["order"]}


def test_wide_table_gets_only_count_and_a_budget_note_but_lists_every_column(tmp_path):
    columns = ", ".join(f"c{i} TEXT" for i in range(30))
    db = make_db(tmp_path / "wide.db", [f"CREATE TABLE wide ({columns})"], {"wide": [tuple(f"r{i}" for i in range(30))]})
    manual = render_query_manual(db)
    assert example_queries(manual) == ["SELECT COUNT(*) FROM wide"]
    assert "`SELECT *` on it will not fit the query budget" in manual
    assert all(f"c{i} TEXT" in manual for i in range(30))
    samples = render_sample_rows(db)
    header = next(line for line in samples.splitlines() if line.startswith("| c0"))
    assert header.count(" | ") == 11  # 12 columns
    assert "12 of 30 columns shown; the other 18 exist and are queryable" in samples


def test_more_than_twenty_tables_sample_twenty_and_say_so(tmp_path):
    db = make_db(tmp_path / "many.db", [f"CREATE TABLE t{i:02d} (a TEXT)" for i in range(23)])
    samples = render_sample_rows(db)
    assert samples.count("\n### ") == 20
    assert "20 of 23 tables sampled; the other 3 exist and are queryable" in samples
    manual = render_query_manual(db)
    assert all(f"- `t{i:02d}(a TEXT)`" in manual for i in range(23))
    assert "Examples cover the first 20 of 23 tables" in manual


def test_cells_follow_the_rendering_rules(tmp_path):
    long_text = "x" * 200
    db = make_db(
        tmp_path / "cells.db",
        ["CREATE TABLE c (t TEXT, n REAL, b BLOB, e TEXT, i INTEGER)"],
        {"c": [(long_text, 1240.0, b"\x00\x01\x02", None, 7), ("a|b\nsecond\r\nthird", 0.1, None, "", -3)]},
    )
    samples = render_sample_rows(db)
    lines = samples.splitlines()
    assert "### c — 2 rows" in lines
    first, second = (line for line in lines if line.startswith("| x") or line.startswith("| a"))
    assert first == f"| {'x' * 119}… | 1240.0 | <blob 3 bytes> |  | 7 |"
    assert second == "| a\\|b<br>second<br>third | 0.1 |  |  | -3 |"


def test_singular_row_and_empty_table(tmp_path):
    db = make_db(tmp_path / "s.db", ["CREATE TABLE one (a TEXT)", "CREATE TABLE none (a TEXT)"], {"one": [("x",)]})
    samples = render_sample_rows(db)
    assert "### one — 1 row\n" in samples
    assert "### none — 0 rows\n\n_No rows._\n" in samples


def test_at_most_three_sample_rows(tmp_path):
    db = make_db(tmp_path / "r.db", ["CREATE TABLE r (a INTEGER)"], {"r": [(i,) for i in range(10)]})
    samples = render_sample_rows(db)
    assert "### r — 10 rows" in samples
    assert [line for line in samples.splitlines() if re.fullmatch(r"\| \d+ \|", line)] == ["| 0 |", "| 1 |", "| 2 |"]


def test_internal_sqlite_tables_are_skipped(tmp_path):
    db = make_db(tmp_path / "auto.db", ["CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, a TEXT)"], {"t": [(None, "x")]})
    assert "sqlite_sequence" not in render_query_manual(db) + render_sample_rows(db)
    assert describe_tables(db) == {"tables": {"t": ["id", "a"]}, "views": {}, "row_counts": {"t": 1}}


def test_notes_follow_the_examples(tmp_path):
    db = make_db(tmp_path / "n.db", INVOICES, INVOICE_ROWS)
    manual = render_query_manual(db, notes=["Column `Total (USD)` was renamed to `total_usd`."])
    assert manual.endswith("- `SELECT COUNT(*) FROM invoices_2026_q1`\n\nColumn `Total (USD)` was renamed to `total_usd`.\n")


def test_untyped_columns_of_an_adopted_database_are_listed_without_a_type(tmp_path):
    db = make_db(tmp_path / "loose.db", ["CREATE TABLE loose (a, b VARCHAR(20))"])
    assert "- `loose(a, b VARCHAR(20))`" in render_query_manual(db)


def test_rendering_never_changes_the_payload(awkward_db):
    before = sha256_file(awkward_db)
    render_query_manual(awkward_db)
    render_sample_rows(awkward_db)
    describe_tables(awkward_db)
    assert sha256_file(awkward_db) == before
    assert sorted(p.name for p in awkward_db.parent.iterdir()) == [awkward_db.name]


def test_empty_database_says_it_has_no_tables(tmp_path):
    db = make_db(tmp_path / "empty.db", [])
    assert "This database has no tables." in render_query_manual(db)
    assert "_This database has no tables._" in render_sample_rows(db)


def test_a_file_that_is_not_sqlite_is_one_clear_error(tmp_path):
    fake = tmp_path / "fake.db"
    fake.write_bytes(b"this is not a database, just text pretending" * 100)
    for render in (render_query_manual, render_sample_rows, describe_tables, render_map):
        with pytest.raises(VineError) as caught:
            render(fake)
        assert caught.value.code == "E_SCHEMA"
        assert "fake.db is not a readable SQLite database" in caught.value.message


def test_counts_the_caller_already_has_are_used_instead_of_counting_again(tmp_path: Path) -> None:
    db = tmp_path / "two.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE a (x INTEGER)")
    conn.execute("CREATE TABLE b (y TEXT)")
    conn.executemany("INSERT INTO a VALUES (?)", [(i,) for i in range(4)])
    conn.commit()
    conn.close()
    counted = render_sample_rows(db)
    assert render_sample_rows(db, {"a": 4, "b": 0}) == counted
    # a table missing from the mapping is still counted; a given count is trusted as is
    partial = render_sample_rows(db, {"a": 7})
    assert "### a \u2014 7 rows" in partial and "### b \u2014 0 rows" in partial


def test_both_sections_from_one_connection_are_the_two_renders(tmp_path: Path, awkward_db: Path) -> None:
    """The writer maps a dataset with ``render_map`` (one connection, one schema read):
    each section must be what its own render gives, counts given or not."""
    wide = make_db(tmp_path / "wide.db", ["CREATE TABLE w (" + ", ".join(f"c{i} TEXT" for i in range(15)) + ")",
                                          'CREATE TABLE "line\nbreak" ("a\nb" BLOB)'],
                   {"w": [tuple(f"{'x' * 130}|é" for _ in range(15))] * 4, "line\nbreak": [(b"\0" * 9,)]})
    many = make_db(tmp_path / "many.db", [f"CREATE TABLE t{i} (v REAL)" for i in range(23)],
                   {f"t{i}": [(i / 3,)] for i in range(23)})
    empty = make_db(tmp_path / "empty.db", [])
    notes = ["Column `v` read as decimal.", "two\nlines"]
    for db in (awkward_db, wide, many, empty):
        for counts in (None, {}, {"w": 99, "t0": 5}):
            assert render_map(db, notes, counts) == (render_query_manual(db, notes), render_sample_rows(db, counts))
