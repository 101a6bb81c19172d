"""Built-in converter: an Excel ``.xlsx``/``.xlsm`` workbook becomes a dataset.

Rules (also stated in the query manual notes of every converted workbook):

- Container first: ``check_zip_container`` refuses encrypted workbooks, legacy ``.xls``
  renamed, truncated zips and zip bombs before openpyxl opens anything.
- One table per worksheet, named from the sheet name (``table_name_from``; a name
  already taken gets ``_2``, ``_3``...). Empty worksheets are skipped and named in the
  notes; chartsheets are skipped with a warning; a workbook with no data fails.
- The header is the first non-empty row; names are repaired by ``repair_headers``
  (values in a column without a header are kept, in ``column_N``).
- Leading and trailing empty rows and columns are trimmed; an empty row between data
  rows is skipped and counted in the notes. The sheet's declared dimension is
  ignored (it can claim A1:XFD1048576): only rows present in the sheet XML are read,
  and below the header reading stops after ``EMPTY_ROW_RUN_LIMIT`` consecutive empty
  rows (a warning says so when it happens: data further down is not imported).
- Values come from openpyxl with ``data_only=True``: a formula gives its cached
  value. A formula cell saved without a cached value (files written by scripts) is
  NULL, and a warning counts them. The sheet XML is scanned once, streaming, to count
  those cells and the merged ranges, which ``read_only`` mode does not expose.
- Merged cells: the value stays in the top-left cell of the range, the other cells of
  the range are NULL (that is how Excel stores them); the notes say so when a sheet has
  merged ranges.
- Types: cells keep the types Excel stored, text is never re-parsed as a number
  (``00501`` typed as text stays TEXT). Per column: INTEGER when every value is a
  whole number (booleans count as 1/0), REAL when numbers include decimals, TEXT
  otherwise, and then every value is written as text (``true``/``false`` for
  booleans). Dates, times and datetimes are ISO 8601 TEXT: ``YYYY-MM-DD`` when every
  datetime of the column falls at midnight, else ``YYYY-MM-DDTHH:MM:SS``; durations
  as ``H:MM:SS``. An empty cell (or one holding an empty string) is NULL; a cell of
  spaces is text.

The sheet-planning part (``survey_sheet`` / ``SheetPlan``) is format-neutral and shared
with the ``.xls`` converter: it works on rows of Python values.
"""
from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from monkeyllm_plugins._container import check_zip_container
from monkeyllm_plugins._tabular import (
    MAX_TABLES_PER_DATASET,
    TooManyColumns,
    TypeTracker,
    classify_value,
    convert_value,
    repair_headers,
    split_wide_table,
    table_name_from,
    unique_name,
)

from monkeyllm_gardener.conversion import Conversion, ConversionError
from monkeyllm_gardener.hookspecs import hookimpl

EMPTY_ROW_RUN_LIMIT = 1_000
INSTALL_HINT = 'pip install "monkeyllm[ingest]"'
_TEMPORAL = (dt.datetime, dt.date, dt.time, dt.timedelta)

VALUE_RULES_NOTE = (
    "Cells keep the type the spreadsheet stored (text is never re-read as a number): a "
    "column is INTEGER when all its values are whole numbers (booleans as 1/0), REAL when "
    "some have decimals, otherwise TEXT with every value written as text (booleans as "
    "`true`/`false`). Dates and times are ISO 8601 text (`YYYY-MM-DD` for a column of "
    "dates at midnight, else `YYYY-MM-DDTHH:MM:SS`). An empty cell is NULL."
)
MERGED_NOTE = (
    "Merged cells keep their value in the top-left cell of the range; the other cells of "
    "the range are NULL."
)


# ---------------------------------------------------------------- sheet planning


def is_empty_cell(value: Any) -> bool:
    return value is None or value == ""


@dataclass(frozen=True, kw_only=True)
class ColumnPlan:
    sql_type: str
    dates_only: bool  # every datetime in the column is at midnight: write YYYY-MM-DD


@dataclass(frozen=True, kw_only=True)
class SheetPlan:
    """Where a sheet's table sits (1-based row numbers, 0-based column offsets) and how
    each column is written. Computed in one streaming pass; picklable."""

    header_row: int
    last_row: int
    first_col: int
    names: tuple[str, ...]
    columns: tuple[ColumnPlan, ...]
    header_notes: tuple[str, ...]
    row_count: int
    empty_rows_skipped: int
    stopped_at_row: int | None  # the empty-row run limit ended the scan here

    @property
    def width(self) -> int:
        return len(self.names)

    def render(self, row: Sequence[Any]) -> tuple[Any, ...] | None:
        """One data row as written to SQLite, or None for an empty row."""
        window = list(row[self.first_col : self.first_col + self.width])
        if all(is_empty_cell(value) for value in window):
            return None
        window.extend([None] * (self.width - len(window)))
        return tuple(write_cell(value, column) for value, column in zip(window, self.columns))


