"""The built-in .xls converter: BIFF workbooks written with xlwt, rows asserted exactly."""
from __future__ import annotations

import datetime as dt
import pickle
import struct
from pathlib import Path

import openpyxl
import pytest
import xlrd
import xlwt

from monkeyllm_gardener.conversion import ConversionError, UnsupportedFile
from monkeyllm_gardener.kit.sheets import CachedSheetRows
from monkeyllm_plugins import xls_dataset
from monkeyllm_plugins.xls_dataset import XlsConverter

DATE = xlwt.easyxf(num_format_str="YYYY-MM-DD")
STAMP = xlwt.easyxf(num_format_str="YYYY-MM-DD HH:MM")
CLOCK = xlwt.easyxf(num_format_str="HH:MM")
BIFF8_BOF = b"\x09\x08\x10\x00\x00\x06\x05\x00"
FILEPASS = 0x002F


def write_book(path: Path, sheets: dict[str, list[list[object]]], *, dates_1904: bool = False) -> Path:
    book = xlwt.Workbook()
    book.dates_1904 = dates_1904
    for title, rows in sheets.items():
        sheet = book.add_sheet(title)
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                if value is None:
                    continue
                if isinstance(value, dt.datetime):
                    sheet.write(r, c, value, STAMP)
                elif isinstance(value, dt.date):
                    sheet.write(r, c, value, DATE)
                elif isinstance(value, dt.time):
                    sheet.write(r, c, value, CLOCK)
                else:
                    sheet.write(r, c, value)
    book.save(str(path))
    return path


@pytest.mark.parametrize("dates_1904", [False, True], ids=["1900-system", "1904-system"])
def test_dates_are_read_with_the_workbooks_own_date_system(tmp_path: Path, dates_1904: bool) -> None:
    path = write_book(
        tmp_path / "events.xls",
        {"Events": [
            ["name", "day", "at", "opens"],
            ["launch", dt.date(2026, 1, 4), dt.datetime(2026, 1, 4, 9, 30), dt.time(8, 15)],
            ["review", dt.date(1999, 12, 31), dt.datetime(2026, 3, 1, 0, 0), dt.time(17, 0)],
        ]},
        dates_1904=dates_1904,
    )
    assert xlrd.open_workbook(str(path)).datemode == int(dates_1904)  # the file really differs
    conversion = XlsConverter().convert(path)
    assert conversion.schema["events"]["columns"] == {"name": "TEXT", "day": "TEXT", "at": "TEXT", "opens": "TEXT"}
    assert list(conversion.rows["events"]) == [
        ("launch", "2026-01-04", "2026-01-04T09:30:00", "08:15:00"),
        ("review", "1999-12-31", "2026-03-01T00:00:00", "17:00:00"),
    ]
    # every date became ISO text: the date system changed no stored value, so no note
    assert not any("date system" in note for note in conversion.manual_notes)


def test_numbers_booleans_and_text_keep_their_types(tmp_path: Path) -> None:
    path = write_book(
        tmp_path / "stock.xls",
        {"Stock": [
            ["sku", "count", "price", "active", "zip"],
            ["A-1", 3, 2.5, True, "00501"],
            ["A-2", 10, 4, False, "10001"],
        ]},
    )
    conversion = XlsConverter().convert(path)
    assert conversion.title == "stock"
    assert conversion.schema["stock"]["columns"] == {
        "sku": "TEXT", "count": "INTEGER", "price": "REAL", "active": "INTEGER", "zip": "TEXT",
    }
    assert list(conversion.rows["stock"]) == [("A-1", 3, 2.5, 1, "00501"), ("A-2", 10, 4.0, 0, "10001")]


def test_headerless_values_are_kept_and_edges_trimmed(tmp_path: Path) -> None:
    path = write_book(
        tmp_path / "ragged.xls",
        {"S": [
            [],
            [None, "who", None],
            [None, "ann", "note"],
            [],
            [None, "bob", None],
            [], [], [],
        ]},
    )
    conversion = XlsConverter().convert(path)
    assert conversion.schema["s"]["columns"] == {"who": "TEXT", "column_2": "TEXT"}
    assert list(conversion.rows["s"]) == [("ann", "note"), ("bob", None)]


