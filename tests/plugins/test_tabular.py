"""The shared naming and type rules every tabular converter relies on."""
from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from monkeyllm_core.data.sqlnames import quote_identifier
from monkeyllm_gardener.kit.tabular import (
    NumberToken,
    TypeTracker,
    classify_text,
    classify_value,
    convert_text,
    convert_value,
    decimal_notes,
    repair_headers,
    stored_real_differs,
    table_name_from,
)



@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("invoices-2026-q1", "invoices_2026_q1"),
        ("Résumés", "resumes"),  # Latin letters fold to plain ASCII words...
        ("Straße Ærø", "strasse_aero"),
        ("Résumés".replace("é", "e\u0301"), "resumes"),  # (NFD and NFC headers are one name)
        ("名前", "名前"),  # ...every other script is kept
        ("Ёлка Ωμέγα", "ёлка_ωμέγα"),
        ("ＡＢ１ ２", "ab1_2"),  # full-width forms are the ASCII ones (NFKC)
        ("\u0301abc", "abc"),  # a name never starts with a combining mark
        ("2026 report", "t_2026_report"),
        ("order", "order"),
        ('My "quoted" name', "my_quoted_name"),
        ("_private", "_private"),
        ("Sales Q1 (€)", "sales_q1_eur"),
        ("", "data"),
        ("!!!", "data"),
        ("Отчёт", "отчёт"),
        ("🙂🙂", "data"),
        ("x" * 100, "x" * 64),
    ],
)
def test_table_names_are_slugified(text: str, expected: str) -> None:
    assert table_name_from(text) == expected


def test_table_name_fallback_is_the_callers_choice() -> None:
    assert table_name_from("???", fallback="sheet_3") == "sheet_3"


@pytest.mark.parametrize(
    "text",
    ["9" * 80, "é" * 70, "a b " * 40, "1-2-3", "__x__", "SELECT * FROM t; --", "a\x00b", "résumé 2024/25",
     'say "hi"', "名前 (ふりがな)", "x\u200by", "١٢٣"],
)
def test_every_table_name_is_one_word_that_sqlite_accepts_quoted(text: str) -> None:
    name = table_name_from(text)
    assert len(name) <= 64 and name.strip("_") and all(ch == "_" or ch.isalnum() for ch in name)
    with sqlite3.connect(":memory:") as db:  # the engine quotes any name that is not plain
        db.execute(f"CREATE TABLE {quote_identifier(name)} ({quote_identifier(name)} TEXT)")
        db.execute(f"INSERT INTO {quote_identifier(name)} VALUES ('ok')")
        assert db.execute(f"SELECT {quote_identifier(name)} FROM {quote_identifier(name)}").fetchall() == [("ok",)]


@pytest.mark.parametrize(
    ("raw", "names", "notes"),
    [
        (["id", "name"], ["id", "name"], []),
        (["a", "a"], ["a", "a_2"], ["Header `a` repeats `a` and is named `a_2`."]),
        (["a", "A"], ["a", "a_2"], ["Header `A` repeats `a` and is named `a_2`."]),
        (
            ["a", "", "b", None],
            ["a", "column_2", "b", "column_4"],
            [
                "Column 2 had no header and is named `column_2`.",
                "Column 4 had no header and is named `column_4`.",
            ],
        ),
        (["Total (€)"], ["total_eur"], ["Header `Total (€)` is named `total_eur`."]),
        (["2024", "1st place"], ["c_2024", "c_1st_place"], [
            "Header `2024` is named `c_2024`.",
            "Header `1st place` is named `c_1st_place`.",
        ]),
        (["order", "group", "select"], ["order", "group", "select"], []),
        (['say "hi"', "first name"], ["say_hi", "first_name"], [
            'Header `say "hi"` is named `say_hi`.',
            "Header `first name` is named `first_name`.",
        ]),
        (["Имя", "名前", "年齢"], ["имя", "名前", "年齢"], ["Header `Имя` is named `имя`."]),
        (["🙂"], ["column_1"], [
            "Header `🙂` has no letters or digits usable in SQL and is named `column_1`."
        ]),
        (["", "column_1"], ["column_1", "column_1_2"], [
            "Column 1 had no header and is named `column_1`.",
            "Header `column_1` repeats the name given to column 1 and is named `column_1_2`.",
        ]),
        (["a", "a", "A"], ["a", "a_2", "a_3"], [
            "Header `a` repeats `a` and is named `a_2`.",
            "Header `A` repeats `a` and is named `a_3`.",
        ]),
    ],
)
def test_headers_are_repaired_and_every_repair_is_stated(raw, names, notes) -> None:
    assert repair_headers(raw) == (names, notes)