def write_cell(value: Any, column: ColumnPlan) -> Any:
    if is_empty_cell(value):
        return None
    if isinstance(value, _TEMPORAL):
        return temporal_text(value, dates_only=column.dates_only)
    return convert_value(value, column.sql_type)


def temporal_text(value: Any, *, dates_only: bool) -> str:
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if dates_only else value.isoformat(sep="T")
    if isinstance(value, dt.timedelta):
        seconds = int(value.total_seconds())
        sign, seconds = ("-", -seconds) if seconds < 0 else ("", seconds)
        return f"{sign}{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
    return value.isoformat()  # date or time


def survey_sheet(rows: Iterable[Sequence[Any]]) -> SheetPlan | None:
    """Plan a sheet from its rows (row 1 first, gaps as empty rows); None when empty."""
    header_row: int | None = None
    header: Sequence[Any] = ()
    last_row = 0
    first_col, end_col = None, 0
    data_rows = 0
    empty_run = 0
    stopped_at: int | None = None
    tracker = TypeTracker()
    has_time_of_day: set[int] = set()
    for number, row in enumerate(rows, start=1):
        filled = [index for index, value in enumerate(row) if not is_empty_cell(value)]
        if not filled:
            empty_run += 1
            # Only below a header: a sheet may start far down, and skipping it as
            # "empty" would lose it without a word.
            if header_row is not None and empty_run >= EMPTY_ROW_RUN_LIMIT:
                stopped_at = number
                break
            continue
        empty_run = 0
        last_row = number
        first_col = filled[0] if first_col is None else min(first_col, filled[0])
        end_col = max(end_col, filled[-1] + 1)
        if header_row is None:
            header_row, header = number, row
            continue
        data_rows += 1
        for index in filled:
            value = row[index]
            if isinstance(value, _TEMPORAL):
                tracker.observe(index, "text")
                if isinstance(value, dt.datetime) and value.time() != dt.time(0):
                    has_time_of_day.add(index)
            else:
                tracker.observe(index, classify_value(value))
    if header_row is None or first_col is None:
        return None
    span = range(first_col, end_col)
    raw_headers = [header_text(header[i]) if i < len(header) else None for i in span]
    names, notes = repair_headers(raw_headers)
    types = tracker.types(end_col)
    columns = tuple(
        ColumnPlan(sql_type=types[i], dates_only=i not in has_time_of_day) for i in span
    )
    between = last_row - header_row
    return SheetPlan(
        header_row=header_row,
        last_row=last_row,
        first_col=first_col,
        names=tuple(names),
        columns=columns,
        header_notes=tuple(notes),
        row_count=data_rows,
        empty_rows_skipped=between - data_rows,
        stopped_at_row=stopped_at,
    )


def header_text(value: Any) -> str | None:
    if is_empty_cell(value):
        return None
    if isinstance(value, _TEMPORAL):
        at_midnight = isinstance(value, dt.datetime) and value.time() == dt.time(0)
        return temporal_text(value, dates_only=at_midnight)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@dataclass(frozen=True, kw_only=True)
class PlannedTable:
    table: str
    sheet_label: str  # "sheet 2 `Q1 Sales`": for notes only, never for warnings
    plan: SheetPlan


def describe_tables(tables: Sequence[PlannedTable], *, skipped_empty: Sequence[str]) -> list[str]:
    """Manual notes shared by the workbook converters."""
    notes = ["Each worksheet is one table; the first non-empty row of a sheet is its header."]
    notes.append(
        "Tables: " + "; ".join(f"{t.sheet_label} -> `{t.table}`" for t in tables) + "."
    )
    if skipped_empty:
        notes.append("Empty sheets skipped (no table): " + ", ".join(skipped_empty) + ".")
    for planned in tables:
        for note in planned.plan.header_notes:
            notes.append(f"`{planned.table}`: {note}")
        if planned.plan.empty_rows_skipped:
            notes.append(
                f"`{planned.table}`: {planned.plan.empty_rows_skipped} empty row(s) between "
                "data rows were skipped."
            )
    notes.append(VALUE_RULES_NOTE)
    return notes


def schema_for(tables: Sequence[PlannedTable]) -> dict[str, dict[str, Any]]:
    return {
        t.table: {
            "columns": {
                name: column.sql_type for name, column in zip(t.plan.names, t.plan.columns)
            },
            "primary_key": [],
        }
        for t in tables
    }


