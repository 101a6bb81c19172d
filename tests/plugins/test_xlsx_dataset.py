"""The built-in .xlsx converter: workbooks made in code, rows asserted exactly."""
from __future__ import annotations

import datetime as dt
import pickle
import re
import time
import zipfile
from pathlib import Path

import openpyxl
import pluggy
import pytest
from openpyxl.chart import BarChart, Reference

from monkeyllm_gardener import hookspecs
from monkeyllm_gardener.conversion import ConversionError, UnsupportedFile
from monkeyllm_plugins import xlsx_dataset
from monkeyllm_plugins.xlsx_dataset import XlsxConverter

from _containers import OLE_MAGIC  # tests/plugins is on sys.path
from _conversions import save_workbook


def one_sheet(path: Path, rows: list[list[object]], title: str = "Data") -> Path:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = title
    for row in rows:
        sheet.append(row)
    return save_workbook(workbook, path)


def edit_member_text(path: Path, member: str, edit) -> None:
    """Rewrite one part of the zip through ``edit(text) -> text``."""
    with zipfile.ZipFile(path) as archive:
        parts = {info.filename: archive.read(info.filename) for info in archive.infolist()}
    parts[member] = edit(parts[member].decode("utf-8")).encode("utf-8")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)


def table_rows(conversion, table: str) -> list[tuple]:
    return list(conversion.rows[table])


def columns(conversion, table: str) -> dict[str, str]:
    return dict(conversion.schema[table]["columns"])


def test_cells_keep_their_stored_types(tmp_path: Path) -> None:
    path = one_sheet(
        tmp_path / "invoices-2026.xlsx",
        [
            ["invoice_id", "zip", "total", "qty", "paid", "issued_on", "stamp"],
            ["INV-1", "00501", 1240.5, 3, True, dt.datetime(2026, 1, 4), dt.datetime(2026, 1, 4, 9, 30)],
            ["INV-2", "10001", 880, 4, False, dt.datetime(2026, 1, 7), dt.datetime(2026, 1, 7)],
        ],
    )
    conversion = XlsxConverter().convert(path)
    assert conversion.kind == "dataset"
    assert conversion.title == "invoices-2026"
    assert columns(conversion, "data") == {
        "invoice_id": "TEXT", "zip": "TEXT", "total": "REAL", "qty": "INTEGER",
        "paid": "INTEGER", "issued_on": "TEXT", "stamp": "TEXT",
    }
    assert table_rows(conversion, "data") == [
        ("INV-1", "00501", 1240.5, 3, 1, "2026-01-04", "2026-01-04T09:30:00"),
        ("INV-2", "10001", 880.0, 4, 0, "2026-01-07", "2026-01-07T00:00:00"),
    ]
    # general value rules live in the forest's dataset conventions, not in each manual
    assert conversion.manual_notes == ("Sheets as tables: sheet 1 `Data` -> `data`.",)


def test_mixed_column_becomes_text_with_every_value_as_text(tmp_path: Path) -> None:
    path = one_sheet(tmp_path / "m.xlsx", [["code"], [7], ["N/A"], [2.5], [True], [dt.date(2026, 2, 1)]])
    conversion = XlsxConverter().convert(path)
    assert columns(conversion, "data") == {"code": "TEXT"}
    assert table_rows(conversion, "data") == [("7",), ("N/A",), ("2.5",), ("true",), ("2026-02-01",)]


def test_header_is_repaired_and_headerless_values_are_kept(tmp_path: Path) -> None:
    path = one_sheet(
        tmp_path / "h.xlsx",
        [["Name", None, "Name", "Total (€)"], ["ann", "kept", "x", 1], ["bob", None, "y", 2, "far right"]],
    )
    conversion = XlsxConverter().convert(path)
    assert list(columns(conversion, "data")) == ["name", "column_2", "name_2", "total_eur", "column_5"]
    assert table_rows(conversion, "data") == [
        ("ann", "kept", "x", 1, None),
        ("bob", None, "y", 2, "far right"),
    ]
    notes = " ".join(conversion.manual_notes)
    assert "Column 2 had no header and is named `column_2`" in notes
    assert "Column 5 had no header" in notes


