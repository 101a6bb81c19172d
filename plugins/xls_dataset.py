"""Built-in converter: a legacy Excel ``.xls`` (BIFF) workbook becomes a dataset.

Same shape and rules as the ``.xlsx`` converter (one table per worksheet, the first
row a header unless it looks like data, trimmed edges, per-column types, a
``comments`` table, an empty workbook planted as such; see ``kit.sheets``), read with
xlrd. Specifics:

- BIFF stores every number as a double: a whole number up to 2**53 is read as an
  integer, anything else as a float. Date cells (detected by xlrd from the cell
  format) are converted with ``xldate_as_datetime`` and the workbook's own date system
  (1900 or 1904): a value below 1 is a time of day. A date outside what Python can
  represent stays its serial number, with a warning and a manual note naming the date
  system (the only case where it changes a stored value). Error cells are their
  Excel text (``#DIV/0!``).
- Merged ranges come from ``formatting_info=True``; policy: the value stays in the
  top-left cell, the other cells of the range are NULL. If xlrd cannot read the
  formatting records the file is read without them and the notes say merged ranges
  were not inspected.
- Cell comments come from xlrd's ``Sheet.cell_note_map`` (NOTE/TXO records, read with
  or without formatting records).
- xlrd writes diagnostics to a log file (stdout by default, which would corrupt
  ``--json``): it gets a private buffer, and what it says becomes the file's warnings.
- An encrypted workbook (xlrd: "Workbook is encrypted", or an encrypted OOXML package
  in an OLE wrapper) fails as encrypted; an ``.xlsx`` renamed ``.xls`` is named as such.
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from monkeyllm_plugins._container import (
    ENCRYPTION_STREAMS,
    check_not_empty,
    encrypted_message,
    is_ole_file,
    ole_stream_names,
)
from monkeyllm_plugins._extras import INGEST_HINT

from monkeyllm_gardener import Conversion, ConversionError, UnsupportedFile, hookimpl
from monkeyllm_gardener.kit import (
    MERGED_NOTE,
    CellComment,
    PlannedTable,
    SheetPlan,
    chatter_warnings,
    describe_tables,
    empty_workbook_conversion,
    sheet_label,
    stopped_warning,
    table_name_from,
    unique_name,
    with_warnings,
    workbook_conversion,
)
from monkeyllm_gardener.kit.sheets import CACHE_CELLS_LIMIT, CachedSheetRows, rendered_rows, survey_sheet_keeping_rows

_EXACT_FLOAT_LIMIT = 2**53
# xlrd cell types (xlrd.XL_CELL_*), spelt out so this module imports without xlrd.
(_CELL_EMPTY, _CELL_TEXT, _CELL_NUMBER, _CELL_DATE,
 _CELL_BOOLEAN, _CELL_ERROR, _CELL_BLANK) = range(7)


@dataclass
class _DateProblems:
    count: int = 0


def row_values(sheet: Any, index: int, datemode: int, problems: _DateProblems) -> list[Any]:
    """Row ``index`` (0-based) of an xlrd sheet as Python values (``typed_value``),
    read from xlrd's type and value arrays: no ``Cell`` object per cell."""
    limit = _EXACT_FLOAT_LIMIT
    # text, float numbers, empty cells and booleans, most cells, inline (typed_value's
    # rules for them); every other cell through typed_value
    return [value if kind == _CELL_TEXT
            else (int(value) if value.is_integer() and -limit <= value <= limit else value)
            if kind == _CELL_NUMBER and type(value) is float
            else None if kind == _CELL_EMPTY or kind == _CELL_BLANK
            else bool(value) if kind == _CELL_BOOLEAN
            else typed_value(kind, value, datemode, problems)
            for kind, value in zip(sheet.row_types(index), sheet.row_values(index))]


