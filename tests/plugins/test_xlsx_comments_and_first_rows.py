"""Workbooks keep their cell comments and a first row that is data (xlsx and xls).

Workbooks are made in code (openpyxl for .xlsx; xlwt for .xls, with NOTE records
added the way Excel stores them, since xlwt cannot write comments). Datasets are
loaded with the engine's own ``create_dataset`` into real SQLite and read back.
"""
from __future__ import annotations

import datetime as dt
import sqlite3
import struct
import warnings
import zipfile
from pathlib import Path

import openpyxl
import pytest
import xlwt
from openpyxl.comments import Comment
from xlwt.CompoundDoc import XlsDoc

from monkeyllm_core.data.dataset import create_dataset
from monkeyllm_plugins.xls_dataset import XlsConverter
from monkeyllm_plugins.xlsx_dataset import XlsxConverter

from _conversions import save_workbook  # tests/plugins is on sys.path


def workbook_with(rows: list[list[object]], title: str = "Data") -> openpyxl.Workbook:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = title
    for row in rows:
        sheet.append(row)
    return workbook


def loaded_database(conversion, tmp_path: Path) -> sqlite3.Connection:
    db = tmp_path / "loaded.db"
    create_dataset(db, conversion.schema, conversion.rows)
    return sqlite3.connect(db)


def column_names(conversion, table: str) -> list[str]:
    return list(conversion.schema[table]["columns"])


# -- xls with notes ---------------------------------------------------------------------------
def _record(code: int, data: bytes) -> bytes:
    return struct.pack("<HH", code, len(data)) + data


def note_records(row: int, col: int, obj_id: int, author: str, text: str) -> bytes:
    """OBJ (a comment object), TXO + CONTINUE (its text) and NOTE (its cell and author)."""
    obj = struct.pack("<HHHHH", 0x15, 18, 0x19, obj_id, 0x4011) + bytes(12) + struct.pack("<HH", 0, 0)
    txo = struct.pack("<HH6sHHH", 0x0212, 0, bytes(6), len(text), 0, 0)
    text_part = b"\x01" + text.encode("utf-16-le")
    note = struct.pack("<4H", row, col, 0, obj_id) + struct.pack("<HB", len(author), 0) + author.encode("latin-1") + b"\0"
    return _record(0x5D, obj) + _record(0x1B6, txo) + _record(0x3C, text_part) + _record(0x1C, note)


def xls_with_notes(path: Path, rows: list[list[object]], notes: list[tuple[int, int, str, str]]) -> Path:
    """A one-sheet .xls whose sheet holds ``notes`` ((row, col) 0-based, author, text)."""
    book = xlwt.Workbook()
    sheet = book.add_sheet("Plan")
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            if value is not None:
                sheet.write(r, c, value)
    stream = book.get_biff_data()
    eof = b"\x0a\x00\x00\x00"
    assert stream.endswith(eof)  # the only sheet's EOF ends the stream: notes go before it
    records = b"".join(note_records(r, c, i, author, text) for i, (r, c, author, text) in enumerate(notes, 1))
    XlsDoc().save(str(path), stream[:-4] + records + eof)
    return path


# -- comments ---------------------------------------------------------------------------------
def test_xlsx_cell_comments_become_a_comments_table_joined_to_their_rows(tmp_path: Path) -> None:
    workbook = workbook_with([["city", "people"], ["Lyon", 500], [None, None], ["Nice", 340]])
    sheet = workbook.active
    sheet["B1"].comment = Comment("Census 2024", "Ana")
    sheet["A4"].comment = Comment("Moved here\nin May", "Bo")
    sheet["E9"].comment = Comment("stray note", "Ana")
    empty = workbook.create_sheet("Notes only")
    empty["C2"].comment = Comment("nothing here yet", "Cy")
    conversion = XlsxConverter().convert(save_workbook(workbook, tmp_path / "cities.xlsx"))

    assert list(conversion.schema) == ["data", "comments"]
    assert column_names(conversion, "comments") == [
        "sheet", "cell", "sheet_row", "table_name", "column_name", "data_rowid", "author", "comment"]
    connection = loaded_database(conversion, tmp_path)
    assert connection.execute("SELECT * FROM comments ORDER BY sheet, sheet_row").fetchall() == [
        ("Data", "B1", 1, "data", "people", None, "Ana", "Census 2024"),
        ("Data", "A4", 4, "data", "city", 2, "Bo", "Moved here\nin May"),
        ("Data", "E9", 9, None, None, None, "Ana", "stray note"),
        ("Notes only", "C2", 2, None, None, None, "Cy", "nothing here yet"),
    ]
    # data_rowid finds the commented row, though an empty row was skipped before it
    assert connection.execute(
        "SELECT d.city FROM comments c JOIN data d ON d.rowid = c.data_rowid").fetchall() == [("Nice",)]
    (note,) = [n for n in conversion.manual_notes if "comments" in n]
    assert note.startswith("Cell comments are in table `comments`, one row per comment")
    assert conversion.warnings == ()