@dataclass(frozen=True)
class ColumnSlice:
    """Columns ``start:stop`` of another re-iterable row source (a wide sheet's part)."""

    rows: Any
    start: int
    stop: int

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        for row in self.rows:
            yield tuple(row[self.start:self.stop])


def workbook_conversion(path: Path, tables: Sequence[PlannedTable], rows: dict[str, Any], *,
                        notes: Sequence[str], warnings: Sequence[str]) -> Conversion:
    """The dataset a workbook becomes (xlsx and xls alike), within the engine's limits: a
    sheet wider than 50 columns is split into parts joined by rowid (nothing dropped);
    more than 10 tables in all is refused with the fix, since a dataset holds at most 10."""
    schema = schema_for(tables)
    taken = set(schema)
    out_schema: dict[str, dict[str, Any]] = {}
    out_rows: dict[str, Any] = {}
    split_notes: list[str] = []
    for planned in tables:
        table = planned.table
        names = list(schema[table]["columns"])
        try:
            parts, note = split_wide_table(table, names)
        except TooManyColumns as error:
            raise ConversionError(f"{path.name}: {planned.sheet_label} is too wide ({error}): "
                                  "split the sheet into several sheets or files") from None
        if note is None:
            out_schema[table], out_rows[table] = schema[table], rows[table]
            continue
        split_notes.append(note)
        for part in parts:
            name = part.name if part.name == table else unique_name(part.name, taken)
            taken.add(name)
            out_schema[name] = {"columns": {n: schema[table]["columns"][n] for n in names[part.start:part.stop]},
                                "primary_key": []}
            out_rows[name] = ColumnSlice(rows[table], part.start, part.stop)
    if len(out_schema) > MAX_TABLES_PER_DATASET:
        raise ConversionError(
            f"{path.name}: {len(out_schema)} tables (sheets, with wide sheets split), more than the "
            f"{MAX_TABLES_PER_DATASET} a dataset holds: split the workbook into several files")
    return Conversion(kind="dataset", title=path.stem, schema=out_schema, rows=out_rows,
                      manual_notes=tuple(notes) + tuple(split_notes), warnings=tuple(warnings))


def sheet_label(position: int, title: str) -> str:
    shown = " ".join(title.split()).replace("`", "'")[:60]
    return f"sheet {position} `{shown}`"


def stopped_warning(path: Path, position: int, table: str, plan: SheetPlan) -> str | None:
    if plan.stopped_at_row is None:
        return None
    return (
        f"{path.name}: sheet {position} (table {table}): reading stopped at row "
        f"{plan.stopped_at_row} after {EMPTY_ROW_RUN_LIMIT} empty rows; anything further down "
        "was not imported: delete the empty rows in Excel if data follows them"
    )


# ---------------------------------------------------------------- xlsx specifics


@dataclass(frozen=True, kw_only=True)
class SheetXmlFacts:
    formulas_without_value: int
    merged_ranges: int


def scan_sheet_xml(archive: zipfile.ZipFile, member: str) -> SheetXmlFacts:
    """Count formula cells with no cached value and merged ranges, streaming."""
    formulas_without_value = merged = 0
    with archive.open(member) as source:
        for _event, element in ET.iterparse(source, events=("end",)):
            tag = element.tag.rpartition("}")[2]
            if tag == "c":
                has_formula, value_missing = False, True
                for child in element:
                    child_tag = child.tag.rpartition("}")[2]
                    if child_tag == "f":
                        has_formula = True
                    elif child_tag in ("v", "is") and (child.text or len(child)):
                        value_missing = False
                if has_formula and value_missing:
                    formulas_without_value += 1
                element.clear()
            elif tag == "row":
                element.clear()
            elif tag == "mergeCell":
                merged += 1
    return SheetXmlFacts(formulas_without_value=formulas_without_value, merged_ranges=merged)


@dataclass(frozen=True, kw_only=True)
class XlsxSheetRows:
    """A sheet's rows, re-read from the file on every iteration (never held in memory)."""

    path: Path
    sheet_title: str
    plan: SheetPlan

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        import openpyxl

        workbook = openpyxl.load_workbook(self.path, read_only=True, data_only=True)
        try:
            sheet = workbook[self.sheet_title]
            sheet.reset_dimensions()  # never trust the declared dimension
            rows = sheet.iter_rows(
                min_row=self.plan.header_row + 1,
                max_row=self.plan.last_row,
                max_col=self.plan.first_col + self.plan.width,
                values_only=True,
            )
            for row in rows:
                rendered = self.plan.render(row)
                if rendered is not None:
                    yield rendered
        finally:
            workbook.close()


# Sheets up to this many cells keep the rows read by the survey, so the workbook is
# parsed once; larger sheets stream from the file again (memory stays flat).
CACHE_CELLS_LIMIT = 200_000