def test_merged_range_keeps_its_value_in_the_top_left_cell(tmp_path: Path) -> None:
    book = xlwt.Workbook()
    sheet = book.add_sheet("Plan")
    for c, header in enumerate(["team", "q1", "q2"]):
        sheet.write(0, c, header)
    sheet.write_merge(1, 2, 0, 0, "North")
    for r, values in ((1, (10, 11)), (2, (12, 13))):
        sheet.write(r, 1, values[0])
        sheet.write(r, 2, values[1])
    path = tmp_path / "plan.xls"
    book.save(str(path))
    conversion = XlsConverter().convert(path)
    assert list(conversion.rows["plan"]) == [("North", 10, 11), (None, 12, 13)]
    assert any("top-left cell" in note and "`plan` (1)" in note for note in conversion.manual_notes)


def test_rows_stream_again_after_pickling(tmp_path: Path) -> None:
    path = write_book(tmp_path / "n.xls", {"N": [["n"]] + [[i] for i in range(500)]})
    rows = pickle.loads(pickle.dumps(XlsConverter().convert(path).rows["n"]))
    assert list(rows) == list(rows) == [(i,) for i in range(500)]


def test_encrypted_xls_is_reported_encrypted(tmp_path: Path) -> None:
    path = write_book(tmp_path / "locked.xls", {"S": [["a"], [1]]})
    data = bytearray(path.read_bytes())
    # Turn the record after the workbook BOF into FILEPASS, as Excel writes for a password.
    first_record = data.index(BIFF8_BOF) + len(BIFF8_BOF) + 12
    struct.pack_into("<H", data, first_record, FILEPASS)
    path.write_bytes(bytes(data))
    with pytest.raises(UnsupportedFile) as error:
        XlsConverter().convert(path)
    assert str(error.value) == (
        "locked.xls: encrypted (password-protected) workbook: remove the password and export again"
    )


def test_a_chart_sheet_is_skipped_with_a_warning(tmp_path: Path) -> None:
    path = write_book(tmp_path / "charts.xls", {"Data": [["a"], [1]], "Chart": [["x"], [2]]})
    data = bytearray(path.read_bytes())
    position, boundsheets = data.index(BIFF8_BOF), []
    while True:  # walk the workbook globals to the second BOUNDSHEET record
        code, length = struct.unpack_from("<HH", data, position)
        if code == 0x0085:
            boundsheets.append(position)
        if code == 0x000A:  # EOF of the globals
            break
        position += 4 + length
    data[boundsheets[1] + 4 + 5] = 0x02  # sheet type: chart
    path.write_bytes(bytes(data))
    conversion = XlsConverter().convert(path)
    assert list(conversion.schema) == ["data"]
    assert list(conversion.rows["data"]) == [(1,)]
    assert conversion.warnings == ("charts.xls: 1 chart/macro sheet(s) have no cells: skipped",)