THREADS_NS = "http://schemas.microsoft.com/office/spreadsheetml/2018/threadedcomments"
THREAD_REL = "http://schemas.microsoft.com/office/2017/10/relationships/threadedComment"
PERSON_REL = "http://schemas.microsoft.com/office/2017/10/relationships/person"


def add_threaded_comments(path: Path) -> None:
    """Give sheet 1 the parts modern Excel writes for a thread on B2 (a comment and a
    reply), beside the legacy note it keeps as a copy."""
    threads = (f'<ThreadedComments xmlns="{THREADS_NS}">'
               '<threadedComment ref="B2" personId="{P1}" id="{C1}"><text>Is this final?</text></threadedComment>'
               '<threadedComment ref="B2" personId="{P2}" id="{C2}" parentId="{C1}"><text>Yes, signed</text>'
               '</threadedComment></ThreadedComments>')
    persons = (f'<personList xmlns="{THREADS_NS}"><person displayName="Maria Lopez" id="{{P1}}" providerId="None"/>'
               '<person displayName="Ben Okafor" id="{P2}" providerId="None"/></personList>')
    with zipfile.ZipFile(path) as archive:
        parts = {info.filename: archive.read(info.filename) for info in archive.infolist()}
    sheet_rels = "xl/worksheets/_rels/sheet1.xml.rels"
    parts[sheet_rels] = parts[sheet_rels].replace(
        b"</Relationships>",
        f'<Relationship Type="{THREAD_REL}" Target="../threadedComments/threadedComment1.xml" Id="rt1"/>'
        "</Relationships>".encode())
    parts["xl/_rels/workbook.xml.rels"] = parts["xl/_rels/workbook.xml.rels"].replace(
        b"</Relationships>", f'<Relationship Type="{PERSON_REL}" Target="persons/person.xml" Id="rp1"/>'
                             "</Relationships>".encode())
    parts["xl/threadedComments/threadedComment1.xml"] = threads.encode()
    parts["xl/persons/person.xml"] = persons.encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in parts.items():
            archive.writestr(name, data)


def test_xlsx_threaded_comments_keep_each_reply_and_their_authors_names(tmp_path: Path) -> None:
    workbook = workbook_with([["item", "price"], ["desk", 120]])
    legacy = "[Threaded comment]\n\nYour version of Excel allows you to read this threaded comment.\n\nComment:\n    Is this final?"
    workbook.active["B2"].comment = Comment(legacy, "tc={C1}")
    workbook.active["A1"].comment = Comment("A plain note", "Ana")
    path = save_workbook(workbook, tmp_path / "thread.xlsx")
    add_threaded_comments(path)
    conversion = XlsxConverter().convert(path)
    assert list(conversion.rows["comments"]) == [
        ("Data", "A1", 1, "data", "item", None, "Ana", "A plain note"),
        ("Data", "B2", 2, "data", "price", 1, "Maria Lopez", "Is this final?"),
        ("Data", "B2", 2, "data", "price", 1, "Ben Okafor", "Yes, signed"),
    ]


def test_xlsx_without_comments_has_no_comments_table(tmp_path: Path) -> None:
    conversion = XlsxConverter().convert(save_workbook(workbook_with([["a"], [1]]), tmp_path / "plain.xlsx"))
    assert list(conversion.schema) == ["data"]
    assert not any("comment" in note.lower() for note in conversion.manual_notes)


def test_a_sheet_named_comments_keeps_its_name_and_the_comments_table_moves_aside(tmp_path: Path) -> None:
    workbook = workbook_with([["k"], ["v"]], title="comments")
    workbook.active["A2"].comment = Comment("why", "Ana")
    conversion = XlsxConverter().convert(save_workbook(workbook, tmp_path / "c.xlsx"))
    assert list(conversion.schema) == ["comments", "comments_2"]
    assert list(conversion.rows["comments_2"]) == [("comments", "A2", 2, "comments", "k", 1, "Ana", "why")]
    assert any("table `comments_2`" in note for note in conversion.manual_notes)


