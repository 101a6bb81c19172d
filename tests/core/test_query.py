"""run_query (monkeyllm_core/data/query.py) on real SQLite files: the answer's shape,
the injected LIMIT, the read-only rules, hints that name real tables and columns,
the time and size budgets."""
from __future__ import annotations

import json
import math
import sqlite3
import time
from pathlib import Path

import pytest

from monkeyllm_core.errors import VineError
from monkeyllm_core.hashing import sha256_file
from monkeyllm_core.data.query import open_readonly, run_query

BASE_KEYS = ["columns", "rows", "row_count", "limited", "elapsed_ms"]


def make_orders(path: Path, count: int = 250) -> Path:
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT, region TEXT)")
    connection.execute('CREATE TABLE customers (id INTEGER, name TEXT, "delete" TEXT)')
    connection.executemany(
        "INSERT INTO orders VALUES (?, ?, ?)",
        [(index, f"customer {index % 7}", ["South", "North"][index % 2]) for index in range(count)],
    )
    connection.execute("INSERT INTO customers VALUES (1, 'Acme', 'soft')")
    connection.commit()
    connection.close()
    return path


@pytest.fixture
def orders_db(tmp_path):
    return make_orders(tmp_path / "orders.db")


def query_error(db: Path, sql: str, **options) -> VineError:
    with pytest.raises(VineError) as caught:
        run_query(db, sql, **options)
    return caught.value


def test_aggregate_answer_has_exactly_the_documented_shape(orders_db):
    result = run_query(orders_db, "SELECT region, COUNT(*) AS n FROM orders GROUP BY region ORDER BY region")
    assert list(result) == BASE_KEYS
    assert result["columns"] == ["region", "n"]
    assert result["rows"] == [["North", 125], ["South", 125]]
    assert result["row_count"] == 2 and result["limited"] is False
    assert isinstance(result["elapsed_ms"], float)


def test_missing_limit_is_injected_and_reported_when_it_bites(orders_db):
    result = run_query(orders_db, "SELECT id FROM orders")
    assert result["row_count"] == 200 and result["limited"] is True
    assert "truncated" not in result


def test_own_limit_is_respected_and_not_reported_as_limited(orders_db):
    result = run_query(orders_db, "SELECT id FROM orders LIMIT 230")
    assert result["row_count"] == 230 and result["limited"] is False


def test_limit_inside_a_cte_does_not_count_as_outer_limit(orders_db):
    result = run_query(orders_db, "WITH few AS (SELECT id FROM orders LIMIT 240) SELECT id FROM few")
    assert result["row_count"] == 200 and result["limited"] is True


def test_fewer_rows_than_the_injected_limit_are_not_limited(tmp_path):
    db = make_orders(tmp_path / "small.db", count=12)
    assert run_query(db, "SELECT * FROM orders")["limited"] is False


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT id FROM orders;",
        "  -- leading comment\n/* block */ select id from orders",
        "SELECT id FROM orders -- trailing comment swallows nothing",
        "SELECT id FROM orders /* unterminated comment",
        "SELECT 'DROP TABLE orders; DELETE' AS words FROM orders",
        'SELECT "delete" FROM customers',
        "SELECT [delete] FROM customers WHERE name <> 'update'",
        "SELECT replace(customer, 'customer', 'c') FROM orders",
    ],
)
def test_read_statements_that_look_dangerous_but_are_not_run(orders_db, sql):
    assert run_query(orders_db, sql)["row_count"] >= 1