def test_empty_edges_are_trimmed_and_gaps_counted(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet["C3"], sheet["D3"] = "city", "people"
    sheet["C4"], sheet["D4"] = "Lyon", 500
    sheet["C6"], sheet["D6"] = "Nice", 340
    sheet["H40"].number_format = "0.00"  # styled but empty: a trailing cell with no value
    sheet["A50"] = ""
    conversion = XlsxConverter().convert(save_workbook(workbook, tmp_path / "edges.xlsx"))
    assert columns(conversion, "sheet") == {"city": "TEXT", "people": "INTEGER"}
    assert table_rows(conversion, "sheet") == [("Lyon", 500), ("Nice", 340)]
    assert "`sheet`: 1 empty row(s) between data rows were skipped." in conversion.manual_notes


def test_lying_dimension_claiming_a_million_rows_is_ignored(tmp_path: Path) -> None:
    path = one_sheet(tmp_path / "liar.xlsx", [["a", "b"], [1, 2], [3, 4]])
    edit_member_text(
        path,
        "xl/worksheets/sheet1.xml",
        lambda xml: re.sub(r'<dimension ref="[^"]*"/>', '<dimension ref="A1:XFD1048576"/>', xml),
    )
    started = time.perf_counter()
    conversion = XlsxConverter().convert(path)
    rows = table_rows(conversion, "data")
    assert time.perf_counter() - started < 5
    assert columns(conversion, "data") == {"a": "INTEGER", "b": "INTEGER"}
    assert rows == [(1, 2), (3, 4)]
    assert conversion.warnings == ()


def test_a_far_away_empty_row_stops_the_scan_with_a_warning(tmp_path: Path) -> None:
    path = one_sheet(tmp_path / "far.xlsx", [["a"], [1], [2]])
    edit_member_text(
        path,
        "xl/worksheets/sheet1.xml",
        lambda xml: xml.replace("</sheetData>", '<row r="1048576"><c r="A1048576" s="0"/></row></sheetData>'),
    )
    started = time.perf_counter()
    conversion = XlsxConverter().convert(path)
    assert table_rows(conversion, "data") == [(1,), (2,)]
    assert time.perf_counter() - started < 5
    (warning,) = conversion.warnings
    assert warning.startswith("far.xlsx: sheet 1 (table data): reading stopped at row")
    assert "1000 empty rows" in warning


def test_a_table_starting_far_down_the_sheet_is_found(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.cell(row=2500, column=2, value="late")
    sheet.cell(row=2501, column=2, value="found")
    conversion = XlsxConverter().convert(save_workbook(workbook, tmp_path / "late.xlsx"))
    assert table_rows(conversion, "sheet") == [("found",)]
    assert conversion.warnings == ()


def test_formulas_give_cached_values_and_missing_ones_are_counted(tmp_path: Path) -> None:
    path = one_sheet(tmp_path / "calc.xlsx", [["n", "double", "triple"], [2, "=A2*2", "=A2*3"], [5, "=A3*2", "=A3*3"]])
    # openpyxl writes formulas without cached values; give B2 and B3 theirs, as Excel would.
    edit_member_text(
        path,
        "xl/worksheets/sheet1.xml",
        lambda xml: xml.replace("<f>A2*2</f><v></v>", "<f>A2*2</f><v>4</v>").replace(
            "<f>A3*2</f><v></v>", "<f>A3*2</f><v>10</v>"
        ),
    )
    conversion = XlsxConverter().convert(path)
    assert table_rows(conversion, "data") == [(2, 4, None), (5, 10, None)]
    assert columns(conversion, "data") == {"n": "INTEGER", "double": "INTEGER", "triple": "TEXT"}
    assert conversion.warnings == (
        "calc.xlsx: 2 formula cell(s) had no cached value and are NULL: open and save the "
        "file in Excel to compute them, then sync again",
    )


def test_merged_range_keeps_its_value_in_the_top_left_cell(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["region", "q1", "q2"])
    sheet.append(["North", 10, 11])
    sheet.append([None, 12, 13])
    sheet.merge_cells("A2:A3")
    sheet.append(["South total", None, 30])
    sheet.merge_cells("A4:B4")
    conversion = XlsxConverter().convert(save_workbook(workbook, tmp_path / "merged.xlsx"))
    assert table_rows(conversion, "sheet") == [("North", 10, 11), (None, 12, 13), ("South total", None, 30)]
    assert any(
        note.startswith("Merged cells keep their value in the top-left cell") and "`sheet` (2)" in note
        for note in conversion.manual_notes
    )


def test_chartsheet_is_skipped_with_a_warning(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "numbers"
    for row in (["k", "v"], ["a", 1], ["b", 2]):
        sheet.append(row)
    chartsheet = workbook.create_chartsheet("Chart1")
    chart = BarChart()
    chart.add_data(Reference(sheet, min_col=2, min_row=1, max_row=3), titles_from_data=True)
    chartsheet.add_chart(chart)
    conversion = XlsxConverter().convert(save_workbook(workbook, tmp_path / "chart.xlsx"))
    assert list(conversion.schema) == ["numbers"]
    assert table_rows(conversion, "numbers") == [("a", 1), ("b", 2)]
    assert conversion.warnings == ("chart.xlsx: sheet 2 is a chartsheet (a chart, no cells): skipped",)


def test_odd_sheet_names_become_distinct_safe_table_names(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    titles = ["Sales 'Q1'", "Sales-Q1", "📈", "Données (été)", "2026 plan", "Empty one"]
    workbook.active.title = titles[0]
    for title in titles[1:]:
        workbook.create_sheet(title)
    for index, sheet in enumerate(workbook.worksheets[:-1]):
        sheet.append(["x"])
        sheet.append([index])
    conversion = XlsxConverter().convert(save_workbook(workbook, tmp_path / "names.xlsx"))
    assert list(conversion.schema) == ["sales_q1", "sales_q1_2", "sheet", "donnees_ete", "t_2026_plan"]
    assert [table_rows(conversion, table) for table in conversion.schema] == [[(0,)], [(1,)], [(2,)], [(3,)], [(4,)]]
    notes = " ".join(conversion.manual_notes)
    assert "sheet 2 `Sales-Q1` -> `sales_q1_2`" in notes
    assert "Empty sheets skipped (no table): sheet 6 `Empty one`." in notes


def test_workbook_without_data_plants_a_dataset_that_says_so(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    workbook.create_sheet("second")
    path = save_workbook(workbook, tmp_path / "blank.xlsx")
    conversion = XlsxConverter().convert(path)
    assert conversion.kind == "dataset"
    assert list(conversion.schema) == ["empty_sheets"]
    assert table_rows(conversion, "empty_sheets") == [(1, "Sheet"), (2, "second")]
    assert conversion.manual_notes == (
        "This workbook holds no data: none of its sheets has a cell value; `empty_sheets` lists them "
        "(position, name).",)
    assert conversion.warnings == (
        "blank.xlsx: workbook holds no data (every sheet is empty): planted as a dataset that lists "
        "its empty sheets",
    )


def test_rows_stream_from_the_file_and_survive_pickling(tmp_path: Path) -> None:
    path = one_sheet(tmp_path / "big.xlsx", [["n", "sq"]] + [[i, i * i] for i in range(1, 2001)])
    conversion = XlsxConverter().convert(path)
    rows = pickle.loads(pickle.dumps(conversion.rows["data"]))
    first, second = list(rows), list(rows)
    assert first == second == [(i, i * i) for i in range(1, 2001)]


def test_a_sheet_over_the_cache_limit_streams_from_the_file_with_the_same_rows(
        tmp_path: Path) -> None:
    # small sheets keep the rows the survey read; big ones re-read the file: same rows
    path = one_sheet(tmp_path / "big.xlsx", [["n", "when"]] + [[i, dt.date(2026, 1, 1 + i % 28)] for i in range(1, 301)])
    cached = XlsxConverter(use_calamine=False).convert(path)
    streamed = XlsxConverter(use_calamine=False, cache_cells=100).convert(path)  # the calamine twin: test_xlsx_calamine
    from monkeyllm_gardener.kit.sheets import CachedSheetRows
    assert isinstance(cached.rows["data"], CachedSheetRows)
    assert isinstance(streamed.rows["data"], xlsx_dataset.XlsxSheetRows)
    assert list(cached.rows["data"]) == list(streamed.rows["data"])
    assert list(streamed.rows["data"])[0] == (1, "2026-01-02")


def test_a_sheet_wider_than_fifty_columns_is_split_into_parts_and_nothing_is_lost(tmp_path: Path) -> None:
    header = [f"c{i}" for i in range(1, 121)]
    path = one_sheet(tmp_path / "wide.xlsx", [header, list(range(1, 121)), list(range(121, 241))])
    conversion = XlsxConverter().convert(path)
    assert list(conversion.schema) == ["data", "data_part_2", "data_part_3"]
    assert [len(conversion.schema[t]["columns"]) for t in conversion.schema] == [50, 50, 20]
    joined = [a + b + c for a, b, c in zip(*(table_rows(conversion, t) for t in conversion.schema))]
    assert joined == [tuple(range(1, 121)), tuple(range(121, 241))]
    assert any("rowid" in note for note in conversion.manual_notes)


def test_a_workbook_of_more_than_ten_tables_fails_with_the_fix(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for i in range(11):
        sheet = workbook.create_sheet(f"S{i}")
        sheet.append(["a"])
        sheet.append([i])
    path = save_workbook(workbook, tmp_path / "many.xlsx")
    with pytest.raises(ConversionError, match="11 tables .* split the workbook"):
        XlsxConverter().convert(path)


def test_encrypted_workbook_is_reported_encrypted(tmp_path: Path) -> None:
    path = tmp_path / "secret.xlsx"
    path.write_bytes(OLE_MAGIC + bytes(600) + "EncryptedPackage".encode("utf-16-le") + bytes(64))
    with pytest.raises(UnsupportedFile, match=r"^secret\.xlsx: encrypted \(password-protected\) workbook"):
        XlsxConverter().convert(path)


def test_truncated_workbook_is_reported_truncated(tmp_path: Path) -> None:
    whole = one_sheet(tmp_path / "whole.xlsx", [["a"], [1]]).read_bytes()
    path = tmp_path / "cut.xlsx"
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ConversionError, match="corrupt or truncated zip container"):
        XlsxConverter().convert(path)


def test_converter_registers_through_the_public_hook() -> None:
    manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    manager.add_hookspecs(hookspecs)
    manager.register(xlsx_dataset)
    registered = []
    manager.hook.register_converters(register=lambda converter, priority=0.0: registered.append(converter))
    (converter,) = registered
    assert converter.name == "xlsx"
    assert ".xlsx" in converter.extensions
    assert converter.requires == ("openpyxl",)
    assert converter.install_hint == 'pip install "monkeyllm[ingest]"'
