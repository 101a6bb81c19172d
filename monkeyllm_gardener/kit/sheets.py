"""What workbook converters (the built-in ``.xlsx`` and ``.xls``, or a plugin's
``.ods``) share: sheet planning, the comments table, the empty-workbook dataset and
the library chatter they capture.

Everything here works on rows of Python values (None, int, float, str, bool,
date/time values), so it is format-neutral; the format modules read the files.

Sheet rules:

- The table starts at the first non-empty row and column; leading and trailing
  empty rows and columns are trimmed, an empty row between data rows is skipped (and
  counted in the notes). Below the first row, reading stops after
  ``EMPTY_ROW_RUN_LIMIT`` consecutive empty rows (a warning says so).
- The first row is the header, unless it looks like data. It is data when one of its
  non-empty cells is a date, a time, a duration or a boolean; or a number, except
  when its numbers are two or more consecutive whole numbers in order (``2023, 2024,
  2025`` or ``1, 2, 3``: the column labels of a pivot-style sheet); or when it repeats
  the row below cell for cell. A header row of text (``name, total``) always stays
  a header. When the first row is data, it is kept as the table's first row, the
  columns are named ``column_1`` .. ``column_N`` and a manual note says so. A real
  header is repaired by ``repair_headers`` (values in a column without a header
  are kept, in ``column_N``).
- Types: cells keep the types the file stored, text is never re-parsed as a number
  (``00501`` typed as text stays TEXT). Per column: INTEGER when every value is a
  whole number (booleans count as 1/0), REAL when numbers include decimals, TEXT
  otherwise, and then every value is written as text (``true``/``false`` for
  booleans). Dates, times and datetimes are ISO 8601 TEXT: ``YYYY-MM-DD`` when every
  datetime of the column falls at midnight, else ``YYYY-MM-DDTHH:MM:SS``; durations
  as ``H:MM:SS``. An empty cell (or one holding an empty string) is NULL; a cell of
  spaces is text. (These general rules are the forest dialect's dataset conventions;
  the manual notes carry only what is particular to one workbook.)

Cell comments (notes) become a ``comments`` table (``comments_2``... when a sheet
took that name), one row per comment: the sheet, the cell (``B3``) and its row
number (``sheet_row``), the table and column the cell belongs to, ``data_rowid`` (the
rowid of the cell's row in that table; NULL for a comment on the header or on a
skipped empty row), the author and the text. A comment on a cell outside every table
(an empty sheet, a column beyond the data) keeps its sheet and cell, with NULL
table, column and rowid. The manual names the table in one sentence. When the
workbook already fills the ten tables a dataset holds, the comments are not kept and
a warning says so.

A workbook with no value in any sheet plants a dataset that says it holds no data
(in its query manual, which every sync regenerates): its one table ``empty_sheets``
lists the sheets (position, name), and a warning says it was planted empty. Once
the workbook has data, the next sync refreshes it like any dataset.

Library chatter (openpyxl's ``UserWarning``s, xlrd's log lines) never reaches
stdout or stderr: ``chatter_warnings`` turns it into one-line warnings naming the
file and the library, bounded by the host's one rule (``chatter.bounded_lines``).

A workbook converter reads each sheet's rows as Python values, plans it with
``survey_sheet``, names its table (``kit.table_name_from``), and hands the
``PlannedTable``s and their row sources to ``workbook_conversion``.
"""
from __future__ import annotations

import datetime as dt
import math
from bisect import bisect_left
from dataclasses import dataclass, replace
from itertools import zip_longest
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from monkeyllm_gardener.chatter import bounded_lines
from monkeyllm_gardener.conversion import Conversion, ConversionError
from monkeyllm_gardener.kit.tabular import (
    _EXACT_FLOAT_LIMIT,
    MAX_TABLES_PER_DATASET,
    TooManyColumns,
    TypeTracker,
    classify_value,
    convert_value,
    repair_headers,
    split_wide_table,
    unique_name,
)

__all__ = [
    "CACHE_CELLS_LIMIT", "EMPTY_ROW_RUN_LIMIT", "MERGED_NOTE", "CachedSheetRows", "CellComment", "ColumnPlan", "PlannedTable",
    "SheetPlan", "chatter_warnings", "describe_tables", "empty_workbook_conversion", "rendered_rows",
    "sheet_label", "stopped_warning", "survey_sheet", "survey_sheet_keeping_rows", "with_warnings",
    "workbook_conversion",
]

