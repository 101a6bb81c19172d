from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from monkeyllm_core.data.dataset import create_dataset, generate_ddl, validate_schema
from monkeyllm_core.errors import VineError
from monkeyllm_core.hashing import copy_file_with_hash, sha256_file

CLIENTS = {
    "clients": {
        "columns": {"name": "TEXT", "site": "TEXT", "segment": "TEXT", "collected_at": "TEXT"},
        "primary_key": ["name"],
    }
}


def leftovers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


def test_plant_creates_the_payload_and_loads_rows(tmp_path):
    db = tmp_path / "prospecting.db"
    counts = create_dataset(db, CLIENTS, {"clients": [["Acme", "acme.example", "industry", "2026-01-14"]]})
    assert counts == {"clients": 1}
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT * FROM clients").fetchall() == [("Acme", "acme.example", "industry", "2026-01-14")]
        with pytest.raises(sqlite3.IntegrityError):
            connection.execute("INSERT INTO clients VALUES ('Acme', 'x', 'y', 'z')")


def test_tables_without_rows_are_created_empty_and_counted_zero(tmp_path):
    schema = {**CLIENTS, "visits": {"columns": {"client": "TEXT", "on_day": "TEXT"}}}
    assert create_dataset(tmp_path / "d.db", schema) == {"clients": 0, "visits": 0}


def test_keyword_columns_get_quoted_ddl_that_runs(tmp_path):
    schema = {"order": {"columns": {"group": "TEXT", "select": "INTEGER", "order": "REAL"}, "primary_key": ["group"]}}
    ddl = generate_ddl(schema)
    assert ddl == ['CREATE TABLE "order" ("group" TEXT, "select" INTEGER, "order" REAL, PRIMARY KEY ("group"))']
    create_dataset(tmp_path / "k.db", schema, {"order": [("a", 1, 2.5)]})
    with sqlite3.connect(tmp_path / "k.db") as connection:
        assert connection.execute('SELECT "group", "select", "order" FROM "order"').fetchall() == [("a", 1, 2.5)]


def test_lowercase_type_names_are_accepted_and_written_uppercase():
    assert generate_ddl({"t": {"columns": {"a": "integer"}}}) == ["CREATE TABLE t (a INTEGER)"]


def test_a_generator_of_many_rows_streams_in(tmp_path):
    rows = ((index, f"name {index}", index * 0.5) for index in range(200_000))
    counts = create_dataset(tmp_path / "big.db", {"t": {"columns": {"id": "INTEGER", "name": "TEXT", "v": "REAL"}}}, {"t": rows})
    assert counts == {"t": 200_000}
    with sqlite3.connect(tmp_path / "big.db") as connection:
        assert connection.execute("SELECT COUNT(*), MAX(id) FROM t").fetchone() == (200_000, 199_999)


def test_finished_payload_is_one_rollback_journal_file(tmp_path):
    create_dataset(tmp_path / "one.db", CLIENTS, {"clients": [["a", "b", "c", "d"]]})
    assert leftovers(tmp_path) == ["one.db"]
    with sqlite3.connect(tmp_path / "one.db") as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_existing_payload_is_never_overwritten(tmp_path):
    db = tmp_path / "orders.db"
    db.write_bytes(b"precious")
    with pytest.raises(VineError) as caught:
        create_dataset(db, CLIENTS)
    assert caught.value.code == "E_SCHEMA"
    assert "payload exists" in caught.value.message
    assert db.read_bytes() == b"precious"


def test_stale_journal_beside_a_new_payload_is_refused(tmp_path):
    (tmp_path / "d.db-journal").write_bytes(b"old")
    with pytest.raises(VineError) as caught:
        create_dataset(tmp_path / "d.db", CLIENTS)
    assert caught.value.code == "E_SCHEMA" and "d.db-journal" in caught.value.message
    assert leftovers(tmp_path) == ["d.db-journal"]


