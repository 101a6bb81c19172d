"""Issue 16: the row loaders take each column's rule once and let a value that already
has its stored type through untouched (``text_row_converter`` for CSV,
``value_converters`` for JSON, ``SheetPlan.renderer`` for workbooks). Nothing a user
sees may change: these files are made in code with the values that go wrong first
(integers past 2**53 and 2**63, leading zeros, NaN/inf spelt as text, a negative
zero, dates and times, mixed columns, empty and blank cells, unicode), loaded into
real SQLite, and every stored value is read back with its SQLite type."""
from __future__ import annotations

import datetime as dt
import math
import sqlite3
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import xlwt

from monkeyllm_core.data.dataset import create_dataset
from monkeyllm_gardener.kit.sheets import ColumnPlan, survey_sheet, write_cell
from monkeyllm_gardener.kit.tabular import (
    NumberToken,
    convert_text,
    convert_value,
    text_row_converter,
    value_converters,
)
from monkeyllm_plugins.csv_dataset import CsvConverter
from monkeyllm_plugins.json_data import JsonConverter
from monkeyllm_plugins.xls_dataset import XlsConverter
from monkeyllm_plugins.xlsx_dataset import XlsxConverter

BIG = 2**53 + 1  # not exact as a double
EXACT = 2**53  # the largest integer a workbook's doubles hold exactly
HUGE = 2**63  # beyond SQLite's 64-bit integer


def stored(tmp_path: Path, conversion: Any) -> dict[str, list[tuple[tuple[Any, str], ...]]]:
    """Every table of the dataset the conversion describes, loaded the engine's way:
    each row as (value, typeof(value)) pairs."""
    db = tmp_path / "stored.db"
    create_dataset(db, conversion.schema, conversion.rows)
    out = {}
    with sqlite3.connect(db) as connection:
        for table, spec in conversion.schema.items():
            names = list(spec["columns"])
            picks = ", ".join(f'"{name}", typeof("{name}")' for name in names)
            rows = connection.execute(f'SELECT {picks} FROM "{table}" ORDER BY rowid').fetchall()
            out[table] = [tuple(zip(row[0::2], row[1::2])) for row in rows]
    db.unlink()
    return out


def column(rows: list[tuple[tuple[Any, str], ...]], index: int) -> list[tuple[Any, str]]:
    return [row[index] for row in rows]


# ---------------------------------------------------------------- CSV


def test_csv_cells_are_stored_with_their_columns_types_and_text_exactly(tmp_path: Path) -> None:
    path = tmp_path / "tricky.csv"
    path.write_text(
        "count,price,code,big,word,blank,label\n"
        f"1,1.50,00501,{BIG},nan,,Ünïcode 名前\n"
        f"-7,.5,007,{HUGE},inf,   ,  padded  \n"
        f"0,1e3,-0,-{BIG},-0.0,,\u3000\n"
        ",,,,1e400,,\n"
        "9,2,42,1,N/A,,x\n",
        encoding="utf-8", newline="")
    conversion = CsvConverter().convert(path)
    assert conversion.schema["tricky"]["columns"] == {
        "count": "INTEGER", "price": "REAL", "code": "TEXT", "big": "TEXT",
        "word": "TEXT", "blank": "TEXT", "label": "TEXT"}
    rows = stored(tmp_path, conversion)["tricky"]
    assert column(rows, 0) == [(1, "integer"), (-7, "integer"), (0, "integer"), (None, "null"), (9, "integer")]
    assert column(rows, 1) == [(1.5, "real"), (0.5, "real"), (1000.0, "real"), (None, "null"), (2.0, "real")]
    assert column(rows, 2) == [("00501", "text"), ("007", "text"), ("-0", "text"), (None, "null"), ("42", "text")]
    # 2**63 does not fit in 64 bits: the whole column is TEXT, every value as written
    assert column(rows, 3) == [(str(BIG), "text"), (str(HUGE), "text"), (f"-{BIG}", "text"), (None, "null"),
                               ("1", "text")]
    assert column(rows, 4) == [("nan", "text"), ("inf", "text"), ("-0.0", "text"), ("1e400", "text"), ("N/A", "text")]
    assert column(rows, 5) == [(None, "null")] * 5  # empty and whitespace-only cells are NULL
    # a cell of only (unicode) whitespace is NULL; text around spaces is kept as written
    assert column(rows, 6) == [("Ünïcode 名前", "text"), ("  padded  ", "text"), (None, "null"), (None, "null"),
                               ("x", "text")]