def typed_value(kind: int, value: Any, datemode: int, problems: _DateProblems) -> Any:
    """A cell of xlrd type ``kind`` holding ``value`` as a Python value (None, int,
    float, str, bool, date/time)."""
    if kind == _CELL_TEXT:
        return value
    if kind in (_CELL_EMPTY, _CELL_BLANK):
        return None
    if kind == _CELL_BOOLEAN:
        return bool(value)
    if kind == _CELL_ERROR:
        import xlrd
        return xlrd.error_text_from_code.get(value, f"#ERROR{value}")
    if kind == _CELL_DATE:
        import xlrd
        try:
            if 0 <= value < 1:
                stamp = xlrd.xldate_as_datetime(value, datemode)
                return stamp.time()
            return xlrd.xldate_as_datetime(value, datemode)
        except (ValueError, OverflowError, xlrd.xldate.XLDateError):
            problems.count += 1
            kind = _CELL_NUMBER
    if kind == _CELL_NUMBER:
        if float(value).is_integer() and abs(value) <= _EXACT_FLOAT_LIMIT:
            return int(value)
        return float(value)
    return value


def _sheet_values(sheet: Any, datemode: int, problems: _DateProblems) -> Iterator[list[Any]]:
    for index in range(sheet.nrows):
        yield row_values(sheet, index, datemode, problems)


def _open_book(path: Path, *, formatting_info: bool, log: io.StringIO) -> Any:
    """Open with xlrd, its diagnostics going to ``log``, never to stdout."""
    import xlrd

    try:
        return xlrd.open_workbook(str(path), formatting_info=formatting_info, on_demand=True,
                                  logfile=log, verbosity=0)
    except xlrd.XLRDError as error:
        text = str(error)
        if "encrypted" in text.lower():
            raise UnsupportedFile(encrypted_message(path)) from None
        if "xlsx" in text.lower():
            raise UnsupportedFile(
                f"{path.name}: this is an .xlsx workbook renamed .xls: rename it to .xlsx"
            ) from None
        # xlrd's message can quote the file's first bytes: never pass it on.
        with path.open("rb") as handle:
            head = handle.read(512).lstrip().lower()
        if head.startswith((b"<", b"\xef\xbb\xbf<")):
            raise UnsupportedFile(
                f"{path.name}: an HTML/XML page saved with an .xls name, not a workbook: "
                "open it in Excel and save it as .xlsx"
            ) from None
        raise ConversionError(
            f"{path.name}: not a readable .xls workbook (unsupported format or corrupt file): "
            "open it in Excel and save it again"
        ) from None


@dataclass(frozen=True, kw_only=True)
class XlsSheetRows:
    """A sheet's rows, re-read from the file on every iteration."""

    path: Path
    sheet_index: int
    plan: SheetPlan

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        # what xlrd says was reported when the workbook was surveyed: discarded here
        book = _open_book(self.path, formatting_info=False, log=io.StringIO())
        try:
            sheet = book.sheet_by_index(self.sheet_index)
            problems = _DateProblems()
            last = min(self.plan.last_row, sheet.nrows)
            yield from rendered_rows(self.plan, (row_values(sheet, index, book.datemode, problems)
                                                 for index in range(self.plan.data_start - 1, last)))  # 0-based
        finally:
            book.release_resources()