EMPTY_ROW_RUN_LIMIT = 1_000
_TEMPORAL = (dt.datetime, dt.date, dt.time, dt.timedelta)
_EXACT_TEMPORAL = frozenset(_TEMPORAL)
_EXACT_NUMBERS = frozenset({bool, int, float})

MERGED_NOTE = (
    "Merged cells keep their value in the top-left cell of the range; the other cells of "
    "the range are NULL."
)
COMMENT_COLUMNS = {
    "sheet": "TEXT", "cell": "TEXT", "sheet_row": "INTEGER", "table_name": "TEXT",
    "column_name": "TEXT", "data_rowid": "INTEGER", "author": "TEXT", "comment": "TEXT",
}
EMPTY_SHEETS_TABLE = "empty_sheets"


# ---------------------------------------------------------------- sheet planning


def is_empty_cell(value: Any) -> bool:
    return value is None or value == ""


@dataclass(frozen=True, kw_only=True)
class ColumnPlan:
    """How one column of a sheet is written: its SQL type, and whether its datetimes
    are written as dates (``YYYY-MM-DD``)."""

    sql_type: str
    dates_only: bool  # every datetime in the column is at midnight: write YYYY-MM-DD
    # every value the survey saw in the column is stored as it is (None, or a value of
    # the column's stored type: int, float, non-empty str): the renderer copies it
    stored_as_read: bool = False


@dataclass(frozen=True, kw_only=True)
class SheetPlan:
    """Where a sheet's table sits (1-based row numbers, 0-based column offsets) and how
    each column is written. Computed in one streaming pass; picklable."""

    first_row: int  # the first non-empty row: the header, or the first data row
    has_header: bool
    first_row_as_data: str | None  # why the first row is data ("holds numbers", ...)
    last_row: int
    first_col: int
    names: tuple[str, ...]
    columns: tuple[ColumnPlan, ...]
    header_notes: tuple[str, ...]
    row_count: int
    skipped_rows: tuple[int, ...]  # empty rows between data rows, ascending
    stopped_at_row: int | None  # the empty-row run limit ended the scan here

    @property
    def width(self) -> int:
        return len(self.names)

    @property
    def data_start(self) -> int:
        """The row number of the first data row (or of the empty rows before it)."""
        return self.first_row + 1 if self.has_header else self.first_row

    @property
    def empty_rows_skipped(self) -> int:
        return len(self.skipped_rows)

    def renderer(self) -> Callable[[Sequence[Any]], tuple[Any, ...] | None]:
        """What writes one data row to SQLite (None for an empty row), each column's
        writer chosen once: for a loop over the rows."""
        start, stop, width = self.first_col, self.first_col + self.width, self.width
        converted = self.column_writers()

        def render(row: Sequence[Any]) -> tuple[Any, ...] | None:
            window = list(row[start:stop])
            if window.count(None) + window.count("") == len(window):  # every cell is_empty_cell
                return None
            if len(window) < width:
                window += [None] * (width - len(window))
            for index, write in converted:
                window[index] = write(window[index])
            return tuple(window)

        return render

    def column_writers(self) -> tuple[tuple[int, Callable[[Any], Any]], ...]:
        """(column offset, ``cell_writer``) of each column whose values need a rule:
        only those are written cell by cell."""
        return tuple((index, cell_writer(column)) for index, column in enumerate(self.columns)
                     if not column.stored_as_read)

    def data_rowid(self, row: int) -> int | None:
        """The rowid the sheet's row ``row`` gets in the table (rows are inserted in
        order, empty ones skipped); None for the header and rows outside the data."""
        if row < self.data_start or row > self.last_row:
            return None
        earlier = bisect_left(self.skipped_rows, row)
        if earlier < len(self.skipped_rows) and self.skipped_rows[earlier] == row:
            return None
        return row - self.data_start + 1 - earlier

    def column_name(self, column: int) -> str | None:
        """The table column holding the sheet's 1-based ``column``, if any."""
        offset = column - 1 - self.first_col
        return self.names[offset] if 0 <= offset < self.width else None