def test_csv_integers_past_64_bits_make_the_column_text_digit_for_digit(tmp_path: Path) -> None:
    path = tmp_path / "ids.csv"
    path.write_text(f"id,wide\n1,{BIG}\n{HUGE},-{BIG}\n00,3\n", encoding="utf-8", newline="")
    conversion = CsvConverter().convert(path)
    assert conversion.schema["ids"]["columns"] == {"id": "TEXT", "wide": "INTEGER"}
    rows = stored(tmp_path, conversion)["ids"]
    assert rows == [(("1", "text"), (BIG, "integer")),
                    ((str(HUGE), "text"), (-BIG, "integer")),
                    (("00", "text"), (3, "integer"))]


def test_csv_ragged_rows_and_a_split_wide_table_keep_every_cell(tmp_path: Path) -> None:
    header = ",".join(f"c{i}" for i in range(60))
    full = ",".join(str(i) for i in range(60))
    path = tmp_path / "wide.csv"
    path.write_text(f"{header}\n{full}\n1,2\n{full},extra\n", encoding="utf-8", newline="")
    conversion = CsvConverter().convert(path)
    tables = stored(tmp_path, conversion)
    first, second = tables["wide"], tables["wide_part_2"]
    assert [value for value, _ in first[0]] == list(range(50))
    assert [value for value, _ in second[0]][:10] == list(range(50, 60))
    assert [value for value, _ in first[1]] == [1, 2] + [None] * 48  # a short row is padded with NULL
    assert second[2][-1] == ("extra", "text")


def test_text_row_converter_does_what_convert_text_does_cell_by_cell() -> None:
    cells = ["", " ", "\t", "0", "-0", "42", "1.50", "007", "nan", "inf", "1e400", str(HUGE), "名前", None]
    for sql_type in ("TEXT", "INTEGER", "REAL"):
        usable = [c for c in cells if sql_type == "TEXT" or c is None or not c.strip() or _parses(c, sql_type)]
        convert = text_row_converter([sql_type] * len(usable))
        expected = tuple(convert_text(cell, sql_type) for cell in usable)
        assert _same(convert(usable), expected)
    mixed = ["INTEGER", "TEXT", "REAL", "TEXT"]
    assert _same(text_row_converter(mixed)(["7", "  ", "2.5", "x"]), (7, None, 2.5, "x"))
    assert text_row_converter(mixed)(["7", "y"]) == (7, "y")  # a short row converts what it has


def _parses(cell: str, sql_type: str) -> bool:
    try:
        (int if sql_type == "INTEGER" else float)(cell)
    except ValueError:
        return False
    return True


def _same(left: tuple[Any, ...], right: tuple[Any, ...]) -> bool:
    """Equal value by value, with the same Python type (1 and 1.0 differ; NaN equals NaN)."""
    return len(left) == len(right) and all(
        type(a) is type(b) and (a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b)))
        for a, b in zip(left, right))


# ---------------------------------------------------------------- JSON


def test_json_values_are_stored_with_their_columns_types_and_text_exactly(tmp_path: Path) -> None:
    path = tmp_path / "records.json"
    path.write_text(
        "[" + ", ".join([
            f'{{"n": 1, "r": 1.50, "big": {BIG}, "huge": {HUGE}, "flag": true, "code": "00501", '
            '"odd": NaN, "nested": {"a": [1, 2.50]}, "s": "", "u": "名前 é"}',
            f'{{"n": -3, "r": 2, "big": 7, "huge": 1, "flag": false, "code": "x", "odd": Infinity, '
            '"nested": [], "s": "text", "u": null}',
            '{"n": null, "r": 1e3, "big": null, "flag": "yes", "odd": -0, "s": null}',
        ]) + "]", encoding="utf-8")
    conversion = JsonConverter().convert(path)
    assert conversion.schema["records"]["columns"] == {
        "n": "INTEGER", "r": "REAL", "big": "INTEGER", "huge": "TEXT", "flag": "TEXT", "code": "TEXT",
        "odd": "TEXT", "nested": "TEXT", "s": "TEXT", "u": "TEXT"}
    rows = stored(tmp_path, conversion)["records"]
    assert column(rows, 0) == [(1, "integer"), (-3, "integer"), (None, "null")]
    assert column(rows, 1) == [(1.5, "real"), (2.0, "real"), (1000.0, "real")]
    assert column(rows, 2) == [(BIG, "integer"), (7, "integer"), (None, "null")]
    assert column(rows, 3) == [(str(HUGE), "text"), ("1", "text"), (None, "null")]
    assert column(rows, 4) == [("true", "text"), ("false", "text"), ("yes", "text")]
    assert column(rows, 5) == [("00501", "text"), ("x", "text"), (None, "null")]
    assert column(rows, 6) == [("NaN", "text"), ("Infinity", "text"), ("-0", "text")]
    assert column(rows, 7) == [('{"a": [1, 2.50]}', "text"), ("[]", "text"), (None, "null")]
    assert column(rows, 8) == [("", "text"), ("text", "text"), (None, "null")]  # "" stays an empty string
    assert column(rows, 9) == [("名前 é", "text"), (None, "null"), (None, "null")]