@pytest.mark.parametrize(
    ("sql", "code"),
    [
        ("INSERT INTO orders VALUES (999, 'x', 'y')", "E_QUERY_FORBIDDEN"),
        ("PRAGMA table_info(orders)", "E_QUERY_FORBIDDEN"),
        ("ATTACH DATABASE 'other.db' AS other", "E_QUERY_FORBIDDEN"),
        ("SELECT 1; DROP TABLE orders", "E_QUERY_FORBIDDEN"),
        ("SELECT 1;;", "E_QUERY_FORBIDDEN"),
        ("WITH x AS (SELECT 1) DELETE FROM orders", "E_QUERY_FORBIDDEN"),
        ("WITH x AS (SELECT 1) UPDATE orders SET region = 'x'", "E_QUERY_FORBIDDEN"),
        ("SELECT * FROM orders WHERE id IN (SELECT 1) AND 0 = 0 /* */ ORDER BY id; VACUUM", "E_QUERY_FORBIDDEN"),
        ("select * from pragma_table_info('orders') where 1 = (select count(*) from orders) or create", "E_QUERY_FORBIDDEN"),
        ("EXPLAIN SELECT 1", "E_QUERY_FORBIDDEN"),
        ("   ", "E_QUERY_INVALID"),
        ("show tables", "E_QUERY_INVALID"),
        ("SELECT 'unterminated", "E_QUERY_INVALID"),
    ],
)
def test_statements_outside_the_read_only_rules_are_refused(orders_db, sql, code):
    before = sha256_file(orders_db)
    assert query_error(orders_db, sql).code == code
    assert sha256_file(orders_db) == before


def test_the_connection_itself_refuses_writes_and_attach(orders_db, tmp_path):
    connection = open_readonly(orders_db)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        connection.execute("DELETE FROM orders")
    with pytest.raises(sqlite3.Error):
        connection.execute(f"ATTACH DATABASE '{tmp_path / 'x.db'}' AS x")
    connection.close()
    assert not (tmp_path / "x.db").exists()


def test_unknown_table_hint_names_the_real_tables(orders_db):
    error = query_error(orders_db, "SELECT * FROM order_lines")
    assert error.code == "E_QUERY_INVALID"
    assert error.message == "SQL error: no such table: order_lines"
    assert error.hint == "Tables: orders, customers."


@pytest.mark.parametrize(
    "sql",
    ["SELECT total FROM orders", "SELECT o.total FROM orders AS o", "SELECT o.total FROM orders o JOIN customers c ON c.id = o.id"],
)
def test_unknown_column_hint_names_that_tables_columns(orders_db, sql):
    error = query_error(orders_db, sql)
    assert error.code == "E_QUERY_INVALID"
    assert error.hint == "Columns: orders(id, customer, region)."


@pytest.mark.parametrize("sql", ["SELECT nada FROM orders JOIN customers ON 1", "SELECT nada"])
def test_unknown_column_that_cannot_be_placed_names_every_table(orders_db, sql):
    error = query_error(orders_db, sql)
    assert error.hint == 'Columns: orders(id, customer, region); customers(id, name, "delete").'


def test_unquoted_keyword_column_hint_says_to_quote_it(orders_db):
    error = query_error(orders_db, "SELECT delete FROM customers")
    assert error.code == "E_QUERY_FORBIDDEN"  # a bare DELETE is refused before SQLite sees it
    error = query_error(orders_db, "SELECT order FROM orders")
    assert error.code == "E_QUERY_INVALID"
    assert "must be double-quoted" in error.hint and "orders(id, customer, region)" in error.hint


def test_timeout_stops_an_endless_recursive_cte(orders_db):
    started = time.monotonic()
    error = query_error(
        orders_db,
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT COUNT(*) FROM n",
        timeout_s=0.3,
    )
    assert error.code == "E_TIMEOUT"
    assert time.monotonic() - started < 2


def make_wide(path: Path, rows: int, columns: int, cell: str) -> Path:
    connection = sqlite3.connect(path)
    names = [f"c{i}" for i in range(columns)]
    connection.execute(f"CREATE TABLE wide ({', '.join(names)})")
    marks = ", ".join("?" for _ in names)
    connection.executemany(f"INSERT INTO wide VALUES ({marks})", [[f"{r}:{cell}"] * columns for r in range(rows)])
    connection.commit()
    connection.close()
    return path