def cell_writer(column: ColumnPlan) -> Callable[[Any], Any]:
    """``write_cell(value, column)`` as a function of the value: a value that already
    has the column's stored type (an int in an INTEGER column, a float in a REAL one,
    a non-empty str in a TEXT one) is stored as it is, anything else takes
    ``write_cell``'s rules."""
    # None (an empty cell), the exact date/time types and the exact number types take
    # write_cell's rule without the call: the most frequent values after the stored type
    if column.sql_type == "TEXT":
        dates_only = column.dates_only

        def write_text(value: Any) -> Any:
            kind = type(value)
            if kind is str:
                return value or None  # "" is an empty cell
            if value is None:
                return None
            if kind in _EXACT_TEMPORAL:
                return temporal_text(value, dates_only=dates_only)
            if kind is bool:
                return "true" if value else "false"
            if kind is int or (kind is float and math.isfinite(value)):
                return repr(value)  # convert_value's json.dumps spells them as repr does
            return write_cell(value, column)
        return write_text
    stored = int if column.sql_type == "INTEGER" else float

    def write_number(value: Any) -> Any:
        kind = type(value)
        if kind is stored:
            return value
        if value is None:
            return None
        if kind in _EXACT_NUMBERS:
            return stored(value)  # convert_value's int() / float()
        return write_cell(value, column)
    return write_number


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


# Rows typed together, a column at a time (``_ColumnEvidence.observe_rows``).
_CHUNK_ROWS = 512
_NONE = type(None)
_MIDNIGHT = dt.time(0)
# The types a column is typed by without a look at each value; any other type (a
# subclass, a plugin's own value) is classified cell by cell.
_TYPED_BY_COLUMN = frozenset({_NONE, str, bool, int, float, dt.datetime, dt.date, dt.time, dt.timedelta})
_STORED_TYPE = {"INTEGER": int, "REAL": float, "TEXT": str}


class _ColumnEvidence:
    """The per-column type evidence of the data rows seen so far: what
    ``classify_value`` says of each non-empty cell (a date, time or duration is text),
    which columns hold a datetime with a time of day, and the Python types seen (for
    ``ColumnPlan.stored_as_read``)."""

    def __init__(self) -> None:
        self.tracker = TypeTracker()
        self.has_time_of_day: set[int] = set()
        self.types_seen: dict[int, set[type]] = {}
        self.has_empty_text: set[int] = set()  # columns holding a "" (an empty cell)

    def _observe_value(self, index: int, value: Any) -> None:
        if isinstance(value, _TEMPORAL):
            self.tracker.observe(index, "text")
            if isinstance(value, dt.datetime) and value.time() != _MIDNIGHT:
                self.has_time_of_day.add(index)
        else:
            self.tracker.observe(index, classify_value(value))

    def observe_rows(self, rows: Sequence[Sequence[Any]]) -> range:
        """Note the kind of every non-empty cell of ``rows`` (rows holding a value), a
        column at a time: the set of a column's types decides most of it at C speed.
        Returns the span of the columns holding a value."""
        first, end = None, 0
        for index, column in enumerate(zip_longest(*rows)):
            empty_text = column.count("")
            if empty_text:  # even in a column without a value: the renderer must write NULL
                self.has_empty_text.add(index)
            if column.count(None) + empty_text == len(column):
                continue
            if first is None:
                first = index
            end = index + 1
            types = set(map(type, column))
            self.types_seen.setdefault(index, set()).update(types)
            self._observe_column(index, column, types)
        return range(first if first is not None else 0, end)

    def _observe_column(self, index: int, column: tuple[Any, ...], types: set[type]) -> None:
        observe = self.tracker.observe
        if str in types and (types == {str} or types == {str, _NONE}
                             or any(type(v) is str and v for v in column)):
            observe(index, "text")  # a non-empty str (the column holds a value: not all "")
        if bool in types:
            observe(index, "integer")
        if int in types:
            ints = [v for v in column if type(v) is int]
            if -_EXACT_FLOAT_LIMIT <= min(ints) and max(ints) <= _EXACT_FLOAT_LIMIT:
                observe(index, "integer")
            else:
                for kind in set(map(classify_value, ints)):
                    observe(index, kind)
        if float in types:
            floats = [v for v in column if type(v) is float]
            if math.isfinite(sum(floats)):  # an inf or nan would make the sum one
                observe(index, "real")
            else:
                for kind in set(map(classify_value, floats)):
                    observe(index, kind)
        if types & _EXACT_TEMPORAL:
            observe(index, "text")
            if dt.datetime in types and index not in self.has_time_of_day:
                times = set(map(dt.datetime.time, [v for v in column if type(v) is dt.datetime]))
                if times - {_MIDNIGHT}:
                    self.has_time_of_day.add(index)
        if not types <= _TYPED_BY_COLUMN:
            for value in column:
                if type(value) not in _TYPED_BY_COLUMN:
                    self._observe_value(index, value)

    def stored_as_read(self, index: int, sql_type: str) -> bool:
        """True when every value seen in the column is None or of its stored type."""
        stored = _STORED_TYPE.get(sql_type)
        if stored is None or (stored is str and index in self.has_empty_text):
            return False
        return self.types_seen.get(index, set()) <= {_NONE, stored}