def test_xlsx_renamed_xls_is_named(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    book.active.append(["a"])
    path = tmp_path / "report.xls"
    book.save(path)
    with pytest.raises(UnsupportedFile, match=r"^report\.xls: this is an \.xlsx workbook renamed \.xls"):
        XlsConverter().convert(path)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", r"^e\.xls: empty file"),
        (b"name,count\nann,3\n", r"^e\.xls: not a readable \.xls workbook \(unsupported format or corrupt file\)"),
        (b"<html><table><tr><td>secret</td></tr></table></html>", r"^e\.xls: an HTML/XML page saved with an \.xls name"),
    ],
)
def test_unreadable_files_fail_with_one_line(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "e.xls"
    path.write_bytes(content)
    with pytest.raises(ConversionError, match=expected) as error:
        XlsConverter().convert(path)
    assert "\n" not in str(error.value)
    assert "ann" not in str(error.value) and "secret" not in str(error.value)  # no file content


def test_workbook_without_data_plants_a_dataset_that_says_so(tmp_path: Path) -> None:
    path = write_book(tmp_path / "none.xls", {"A": [], "B": [[None]]})
    conversion = XlsConverter().convert(path)
    assert list(conversion.schema) == ["empty_sheets"]
    assert list(conversion.rows["empty_sheets"]) == [(1, "A"), (2, "B")]
    assert any(note.startswith("This workbook holds no data") for note in conversion.manual_notes)
    assert conversion.warnings == (
        "none.xls: workbook holds no data (every sheet is empty): planted as a dataset that lists "
        "its empty sheets",
    )


def test_a_small_sheet_keeps_the_rows_it_was_surveyed_from_and_a_big_one_reads_them_again(
        tmp_path: Path) -> None:
    # the book is read once for small sheets (issue 16): the rows are the ones a second
    # read gives, with formatted blank cells, dates, booleans, wide numbers and a 1904 date system
    book = xlwt.Workbook()
    book.dates_1904 = True
    sheet = book.add_sheet("Mixed")
    header = ["n", "when", "flag", "ratio", "note", "blank"]
    for c, name in enumerate(header):
        sheet.write(0, c, name)
    for r in range(1, 120):
        sheet.write(r, 0, r * 7 if r % 5 else r + 0.5)
        sheet.write(r, 1, dt.datetime(2026, 1, 1 + r % 28, r % 24, 30), STAMP)
        sheet.write(r, 2, bool(r % 2))
        sheet.write(r, 3, r / 8 if r % 6 else 2**53 + r)
        sheet.write(r, 4, "名前" if r % 4 else "")
        sheet.write(r, 5, None, DATE)  # a blank cell with a format of its own
    sheet.write(125, 5, None, DATE)  # a formatted blank row below the data
    path = tmp_path / "mixed.xls"
    book.save(str(path))
    kept = XlsConverter().convert(path)
    streamed = XlsConverter(cache_cells=10).convert(path)
    assert isinstance(kept.rows["mixed"], CachedSheetRows)
    assert isinstance(streamed.rows["mixed"], xls_dataset.XlsSheetRows)
    assert (kept.schema, kept.manual_notes, kept.warnings) == (streamed.schema, streamed.manual_notes, streamed.warnings)
    assert list(kept.rows["mixed"]) == list(streamed.rows["mixed"])
    assert len(list(kept.rows["mixed"])) == 119
    assert list(pickle.loads(pickle.dumps(kept.rows["mixed"]))) == list(kept.rows["mixed"])


@pytest.mark.parametrize("formatting_info", [True, False])
def test_row_values_give_each_cell_what_typed_value_gives(tmp_path: Path, formatting_info: bool) -> None:
    # the row reader inlines the common cell types: every kind must read as the rule says
    book = xlwt.Workbook()
    sheet = book.add_sheet("Data")
    stamp = xlwt.easyxf(num_format_str="YYYY-MM-DD HH:MM")
    boxed = xlwt.easyxf("borders: left thin")
    cells = [["text", "", 1, 2.5, -0.0, 2.0**53 + 2, 1e300, True, False],
             [dt.datetime(2026, 1, 4, 9, 30), dt.time(8, 15), None, "x", 0, None, None, None, None]]
    for r, row in enumerate(cells):
        for c, value in enumerate(row):
            if isinstance(value, (dt.datetime, dt.time)):
                sheet.write(r, c, value, stamp)
            elif value is not None:
                sheet.write(r, c, value)
    sheet.write(1, 2, None, boxed)  # a blank cell (a format, no value)
    sheet.write(1, 6, xlwt.Formula("1/0"))  # an error cell once computed: here a formula without one
    path = tmp_path / "kinds.xls"
    book.save(str(path))
    opened = xlrd.open_workbook(str(path), formatting_info=formatting_info)
    data = opened.sheet_by_index(0)
    kinds = {kind for r in range(data.nrows) for kind in data.row_types(r)}
    assert {xlrd.XL_CELL_TEXT, xlrd.XL_CELL_NUMBER, xlrd.XL_CELL_DATE, xlrd.XL_CELL_BOOLEAN,
            xlrd.XL_CELL_EMPTY} <= kinds
    for r in range(data.nrows):
        problems, expected_problems = xls_dataset._DateProblems(), xls_dataset._DateProblems()
        got = xls_dataset.row_values(data, r, opened.datemode, problems)
        expected = [xls_dataset.typed_value(kind, value, opened.datemode, expected_problems)
                    for kind, value in zip(data.row_types(r), data.row_values(r))]
        assert [(type(v), v) for v in got] == [(type(v), v) for v in expected]
        assert problems == expected_problems