def test_value_converters_do_what_convert_value_does_value_by_value() -> None:
    values: list[Any] = [None, True, False, 0, -5, BIG, HUGE, 1.5, float("nan"), float("inf"), -0.0, "", "00501",
                         "名前", NumberToken("1.50"), NumberToken("7"), {"a": 1}, [1, "x"]]
    (text,) = value_converters(["TEXT"])
    assert _same(tuple(map(text, values)), tuple(convert_value(v, "TEXT") for v in values))
    numbers = [None, True, 0, -5, BIG, 1.5, NumberToken("1.50"), NumberToken("7"), float("inf")]
    for sql_type in ("INTEGER", "REAL"):
        usable = [v for v in numbers if not (sql_type == "INTEGER" and isinstance(v, float))
                  and not (sql_type == "INTEGER" and v == NumberToken("1.50"))]
        (convert,) = value_converters([sql_type])
        assert _same(tuple(map(convert, usable)), tuple(convert_value(v, sql_type) for v in usable))


# ---------------------------------------------------------------- workbooks

SHEET = [
    ["count", "price", "code", "when", "mixed", "flag", "wide", "label"],
    [1, 1.5, "00501", dt.datetime(2026, 1, 4), 7, True, EXACT, "名前"],
    [2, 3, "007", dt.datetime(2026, 1, 5, 9, 30), "N/A", False, 3, ""],
    [None, 2.25, "nan", dt.date(2026, 2, 1), 2.5, None, None, "  "],
    [-4, None, "inf", None, True, True, -EXACT, "é"],
]


def xlsx_file(path: Path) -> Path:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Data"
    for row in SHEET:
        sheet.append(row)
    workbook.save(path)
    return path


def xls_file(path: Path) -> Path:
    book = xlwt.Workbook()
    sheet = book.add_sheet("Data")
    stamp = xlwt.easyxf(num_format_str="YYYY-MM-DD HH:MM")
    for r, row in enumerate(SHEET):
        for c, value in enumerate(row):
            if value is None:
                continue
            if isinstance(value, (dt.date, dt.datetime)):
                sheet.write(r, c, value, stamp)
            elif isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**53:
                sheet.write(r, c, str(value))  # an id this big is written as text, as Excel users do
            else:
                sheet.write(r, c, value)
    book.save(str(path))
    return path


@pytest.mark.parametrize("reader", ["calamine", "openpyxl"])
def test_xlsx_values_are_stored_with_their_columns_types_and_text_exactly(tmp_path: Path, reader: str) -> None:
    conversion = XlsxConverter(use_calamine=reader == "calamine").convert(xlsx_file(tmp_path / "book.xlsx"))
    assert conversion.schema["data"]["columns"] == {
        "count": "INTEGER", "price": "REAL", "code": "TEXT", "when": "TEXT", "mixed": "TEXT",
        "flag": "INTEGER", "wide": "INTEGER", "label": "TEXT"}
    rows = stored(tmp_path, conversion)["data"]
    assert column(rows, 0) == [(1, "integer"), (2, "integer"), (None, "null"), (-4, "integer")]
    assert column(rows, 1) == [(1.5, "real"), (3.0, "real"), (2.25, "real"), (None, "null")]
    assert column(rows, 2) == [("00501", "text"), ("007", "text"), ("nan", "text"), ("inf", "text")]
    assert column(rows, 3) == [("2026-01-04T00:00:00", "text"), ("2026-01-05T09:30:00", "text"),
                               ("2026-02-01T00:00:00", "text"), (None, "null")]
    assert column(rows, 4) == [("7", "text"), ("N/A", "text"), ("2.5", "text"), ("true", "text")]
    assert column(rows, 5) == [(1, "integer"), (0, "integer"), (None, "null"), (1, "integer")]
    assert column(rows, 6) == [(EXACT, "integer"), (3, "integer"), (None, "null"), (-EXACT, "integer")]
    assert column(rows, 7) == [("名前", "text"), (None, "null"), ("  ", "text"), ("é", "text")]