def test_a_comment_in_a_wide_sheet_names_the_part_holding_its_column(tmp_path: Path) -> None:
    header = [f"c{i}" for i in range(1, 61)]
    workbook = workbook_with([header, list(range(1, 61))])
    workbook.active.cell(row=2, column=55).comment = Comment("far right", "Ana")
    conversion = XlsxConverter().convert(save_workbook(workbook, tmp_path / "wide.xlsx"))
    assert list(conversion.schema) == ["data", "data_part_2", "comments"]
    assert list(conversion.rows["comments"]) == [("Data", "BC2", 2, "data_part_2", "c55", 1, "Ana", "far right")]


def test_comments_do_not_fit_when_the_sheets_fill_ten_tables(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for i in range(10):
        sheet = workbook.create_sheet(f"S{i}")
        sheet.append(["a"])
        sheet.append([i])
    workbook["S3"]["A2"].comment = Comment("lost?", "Ana")
    conversion = XlsxConverter().convert(save_workbook(workbook, tmp_path / "ten.xlsx"))
    assert len(conversion.schema) == 10 and "comments" not in conversion.schema
    assert conversion.warnings == (
        "ten.xlsx: 1 cell comment(s) not kept: the sheets already fill the 10 tables a dataset "
        "holds; split the workbook to keep them",
    )


def test_xls_cell_notes_become_a_comments_table(tmp_path: Path) -> None:
    path = xls_with_notes(tmp_path / "plan.xls", [["team", "q1"], ["North", 10], ["South", 12]],
                          [(2, 1, "Maria", "Checked — revised"), (0, 0, "Bob", "Team names as in HR")])
    conversion = XlsConverter().convert(path)
    assert list(conversion.schema) == ["plan", "comments"]
    assert list(conversion.rows["comments"]) == [
        ("Plan", "A1", 1, "plan", "team", None, "Bob", "Team names as in HR"),
        ("Plan", "B3", 3, "plan", "q1", 2, "Maria", "Checked — revised"),
    ]
    assert any(n.startswith("Cell comments are in table `comments`") for n in conversion.manual_notes)


# -- the first row: header or data ---------------------------------------------------------------
def test_a_first_row_of_numbers_is_data_with_generated_column_names(tmp_path: Path) -> None:
    path = save_workbook(workbook_with([["INV-1", 1240.5, 3], ["INV-2", 880, 4]]), tmp_path / "raw.xlsx")
    conversion = XlsxConverter().convert(path)
    assert conversion.schema["data"]["columns"] == {"column_1": "TEXT", "column_2": "REAL", "column_3": "INTEGER"}
    assert list(conversion.rows["data"]) == [("INV-1", 1240.5, 3), ("INV-2", 880.0, 4)]
    assert "`data`: the sheet's first row holds numbers, so it is data, not a header: it is the table's " \
           "first row and the columns are named `column_1` .. `column_3`." in conversion.manual_notes


def test_a_first_row_with_a_date_is_data(tmp_path: Path) -> None:
    path = save_workbook(workbook_with([["launch", dt.datetime(2026, 1, 4)], ["review", dt.datetime(2026, 3, 1)]]),
                tmp_path / "d.xlsx")
    conversion = XlsxConverter().convert(path)
    assert list(conversion.rows["data"]) == [("launch", "2026-01-04"), ("review", "2026-03-01")]
    assert any("holds dates, times or true/false values" in note for note in conversion.manual_notes)


def test_a_first_row_repeating_the_row_below_is_data(tmp_path: Path) -> None:
    path = save_workbook(workbook_with([["ok", "yes"], ["ok", "yes"], ["ko", "no"]]), tmp_path / "dup.xlsx")
    conversion = XlsxConverter().convert(path)
    assert column_names(conversion, "data") == ["column_1", "column_2"]
    assert list(conversion.rows["data"]) == [("ok", "yes"), ("ok", "yes"), ("ko", "no")]
    assert any("repeats the row below" in note for note in conversion.manual_notes)


def test_a_text_header_stays_a_header(tmp_path: Path) -> None:
    path = save_workbook(workbook_with([["name", "total"], ["ann", 1], ["bob", 2]]), tmp_path / "h.xlsx")
    conversion = XlsxConverter().convert(path)
    assert column_names(conversion, "data") == ["name", "total"]
    assert list(conversion.rows["data"]) == [("ann", 1), ("bob", 2)]
    assert not any("column_1" in note for note in conversion.manual_notes)


def test_consecutive_years_in_the_first_row_are_column_labels(tmp_path: Path) -> None:
    path = save_workbook(workbook_with([["region", 2024, 2025, 2026], ["North", 10, 11, 12]]), tmp_path / "pivot.xlsx")
    conversion = XlsxConverter().convert(path)
    assert column_names(conversion, "data") == ["region", "c_2024", "c_2025", "c_2026"]
    assert list(conversion.rows["data"]) == [("North", 10, 11, 12)]


def test_a_single_row_of_numbers_is_one_data_row(tmp_path: Path) -> None:
    conversion = XlsxConverter().convert(save_workbook(workbook_with([[1, 5, 2]]), tmp_path / "one.xlsx"))
    assert list(conversion.rows["data"]) == [(1, 5, 2)]


def test_xls_first_row_of_numbers_is_data_too(tmp_path: Path) -> None:
    path = xls_with_notes(tmp_path / "n.xls", [["A-1", 3, 2.5], ["A-2", 10, 4]], [(0, 1, "Ana", "first")])
    conversion = XlsConverter().convert(path)
    assert column_names(conversion, "plan") == ["column_1", "column_2", "column_3"]
    assert list(conversion.rows["plan"]) == [("A-1", 3, 2.5), ("A-2", 10, 4.0)]
    # the comment on the first row points at data row 1, since that row is data
    assert list(conversion.rows["comments"]) == [("Plan", "B1", 1, "plan", "column_2", 1, "Ana", "first")]


# -- library chatter ---------------------------------------------------------------------------
def test_openpyxl_warnings_become_the_files_warnings(tmp_path: Path) -> None:
    path = save_workbook(workbook_with([["a"], [1]]), tmp_path / "names.xlsx")
    # a defined name bound to a sheet the workbook does not have: openpyxl warns
    dangling = b'<definedNames><definedName name="total" localSheetId="5">Data!$A$1</definedName></definedNames>'
    with zipfile.ZipFile(path) as archive:
        parts = {info.filename: archive.read(info.filename) for info in archive.infolist()}
    assert b"<definedNames/>" in parts["xl/workbook.xml"]
    parts["xl/workbook.xml"] = parts["xl/workbook.xml"].replace(b"<definedNames/>", dangling)
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning escaping the converter fails the test
        conversion = XlsxConverter().convert(path)
    assert list(conversion.rows["data"]) == [(1,)]
    assert conversion.warnings == (
        "names.xlsx: openpyxl reported: Defined names for sheet index 5 cannot be located",
    )


def test_xlrd_log_lines_become_the_files_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = xls_with_notes(tmp_path / "padded.xls", [["a"], ["x"]], [])
    with path.open("ab") as handle:
        handle.write(bytes(100))  # xlrd: "file size ... not 512 + multiple of sector size"
    conversion = XlsConverter().convert(path)
    assert list(conversion.rows["plan"]) == [("x",)]
    assert capsys.readouterr().out == ""
    (warning,) = conversion.warnings
    assert warning.startswith("padded.xls: xlrd reported: file size (")
    assert "not 512 + multiple of sector size" in warning


def test_chatter_is_one_line_per_message_deduplicated_and_bounded() -> None:
    from monkeyllm_gardener.kit import chatter_warnings

    said = ["WARNING *** same thing", "WARNING *** same thing", "  ", "x" * 500,
            *(f"NOTE *** note {i}\nsecond line" for i in range(6))]
    lines = chatter_warnings(Path("a.xls"), "xlrd", said)
    assert lines[0] == "a.xls: xlrd reported: same thing"
    assert lines[1] == "a.xls: xlrd reported: " + "x" * 199 + "…"
    assert lines[2] == "a.xls: xlrd reported: note 0 second line"
    assert len(lines) == 6 and lines[-1] == "a.xls: xlrd reported 3 more message(s)"
    assert all("\n" not in line for line in lines)


def test_a_comment_without_an_author_has_a_null_author(tmp_path: Path) -> None:
    # Excel writes <author></author> for an anonymous comment; openpyxl reads it as "None"
    path = save_workbook(workbook_with([["id", "name"], [1, "Ana"]]), tmp_path / "anon.xlsx")
    with zipfile.ZipFile(path) as archive:
        parts = {name: archive.read(name) for name in archive.namelist()}
    comments = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
                '<comments xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
                '<authors><author></author></authors><commentList><comment ref="B2" authorId="0">'
                '<text><t>checked by phone</t></text></comment></commentList></comments>').encode()
    parts["xl/comments1.xml"] = comments
    parts["xl/worksheets/_rels/sheet1.xml.rels"] = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/comments" '
        'Target="../comments1.xml"/></Relationships>').encode()
    types = parts["[Content_Types].xml"].decode()
    parts["[Content_Types].xml"] = types.replace("</Types>", (
        '<Override PartName="/xl/comments1.xml" ContentType='
        '"application/vnd.openxmlformats-officedocument.spreadsheetml.comments+xml"/></Types>')).encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    conversion = XlsxConverter().convert(path)
    db = loaded_database(conversion, tmp_path)
    assert db.execute("SELECT cell, author, comment FROM comments").fetchall() == [("B2", None, "checked by phone")]
