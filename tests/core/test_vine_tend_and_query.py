"""tend writes rows and commits only the refreshed passport; query reads, never writes."""
from __future__ import annotations

import hashlib
import sqlite3

import pytest

from monkeyllm_core import Vine, VineError, init_forest, parse_node

CLIENTS = {"clients": {"columns": {"name": "TEXT", "segment": "TEXT", "order": "INTEGER"},
                       "primary_key": ["name"]}}


def plant_clients(vine, node_id="clients", n=3):
    vine.plant({"id": node_id, "type": "dataset", "title": "Clients", "summary": "Prospects of 2026.",
                "created": "2026-01-01", "updated": "2026-01-01",
                "schema": CLIENTS, "rows": {"clients": [[f"c{i}", "retail", i] for i in range(n)]}})
    vine.flush()


def db_hash(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("sql, verb, count", [
    ("INSERT INTO clients VALUES ('Globex', 'industry', 9)", "INSERT", 1),
    ("UPDATE clients SET segment = 'industry' WHERE \"order\" < 2", "UPDATE", 2),
    ("DELETE FROM clients WHERE name = 'c0'", "DELETE", 1),
    ("INSERT OR REPLACE INTO clients VALUES ('c1', 'web', 1)", "INSERT", 1),
])
def test_tend_writes_rows_refreshes_the_passport_and_commits_only_markdown(vine, brain, sql, verb, count):
    plant_clients(vine)
    db = brain.root / "clients.db"
    result = vine.tend("clients", sql)
    vine.flush()
    assert result["rows_affected"] == count
    assert result["payload_hash"] == db_hash(db)
    assert result["commit"] == brain.head()
    assert isinstance(result["elapsed_ms"], float)
    fm = parse_node(brain.text("clients.md")).frontmatter
    assert fm["payload_hash"] == db_hash(db)
    assert fm["updated"] != "2026-01-01" and fm["created"] == "2026-01-01"
    assert brain.subjects()[0] == f"tend(clients): {verb} {count} row(s)"
    assert brain.files_in_last_commit() == ["clients.md"]
    assert vine.catalog.get("clients")["payload_hash"] == db_hash(db)
    brain.assert_clean()


def test_tend_keeps_the_sample_rows_count_true(vine, brain):
    plant_clients(vine, n=3)
    assert "### clients \u2014 3 rows" in brain.text("clients.md")
    vine.tend("clients", "INSERT INTO clients VALUES ('Globex', 'industry', 9)")
    vine.flush()
    body = brain.text("clients.md")
    assert "### clients \u2014 4 rows" in body and "3 rows" not in body
    brain.assert_clean()


@pytest.mark.parametrize("sql, code", [
    ("SELECT * FROM clients", "E_QUERY_FORBIDDEN"),
    ("DELETE FROM clients", "E_QUERY_FORBIDDEN"),
    ("UPDATE clients SET segment = 'x'", "E_QUERY_FORBIDDEN"),
    ("DROP TABLE clients", "E_QUERY_FORBIDDEN"),
    ("INSERT INTO clients VALUES ('a', 'b', 1); DROP TABLE clients", "E_QUERY_FORBIDDEN"),
    ("CREATE TABLE evil (x)", "E_QUERY_FORBIDDEN"),
    ("ATTACH DATABASE 'x.db' AS x", "E_QUERY_FORBIDDEN"),
    ("INSERT INTO nope VALUES (1)", "E_QUERY_INVALID"),
    ("INSERT INTO clients VALUES ('c0', 'dup', 1)", "E_QUERY_INVALID"),
])
def test_refused_tends_leave_payload_passport_and_git_untouched(vine, brain, sql, code):
    plant_clients(vine)
    before, head = brain.snapshot(), brain.head()
    with pytest.raises(VineError) as info:
        vine.tend("clients", sql)
    assert info.value.code == code and info.value.hint
    vine.flush()
    assert brain.snapshot() == before and brain.head() == head
    brain.assert_clean()


def test_tend_on_a_node_without_a_payload_is_not_found(vine, make_note):
    vine.plant(make_note("fact"))
    with pytest.raises(VineError) as info:
        vine.tend("fact", "INSERT INTO t VALUES (1)")
    assert info.value.code == "E_NOT_FOUND"


def test_query_reads_columns_and_rows(vine):
    plant_clients(vine)
    answer = vine.query("clients", 'SELECT name, "order" FROM clients WHERE "order" >= 1 ORDER BY name')
    assert answer["columns"] == ["name", "order"]
    assert answer["rows"] == [["c1", 1], ["c2", 2]]
    assert answer["row_count"] == 2 and answer["limited"] is False


def test_query_injects_limit_200_and_says_limited(vine):
    plant_clients(vine, n=500)
    answer = vine.query("clients", "SELECT name FROM clients")
    assert answer["limited"] is True
    # 200 rows matched; the 2000-token budget may show fewer, and then says so
    assert answer["row_count"] == len(answer["rows"]) <= 200
    assert answer["row_count"] == 200 or answer["truncated"] is True
    own = vine.query("clients", "SELECT name FROM clients LIMIT 7")
    assert own["limited"] is False and own["row_count"] == 7
    total = vine.query("clients", "SELECT COUNT(*) FROM clients")
    assert total["rows"] == [[500]]


@pytest.mark.parametrize("sql", [
    "INSERT INTO clients VALUES ('x', 'y', 1)",
    "DELETE FROM clients WHERE 1 = 1",
    "SELECT * FROM clients; DROP TABLE clients",
    "PRAGMA table_info(clients)",
    "ATTACH DATABASE 'other.db' AS o",
    "SELECT 1 FROM clients WHERE name IN (SELECT name FROM clients) AND 0 = (DELETE FROM clients)",
])
def test_query_refuses_writes_and_forbidden_words(vine, brain, sql):
    plant_clients(vine)
    before = db_hash(brain.root / "clients.db")
    with pytest.raises(VineError) as info:
        vine.query("clients", sql)
    assert info.value.code in ("E_QUERY_FORBIDDEN", "E_QUERY_INVALID")
    assert db_hash(brain.root / "clients.db") == before


def test_query_invalid_names_the_real_tables_and_columns(vine):
    plant_clients(vine)
    with pytest.raises(VineError) as info:
        vine.query("clients", "SELECT * FROM customers")
    assert info.value.code == "E_QUERY_INVALID" and "clients" in info.value.hint
    with pytest.raises(VineError) as info:
        vine.query("clients", "SELECT total FROM clients")
    assert info.value.code == "E_QUERY_INVALID" and "segment" in info.value.hint


def test_query_through_a_read_only_vine_and_the_cli(vine, brain):
    plant_clients(vine)
    vine.close()
    with Vine(brain.root, writable=False) as reader:
        assert reader.query("clients", "SELECT COUNT(*) FROM clients")["rows"] == [[3]]
    result = brain.cli("query", "clients", "SELECT COUNT(*) AS n FROM clients")
    assert result.returncode == 0, result.stderr
    assert '"n"' in result.stdout and "3" in result.stdout
    bad = brain.cli("query", "clients", "DROP TABLE clients")
    assert bad.returncode == 2 and bad.stderr.startswith("error E_QUERY_FORBIDDEN:")
    assert "Traceback" not in bad.stderr


def test_query_and_tend_work_in_a_forest_whose_path_has_hash_question_and_percent(tmp_path):
    root = init_forest(tmp_path / "we#ird?pa%20th", "Weird")
    with Vine(root) as vine:
        plant_clients(vine)
        assert vine.query("clients", "SELECT COUNT(*) FROM clients")["rows"] == [[3]]
        vine.tend("clients", "INSERT INTO clients VALUES ('z', 'web', 7)")
        assert vine.query("clients", "SELECT COUNT(*) FROM clients")["rows"] == [[4]]
    assert not (tmp_path / "we").exists()  # no stray database created at a cut path
    with sqlite3.connect(root / "clients.db") as con:
        assert con.execute("SELECT COUNT(*) FROM clients").fetchone() == (4,)