def test_xls_values_are_stored_with_their_columns_types_and_text_exactly(tmp_path: Path) -> None:
    conversion = XlsConverter().convert(xls_file(tmp_path / "book.xls"))
    assert conversion.schema["data"]["columns"] == {
        "count": "INTEGER", "price": "REAL", "code": "TEXT", "when": "TEXT", "mixed": "TEXT",
        "flag": "INTEGER", "wide": "TEXT", "label": "TEXT"}
    rows = stored(tmp_path, conversion)["data"]
    assert column(rows, 0) == [(1, "integer"), (2, "integer"), (None, "null"), (-4, "integer")]
    assert column(rows, 1) == [(1.5, "real"), (3.0, "real"), (2.25, "real"), (None, "null")]
    assert column(rows, 3) == [("2026-01-04T00:00:00", "text"), ("2026-01-05T09:30:00", "text"),
                               ("2026-02-01T00:00:00", "text"), (None, "null")]
    assert column(rows, 5) == [(1, "integer"), (0, "integer"), (None, "null"), (1, "integer")]
    assert column(rows, 6) == [(str(EXACT), "text"), ("3", "text"), (None, "null"), (str(-EXACT), "text")]
    assert column(rows, 7) == [("名前", "text"), (None, "null"), ("  ", "text"), ("é", "text")]


def test_a_sheets_renderer_writes_each_row_as_write_cell_does_cell_by_cell() -> None:
    values: list[Any] = [None, "", " ", "00501", "名前", 0, 7, -BIG, HUGE, True, False, 1.5, 3.0, float("nan"),
                         float("inf"), float("-inf"), -0.0, 1e-07, 1e300, 0.1 + 0.2,
                         dt.datetime(2026, 1, 4), dt.datetime(2026, 1, 4, 9, 30), dt.date(2026, 2, 1),
                         dt.time(8, 15), dt.timedelta(hours=-1, minutes=5)]
    rows = [["head"] * 3] + [[value, value, value] for value in values]
    plan = survey_sheet(rows)
    assert plan is not None
    for sql_type in ("TEXT", "INTEGER", "REAL"):
        for dates_only in (True, False):
            columns = (ColumnPlan(sql_type=sql_type, dates_only=dates_only),) * 3
            render = _with_columns(plan, columns).renderer()
            for value in values:
                if sql_type != "TEXT" and isinstance(value, (str, dt.date, dt.time, dt.timedelta)) and value != "":
                    continue  # no such value reaches a numeric column
                if sql_type == "INTEGER" and isinstance(value, float) and not math.isfinite(value):
                    continue  # int(nan) raises the same either way
                expected = None if value in (None, "") else tuple(write_cell(value, column) for column in columns)
                got = render([value, value, value])
                assert got is None if expected is None else _same(got, expected), (sql_type, dates_only, value)


def _with_columns(plan: Any, columns: tuple[ColumnPlan, ...]) -> Any:
    import dataclasses
    return dataclasses.replace(plan, columns=columns)


def test_a_sheet_row_shorter_than_the_table_is_padded_and_an_empty_one_skipped() -> None:
    plan = survey_sheet([[None, "a", "b", "c"], [None, 1, "x", 2.5], [None, 2], [None, None, ""], [None, 3, "y", 1]])
    assert plan is not None
    render = plan.renderer()
    assert render([None, 2]) == (2, None, None)
    assert render([None, None, ""]) is None
    assert render((None, 1, "x", 2.5, "beyond the table")) == (1, "x", 2.5)