class _SurveyCache:
    """Passes a sheet's rows through to the survey, keeping them while they are few."""

    def __init__(self, rows: Iterable[Sequence[Any]]) -> None:
        self._rows = rows
        self._cells = 0
        self.rows: list[tuple[Any, ...]] | None = []

    def __iter__(self) -> Iterator[Sequence[Any]]:
        for row in self._rows:
            if self.rows is not None:
                self._cells += len(row)
                if self._cells > CACHE_CELLS_LIMIT:
                    self.rows = None
                else:
                    self.rows.append(tuple(row))
            yield row


@dataclass(frozen=True)
class CachedSheetRows:
    """A small sheet's rows as the survey read them (row 1 first); picklable."""

    raw: tuple[tuple[Any, ...], ...]
    plan: SheetPlan

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        for row in self.raw[self.plan.header_row:self.plan.last_row]:
            rendered = self.plan.render(row)
            if rendered is not None:
                yield rendered


class XlsxConverter:
    name = "xlsx"
    extensions = (".xlsx", ".xlsm")
    requires: tuple[str, ...] = ("openpyxl",)
    install_hint = INSTALL_HINT

    def convert(self, path: Path) -> Conversion:
        path = Path(path)
        check_zip_container(path)
        import openpyxl

        try:
            workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
        except Exception as error:  # openpyxl raises many types on malformed parts
            raise ConversionError(
                f"{path.name}: not a readable Excel workbook ({type(error).__name__}): "
                "open it in Excel and save it as .xlsx again"
            ) from None
        try:
            return self._convert_workbook(path, workbook)
        finally:
            workbook.close()

    def _convert_workbook(self, path: Path, workbook: Any) -> Conversion:
        warnings: list[str] = []
        tables: list[PlannedTable] = []
        rows: dict[str, XlsxSheetRows | CachedSheetRows] = {}
        skipped_empty: list[str] = []
        merged_tables: list[str] = []
        missing_values = 0
        for position, title in enumerate(workbook.sheetnames, start=1):
            sheet = workbook[title]
            if not hasattr(sheet, "iter_rows"):
                warnings.append(
                    f"{path.name}: sheet {position} is a chartsheet (a chart, no cells): skipped"
                )
                continue
            label = sheet_label(position, sheet.title)
            sheet.reset_dimensions()  # a lying <dimension> must not drive the loop
            cache = _SurveyCache(sheet.iter_rows(values_only=True))
            try:
                plan = survey_sheet(cache)
            except Exception as error:  # one unreadable sheet must not sink the others
                warnings.append(
                    f"{path.name}: sheet {position} could not be read ({type(error).__name__}): "
                    "skipped; open and save the file in Excel"
                )
                continue
            if plan is None:
                skipped_empty.append(label)
                continue
            table = unique_name(
                table_name_from(sheet.title, fallback="sheet"), {t.table for t in tables}
            )
            facts = _sheet_facts(path, workbook, sheet)
            if facts is not None:
                missing_values += facts.formulas_without_value
                if facts.merged_ranges:
                    merged_tables.append(f"`{table}` ({facts.merged_ranges})")
            stopped = stopped_warning(path, position, table, plan)
            if stopped:
                warnings.append(stopped)
            tables.append(PlannedTable(table=table, sheet_label=label, plan=plan))
            if cache.rows is not None:
                rows[table] = CachedSheetRows(raw=tuple(cache.rows), plan=plan)
            else:
                rows[table] = XlsxSheetRows(path=path, sheet_title=sheet.title, plan=plan)
        if not tables:
            raise ConversionError(f"{path.name}: workbook has no data: every sheet is empty")
        if missing_values:
            warnings.append(
                f"{path.name}: {missing_values} formula cell(s) had no cached value and are "
                "NULL: open and save the file in Excel to compute them, then sync again"
            )
        notes = describe_tables(tables, skipped_empty=skipped_empty)
        if merged_tables:
            notes.append(f"{MERGED_NOTE} Merged ranges per table: {', '.join(merged_tables)}.")
        if missing_values:
            notes.append(
                f"{missing_values} formula cell(s) were saved without a computed value "
                "and are NULL."
            )
        return workbook_conversion(path, tables, rows, notes=notes, warnings=warnings)


def _sheet_facts(path: Path, workbook: Any, sheet: Any) -> SheetXmlFacts | None:
    member = getattr(sheet, "_worksheet_path", None)
    archive = getattr(workbook, "_archive", None)
    if not member or archive is None:
        return None
    try:
        return scan_sheet_xml(archive, member)
    except (KeyError, ET.ParseError, zipfile.BadZipFile, OSError):
        return None


@hookimpl
def register_converters(register: Any) -> None:
    register(XlsxConverter(), priority=0.0)
