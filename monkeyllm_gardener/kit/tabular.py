"""Shared helpers for tabular converters: SQL names, column type inference and the
dataset schema (split when wider than a table may be).

A converter that turns rows of text (CSV, TSV, a log) or of typed values (JSON, a
workbook) into a ``dataset`` Conversion names its columns with ``repair_headers``,
feeds every row to a ``TypeTracker``, takes the schema from ``wide_table_schema``
and loads its rows with ``text_row_converter`` / ``value_converters`` (a batch or a
column at a time: ``text_rows_converter``, ``convert_value_column``); the manual notes
these return say what is particular to that source. Every built-in tabular
converter does exactly that, so a dataset reads the same whichever converter made it.

Names
-----
A table or column name keeps its script: ``名前`` stays ``名前``, ``Имя`` becomes
``имя``. A name matching ``^[a-z_][a-z0-9_]*$`` (at most 64 characters) is kept as
it is. Otherwise it is normalised (NFKC, so full-width ``ＡＢ１`` is ``ab1``), a few
symbols are spelt out (``€`` -> ``eur``, ``%`` -> ``pct``, ``#`` -> ``num``, ...),
letters are lowercased where the script has case, Latin letters are folded to ASCII
(``Résumés`` -> ``resumes``, ``Straße`` -> ``strasse``: such names stay plain SQL
words an agent types without quotes), letters, marks and digits of every other
script are kept, every other run of characters (spaces, punctuation, quotes, emoji)
becomes one ``_``, and leading/trailing ``_`` are trimmed. A name starting with a digit gets a
prefix (``t_`` for tables, ``c_`` for columns). A header that leaves nothing usable is
named ``column_N`` (N = its 1-based position); a header that repeats an earlier one
(compared after normalising, so ``a`` and ``A`` collide) is named ``name_2``,
``name_3``... Every rename is stated in a note. A name that is not a plain lowercase
ASCII word is double-quoted by the engine (``quote_identifier``) in DDL, the manual
and the example queries, so it never stands bare in SQL.

Type rules (the general ones are stated once in the forest's dialect, not per dataset)
-------------------------------------------------------------------------------------
Each cell of a text source (CSV), and each number token of JSON, is classified on
its own; no value may lose information on its way into a typed column:

- NULL: an empty cell or a cell of only whitespace. This is the one NULL rule;
  a ragged row's missing cells are NULL too.
- INTEGER: canonical integer text: ASCII digits with an optional ``-``, no ``+``, no
  surrounding spaces, no leading zero except ``0`` itself, not ``-0``, fitting in
  signed 64 bits (``42``, ``-7``, ``0``). ``00501`` (a code), ``+5``, `` 5``, ``-0``
  and ``123456789012345678901234567890`` (beyond 64 bits) are TEXT.
- REAL: a decimal or exponent form (``1.5``, ``-0.25``, ``.5``, ``1e3``, ``2.5E-3``),
  same sign and space rules, whose integer part has no leading zero, whose value is
  finite, not a negative zero (SQLite drops its sign), and which a double holds as
  written: ``0.10000000000000000001`` has more significant digits than a double keeps
  and ``1e400`` overflows, so both are TEXT. ``nan``, ``inf``, ``1_000``, ``1,000``,
  ``007.5`` and ``1.`` are TEXT.
- TEXT: everything else. Placeholders such as ``N/A``, ``NA``, ``-``, ``null``,
  ``none``, ``?`` are NOT NULL: they are ordinary text, so a numeric column holding
  one becomes TEXT and keeps every value as written.

A column's type is decided from every cell: INTEGER if all non-NULL cells are
INTEGER; REAL if they are all INTEGER or REAL (integers become floats), except that
a column whose integers exceed 2**53 in magnitude (not exact as floats) stays TEXT;
TEXT otherwise, and for a column with no value at all. Values are loaded per the
final type: INTEGER -> ``int``, REAL -> ``float``, TEXT -> the exact original string,
character for character.

A REAL column is the one place a value's spelling may change (``1.50`` is stored as
1.5, ``1e5`` as 100000.0, ``7`` as 7.0): its value is kept, its text is not. Such a
column gets one manual note naming it and showing one value
(``decimal_notes``): "`price` was read as decimal: `1.50` is stored as 1.5."

Typed sources classify Python values instead (``classify_value``): ``None`` is NULL,
``bool`` is INTEGER 1/0 (``true``/``false`` in a TEXT column), ``int`` is INTEGER when
it fits in 64 bits, ``float`` is REAL when finite, a ``NumberToken`` (a JSON number
as written in the file) follows the text rules above, other strings are always
TEXT (never re-parsed as numbers, and ``""`` stays an empty string), and nested
values are TEXT holding their JSON.
"""
from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import dataclass, field
from decimal import Decimal
from itertools import compress
from operator import itemgetter
from pathlib import Path
from typing import Any, Callable, Iterator, Literal, Sequence