class XlsConverter:
    name = "xls"
    extensions = (".xls",)
    requires: tuple[str, ...] = ("xlrd",)
    install_hint = INGEST_HINT

    def __init__(self, *, cache_cells: int = CACHE_CELLS_LIMIT) -> None:
        # sheets up to this many cells keep the rows the survey read (the book is read
        # once); larger ones are read again from the file when loaded (memory stays flat)
        self.cache_cells = cache_cells

    def convert(self, path: Path) -> Conversion:
        path = Path(path)
        check_not_empty(path)
        if is_ole_file(path) and set(ENCRYPTION_STREAMS) & ole_stream_names(path):
            raise UnsupportedFile(encrypted_message(path))
        log = io.StringIO()
        book, merged_inspected = _open_with_formatting_if_possible(path, log)
        try:
            conversion = self._convert_book(path, book, merged_inspected=merged_inspected)
        finally:
            book.release_resources()
        return with_warnings(conversion, chatter_warnings(path, "xlrd", log.getvalue().splitlines()))

    def _convert_book(self, path: Path, book: Any, *, merged_inspected: bool) -> Conversion:
        warnings: list[str] = []
        tables: list[PlannedTable] = []
        rows: dict[str, CachedSheetRows | XlsSheetRows] = {}
        skipped_empty: list[str] = []
        merged_tables: list[str] = []
        sheets: list[tuple[int, str]] = []
        comments: list[CellComment] = []
        problems = _DateProblems()
        for index in range(book.nsheets):
            sheet = book.sheet_by_index(index)
            position = index + 1
            sheets.append((position, sheet.name))
            comments += _sheet_comments(sheet, position)
            label = sheet_label(position, sheet.name)
            plan, kept = survey_sheet_keeping_rows(_sheet_values(sheet, book.datemode, problems),
                                                   keep_cells=self.cache_cells)
            if plan is None:
                skipped_empty.append(label)
                book.unload_sheet(index)
                continue
            table = unique_name(
                table_name_from(sheet.name, fallback="sheet"), {t.table for t in tables}
            )
            if merged_inspected and sheet.merged_cells:
                merged_tables.append(f"`{table}` ({len(sheet.merged_cells)})")
            stopped = stopped_warning(path, position, table, plan)
            if stopped:
                warnings.append(stopped)
            tables.append(PlannedTable(table=table, position=position, sheet_label=label, plan=plan))
            rows[table] = kept if kept is not None else XlsSheetRows(path=path, sheet_index=index, plan=plan)
            book.unload_sheet(index)
        # xlrd loads worksheets only; charts, macro and dialog sheets are dropped by it.
        other_sheets = getattr(book, "_all_sheets_count", book.nsheets) - book.nsheets
        if other_sheets > 0:
            warnings.append(
                f"{path.name}: {other_sheets} chart/macro sheet(s) have no cells: skipped"
            )
        if not tables:
            return empty_workbook_conversion(path, sheets, warnings=warnings, comments=comments)
        notes = describe_tables(tables, skipped_empty=skipped_empty)
        if problems.count:
            warnings.append(
                f"{path.name}: {problems.count} date cell(s) are outside the calendar Python "
                "can represent and were kept as Excel serial numbers: check those cells"
            )
            system = "1904" if book.datemode == 1 else "1900"
            notes.append(
                f"{problems.count} date cell(s) outside the calendar hold Excel serial numbers "
                f"(days since the workbook's {system} date system's day 0)."
            )
        if merged_tables:
            notes.append(f"{MERGED_NOTE} Merged ranges per table: {', '.join(merged_tables)}.")
        elif not merged_inspected:
            notes.append(
                "Merged ranges could not be inspected in this file; a merged range keeps its "
                "value in its top-left cell only."
            )
        return workbook_conversion(path, tables, rows, notes=notes, warnings=warnings,
                                   comments=comments)


def _open_with_formatting_if_possible(path: Path, log: io.StringIO) -> tuple[Any, bool]:
    """The book with its formatting records (merged ranges), else without them."""
    try:
        return _open_book(path, formatting_info=True, log=log), True
    except ConversionError:
        raise
    except Exception:  # xlrd cannot read some files' formatting records
        pass
    try:
        return _open_book(path, formatting_info=False, log=log), False
    except ConversionError:
        raise
    except Exception as error:
        raise ConversionError(
            f"{path.name}: not a readable .xls workbook ({type(error).__name__}): "
            "open it in Excel and save it again"
        ) from None


def _sheet_comments(sheet: Any, position: int) -> list[CellComment]:
    from xlrd.formula import cellname

    return [
        CellComment(position=position, sheet=sheet.name, cell=cellname(rowx, colx), row=rowx + 1,
                    column=colx + 1, author=note.author or None, text=note.text or "")
        for (rowx, colx), note in sorted(sheet.cell_note_map.items())
    ]


@hookimpl
def register_converters(register: Any) -> None:
    register(XlsConverter(), priority=0.0)