def survey_sheet(rows: Iterable[Sequence[Any]]) -> SheetPlan | None:
    """Plan a sheet from its rows (row 1 first, gaps as empty rows); None when empty."""
    first_row: int | None = None
    first: tuple[Any, ...] = ()
    second: tuple[Any, ...] | None = None
    last_row = 0
    first_col, end_col = None, 0
    data_rows = 0
    empty_run = 0
    stopped_at: int | None = None
    gap: list[int] = []  # empty rows since the last non-empty one
    skipped: list[int] = []
    evidence = _ColumnEvidence()
    pending: list[tuple[Any, ...]] = []  # data rows not yet typed (observe_rows)
    for number, row in enumerate(rows, start=1):
        if row.count(None) + row.count("") == len(row):  # every cell is_empty_cell
            empty_run += 1
            # Only below the first row: a sheet may start far down, and skipping it as
            # "empty" would lose it without a word.
            if first_row is not None:
                if empty_run >= EMPTY_ROW_RUN_LIMIT:
                    stopped_at = number
                    break
                gap.append(number)
            continue
        empty_run = 0
        skipped.extend(gap)
        gap.clear()
        last_row = number
        if first_row is None:
            first_row, first = number, tuple(row)
            filled = [index for index, value in enumerate(first) if not is_empty_cell(value)]
            first_col, end_col = filled[0], filled[-1] + 1
            continue
        copied = tuple(row)  # a reader may reuse its row object
        pending.append(copied)
        if second is None:
            second = copied
        data_rows += 1
        if len(pending) == _CHUNK_ROWS:
            first_col, end_col = _widened(first_col, end_col, evidence.observe_rows(pending))
            pending = []
    if pending:
        first_col, end_col = _widened(first_col, end_col, evidence.observe_rows(pending))
    if first_row is None or first_col is None:
        return None
    span = range(first_col, end_col)
    as_data = first_row_as_data(first, second, span)
    if as_data:
        evidence.observe_rows([first])
        data_rows += 1
        names, notes = [f"column_{k}" for k in range(1, len(span) + 1)], []
    else:
        raw_headers = [header_text(first[i]) if i < len(first) else None for i in span]
        names, notes = repair_headers(raw_headers)
    types = evidence.tracker.types(end_col)
    columns = tuple(
        ColumnPlan(sql_type=types[i], dates_only=i not in evidence.has_time_of_day,
                   stored_as_read=evidence.stored_as_read(i, types[i])) for i in span
    )
    return SheetPlan(
        first_row=first_row,
        has_header=as_data is None,
        first_row_as_data=as_data,
        last_row=last_row,
        first_col=first_col,
        names=tuple(names),
        columns=columns,
        header_notes=tuple(notes),
        row_count=data_rows,
        skipped_rows=tuple(skipped),
        stopped_at_row=stopped_at,
    )


def _widened(first_col: int | None, end_col: int, span: range) -> tuple[int | None, int]:
    if not span:
        return first_col, end_col
    return (span.start if first_col is None else min(first_col, span.start)), max(end_col, span.stop)