from monkeyllm_gardener.conversion import ConversionError

__all__ = [
    "MAX_COLUMNS_PER_TABLE", "MAX_TABLES_PER_DATASET", "CellKind", "NumberToken", "SqlType", "TablePart",
    "TooManyColumns", "TypeTracker", "classify_text", "classify_value", "convert_text", "convert_value",
    "convert_value_column",
    "decimal_notes", "repair_headers", "split_wide_table", "stored_real_differs", "table_name_from",
    "text_converters", "text_row_converter", "text_rows_converter", "unique_name", "value_converters", "wide_table_schema",
]

SqlType = Literal["INTEGER", "REAL", "TEXT"]
CellKind = Literal["null", "integer", "wide_integer", "real", "text"]

MAX_NAME_LENGTH = 64
_SAFE_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_EXACT_FLOAT_LIMIT = 2**53

# Symbols that carry meaning in headers ("Total (€)", "Share %", "Order #").
_SPELLED_SYMBOLS = {
    "€": " eur ", "$": " usd ", "£": " gbp ", "¥": " jpy ", "%": " pct ",
    "#": " num ", "&": " and ", "@": " at ",
}
# Latin letters NFKD does not decompose into ASCII.
_FOLDED_LETTERS = {
    "ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "đ": "d", "ł": "l", "þ": "th", "ð": "d", "ı": "i",
}
# lowercase or caseless letters, combining marks, decimal digits (what the engine accepts)
_NAME_CATEGORIES = frozenset({"Ll", "Lm", "Lo", "Mn", "Mc", "Me", "Nd"})