BAD_SCHEMAS = [
    ({}, "at least one table"),
    ({"Clients": {"columns": {"a": "TEXT"}}}, "'Clients'"),
    ({"2026_sales": {"columns": {"a": "TEXT"}}}, "'2026_sales'"),
    ({"t" * 65: {"columns": {"a": "TEXT"}}}, "invalid table name"),
    ({"t": {"columns": {"my col": "TEXT"}}}, "'my col'"),
    ({"t": {"columns": {"a": "VARCHAR"}}}, "t.a"),
    ({"t": {"columns": {"a": "TEXT"}, "primary_key": ["b"]}}, "'b'"),
    ({"t": {"columns": {"a": "TEXT"}, "primary_key": ["a", "a"]}}, "repeats"),
    ({"t": {"columns": {}}}, "table t declares no columns"),
    ({"t": {"columns": {f"c{i}": "TEXT" for i in range(51)}}}, "51 columns"),
    ({f"t{i}": {"columns": {"a": "TEXT"}} for i in range(11)}, "11 tables"),
    ({"sqlite_stat": {"columns": {"a": "TEXT"}}}, "sqlite_"),
    ({"t": {"columns": {"a": "TEXT"}, "indexes": ["a"]}}, "indexes"),
    ({"t": ["a", "b"]}, "table t"),
]


@pytest.mark.parametrize(("schema", "named"), BAD_SCHEMAS)
def test_bad_schema_is_refused_naming_the_culprit_and_leaves_no_file(tmp_path, schema, named):
    with pytest.raises(VineError) as caught:
        create_dataset(tmp_path / "bad.db", schema)
    assert caught.value.code == "E_SCHEMA"
    assert named in caught.value.message
    assert caught.value.hint
    assert leftovers(tmp_path) == []


def test_limits_are_inclusive():
    validate_schema({f"t{i}": {"columns": {f"c{j}": "TEXT" for j in range(50)}} for i in range(10)})
    validate_schema({"t" * 64: {"columns": {"c" * 64: "BLOB"}}})


def rows_failing_at_row_3():
    yield ["a", "b", "c", "d"]
    yield ["b", "b", "c", "d"]
    yield ["c", "b", "c"]
    yield ["d", "b", "c", "d"]


def rows_with_duplicate_key_at_row_2():
    yield ["a", "b", "c", "d"]
    yield ["a", "x", "y", "z"]


@pytest.mark.parametrize(
    ("rows", "named"),
    [
        (rows_failing_at_row_3, "table clients, row 3 has 3 value(s)"),
        (rows_with_duplicate_key_at_row_2, "table clients, row 2"),
        (lambda: iter([["a", "b", "c", 2**70]]), "table clients, row 1"),
        (lambda: iter(["abcd"]), "table clients, row 1: a row must be a list"),
    ],
)
def test_failing_row_half_way_leaves_no_file(tmp_path, rows, named):
    with pytest.raises(VineError) as caught:
        create_dataset(tmp_path / "half.db", CLIENTS, {"clients": rows()})
    assert caught.value.code == "E_SCHEMA"
    assert named in caught.value.message
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("row", [{"name": "a"}, b"abcd", bytearray(b"abcd"), 42, {"a", "b", "c", "d"}],
                         ids=["mapping", "bytes", "bytearray", "int", "set"])
def test_a_row_that_is_not_a_sequence_of_values_is_refused_after_good_rows(tmp_path, row):
    # tuples and lists skip the type checks: anything else still meets them, at its row number
    with pytest.raises(VineError) as caught:
        create_dataset(tmp_path / "kinds.db", CLIENTS, {"clients": [("a", "b", "c", "d"), ["b", "b", "c", "d"], row]})
    assert f"table clients, row 3: a row must be a list of values, got {type(row).__name__}" in caught.value.message
    assert leftovers(tmp_path) == []