@dataclass(frozen=True)
class CachedSheetRows:
    """A small sheet's rows as the survey read them (row 1 first), rendered as its
    plan says on every iteration: the table's row source; picklable."""

    raw: tuple[tuple[Any, ...], ...]
    plan: SheetPlan

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        rows = self.raw[self.plan.data_start - 1:self.plan.last_row]
        try:
            rendered = _rendered_by_column(self.plan, rows)
        except Exception:  # noqa: BLE001 -- a value no rule writes (an object json cannot spell)
            # row by row, so the failure comes with the rows before it, as a stream's does
            yield from rendered_rows(self.plan, rows)
            return
        yield from rendered


def _rendered_by_column(plan: SheetPlan, rows: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
    """``rendered_rows(plan, rows)`` all at once, a column at a time: the rows are in
    memory already, and each writer then runs over its column with no loop per row."""
    start, stop, width = plan.first_col, plan.first_col + plan.width, plan.width
    windows = [row[start:stop] for row in rows]
    # what the renderer's empty-row test skips: every cell is_empty_cell
    windows = [window for window in windows if window.count(None) + window.count("") != len(window)]
    if not windows:
        return []
    # a row shorter than the table ends in empty cells, as the renderer pads it
    columns: list[Iterable[Any]] = list(zip_longest(*windows))
    columns += [(None,) * len(windows)] * (width - len(columns))
    for index, write in plan.column_writers():
        columns[index] = tuple(map(write, columns[index]))
    return list(zip(*columns))


def rendered_rows(plan: SheetPlan, rows: Iterable[Sequence[Any]]) -> Iterator[tuple[Any, ...]]:
    """The data rows among ``rows`` (already cut to the plan's), as written to SQLite."""
    render = plan.renderer()
    for row in rows:
        rendered = render(row)
        if rendered is not None:
            yield rendered


class _KeepingRows:
    """Passes a sheet's rows through to the survey, keeping them (as tuples) while they
    hold at most ``limit`` cells."""

    def __init__(self, rows: Iterable[Sequence[Any]], limit: int) -> None:
        self._rows, self._limit, self._cells = rows, limit, 0
        self.kept: list[tuple[Any, ...]] | None = []

    def __iter__(self) -> Iterator[Sequence[Any]]:
        for row in self._rows:
            if self.kept is not None:
                self._cells += len(row)
                if self._cells > self._limit:
                    self.kept = None
                else:
                    row = tuple(row)  # the survey takes this tuple as its copy
                    self.kept.append(row)
            yield row


# Sheets up to this many cells keep the rows read by the survey, so the workbook is
# parsed once; larger sheets stream from the file again (memory stays flat).
CACHE_CELLS_LIMIT = 200_000


def survey_sheet_keeping_rows(rows: Iterable[Sequence[Any]], *, keep_cells: int = CACHE_CELLS_LIMIT
                              ) -> tuple[SheetPlan | None, CachedSheetRows | None]:
    """``survey_sheet(rows)``, and, when the rows hold at most ``keep_cells`` cells, the
    table's row source made of the rows it read (the file is read once); None when the
    sheet is empty or bigger (read its rows again: memory stays flat)."""
    keeping = _KeepingRows(rows, keep_cells)
    plan = survey_sheet(keeping)
    if plan is None or keeping.kept is None:
        return plan, None
    return plan, CachedSheetRows(raw=tuple(keeping.kept), plan=plan)


def first_row_as_data(first: Sequence[Any], second: Sequence[Any] | None, span: range) -> str | None:
    """Why the sheet's first row is data rather than a header (the module's rule), or
    None when it is a header."""
    cells = [_cell_at(first, i) for i in span]
    values = [value for value in cells if value is not None]
    if any(isinstance(value, (bool, *_TEMPORAL)) for value in values):
        return "holds dates, times or true/false values"
    numbers = [value for value in values if isinstance(value, (int, float))]
    if numbers and not _consecutive_whole_numbers(numbers):
        return "holds numbers"
    if second is not None and cells == [_cell_at(second, i) for i in span]:
        return "repeats the row below"
    return None


def _cell_at(row: Sequence[Any], index: int) -> Any:
    value = row[index] if index < len(row) else None
    return None if is_empty_cell(value) else value


def _consecutive_whole_numbers(numbers: Sequence[int | float]) -> bool:
    """``2023, 2024, 2025``: labels (years, periods), not measurements."""
    if len(numbers) < 2 or not all(float(n).is_integer() for n in numbers):
        return False
    return all(int(b) == int(a) + 1 for a, b in zip(numbers, numbers[1:]))


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


# ---------------------------------------------------------------- the workbook's dataset


@dataclass(frozen=True, kw_only=True)
class PlannedTable:
    """One sheet as a table of the workbook's dataset: the table's name, the sheet's
    position and label, and its ``SheetPlan``."""

    table: str
    position: int  # the sheet's 1-based position in the workbook
    sheet_label: str  # "sheet 2 `Q1 Sales`": for notes only, never for warnings
    plan: SheetPlan


@dataclass(frozen=True, kw_only=True)
class CellComment:
    """One cell comment (an Excel note) as the file stores it."""

    position: int  # the sheet's 1-based position
    sheet: str
    cell: str  # "B3"
    row: int  # 1-based
    column: int  # 1-based
    author: str | None
    text: str


def sheet_label(position: int, title: str) -> str:
    """How notes name a sheet: ``sheet 2 `Q1 Sales``` (one line, at most 60 characters
    of its title)."""
    shown = " ".join(title.split()).replace("`", "'")[:60]
    return f"sheet {position} `{shown}`"


def stopped_warning(path: Path, position: int, table: str, plan: SheetPlan) -> str | None:
    """The run-report warning for a sheet whose reading stopped at a long run of empty
    rows (``EMPTY_ROW_RUN_LIMIT``), or None when it was read to its end."""
    if plan.stopped_at_row is None:
        return None
    return (
        f"{path.name}: sheet {position} (table {table}): reading stopped at row "
        f"{plan.stopped_at_row} after {EMPTY_ROW_RUN_LIMIT} empty rows; anything further down "
        "was not imported: delete the empty rows in Excel if data follows them"
    )


def describe_tables(tables: Sequence[PlannedTable], *, skipped_empty: Sequence[str]) -> list[str]:
    """Manual notes shared by the workbook converters: only what is particular to this
    workbook (which sheet is which table, renamed columns, generated names, gaps)."""
    notes = ["Sheets as tables: " + "; ".join(f"{t.sheet_label} -> `{t.table}`" for t in tables) + "."]
    if skipped_empty:
        notes.append("Empty sheets skipped (no table): " + ", ".join(skipped_empty) + ".")
    for planned in tables:
        plan = planned.plan
        if plan.first_row_as_data:
            notes.append(
                f"`{planned.table}`: the sheet's first row {plan.first_row_as_data}, so it is data, "
                f"not a header: it is the table's first row and the columns are named "
                f"`column_1` .. `column_{plan.width}`."
            )
        for note in plan.header_notes:
            notes.append(f"`{planned.table}`: {note}")
        if plan.empty_rows_skipped:
            notes.append(
                f"`{planned.table}`: {plan.empty_rows_skipped} empty row(s) between "
                "data rows were skipped."
            )
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
                        notes: Sequence[str], warnings: Sequence[str],
                        comments: Sequence[CellComment] = ()) -> Conversion:
    """The dataset a workbook becomes (xlsx and xls alike), within the engine's limits: a
    sheet wider than 50 columns is split into parts joined by rowid (nothing dropped);
    more than 10 tables in all is refused with the fix, since a dataset holds at most 10.
    Cell comments become one more table when there is room for it."""
    schema = schema_for(tables)
    taken = set(schema)
    out_schema: dict[str, dict[str, Any]] = {}
    out_rows: dict[str, Any] = {}
    split_notes: list[str] = []
    home: dict[tuple[str, str], str] = {}  # (sheet table, column) -> the table holding it
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
            home.update({(table, name): table for name in names})
            continue
        split_notes.append(note)
        for part in parts:
            name = part.name if part.name == table else unique_name(part.name, taken)
            taken.add(name)
            out_schema[name] = {"columns": {n: schema[table]["columns"][n] for n in names[part.start:part.stop]},
                                "primary_key": []}
            out_rows[name] = ColumnSlice(rows[table], part.start, part.stop)
            home.update({(table, column): name for column in names[part.start:part.stop]})
    if len(out_schema) > MAX_TABLES_PER_DATASET:
        raise ConversionError(
            f"{path.name}: {len(out_schema)} tables (sheets, with wide sheets split), more than the "
            f"{MAX_TABLES_PER_DATASET} a dataset holds: split the workbook into several files")
    all_notes = list(notes) + split_notes
    all_warnings = list(warnings)
    if comments:
        _add_comments_table(path, comments, tables, home, out_schema, out_rows, all_notes, all_warnings)
    return Conversion(kind="dataset", title=path.stem, schema=out_schema, rows=out_rows,
                      manual_notes=tuple(all_notes), warnings=tuple(all_warnings))


