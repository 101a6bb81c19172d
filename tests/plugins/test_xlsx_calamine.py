"""The .xlsx converter's two readers give the same dataset: python-calamine (the fast
path) and openpyxl (the path every workbook can take, and the only one without
calamine). Each test converts a real workbook both ways and compares what a user gets:
the tables' column types, every row as loaded, the manual notes and the warnings; and
says which reader the converter picked, so a test fails when a case it means to be
fast falls back to openpyxl (or one openpyxl must read goes fast)."""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
import re
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from openpyxl.comments import Comment

from monkeyllm_plugins import xlsx_dataset
from monkeyllm_plugins._sheets_calamine import plan_fast_read
from monkeyllm_plugins.xlsx_dataset import XlsxConverter

from _conversions import save_workbook

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path("/tmp/corpus")


def dataset(conversion: Any) -> dict[str, Any]:
    return {"kind": conversion.kind, "schema": conversion.schema,
            "rows": {table: list(rows) for table, rows in conversion.rows.items()},
            "notes": conversion.manual_notes, "warnings": conversion.warnings}


def converted(path: Path, *, use_calamine: bool) -> dict[str, Any] | str:
    try:
        return dataset(XlsxConverter(use_calamine=use_calamine).convert(path))
    except Exception as error:  # a refused file must be refused the same way
        return f"{type(error).__name__}: {error}"