def test_long_duplicate_headers_stay_within_64_characters() -> None:
    names, _ = repair_headers(["x" * 80, "X" * 80])
    assert names == ["x" * 64, "x" * 62 + "_2"]


@pytest.mark.parametrize(
    ("cell", "kind"),
    [
        ("0", "integer"), ("42", "integer"), ("-7", "integer"),
        # not plain numbers: their text would change, so they are text
        ("+5", "text"), (" 42 ", "text"), (" 5", "text"), ("5 ", "text"), ("-0", "text"), ("+1.5", "text"),
        ("-0.0", "text"), ("-0e5", "text"), ("1e400", "text"), ("-1e400", "text"),
        ("0.10000000000000000001", "text"), ("9223372036854775807", "wide_integer"),
        ("-9223372036854775808", "wide_integer"),
        ("9223372036854775808", "text"), ("123456789012345678901234567890", "text"),
        ("00501", "text"), ("007", "text"), ("+351 912 345 678", "text"),
        ("1.5", "real"), ("-0.25", "real"), ("1e3", "real"), ("2.5E-3", "real"), (".5", "real"),
        ("0.0", "real"), ("1.50", "real"), ("1e5", "real"), ("1e308", "real"),
        ("007.5", "text"), ("nan", "text"), ("NaN", "text"), ("inf", "text"),
        ("-Infinity", "text"), ("1_000", "text"), ("1,000", "text"), ("1e999", "text"),
        ("1.", "text"), ("١٢", "text"),
        ("N/A", "text"), ("NA", "text"), ("n/a", "text"), ("-", "text"), ("null", "text"),
        ("NULL", "text"), ("none", "text"), ("?", "text"),
        ("", "null"), ("   ", "null"), ("\t", "null"), (None, "null"),
    ],
)
def test_cells_are_classified_by_the_declared_rules(cell, kind) -> None:
    assert classify_text(cell) == kind


def _column_type(cells: list[str]) -> str:
    tracker = TypeTracker()
    for cell in cells:
        tracker.observe_text_row([cell])
    return tracker.types(1)[0]


@pytest.mark.parametrize(
    ("cells", "sql_type"),
    [
        (["1", "2", "3"], "INTEGER"),
        (["1", "", "3"], "INTEGER"),
        (["1", "2.5"], "REAL"),
        (["1e3", "4"], "REAL"),
        (["00501", "90210"], "TEXT"),
        (["1", "N/A"], "TEXT"),
        (["1.5", "-"], "TEXT"),
        (["1", "nan"], "TEXT"),
        (["1,000", "2"], "TEXT"),
        (["12345678901234567890", "1"], "TEXT"),
        (["9007199254740993", "0.5"], "TEXT"),
        (["9007199254740993", "1"], "INTEGER"),
        (["", " "], "TEXT"),
    ],
)
def test_column_types_follow_every_cell(cells, sql_type) -> None:
    assert _column_type(cells) == sql_type


def test_placeholders_keep_a_numeric_column_text_and_exact() -> None:
    cells = ["12", "N/A", "7", "-", "?"]
    sql_type = _column_type(cells)
    assert sql_type == "TEXT"
    assert [convert_text(cell, sql_type) for cell in cells] == cells


def test_text_values_are_kept_exactly_and_blank_cells_become_null() -> None:
    assert convert_text("  padded  ", "TEXT") == "  padded  "
    assert convert_text("00501", "TEXT") == "00501"
    assert convert_text("   ", "TEXT") is None
    assert convert_text("", "INTEGER") is None


def test_numbers_are_converted_per_the_final_column_type() -> None:
    assert convert_text("42", "INTEGER") == 42
    assert convert_text("7", "REAL") == 7.0 and isinstance(convert_text("7", "REAL"), float)
    assert convert_text("1e3", "REAL") == 1000.0


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (None, "null"), (True, "integer"), (3, "integer"), (2**63, "text"), (2**60, "wide_integer"),
        (1.5, "real"), (float("nan"), "text"), ("42", "text"), ("", "text"), ('{"a": 1}', "text"),
    ],
)
def test_typed_values_are_classified_by_the_declared_rules(value, kind) -> None:
    assert classify_value(value) == kind