def _add_comments_table(path: Path, comments: Sequence[CellComment], tables: Sequence[PlannedTable],
                        home: dict[tuple[str, str], str], schema: dict[str, Any], rows: dict[str, Any],
                        notes: list[str], warnings: list[str]) -> None:
    if len(schema) >= MAX_TABLES_PER_DATASET:
        warnings.append(
            f"{path.name}: {len(comments)} cell comment(s) not kept: the sheets already fill the "
            f"{MAX_TABLES_PER_DATASET} tables a dataset holds; split the workbook to keep them")
        return
    name = unique_name("comments", set(schema))
    by_position = {t.position: t for t in tables}
    schema[name] = {"columns": dict(COMMENT_COLUMNS), "primary_key": []}
    rows[name] = tuple(comment_row(c, by_position.get(c.position), home) for c in comments)
    notes.append(
        f"Cell comments are in table `{name}`, one row per comment: its `sheet`, `cell` (`B3`) "
        "and `sheet_row`, the `table_name` and `column_name` the cell belongs to, `data_rowid` "
        "(the rowid of its row in that table; NULL on the header; all three NULL for a cell "
        "outside every table), `author` and `comment`.")


def comment_row(comment: CellComment, planned: PlannedTable | None,
                home: dict[tuple[str, str], str]) -> tuple[Any, ...]:
    table = column = rowid = None
    if planned is not None:
        column = planned.plan.column_name(comment.column)
    if planned is not None and column is not None:  # else the cell is outside every table
        rowid = planned.plan.data_rowid(comment.row)
        table = home.get((planned.table, column), planned.table)
    return (comment.sheet, comment.cell, comment.row, table, column, rowid,
            comment.author or None, comment.text)