def assert_same_both_ways(path: Path, *, fast: bool) -> dict[str, Any] | str:
    """Both readers agree on ``path``; the converter reads it with calamine iff ``fast``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # what openpyxl says is checked in the conversions
        assert (plan_fast_read(path) is not None) is fast
    slow = converted(path, use_calamine=False)
    assert converted(path, use_calamine=True) == slow
    return slow


def workbook_of(rows: list[list[Any]], formats: dict[str, str] | None = None) -> openpyxl.Workbook:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Data"
    for row in rows:
        sheet.append(row)
    for cell, number_format in (formats or {}).items():
        sheet[cell].number_format = number_format
    return workbook


def with_sheet_data(path: Path, sheet_data: str, *, date1904: bool = False) -> Path:
    """``path`` with its first sheet's cells replaced by ``sheet_data`` (raw XML), as
    other writers than openpyxl store them (cached formula values, texts like ``1.0``)."""
    with zipfile.ZipFile(path) as archive:
        parts = {info.filename: archive.read(info.filename) for info in archive.infolist()}
    member = "xl/worksheets/sheet1.xml"
    parts[member] = re.sub(rb"<sheetData>.*</sheetData>|<sheetData/>",
                           b"<sheetData>" + sheet_data.encode() + b"</sheetData>", parts[member], flags=re.S)
    parts[member] = re.sub(rb'<dimension ref="[^"]*"/>', b"", parts[member])
    if date1904:
        parts["xl/workbook.xml"] = parts["xl/workbook.xml"].replace(b"<workbookPr/>", b'<workbookPr date1904="1"/>')
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return path


def styled_base(path: Path) -> Path:
    """A workbook whose styles 1.. are: a date, a time, ``[h]:mm``, ``00000``,
    ``0.0 "days"``, ``[$-409][h]:mm``, ``#,##0.00;[Red]-#,##0.00``, ``#,##0*d`` and
    ``yyyy [h]`` (the last two read differently by the two libraries' own rules)."""
    formats = ["yyyy-mm-dd", "h:mm", "[h]:mm", "00000", '0.0 "days"', "[$-409][h]:mm",
               "#,##0.00;[Red]-#,##0.00", "#,##0*d", "yyyy [h]"]
    workbook = workbook_of([[0] * len(formats)])
    for column, number_format in enumerate(formats, start=1):
        workbook.active.cell(row=1, column=column).number_format = number_format
    return save_workbook(workbook, path)


def cells(rows: list[list[tuple[str, str]]]) -> str:
    """Sheet XML rows from (attributes, inner XML) per cell, columns A, B, C..."""
    out = []
    for number, row in enumerate(rows, start=1):
        body = "".join(f'<c r="{chr(65 + i)}{number}"{attrs}>{inner}</c>' for i, (attrs, inner) in enumerate(row))
        out.append(f'<row r="{number}">{body}</row>')
    return "".join(out)


# -- workbooks made in code, one case each ----------------------------------------------------
def test_dates_times_datetimes_and_durations(tmp_path: Path) -> None:
    rows = [["when", "at", "stamp", "took"],
            [dt.datetime(2026, 1, 4), dt.time(9, 30), dt.datetime(2026, 1, 4, 9, 30, 15), dt.timedelta(hours=30)],
            [dt.date(1900, 1, 1), dt.time(0, 0), dt.datetime(1900, 3, 1, 0, 0, 0, 123000), dt.timedelta(0)]]
    path = save_workbook(workbook_of(rows, {"D2": "[h]:mm:ss", "D3": "[h]:mm:ss"}), tmp_path / "dates.xlsx")
    result = assert_same_both_ways(path, fast=True)
    assert result["rows"]["data"][0] == ("2026-01-04", "09:30:00", "2026-01-04T09:30:15", "30:00:00")


def test_serials_with_milliseconds_round_as_openpyxl_rounds_them(tmp_path: Path) -> None:
    # calamine rounds f * 86,400,000 ms, openpyxl the day's fraction: ~1 cell in 8 of
    # these random serials differs by a millisecond unless the cell is patched
    rng = random.Random(7)
    serials = [rng.uniform(0, 80_000) for _ in range(300)] + [rng.uniform(0, 1) for _ in range(100)]
    rows = [[(' t="inlineStr"', "<is><t>stamp</t></is>"), (' t="inlineStr"', "<is><t>time</t></is>"),
             (' t="inlineStr"', "<is><t>took</t></is>")]]
    rows += [[(' s="1"', f"<v>{v!r}</v>"), (' s="2"', f"<v>{v % 1!r}</v>"), (' s="3"', f"<v>{v!r}</v>")]
             for v in serials]
    path = with_sheet_data(styled_base(tmp_path / "ms.xlsx"), cells(rows))
    result = assert_same_both_ways(path, fast=True)
    assert len(result["rows"]["data"]) == 400


def test_booleans_integers_beyond_2_53_and_float_spellings(tmp_path: Path) -> None:
    # texts as other writers store them: openpyxl reads 1.0 as a float, 12345678901234567890
    # as the exact integer (beyond 64 bits: TEXT), 9007199254740993 exactly (INTEGER)
    rows = [[(' t="inlineStr"', f"<is><t>{name}</t></is>") for name in ("flag", "wide", "huge", "float", "exp", "zero")],
            [(' t="b"', "<v>1</v>"), ("", "<v>9007199254740993</v>"), ("", "<v>12345678901234567890</v>"),
             ("", "<v>1.0</v>"), ("", "<v>1E+3</v>"), ("", "<v>-0</v>")],
            [(' t="b"', "<v>0</v>"), ("", "<v>-9007199254740993</v>"), ("", "<v>7</v>"),
             ("", "<v>2</v>"), ("", "<v>2.5E-3</v>"), ("", "<v>3</v>")]]
    path = with_sheet_data(save_workbook(workbook_of([["x"]]), tmp_path / "numbers.xlsx"), cells(rows))
    result = assert_same_both_ways(path, fast=True)
    assert result["schema"]["data"]["columns"] == {
        "flag": "INTEGER", "wide": "INTEGER", "huge": "TEXT", "float": "REAL", "exp": "REAL", "zero": "INTEGER"}
    assert result["rows"]["data"] == [(1, 9007199254740993, "12345678901234567890", 1.0, 1000.0, 0),
                                      (0, -9007199254740993, "7", 2.0, 0.0025, 3)]


def test_formula_cached_values_and_formulas_saved_without_one(tmp_path: Path) -> None:
    rows = [[(' t="inlineStr"', "<is><t>a</t></is>"), (' t="inlineStr"', "<is><t>b</t></is>")],
            [("", "<f>1+1</f><v>2</v>"), (' t="str"', "<f>\"x\"&amp;\"y\"</f><v>xy</v>")],
            [("", "<f>2+2</f>"), (' t="b"', "<f>TRUE()</f><v>1</v>")],
            [("", "<f>A2*2</f><v></v>"), ("", "<v>5</v>")]]
    path = with_sheet_data(save_workbook(workbook_of([["x"]]), tmp_path / "formulas.xlsx"), cells(rows))
    result = assert_same_both_ways(path, fast=True)
    assert result["rows"]["data"] == [(2, "xy"), (None, "true"), (None, "5")]
    assert any("2 formula cell(s)" in note for note in result["notes"])


def test_merged_cells_hidden_and_very_hidden_sheets(tmp_path: Path) -> None:
    workbook = workbook_of([["region", "q1", "q2"], ["North", 1, 2], ["South", 3, 4]])
    workbook.active.merge_cells("B1:C1")
    hidden = workbook.create_sheet("Hidden")
    hidden.append(["k"]), hidden.append([1])
    hidden.sheet_state = "hidden"
    secret = workbook.create_sheet("Secret")
    secret.append(["s"]), secret.append(["v"])
    secret.sheet_state = "veryHidden"
    workbook.create_sheet("Empty")
    result = assert_same_both_ways(save_workbook(workbook, tmp_path / "merged.xlsx"), fast=True)
    assert list(result["schema"]) == ["data", "hidden", "secret"]
    assert any("Merged ranges per table: `data` (1)" in note for note in result["notes"])


def test_the_1904_date_system(tmp_path: Path) -> None:
    rows = [[(' t="inlineStr"', "<is><t>day</t></is>"), (' t="inlineStr"', "<is><t>at</t></is>")],
            [(' s="1"', "<v>0</v>"), (' s="2"', "<v>0.5</v>")],
            [(' s="1"', "<v>45000</v>"), (' s="2"', "<v>0.25</v>")],
            [(' s="1"', "<v>45000.75</v>"), (' s="1"', "<v>-3</v>")]]
    path = with_sheet_data(styled_base(tmp_path / "mac.xlsx"), cells(rows), date1904=True)
    result = assert_same_both_ways(path, fast=True)
    assert result["rows"]["data"][1][0] == "2027-03-16T00:00:00"


def test_number_formats_plain_custom_and_elapsed_with_a_locale(tmp_path: Path) -> None:
    # "00000" shows 00123 but the value is 123, as openpyxl reads it; whether a format is
    # a date or a duration is openpyxl's verdict ("[$-409][h]:mm": a duration)
    rows = [[(' t="inlineStr"', f"<is><t>c{i}</t></is>") for i in range(4)],
            [(' s="4"', "<v>123</v>"), (' s="5"', "<v>45000.5</v>"), (' s="6"', "<v>1.25</v>"), (' s="7"', "<v>-12.5</v>")],
            [(' s="4"', "<v>7</v>"), (' s="5"', "<v>2</v>"), (' s="6"', "<v>45000</v>"), (' s="7"', "<v>3</v>")]]
    path = with_sheet_data(styled_base(tmp_path / "formats.xlsx"), cells(rows))
    result = assert_same_both_ways(path, fast=True)
    assert result["rows"]["data"][0] == (123, 45000.5, "30:00:00", -12.5)


def test_formats_the_two_libraries_judge_differently_keep_openpyxls_verdict(tmp_path: Path) -> None:
    # "#,##0*d": a fill character to calamine, a day to openpyxl; "yyyy [h]": a date to
    # calamine, a duration to openpyxl; whole days from 61 on, which calamine alone would misread
    rows = [[(' t="inlineStr"', "<is><t>fill</t></is>"), (' t="inlineStr"', "<is><t>span</t></is>")],
            [(' s="8"', "<v>45000</v>"), (' s="9"', "<v>45000</v>")],
            [(' s="8"', "<v>61</v>"), (' s="9"', "<v>100</v>")]]
    path = with_sheet_data(styled_base(tmp_path / "judged.xlsx"), cells(rows))
    result = assert_same_both_ways(path, fast=True)
    assert result["rows"]["data"] == [("2023-03-15", "1080000:00:00"), ("1900-03-01", "2400:00:00")]


def test_a_custom_format_under_a_built_in_id_is_left_to_openpyxl(tmp_path: Path) -> None:
    path = styled_base(tmp_path / "override.xlsx")
    with zipfile.ZipFile(path) as archive:
        parts = {info.filename: archive.read(info.filename) for info in archive.infolist()}
    parts["xl/styles.xml"] = parts["xl/styles.xml"].replace(b'numFmtId="164"', b'numFmtId="14"')
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    assert_same_both_ways(path, fast=False)


def test_edges_are_trimmed_and_trailing_styled_rows_count_toward_the_empty_row_limit(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Data"
    sheet["C5"], sheet["D5"], sheet["C6"], sheet["D6"], sheet["C8"], sheet["D8"] = "a", "b", 1, 2, 3, 4
    sheet["A1500"].number_format = "0.00"  # a styled empty cell far below: openpyxl yields the rows
    result = assert_same_both_ways(save_workbook(workbook, tmp_path / "edges.xlsx"), fast=True)
    assert result["rows"]["data"] == [(1, 2), (3, 4)]
    assert any("reading stopped at row 1008" in warning for warning in result["warnings"])


def test_a_big_sheet_streams_from_the_file_the_same_way(tmp_path: Path) -> None:
    rows = [["n", "when"]] + [[i, dt.datetime(2026, 1, 1, i % 24, 30)] for i in range(1, 301)]
    path = save_workbook(workbook_of(rows), tmp_path / "big.xlsx")
    cached = converted(path, use_calamine=True)
    conversion = XlsxConverter(cache_cells=100).convert(path)
    assert isinstance(conversion.rows["data"], xlsx_dataset.CalamineSheetRows)
    assert dataset(conversion) == cached == converted(path, use_calamine=False)


@pytest.mark.parametrize("case", ["error", "comment", "escape", "iso_date"])
def test_what_calamine_cannot_see_is_read_by_openpyxl(tmp_path: Path, case: str) -> None:
    path = save_workbook(workbook_of([["a", "b"], ["x", 1]]), tmp_path / f"{case}.xlsx")
    if case == "comment":
        workbook = openpyxl.load_workbook(path)
        workbook.active["B2"].comment = Comment("checked", "Ana")
        save_workbook(workbook, path)
    else:
        inner = {"error": ' t="e"><v>#DIV/0!</v>', "escape": ' t="inlineStr"><is><t>a_x000D_b</t></is>',
                 "iso_date": ' t="d"><v>2026-01-04T09:30:00</v>'}[case]
        with_sheet_data(path, '<row r="1"><c r="A1" t="inlineStr"><is><t>a</t></is></c></row>'
                              f'<row r="2"><c r="A2"{inner}</c></row>')
    result = assert_same_both_ways(path, fast=False)
    assert isinstance(result, dict) and result["kind"] == "dataset"


def test_openpyxl_warnings_on_opening_are_said_on_the_fast_path_too(tmp_path: Path) -> None:
    path = save_workbook(workbook_of([["a"], [1]]), tmp_path / "names.xlsx")
    with zipfile.ZipFile(path) as archive:
        parts = {info.filename: archive.read(info.filename) for info in archive.infolist()}
    parts["xl/workbook.xml"] = parts["xl/workbook.xml"].replace(
        b"<definedNames/>", b'<definedNames><definedName name="t" localSheetId="5">Data!$A$1</definedName></definedNames>')
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    result = assert_same_both_ways(path, fast=True)
    assert result["warnings"] == ("names.xlsx: openpyxl reported: Defined names for sheet index 5 cannot be located",)


def test_a_styles_part_read_before_gives_the_same_verdicts_and_warnings(tmp_path: Path) -> None:
    # the fast path keeps openpyxl's reading of a styles part by its bytes: a second
    # workbook with the same part (the cache's hit) must read, and warn, as the first
    bare = (b'<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
            b'<numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy-mm-dd"/></numFmts></styleSheet>')
    results = []
    for name in ("first.xlsx", "second.xlsx", "first.xlsx"):
        path = save_workbook(workbook_of([["day", "n"], [dt.datetime(2026, 1, 4), 1.5]]), tmp_path / name)
        with zipfile.ZipFile(path) as archive:
            parts = {info.filename: archive.read(info.filename) for info in archive.infolist()}
        parts["xl/styles.xml"] = bare  # no cell styles: openpyxl warns and keeps its defaults
        with zipfile.ZipFile(path, "w") as archive:
            for part, data in parts.items():
                archive.writestr(part, data)
        results.append(assert_same_both_ways(path, fast=True))
    assert results[0]["warnings"] == ("first.xlsx: openpyxl reported: Workbook contains no stylesheet, "
                                      "using openpyxl's defaults",)
    assert results[1]["rows"] == results[0]["rows"] and results[2] == results[0]
    dated = save_workbook(workbook_of([["day"], [dt.datetime(2026, 1, 4)]]), tmp_path / "dated.xlsx")
    again = save_workbook(workbook_of([["day"], [dt.datetime(2026, 1, 5, 12)]]), tmp_path / "again.xlsx")
    assert assert_same_both_ways(dated, fast=True)["rows"] == {"data": [("2026-01-04",)]}
    assert assert_same_both_ways(again, fast=True)["rows"] == {"data": [("2026-01-05T12:00:00",)]}


# -- every workbook the repository and the public corpus hold ---------------------------------
def repository_workbooks() -> list[Path]:
    found = [p for p in REPO.glob("fixtures/**/*.xls[xm]")] + [p for p in REPO.glob("tests/**/*.xls[xm]")]
    if CORPUS.is_dir():
        found += sorted(CORPUS.glob("**/*.xls[xm]"))
    return sorted(found)


@pytest.mark.parametrize("path", repository_workbooks(), ids=lambda p: p.name)
def test_every_fixture_and_corpus_workbook_reads_the_same_both_ways(path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = plan_fast_read(path) is not None
    assert_same_both_ways(path, fast=fast)


def test_the_fixture_budget_goes_through_calamine() -> None:
    assert plan_fast_read(REPO / "fixtures/export/finance/budget-2026.xlsx") is not None


def test_calamine_comes_with_the_ingest_extra() -> None:
    # the fast path is the normal one: a dev/ingest install that lacks it is a broken install
    import python_calamine

    assert python_calamine.CalamineWorkbook


# -- without calamine ------------------------------------------------------------------------
BLOCKER = "import sys\nsys.modules['python_calamine'] = None  # as if not installed\n"


def test_without_calamine_the_converter_reads_with_openpyxl_alone(tmp_path: Path) -> None:
    path = save_workbook(workbook_of([["when", "n"], [dt.datetime(2026, 1, 4, 9, 30), 2**53 + 1]]),
                         tmp_path / "plain.xlsx")
    script = BLOCKER + (
        "import json\nfrom pathlib import Path\n"
        "from monkeyllm_plugins._sheets_calamine import calamine_installed, plan_fast_read\n"
        "from monkeyllm_plugins.xlsx_dataset import XlsxConverter\n"
        "assert not calamine_installed() and plan_fast_read(Path(sys.argv[1])) is None\n"
        "c = XlsxConverter().convert(Path(sys.argv[1]))\n"
        "print(json.dumps({'schema': c.schema, 'rows': {t: list(r) for t, r in c.rows.items()},"
        " 'notes': c.manual_notes, 'warnings': c.warnings}))\n")
    proc = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    expected = converted(path, use_calamine=True)
    assert isinstance(expected, dict)
    assert json.loads(proc.stdout) == json.loads(json.dumps({k: expected[k] for k in ("schema", "rows", "notes", "warnings")}))


def forest_tree_digest(forest: Path) -> str:
    tree = subprocess.run(["git", "ls-tree", "-r", "HEAD"], cwd=forest, capture_output=True, check=True).stdout
    return hashlib.sha256(tree).hexdigest()


def test_the_fixture_export_adopts_to_the_same_forest_with_and_without_calamine(tmp_path: Path, cli: Any) -> None:
    blocker = tmp_path / "no-calamine"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(BLOCKER)  # every process of the run, pool workers too
    digests, files = [], []
    for name, env in (("with", {}), ("without", {"PYTHONPATH": str(blocker)})):
        (tmp_path / name).mkdir()
        runner = cli.VineRunner(tmp_path / name, env={**cli.NO_THIRD_PARTY_PLUGINS, **env})
        forest, _report = runner.adopt_into_new_forest(REPO / "fixtures/export", timeout=240)
        digests.append(forest_tree_digest(forest))
        files.append(cli.snapshot(forest))
    assert digests[0] == digests[1]
    # the rows themselves live in the datasets' SQLite files, outside git: the same bytes
    assert any(rel.endswith(".db") for rel in files[0]) and files[0] == files[1]


# -- the shortcuts of the fast path's checks (issue 16): each case reads the same both ways ----
def date_cells(values: list[str], *, extra: str = "") -> str:
    """A header and one yyyy-mm-dd (style 1) cell per value, as openpyxl writes them."""
    rows = ['<row r="1"><c r="A1" t="inlineStr"><is><t>day</t></is></c></row>']
    rows += [f'<row r="{n}"><c r="A{n}" s="1" t="n"><v>{v}</v></c></row>' for n, v in enumerate(values, start=2)]
    return "".join(rows) + extra


@pytest.mark.parametrize("odd", ["45000.25", "60", "1", "0", "045000", "45000.0", "-5"])
def test_one_date_cell_calamine_reads_otherwise_among_whole_days_is_still_patched(tmp_path: Path, odd: str) -> None:
    # the whole days from 61 on are counted, not looked at one by one: one cell that is
    # not such a day (a time of day, the 1900 leap-year days, spellings) makes the counts differ
    days = [str(45000 + i) for i in range(300)]
    path = with_sheet_data(styled_base(tmp_path / "days.xlsx"), date_cells(days[:150] + [odd] + days[150:]))
    result = assert_same_both_ways(path, fast=True)
    assert len(result["rows"]["data"]) == 301


def test_whole_days_without_t_and_a_row_style_of_the_date_style_read_the_same(tmp_path: Path) -> None:
    # Excel omits t="n"; a row carrying the date style (s="1" on <row>) is one more s="1"
    rows = ['<row r="1"><c r="A1" t="inlineStr"><is><t>day</t></is></c><c r="B1" t="inlineStr"><is><t>n</t></is></c></row>']
    rows += [f'<row r="{n}"><c r="A{n}" s="1"><v>{45000 + n}</v></c><c r="B{n}"><v>{n}</v></c></row>' for n in range(2, 40)]
    rows.append('<row r="40" s="1" customFormat="1"><c r="A40" s="1"><v>45100</v></c><c r="B40" s="1"><v>7</v></c></row>')
    path = with_sheet_data(styled_base(tmp_path / "excel.xlsx"), "".join(rows))
    result = assert_same_both_ways(path, fast=True)
    assert result["rows"]["data"][-1] == ("2023-06-23", "1900-01-07")


@pytest.mark.parametrize(("sheet_data", "fast"), [
    # the reference after another attribute, and rows written over several lines: fast
    ('<row r="1"><c t="inlineStr" r="A1"><is><t>a</t></is></c></row><row r="2"><c s="0" r="A2"><v>1</v></c></row>', True),
    ('<row\n r="1"><c r="A1" t="inlineStr"><is><t>a</t></is></c></row><row r="2"\n><c r="A2"><v>1</v></c></row>', True),
    # text that looks like what the checks look for, but is text: fast
    ('<row r="1"><c r="A1" t="inlineStr"><is><t>ratio a:c b:row x=t="d" _x12_</t></is></c></row>'
     '<row r="2"><c r="A2"><v>1</v></c></row>', True),
    # a cell or a row without its reference, an error cell after a tab: openpyxl
    ('<row r="1"><c r="A1" t="inlineStr"><is><t>a</t></is></c></row><row r="2"><c t="n"><v>1</v></c></row>', False),
    ('<row r="1"><c r="A1" t="inlineStr"><is><t>a</t></is></c></row><row><c r="A2"><v>1</v></c></row>', False),
    ('<row r="1"><c r="A1" t="inlineStr"><is><t>a</t></is></c></row><row r="2"><c r="A2"\tt="e"><v>#N/A</v></c></row>',
     False),
    # heads the guards pass to the full patterns: two spaces before the reference (fast),
    # an empty cell with no reference at all (openpyxl)
    ('<row  r="1"><c  r="A1" t="inlineStr"><is><t>a</t></is></c></row><row r="2"><c r="A2"><v>1</v></c></row>', True),
    ('<row r="1"><c r="A1" t="inlineStr"><is><t>a</t></is></c></row><row r="2"><c r="A2"><v>1</v></c><c/></row>',
     False),
], ids=["ref-after-attribute", "rows-over-lines", "text-like-markup", "cell-without-ref", "row-without-ref",
        "error-after-tab", "two-spaces", "bare-empty-cell"])
def test_the_fast_paths_xml_checks_decide_as_their_full_patterns(tmp_path: Path, sheet_data: str, fast: bool) -> None:
    path = with_sheet_data(save_workbook(workbook_of([["x"]]), tmp_path / "checks.xlsx"), sheet_data)
    result = assert_same_both_ways(path, fast=fast)
    assert isinstance(result, dict) and result["kind"] == "dataset"


def test_a_print_area_on_a_later_sheet_is_no_warning_on_either_path(tmp_path: Path) -> None:
    # openpyxl binds defined names to the sheets it loaded: the fast path binds them to as many
    workbook = workbook_of([["a"], [1]])
    second = workbook.create_sheet("Second")
    second.append(["b"]), second.append([2])
    second.print_area = "A1:A2"
    second.print_title_rows = "1:1"
    result = assert_same_both_ways(save_workbook(workbook, tmp_path / "print.xlsx"), fast=True)
    assert result["warnings"] == ()