@pytest.mark.parametrize(
    ("value", "sql_type", "stored"),
    [
        (True, "INTEGER", 1), (False, "INTEGER", 0), (True, "TEXT", "true"), (3, "REAL", 3.0),
        (2**70, "TEXT", str(2**70)), (1.5, "TEXT", "1.5"), ("x", "TEXT", "x"), (None, "TEXT", None),
    ],
)
def test_typed_values_are_converted_per_the_final_column_type(value, sql_type, stored) -> None:
    assert convert_value(value, sql_type) == stored


def _tracked(cells: list[str]) -> TypeTracker:
    tracker = TypeTracker()
    for cell in cells:
        tracker.observe_text_row([cell])
    return tracker


@pytest.mark.parametrize(
    ("cells", "note"),
    [
        (["1.50", "2.25"], "`price` was read as decimal: `1.50` is stored as 1.5."),
        (["2.25", "1e5"], "`price` was read as decimal: `1e5` is stored as 100000.0."),
        ([".5"], "`price` was read as decimal: `.5` is stored as 0.5."),
        (["7", "2.5"], "`price` was read as decimal: `7` is stored as 7.0."),
        (["0.00001"], "`price` was read as decimal: `0.00001` is stored as 1e-05."),
        (["2.25", "1.5", "-3.125", "10.0"], None),  # every value reads back as written
        (["1", "2"], None),  # INTEGER: stored as written
        (["1.50", "N/A"], None),  # TEXT: stored as written
    ],
)
def test_a_real_column_whose_spelling_changes_gets_one_note_naming_it(cells, note) -> None:
    notes = decimal_notes(["price"], _tracked(cells))
    assert notes == ([note] if note else [])


def test_stored_real_differs_matches_what_sqlite_gives_back() -> None:
    rng = random.Random(7)
    texts = ["1.50", ".5", "1e5", "7", "2.25", "0.1", "10.0", "123456.789", "0.00012", "1E-7", "-2.5"]
    texts += [f"{rng.randint(0, 10**6)}.{rng.randint(0, 999):0{rng.randint(1, 4)}d}" for _ in range(200)]
    with sqlite3.connect(":memory:") as db:
        db.execute("CREATE TABLE t (x REAL)")
        for text in texts:
            (stored,) = db.execute("SELECT CAST(? AS REAL)", (float(text),)).fetchone()
            assert stored_real_differs(text) == (repr(stored) != text), text


@pytest.mark.parametrize(
    ("token", "sql_type", "stored"),
    [("1.50", "REAL", 1.5), ("1e400", "TEXT", "1e400"), ("0.10000000000000000001", "TEXT", "0.10000000000000000001"),
     ("-0", "TEXT", "-0"), ("42", "INTEGER", 42)],
)
def test_number_tokens_follow_the_text_rules_and_keep_their_text(token, sql_type, stored) -> None:
    tracker = TypeTracker()
    tracker.observe_value_row([NumberToken(token)])
    assert tracker.types(1) == [sql_type]
    value = convert_value(NumberToken(token), sql_type)
    assert value == stored and type(value) in (int, float, str)


def test_numbers_longer_than_python_parses_plant_as_exact_text(vine_cli: Any, tmp_path: Path) -> None:
    digits = "7" * 5000  # Python's int() refuses more than 4,300 digits
    export = tmp_path / "export"
    export.mkdir()
    (export / "serials.csv").write_text(f"id,serial\n1,{digits}\n2,42\n", encoding="utf-8")
    (export / "serials-json.json").write_text(f'[{{"id": 1, "serial": {digits}}}, {{"id": 2, "serial": 42}}]',
                                              encoding="utf-8")
    forest, report = vine_cli.adopt_into_new_forest(export)
    assert sorted(report["planted"]) == ["serials", "serials-json"], report
    for node, table in (("serials", "serials"), ("serials-json", "serials_json")):
        with sqlite3.connect(forest / f"{node}.db") as db:
            values = [row[0] for row in db.execute(f"SELECT serial FROM {table} ORDER BY rowid")]
        assert values == [digits, "42"]