def test_budget_drops_whole_tail_rows_and_says_the_rest_exist(tmp_path):
    db = make_wide(tmp_path / "wide.db", rows=300, columns=40, cell="x" * 20)
    result = run_query(db, "SELECT * FROM wide")
    shown = result["row_count"]
    assert 0 < shown < 200
    assert len(result["rows"]) == shown
    assert result["columns"] == [f"c{i}" for i in range(40)]
    assert result["rows"][-1][0] == f"{shown - 1}:" + "x" * 20  # whole rows, in order, none sliced
    assert result["truncated"] is True and result["limited"] is True
    assert math.ceil(len(json.dumps(result)) / 4) <= 2000
    assert result["hint"].startswith(
        f"Showing {shown} of 200 rows. The other {200 - shown} matched your query and exist: they were dropped by "
        f"the 2000-token response budget, not by your filter, do NOT report these {shown} as the complete result. "
        "This statement returns 40 column(s); ask again with fewer columns to fit more rows, or aggregate."
    )


def test_budget_keeps_as_many_rows_as_fit(tmp_path):
    db = make_wide(tmp_path / "wide.db", rows=300, columns=40, cell="x" * 20)
    result = run_query(db, "SELECT * FROM wide")
    one_more = dict(result, rows=run_query(db, "SELECT * FROM wide LIMIT " + str(result["row_count"] + 1))["rows"])
    assert math.ceil(len(json.dumps(one_more)) / 4) > 2000


def test_row_larger_than_the_budget_reports_its_cost(tmp_path):
    db = make_wide(tmp_path / "huge.db", rows=3, columns=1, cell="y" * 12_000)
    result = run_query(db, "SELECT c0 FROM wide")
    assert result["rows"] == [] and result["row_count"] == 0
    assert result["hint"].startswith("Showing 0 of 3 rows. All 3 matched your query and exist")
    assert "One row of this statement costs about 3002 tokens" in result["hint"]
    assert math.ceil(len(json.dumps(result)) / 4) <= 2000


def test_a_large_user_limit_is_counted_without_being_held(tmp_path):
    db = make_wide(tmp_path / "many.db", rows=5000, columns=3, cell="z" * 30)
    result = run_query(db, "SELECT * FROM wide LIMIT 5000")
    assert result["truncated"] is True
    assert result["hint"].startswith(f"Showing {result['row_count']} of 5000 rows.")


def test_blobs_come_back_as_their_size(tmp_path):
    db = tmp_path / "b.db"
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE TABLE files (name TEXT, data BLOB)")
        connection.execute("INSERT INTO files VALUES ('a', ?)", (b"\x00" * 1234,))
    assert run_query(db, "SELECT name, data FROM files")["rows"] == [["a", "<blob 1234 bytes>"]]


@pytest.mark.parametrize("folder", ["a#b", "what?mode=rwc", "100%25 sure", "x%3Fy", "🍌 forest"])
def test_folder_names_with_uri_characters_open_the_right_file(tmp_path, folder):
    # The decoy is where a naive URI would point: "a#b/x.db" read as "a" + fragment.
    (tmp_path / folder.split("#")[0].split("?")[0]).mkdir(exist_ok=True)
    target = tmp_path / folder
    target.mkdir(exist_ok=True)
    db = make_orders(target / "orders.db", count=3)
    assert run_query(db, "SELECT COUNT(*) FROM orders")["rows"] == [[3]]
    assert sorted(p.name for p in target.iterdir()) == ["orders.db"]


def test_missing_payload_is_not_found(tmp_path):
    assert query_error(tmp_path / "gone.db", "SELECT 1").code == "E_NOT_FOUND"


def test_a_file_that_is_not_sqlite_is_an_invalid_query(tmp_path):
    fake = tmp_path / "fake.db"
    fake.write_bytes(b"not a database " * 200)
    error = query_error(fake, "SELECT 1 FROM t")
    assert error.code == "E_QUERY_INVALID"
    assert "not a database" in error.message