_INTEGER_TEXT = re.compile(r"-?(?:0|[1-9][0-9]*)")
_REAL_TEXT = re.compile(r"-?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NUMBER_START = frozenset("-.0123456789")  # the first character of any INTEGER or REAL
# Lines ("\n"-joined cells) that ``classify_text`` calls INTEGER / REAL without a
# second look: at most 15 characters, so within 64 bits and exact as a double, no
# exponent, no negative zero. An empty line is an empty cell (NULL). A column whose
# cells all match is typed by one C-level match instead of a Python call per cell.
_SHORT_INTEGER_LINE = r"(?:0|[1-9][0-9]{0,14}|-[1-9][0-9]{0,13})"
_SHORT_NUMBER_LINE = (r"(?:(?=[^\n]{1,15}(?:\n|\Z))(?!-[0.]*(?:\n|\Z))"
                      r"-?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]+)?|\.[0-9]+))")
_SHORT_INTEGER_LINES = re.compile(rf"{_SHORT_INTEGER_LINE}?(?:\n{_SHORT_INTEGER_LINE}?)*")
_SHORT_NUMBER_LINES = re.compile(rf"{_SHORT_NUMBER_LINE}?(?:\n{_SHORT_NUMBER_LINE}?)*")
# Distinct cells of a column matched together; a slice holding one odd cell is
# classified cell by cell (a whole-file column would be, up to its first text cell).
_DISTINCT_SLICE = 256
# Cells of a column classified one by one before the column-wide passes: a column of
# words (the first cell is one, mostly) is then TEXT at once.
_PROBED_CELLS = 2


# ---------------------------------------------------------------- names


def slugify(text: str) -> str:
    """``text`` as lowercase words of letters and digits joined by ``_`` (may be "");
    Latin letters lose their accents, other scripts are kept."""
    if _SAFE_NAME.match(text) and len(text) <= MAX_NAME_LENGTH:
        return text
    spelled = "".join(_SPELLED_SYMBOLS.get(ch, ch) for ch in unicodedata.normalize("NFKC", text))
    folded = "".join(map(_ascii_if_latin, spelled.lower()))
    kept = "".join(ch if _is_name_character(ch) else " " for ch in folded)
    words = kept.replace("_", " ").split()
    # a word may not start with a combining mark (it would combine with the "_" before it)
    words = [word for word in map(_without_leading_marks, words) if word]
    return "_".join(words)


def _ascii_if_latin(char: str) -> str:
    """``é`` -> ``e``, ``ß`` -> ``ss``: a Latin letter's ASCII spelling, so such names stay
    plain SQL words; any other character (``名``, ``ё``, ``ά``) as it is."""
    if char.isascii():
        return char
    if char in _FOLDED_LETTERS:
        return _FOLDED_LETTERS[char]
    base = "".join(ch for ch in unicodedata.normalize("NFKD", char) if not unicodedata.combining(ch))
    return base if base.isascii() and base.isalpha() else char


def _is_name_character(char: str) -> bool:
    """A letter without case or in lowercase, a combining mark or a decimal digit: the
    characters the engine accepts in a name (``monkeyllm_core.data.dataset.is_schema_name``)."""
    if char.isascii():
        return char.isdigit() or char.islower()
    return unicodedata.category(char) in _NAME_CATEGORIES


def _without_leading_marks(word: str) -> str:
    index = 0
    while index < len(word) and unicodedata.category(word[index]).startswith("M"):
        index += 1
    return word[index:]


def _fit(name: str, digit_prefix: str, suffix: str = "") -> str:
    if name[:1].isdigit():
        name = digit_prefix + name
    room = MAX_NAME_LENGTH - len(suffix)
    return name[:room].rstrip("_") + suffix if len(name) > room else name + suffix


def table_name_from(text: str, fallback: str = "data") -> str:
    """A SQL-safe table name from ``text`` (a file stem, a sheet name)."""
    slug = slugify(text)
    return _fit(slug, "t_") if slug else fallback


def repair_headers(raw: Sequence[str | None]) -> tuple[list[str], list[str]]:
    """Return ``(names, notes)``: SQL-safe, unique column names and one sentence per
    name that differs from its header."""
    names: list[str] = []
    notes: list[str] = []
    claimed_by: dict[str, str] = {}  # name -> how its owner was written
    for position, header in enumerate(raw, start=1):
        slug = slugify(header) if header is not None else ""
        if slug:
            base = _fit(slug, "c_")
        else:
            base = f"column_{position}"
        name, count = base, 1
        while name in claimed_by:
            count += 1
            name = _fit(base, "c_", f"_{count}")
        shown = _quote(header)
        if header is None or not header.strip():
            notes.append(f"Column {position} had no header and is named `{name}`.")
        elif count > 1:
            notes.append(f"Header {shown} repeats {claimed_by[base]} and is named `{name}`.")
        elif not slug:
            notes.append(
                f"Header {shown} has no letters or digits usable in SQL and is named `{name}`."
            )
        elif name != header:
            notes.append(f"Header {shown} is named `{name}`.")
        claimed_by[name] = (
            shown if header is not None and header.strip() else f"the name given to column {position}"
        )
        names.append(name)
    return names, notes


def unique_name(base: str, taken: set[str] | Sequence[str]) -> str:
    """``base``, or ``base_2``, ``base_3``... whichever is not in ``taken``."""
    name, count = base, 1
    while name in taken:
        count += 1
        name = _fit(base, "c_", f"_{count}")
    return name


def _quote(header: str | None, limit: int = 60) -> str:
    """A header as shown in a note: one line, backticks neutralised, length capped."""
    text = re.sub(r"\s", " ", header or "").replace("`", "'")
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"`{text}`"


# ---------------------------------------------------------------- types


class NumberToken(str):
    """A number exactly as a typed source wrote it (a JSON token such as ``1.50`` or
    ``1e400``): classified and stored by the text rules, so its digits never change."""


# Typed values whose kind is "text" (``classify_value``), and the types of a column
# typed by the text rules: number tokens, nulls and booleans (INTEGER, never noted).
_TEXT_VALUE_TYPES = frozenset({str, dict, list})
_TOKEN_VALUE_TYPES = frozenset({NumberToken, type(None), bool})


def classify_text(cell: str | None) -> CellKind:
    """The kind of one text cell under the module's type rules."""
    if cell is None:
        return "null"
    if not cell or cell[0] not in _NUMBER_START:
        # cheap exit for words: neither pattern can match (a leading space or ``+``
        # keeps the cell text too)
        return "text" if cell.strip() else "null"
    if _INTEGER_TEXT.fullmatch(cell):
        if cell == "-0":
            return "text"  # not the same text as 0, and SQLite keeps no negative zero
        if len(cell) < 16:
            return "integer"  # at most 15 digits: within 64 bits and exact as a float
        if len(cell.lstrip("-")) > 19:
            # Beyond 64 bits whatever the digits; never int() it: Python refuses strings
            # over 4,300 digits (and parsing them is quadratic).
            return "text"
        value = int(cell)
        if not _INT64_MIN <= value <= _INT64_MAX:
            return "text"
        return "wide_integer" if abs(value) > _EXACT_FLOAT_LIMIT else "integer"
    if _REAL_TEXT.fullmatch(cell):
        if len(cell) < 16 and "e" not in cell and "E" not in cell:
            # at most 15 significant digits, no exponent: a double keeps them all
            return "text" if cell[0] == "-" and not cell.strip("-0.") else "real"
        value = float(cell)
        if not math.isfinite(value) or value == 0 and cell[0] == "-":
            return "text"  # 1e400 overflows; SQLite keeps no negative zero
        # More digits than a double keeps (0.12345678901234567890): as REAL the value
        # would silently change, so the column stays TEXT, every digit as written.
        return "real" if Decimal(repr(value)) == Decimal(cell) else "text"
    return "text"


def stored_real_differs(cell: str) -> bool:
    """True when a REAL (or INTEGER) cell's text is not how its double reads back:
    ``1.50``, ``.5``, ``1e5``, ``7`` (stored as 1.5, 0.5, 100000.0, 7.0)."""
    return repr(float(cell)) != cell


def classify_value(value: Any) -> CellKind:
    """The kind of one typed value (from JSON or a workbook) under the module's type rules."""
    if value is None:
        return "null"
    if isinstance(value, NumberToken):
        return classify_text(value)
    if isinstance(value, bool):
        return "integer"
    if isinstance(value, int):
        if not _INT64_MIN <= value <= _INT64_MAX:
            return "text"
        return "wide_integer" if abs(value) > _EXACT_FLOAT_LIMIT else "integer"
    if isinstance(value, float):
        return "real" if math.isfinite(value) else "text"
    return "text"


@dataclass
class _ColumnEvidence:
    seen: set[str] = field(default_factory=set)
    # the first number whose text a REAL column would not keep (see decimal_notes)
    rewritten: str | None = None

    def sql_type(self) -> SqlType:
        kinds = self.seen - {"null"}
        if not kinds or "text" in kinds:
            return "TEXT"
        if "real" in kinds:
            # Integers beyond 2**53 would silently change value as floats.
            return "TEXT" if "wide_integer" in kinds else "REAL"
        return "INTEGER"

    def note_number(self, cell: str) -> None:
        if self.rewritten is None and stored_real_differs(cell):
            self.rewritten = cell

    def observe_text_cells(self, cells: Sequence[str | None]) -> None:
        """Observe one column's cells, in row order (see ``TypeTracker.observe_text_rows``).

        A column of short numbers and empty cells is one regex match over its cells
        (``_observed_as_short_numbers``). Otherwise each distinct cell counts once, in
        the order it first appears, a slice of ``_DISTINCT_SLICE`` at a time: a slice
        of short numbers is one match, and an odd cell sends only its own slice the
        cell-by-cell way. The first text cell decides the column (TEXT whatever
        follows), so the slices after it are skipped; the first few cells are looked
        at one by one first, so a column of words is decided without a pass over it."""
        for cell in cells[:_PROBED_CELLS]:
            if self._observe_one(cell) == "text":
                return
        cells = cells[_PROBED_CELLS:]
        if self._observed_as_short_numbers(cells):
            return
        distinct = list(dict.fromkeys(cells))  # first appearances, in row order
        if None in distinct:
            # NULL and nothing to note: taken out, the other cells may still take the
            # one-match way (JSON's null among numbers)
            self.seen.add("null")
            distinct.remove(None)
        for start in range(0, len(distinct), _DISTINCT_SLICE):
            self._observe_distinct(distinct[start:start + _DISTINCT_SLICE])
            if "text" in self.seen:
                return

    def _observe_distinct(self, distinct: list[str]) -> None:
        if self._observed_as_short_numbers(distinct):
            return
        for cell in distinct:
            if self._observe_one(cell) == "text":
                return  # TEXT whatever follows

    def _observe_one(self, cell: str | None) -> CellKind:
        kind = classify_text(cell)
        self.seen.add(kind)
        if self.rewritten is None and (kind == "real" or kind == "integer"):
            self.note_number(cell)
        return kind

    def _observed_as_short_numbers(self, cells: Sequence[str | None]) -> bool:
        """Observe ``cells`` by one match and return True when each is empty or a short
        number (``_SHORT_NUMBER_LINES``); else observe nothing and return False."""
        try:
            joined = "\n".join(cells)
        except TypeError:  # a None cell (or not a string): the caller's way
            return False
        if joined.count("\n") != len(cells) - 1:
            return False  # a cell holding "\n" would pass for two lines (or no cell at all)
        if _SHORT_INTEGER_LINES.fullmatch(joined):
            self._observe_short_numbers(cells, reals=False)
            return True
        if _SHORT_NUMBER_LINES.fullmatch(joined):
            # the short-number lines without a "." are the integers
            self._observe_short_numbers(cells, reals=True)
            return True
        return False

    def observe_value_cells(self, values: Sequence[Any]) -> None:
        """Observe one column's typed values, in row order (``classify_value`` for each,
        noting number tokens as ``TypeTracker.observe`` does)."""
        types = set(map(type, values))
        if types & _TEXT_VALUE_TYPES:
            self.seen.add("text")  # TEXT whatever else the column holds
            return
        if types <= _TOKEN_VALUE_TYPES:
            # a bool is INTEGER with nothing to note; a token follows the text rules
            if bool in types:
                self.seen.add("integer")
                values = [value for value in values if type(value) is not bool]
            self.observe_text_cells(values)
            return
        for value in values:
            kind = classify_value(value)
            self.seen.add(kind)
            if isinstance(value, NumberToken) and (kind == "real" or kind == "integer"):
                self.note_number(value)

    def _observe_short_numbers(self, cells: Sequence[str], *, reals: bool) -> None:
        """Record the kinds of ``cells`` (empty, or short numbers; repeats allowed) and
        the first one whose double reads back differently."""
        numbers = [cell for cell in cells if cell] if "" in cells else cells
        if len(numbers) < len(cells):
            self.seen.add("null")
        if not numbers:
            return
        if not reals:
            self.seen.add("integer")
            if self.rewritten is None:
                # an integer's double reads back with ".0" (``7`` -> 7.0): the first one differs
                self.rewritten = numbers[0]
            return
        self.seen.add("real")
        if "".join(numbers).count(".") < len(numbers):
            self.seen.add("integer")
        if self.rewritten is None and not _keep_their_spelling(numbers):
            # the first number whose double reads back differently, as note_number finds
            # it: C-level and lazy, so it stops there (often the first number)
            differs = map(str.__ne__, numbers, map(repr, map(float, numbers)))
            self.rewritten = next(compress(numbers, differs), None)


def _keep_their_spelling(numbers: Sequence[str]) -> bool:
    """True when each of ``numbers`` (short number lines: ``_SHORT_NUMBER_LINES``) is
    what its double reads back as (``repr(float(n)) == n``), seen from the text alone;
    False when one may not be (the caller compares them).

    Each has a "." with a digit before it, a fraction that is ``0`` or ends in a
    non-zero digit, and no ``0.0000`` (so at least 1e-4 in magnitude, below 1e14 as
    well at 15 characters): ``repr`` writes such a double in fixed notation with the
    shortest digits that read back, and a number of at most 15 significant digits
    reads back from a double as written, so those are its own digits. A REAL column's
    decimals (``6399.87``) mostly are all like that: no ``repr`` of each, every batch."""
    text = "\n" + "\n".join(numbers) + "\n"
    return (text.count(".") == len(numbers) and "\n." not in text and "\n-." not in text
            and text.count("0\n") == text.count(".0\n") and "0.0000" not in text)


class TypeTracker:
    """Accumulates cell kinds per column position; ``types(width)`` gives the verdict,
    ``rewritten_examples(width)`` one number per column whose text REAL would change."""

    def __init__(self) -> None:
        self._columns: list[_ColumnEvidence] = []
        # (position, evidence) of the columns not yet TEXT; None: recompute
        self._undecided: list[tuple[int, _ColumnEvidence]] | None = None

    def observe(self, index: int, kind: CellKind, number_text: str | None = None) -> None:
        """Record one cell's kind; ``number_text``: its text, when a number was written as text."""
        while len(self._columns) <= index:
            self._columns.append(_ColumnEvidence())
        column = self._columns[index]
        column.seen.add(kind)
        if number_text is not None and kind in ("integer", "real"):
            column.note_number(number_text)
        self._undecided = None

    def observe_text_row(self, cells: Sequence[str | None]) -> None:
        # Once a column has seen text it is TEXT whatever follows, so only the
        # columns still undecided are classified (most of the first pass on
        # files with many text columns).
        columns = self._columns
        if self._undecided is None or len(columns) < len(cells):
            while len(columns) < len(cells):
                columns.append(_ColumnEvidence())
            self._undecided = [(i, c) for i, c in enumerate(columns) if "text" not in c.seen]
        width = len(cells)
        decided = False
        for index, column in self._undecided:
            if index < width:
                cell = cells[index]
                kind = classify_text(cell)
                column.seen.add(kind)
                if kind == "text":
                    decided = True
                elif column.rewritten is None and (kind == "real" or kind == "integer"):
                    column.note_number(cell)
        if decided:
            self._undecided = [(i, c) for i, c in self._undecided if "text" not in c.seen]

    def observe_text_rows(self, rows: Sequence[Sequence[str | None]]) -> None:
        """``observe_text_row`` for each of ``rows`` in order, a column at a time.

        A column's verdict depends only on which kinds it holds, and its decimal note
        on the first number whose text REAL would change, so each distinct cell is
        classified once, in the order it first appears; a column of short numbers
        (see ``_SHORT_NUMBER_LINES``) is typed by one regex match over its cells."""
        if not rows:
            return
        widths = list(map(len, rows))
        shortest, widest = min(widths), max(widths)
        columns = self._columns
        while len(columns) < widest:
            columns.append(_ColumnEvidence())
        for index in range(widest):
            column = columns[index]
            if "text" in column.seen:
                continue
            if index < shortest:
                cells = list(map(itemgetter(index), rows))
            else:  # a ragged row holds no cell here: nothing is observed for it
                cells = [row[index] for row in rows if len(row) > index]
            column.observe_text_cells(cells)
        self._undecided = None

    def observe_value_row(self, values: Sequence[Any]) -> None:
        for index, value in enumerate(values):
            number_text = value if isinstance(value, NumberToken) else None
            self.observe(index, classify_value(value), number_text)

    def observe_value_columns(self, columns: Sequence[Sequence[Any]]) -> None:
        """``observe_value_row`` for each row, given a column at a time: ``columns[i]``
        holds column i's values in row order (a row without a value there holds none).

        As in ``observe_text_rows``, a column that holds text is decided and skipped,
        and a column of number tokens, nulls and booleans is typed by the text rules over
        its distinct tokens (``_ColumnEvidence.observe_value_cells``)."""
        tracked = self._columns
        while len(tracked) < len(columns):
            tracked.append(_ColumnEvidence())
        for column, values in zip(tracked, columns):
            if "text" not in column.seen:
                column.observe_value_cells(values)
        self._undecided = None

    def types(self, width: int) -> list[SqlType]:
        found = [column.sql_type() for column in self._columns[:width]]
        return found + ["TEXT"] * (width - len(found))

    def rewritten_examples(self, width: int) -> list[str | None]:
        """Per column, a number written as text that its REAL column stores differently
        (None for columns that are not REAL or keep every spelling)."""
        found = [column.rewritten if column.sql_type() == "REAL" else None for column in self._columns[:width]]
        return found + [None] * (width - len(found))


def decimal_notes(columns: Sequence[str], tracker: TypeTracker) -> list[str]:
    """One manual note per REAL column whose values were read as decimals and so do
    not all keep their spelling: "`price` was read as decimal: `1.50` is stored as 1.5."."""
    notes = []
    for name, example in zip(columns, tracker.rewritten_examples(len(columns))):
        if example is not None:
            notes.append(f"`{name}` was read as decimal: `{example}` is stored as {float(example)!r}.")
    return notes


def convert_text(cell: str | None, sql_type: SqlType) -> Any:
    """Load one text cell per its column's final type (NULL rule applied first)."""
    if cell is None or not cell.strip():
        return None
    if sql_type == "INTEGER":
        return int(cell)
    if sql_type == "REAL":
        return float(cell)
    return cell


def _text_cell(cell: str | None) -> str | None:
    return cell if cell is not None and cell.strip() else None


def _integer_cell(cell: str | None) -> int | None:
    return int(cell) if cell is not None and cell.strip() else None


def _real_cell(cell: str | None) -> float | None:
    return float(cell) if cell is not None and cell.strip() else None


_TEXT_CONVERTERS = {"TEXT": _text_cell, "INTEGER": _integer_cell, "REAL": _real_cell}


def text_converters(sql_types: Sequence[SqlType]) -> tuple[Any, ...]:
    """Per column, a function doing ``convert_text(cell, sql_type)``, for hot loops."""
    return tuple(_TEXT_CONVERTERS[sql_type] for sql_type in sql_types)


def text_row_converter(sql_types: Sequence[SqlType]) -> Callable[[Sequence[str | None]], tuple[Any, ...]]:
    """A function loading one row of text cells per its columns' final types:
    ``tuple(convert_text(cell, t) for cell, t in zip(cells, sql_types))``, with each
    column's type looked up once. The NULL rule runs on every cell in one pass, then
    ``int``/``float`` on the numeric columns only; a row of TEXT columns does nothing more."""
    integers = [index for index, sql_type in enumerate(sql_types) if sql_type == "INTEGER"]
    reals = [index for index, sql_type in enumerate(sql_types) if sql_type == "REAL"]
    width = len(sql_types)

    def convert(cells: Sequence[str | None]) -> tuple[Any, ...]:
        values = [cell if cell is not None and cell.strip() else None for cell in cells[:width]]
        for index in integers:
            if index < len(values) and values[index] is not None:
                values[index] = int(values[index])
        for index in reals:
            if index < len(values) and values[index] is not None:
                values[index] = float(values[index])
        return tuple(values)

    return convert


def text_rows_converter(sql_types: Sequence[SqlType]) -> Callable[[list[Sequence[str | None]]], Iterator[tuple[Any, ...]]]:
    """A function loading a batch of rows, each of exactly ``len(sql_types)`` text
    cells, into the rows ``text_row_converter`` gives, a column at a time: a TEXT
    column without NULL cells passes through as it is, a numeric one is one
    ``map(int)``/``map(float)``. A batch that fails is converted again row by row, so
    the error is raised at its row, as the row-at-a-time loader raises it."""
    converters = [_TEXT_COLUMN_CONVERTERS[sql_type] for sql_type in sql_types]
    by_row = text_row_converter(sql_types)

    def convert(rows: list[Sequence[str | None]]) -> Iterator[tuple[Any, ...]]:
        if not rows:
            return iter(())
        try:
            columns = [convert_column(cells) for convert_column, cells in zip(converters, zip(*rows))]
        except Exception:
            return map(by_row, rows)
        return zip(*columns)

    return convert


def _blank_positions(cells: tuple[str | None, ...]) -> list[int] | None:
    """Where the NULL rule's cells (empty or whitespace only) are, found by C-level
    searches; None when a cell is None (a ragged row's padding)."""
    try:
        stripped = list(map(str.strip, cells))
    except TypeError:
        return None
    positions: list[int] = []
    try:
        while True:
            positions.append(stripped.index("", positions[-1] + 1 if positions else 0))
    except ValueError:
        return positions


def _text_column(cells: tuple[str | None, ...]) -> Sequence[str | None]:
    blanks = _blank_positions(cells)
    if blanks is None:
        return [_text_cell(cell) for cell in cells]
    if not blanks:
        return cells
    values: list[str | None] = list(cells)
    for position in blanks:
        values[position] = None
    return values


def _number_column(cells: tuple[str | None, ...], number: Callable[[str], Any]) -> list[Any]:
    try:
        return list(map(number, cells))  # int() and float() refuse every blank or None cell
    except (ValueError, TypeError):
        pass
    blanks = _blank_positions(cells)
    if blanks is None:
        return [number(cell) if cell is not None and cell.strip() else None for cell in cells]
    values: list[Any] = list(cells)
    for position in blanks:
        values[position] = "0"  # a stand-in, so the rest converts in one map
    values = list(map(number, values))
    for position in blanks:
        values[position] = None
    return values


def _integer_column(cells: tuple[str | None, ...]) -> list[int | None]:
    return _number_column(cells, int)


def _real_column(cells: tuple[str | None, ...]) -> list[float | None]:
    return _number_column(cells, float)


_TEXT_COLUMN_CONVERTERS = {"TEXT": _text_column, "INTEGER": _integer_column, "REAL": _real_column}


def convert_value(value: Any, sql_type: SqlType) -> Any:
    """Load one typed value (JSON, a workbook) per its column's final type."""
    if value is None:
        return None
    if sql_type == "INTEGER":
        return int(value)
    if sql_type == "REAL":
        return float(value)
    if isinstance(value, str):
        return str(value)  # a NumberToken is stored as the plain text it was written as
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return json.dumps(value)  # NaN / Infinity, as JSON spells them
    return json.dumps(value, ensure_ascii=False)


def _integer_value(value: Any) -> int | None:
    return None if value is None else int(value)


def _real_value(value: Any) -> float | None:
    return None if value is None else float(value)


def _text_value(value: Any) -> Any:
    # a plain string is stored as it is: the one type a TEXT value mostly has
    return value if type(value) is str else convert_value(value, "TEXT")


_VALUE_CONVERTERS = {"TEXT": _text_value, "INTEGER": _integer_value, "REAL": _real_value}


def value_converters(sql_types: Sequence[SqlType]) -> tuple[Any, ...]:
    """Per column, a function doing ``convert_value(value, sql_type)``, for hot loops."""
    return tuple(_VALUE_CONVERTERS[sql_type] for sql_type in sql_types)


_PLAIN_TEXT_TYPES = frozenset({str, type(None)})


def convert_value_column(values: Sequence[Any], sql_type: SqlType) -> Sequence[Any]:
    """``[convert_value(value, sql_type) for value in values]``, a column at a time: a
    TEXT column of plain strings and None is returned as it is, a numeric column
    without None is one ``map(int)``/``map(float)``."""
    types = set(map(type, values))
    if sql_type == "TEXT" and types <= _PLAIN_TEXT_TYPES:
        return values
    if sql_type != "TEXT" and type(None) not in types:
        return list(map(int if sql_type == "INTEGER" else float, values))
    return list(map(_VALUE_CONVERTERS[sql_type], values))


# ---------------------------------------------------------------- wide tables

MAX_COLUMNS_PER_TABLE = 50  # the engine's schema limit (primitives.md)
MAX_TABLES_PER_DATASET = 10


@dataclass(frozen=True, kw_only=True)
class TablePart:
    """One table holding columns ``start`` to ``stop`` (exclusive) of a wide source."""

    name: str
    start: int
    stop: int


class TooManyColumns(ValueError):
    """A source wider than ``MAX_TABLES_PER_DATASET`` tables of 50 columns."""


def wide_table_schema(path: Path, table: str, columns: Sequence[str], types: Sequence[str], *,
                      fix: str) -> tuple[list[TablePart], dict[str, dict[str, Any]], str | None]:
    """The schema of ``table``, split into parts of at most 50 columns when wider
    (see ``split_wide_table``); too wide even then is a ConversionError ending with
    ``fix``. Returns (parts, schema, note for the manual or None)."""
    try:
        parts, note = split_wide_table(table, columns)
    except TooManyColumns as error:
        raise ConversionError(f"too wide: {path.name} has {error}; {fix}") from None
    schema = {
        part.name: {"columns": dict(zip(columns[part.start:part.stop], types[part.start:part.stop]))}
        for part in parts
    }
    return parts, schema, note


def split_wide_table(
    table: str, columns: Sequence[str], max_tables: int = MAX_TABLES_PER_DATASET
) -> tuple[list[TablePart], str | None]:
    """Split ``columns`` into tables of at most 50 columns.

    Returns the parts (the first keeps ``table``'s name, the next are
    ``table_part_2``, ``table_part_3``...) and a manual note saying how the parts
    line up (by rowid, since every part receives the rows in the same order), or
    None when the table fits. Raises ``TooManyColumns`` past ``max_tables`` parts.
    """
    width = len(columns)
    if width <= MAX_COLUMNS_PER_TABLE:
        return [TablePart(name=table, start=0, stop=width)], None
    count = -(-width // MAX_COLUMNS_PER_TABLE)
    if count > max_tables:
        raise TooManyColumns(
            f"{width} columns need {count} tables of {MAX_COLUMNS_PER_TABLE}; "
            f"at most {max_tables} fit"
        )
    parts = [
        TablePart(
            name=table if index == 0 else _fit(table, "t_", f"_part_{index + 1}"),
            start=index * MAX_COLUMNS_PER_TABLE,
            stop=min(width, (index + 1) * MAX_COLUMNS_PER_TABLE),
        )
        for index in range(count)
    ]
    placed = "; ".join(
        f"columns {part.start + 1}-{part.stop} (`{columns[part.start]}` to "
        f"`{columns[part.stop - 1]}`) are in `{part.name}`"
        for part in parts
    )
    second = parts[1].name
    note = (
        f"The source has {width} columns, more than the {MAX_COLUMNS_PER_TABLE} a table "
        f"may hold: {placed}. Row N of each part is the same source row, so join them "
        f'on rowid, e.g. `SELECT * FROM "{table}" JOIN "{second}" ON "{second}".rowid = '
        f'"{table}".rowid`.'
    )
    return parts, note