def test_rows_of_any_sequence_type_load_the_same_values(tmp_path):
    class Row(list):
        pass

    class Cells:
        """A read-only sequence that is neither a tuple nor a list."""

        def __init__(self, *values):
            self.values = values

        def __len__(self):
            return len(self.values)

        def __getitem__(self, index):
            return self.values[index]

    from collections.abc import Sequence
    Sequence.register(Cells)
    rows = [("a", 1, None, "é"), ["b", 2**62, 1.5, ""], Row(["c", -1, 0.0, "名前"]), Cells("d", 0, -2.5, " ")]
    schema = {"t": {"columns": {"k": "TEXT", "n": "INTEGER", "r": "REAL", "s": "TEXT"}}}
    assert create_dataset(tmp_path / "seq.db", schema, {"t": rows}) == {"t": 4}
    with sqlite3.connect(tmp_path / "seq.db") as connection:
        assert connection.execute("SELECT k, n, typeof(n), r, typeof(r), s FROM t ORDER BY rowid").fetchall() == [
            ("a", 1, "integer", None, "null", "é"), ("b", 2**62, "integer", 1.5, "real", ""),
            ("c", -1, "integer", 0.0, "real", "名前"), ("d", 0, "integer", -2.5, "real", " ")]


def test_error_raised_by_the_row_source_propagates_and_leaves_no_file(tmp_path):
    def broken():
        yield ["a", "b", "c", "d"]
        raise RuntimeError("source went away")

    with pytest.raises(RuntimeError, match="source went away"):
        create_dataset(tmp_path / "src.db", CLIENTS, {"clients": broken()})
    assert leftovers(tmp_path) == []


def test_rows_for_an_undeclared_table_are_refused_before_birth(tmp_path):
    with pytest.raises(VineError) as caught:
        create_dataset(tmp_path / "u.db", CLIENTS, {"visits": [[1]]})
    assert caught.value.code == "E_SCHEMA" and "visits" in caught.value.message
    assert leftovers(tmp_path) == []


def test_missing_parent_folder_is_not_found(tmp_path):
    with pytest.raises(VineError) as caught:
        create_dataset(tmp_path / "nope" / "d.db", CLIENTS)
    assert caught.value.code == "E_NOT_FOUND"


# --- hashing -----------------------------------------------------------------


def test_sha256_file_matches_hashlib_over_several_chunks(tmp_path):
    data = bytes(range(256)) * 9000  # > 2 MiB: crosses chunk boundaries
    path = tmp_path / "blob.bin"
    path.write_bytes(data)
    assert sha256_file(path) == hashlib.sha256(data).hexdigest()


def test_copy_returns_the_hash_and_leaves_only_the_copy(tmp_path):
    source = tmp_path / "src" / "crm.db"
    source.parent.mkdir()
    source.write_bytes(b"x" * 3_000_000)
    target_dir = tmp_path / "forest"
    target_dir.mkdir()
    digest = copy_file_with_hash(source, target_dir / "crm.db")
    assert digest == hashlib.sha256(b"x" * 3_000_000).hexdigest() == sha256_file(target_dir / "crm.db")
    assert leftovers(target_dir) == ["crm.db"]


def test_copy_never_overwrites(tmp_path):
    (tmp_path / "a").write_bytes(b"new")
    (tmp_path / "b").write_bytes(b"old")
    with pytest.raises(FileExistsError):
        copy_file_with_hash(tmp_path / "a", tmp_path / "b")
    assert (tmp_path / "b").read_bytes() == b"old"
    assert leftovers(tmp_path) == ["a", "b"]


def test_failed_copy_removes_its_temporary_file(tmp_path):
    target_dir = tmp_path / "out"
    target_dir.mkdir()
    with pytest.raises(IsADirectoryError):
        copy_file_with_hash(tmp_path, target_dir / "x.db")  # a folder cannot be read as bytes
    assert leftovers(target_dir) == []