def empty_workbook_conversion(path: Path, sheets: Sequence[tuple[int, str]], *,
                              warnings: Sequence[str], comments: Sequence[CellComment] = ()) -> Conversion:
    """A workbook without a single value: a dataset that says so and lists its sheets,
    planted (with a warning) like an empty note, instead of failing every sync."""
    schema = {EMPTY_SHEETS_TABLE: {"columns": {"position": "INTEGER", "sheet": "TEXT"}, "primary_key": []}}
    rows: dict[str, Any] = {EMPTY_SHEETS_TABLE: tuple(sheets)}
    # Said in the manual, which every sync regenerates: text before the map would stay
    # in the body after the workbook gets data (a dataset refresh keeps the body).
    notes = [f"This workbook holds no data: none of its sheets has a cell value; `{EMPTY_SHEETS_TABLE}` "
             "lists them (position, name)."]
    all_warnings = [*warnings, f"{path.name}: workbook holds no data (every sheet is empty): planted "
                               "as a dataset that lists its empty sheets"]
    if comments:
        home: dict[tuple[str, str], str] = {}
        _add_comments_table(path, comments, (), home, schema, rows, notes, all_warnings)
    return Conversion(kind="dataset", title=path.stem, schema=schema, rows=rows, manual_notes=tuple(notes),
                      warnings=tuple(all_warnings))


# ---------------------------------------------------------------- library chatter


def chatter_warnings(path: Path, library: str, messages: Iterable[str]) -> list[str]:
    """One-line warnings naming ``library`` for what it said (``chatter.bounded_lines``:
    the same rule as the host's)."""
    lines, more = bounded_lines(messages)
    out = [f"{path.name}: {library} reported: {text}" for text in lines]
    if more:
        out.append(f"{path.name}: {library} reported {more} more message(s)")
    return out


def with_warnings(conversion: Conversion, extra: Sequence[str]) -> Conversion:
    """``conversion`` with ``extra`` warnings after its own."""
    if not extra:
        return conversion
    return replace(conversion, warnings=tuple(conversion.warnings) + tuple(extra))
