"""Built-in converter: a legacy Excel ``.xls`` (BIFF) workbook becomes a dataset.

Same shape and rules as the ``.xlsx`` converter (one table per worksheet, header =
first non-empty row, trimmed edges, per-column types; see ``xlsx_dataset``), read
with xlrd. Specifics:

- BIFF stores every number as a double: a whole number up to 2**53 is read as an
  integer, anything else as a float. Date cells (detected by xlrd from the cell
  format) are converted with ``xldate_as_datetime`` and the workbook's own date system
  (1900 or 1904): a value below 1 is a time of day. A date outside what Python can
  represent stays its serial number, with a warning. Error cells are their Excel text
  (``#DIV/0!``).
- Merged ranges come from ``formatting_info=True``; policy: the value stays in the
  top-left cell, the other cells of the range are NULL. If xlrd cannot read the
  formatting records the file is read without them and the notes say merged ranges
  were not inspected.
- An encrypted workbook (xlrd: "Workbook is encrypted", or an encrypted OOXML package
  in an OLE wrapper) fails as encrypted; an ``.xlsx`` renamed ``.xls`` is named as such.
"""
from __future__ import annotations

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
from monkeyllm_plugins._tabular import table_name_from, unique_name
from monkeyllm_plugins.xlsx_dataset import (
    INSTALL_HINT,
    MERGED_NOTE,
    PlannedTable,
    SheetPlan,
    describe_tables,
    sheet_label,
    stopped_warning,
    survey_sheet,
    workbook_conversion,
)

from monkeyllm_gardener.conversion import Conversion, ConversionError, UnsupportedFile
from monkeyllm_gardener.hookspecs import hookimpl

_EXACT_FLOAT_LIMIT = 2**53
# xlrd cell types (xlrd.XL_CELL_*), spelt out so this module imports without xlrd.
(_CELL_EMPTY, _CELL_TEXT, _CELL_NUMBER, _CELL_DATE,
 _CELL_BOOLEAN, _CELL_ERROR, _CELL_BLANK) = range(7)


@dataclass
class _DateProblems:
    count: int = 0


def cell_value(cell: Any, datemode: int, problems: _DateProblems) -> Any:
    """One xlrd cell as a Python value (None, int, float, str, bool, date/time)."""
    import xlrd

    kind, value = cell.ctype, cell.value
    if kind in (_CELL_EMPTY, _CELL_BLANK):
        return None
    if kind == _CELL_TEXT:
        return value
    if kind == _CELL_BOOLEAN:
        return bool(value)
    if kind == _CELL_ERROR:
        return xlrd.error_text_from_code.get(value, f"#ERROR{value}")
    if kind == _CELL_DATE:
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
        yield [cell_value(cell, datemode, problems) for cell in sheet.row(index)]


def _open_book(path: Path, *, formatting_info: bool) -> Any:
    import xlrd

    try:
        return xlrd.open_workbook(str(path), formatting_info=formatting_info, on_demand=True)
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
        book = _open_book(self.path, formatting_info=False)
        try:
            sheet = book.sheet_by_index(self.sheet_index)
            problems = _DateProblems()
            last = min(self.plan.last_row, sheet.nrows)
            for index in range(self.plan.header_row, last):  # 0-based: data starts after the header
                row = [cell_value(cell, book.datemode, problems) for cell in sheet.row(index)]
                rendered = self.plan.render(row)
                if rendered is not None:
                    yield rendered
        finally:
            book.release_resources()


class XlsConverter:
    name = "xls"
    extensions = (".xls",)
    requires: tuple[str, ...] = ("xlrd",)
    install_hint = INSTALL_HINT

    def convert(self, path: Path) -> Conversion:
        path = Path(path)
        check_not_empty(path)
        if is_ole_file(path) and set(ENCRYPTION_STREAMS) & ole_stream_names(path):
            raise UnsupportedFile(encrypted_message(path))
        merged_inspected = True
        try:
            book = _open_book(path, formatting_info=True)
        except ConversionError:
            raise
        except Exception:  # xlrd cannot read some files' formatting records
            merged_inspected = False
            book = None
        if book is None:
            try:
                book = _open_book(path, formatting_info=False)
            except ConversionError:
                raise
            except Exception as error:
                raise ConversionError(
                    f"{path.name}: not a readable .xls workbook ({type(error).__name__}): "
                    "open it in Excel and save it again"
                ) from None
        try:
            return self._convert_book(path, book, merged_inspected=merged_inspected)
        finally:
            book.release_resources()

    def _convert_book(self, path: Path, book: Any, *, merged_inspected: bool) -> Conversion:
        warnings: list[str] = []
        tables: list[PlannedTable] = []
        rows: dict[str, XlsSheetRows] = {}
        skipped_empty: list[str] = []
        merged_tables: list[str] = []
        problems = _DateProblems()
        for index in range(book.nsheets):
            sheet = book.sheet_by_index(index)
            position = index + 1
            label = sheet_label(position, sheet.name)
            plan = survey_sheet(_sheet_values(sheet, book.datemode, problems))
            if plan is None:
                skipped_empty.append(label)
                continue
            table = unique_name(
                table_name_from(sheet.name, fallback="sheet"), {t.table for t in tables}
            )
            if merged_inspected and sheet.merged_cells:
                merged_tables.append(f"`{table}` ({len(sheet.merged_cells)})")
            stopped = stopped_warning(path, position, table, plan)
            if stopped:
                warnings.append(stopped)
            tables.append(PlannedTable(table=table, sheet_label=label, plan=plan))
            rows[table] = XlsSheetRows(path=path, sheet_index=index, plan=plan)
            book.unload_sheet(index)
        # xlrd loads worksheets only; charts, macro and dialog sheets are dropped by it.
        other_sheets = getattr(book, "_all_sheets_count", book.nsheets) - book.nsheets
        if other_sheets > 0:
            warnings.append(
                f"{path.name}: {other_sheets} chart/macro sheet(s) have no cells: skipped"
            )
        if not tables:
            raise ConversionError(f"{path.name}: workbook has no data: every sheet is empty")
        if problems.count:
            warnings.append(
                f"{path.name}: {problems.count} date cell(s) are outside the calendar Python "
                "can represent and were kept as Excel serial numbers: check those cells"
            )
        notes = describe_tables(tables, skipped_empty=skipped_empty)
        system = "1904" if book.datemode == 1 else "1900"
        notes.append(f"Dates were read with the workbook's {system} date system.")
        if merged_tables:
            notes.append(f"{MERGED_NOTE} Merged ranges per table: {', '.join(merged_tables)}.")
        elif not merged_inspected:
            notes.append(
                "Merged ranges could not be inspected in this file; a merged range keeps its "
                "value in its top-left cell only."
            )
        return workbook_conversion(path, tables, rows, notes=notes, warnings=warnings)


@hookimpl
def register_converters(register: Any) -> None:
    register(XlsConverter(), priority=0.0)

