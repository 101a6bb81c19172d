"""Shared helpers for tabular converters: SQL-safe names and column type inference.

Names
-----
Table and column names must match ``^[a-z_][a-z0-9_]*$`` and be at most 64
characters. A name that already does is kept. Otherwise it is slugified: accents
are folded (``Résumés`` -> ``resumes``), a few symbols are spelt out (``€`` -> ``eur``,
``%`` -> ``pct``, ``#`` -> ``num``, ...), letters are lowercased, every other run of
characters becomes one ``_``, and leading/trailing ``_`` are trimmed. A name starting
with a digit gets a prefix (``t_`` for tables, ``c_`` for columns). A header that
leaves nothing usable is named ``column_N`` (N = its 1-based position); a header
that repeats an earlier one (compared after slugging, so ``a`` and ``A`` collide)
is named ``name_2``, ``name_3``... Every rename is stated in a note.

Type rules (quoted in the query manual notes)
----------------------------------------------
Each cell of a text source (CSV) is classified on its own:

- NULL: an empty cell or a cell of only whitespace. This is the one NULL rule;
  a ragged row's missing cells are NULL too.
- INTEGER: optional ``+``/``-`` sign and ASCII digits, no leading zero except ``0``
  itself, fitting in signed 64 bits (``42``, ``-7``, ``0``). Surrounding spaces are
  allowed. ``00501`` (a code) and ``123456789012345678901234567890`` (beyond 64
  bits) are TEXT.
- REAL: a decimal or exponent form (``1.5``, ``-0.25``, ``.5``, ``1e3``, ``2.5E-3``)
  whose integer part has no leading zero, whose value is finite and which a double
  holds exactly as written (``0.12345678901234567890`` has more significant digits
  than a double keeps, so it is TEXT). ``nan``, ``inf``, ``infinity``, ``1_000``,
  ``1,000``, ``007.5`` and ``1e999`` are TEXT.
- TEXT: everything else. Placeholders such as ``N/A``, ``NA``, ``n/a``, ``-``,
  ``null``, ``NULL``, ``none``, ``?`` are NOT NULL: they are ordinary text, so a
  numeric column holding one becomes TEXT and keeps every value as written.

A column's type is decided from every cell: INTEGER if all non-NULL cells are
INTEGER; REAL if they are all INTEGER or REAL (integers become floats), except that
a column whose integers exceed 2**53 in magnitude (not exact as floats) stays TEXT;
TEXT otherwise, and for a column with no value at all. Values are loaded per the
final type: INTEGER -> ``int``, REAL -> ``float``, TEXT -> the exact original string,
character for character.

Typed sources (JSON) classify Python values instead (``classify_value``): ``None`` is
NULL, ``bool`` is INTEGER 1/0 (``true``/``false`` in a TEXT column), ``int`` is
INTEGER when it fits in 64 bits, ``float`` is REAL when finite, strings are always
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
from pathlib import Path
from typing import Any, Literal, Sequence

from monkeyllm_gardener.conversion import ConversionError

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
# Letters NFKD does not decompose into ASCII.
_FOLDED_LETTERS = {
    "ß": "ss", "æ": "ae", "Æ": "ae", "œ": "oe", "Œ": "oe", "ø": "o", "Ø": "o",
    "đ": "d", "Đ": "d", "ł": "l", "Ł": "l", "þ": "th", "Þ": "th", "ð": "d", "Ð": "d",
    "ı": "i",
}

_INTEGER_TEXT = re.compile(r"[+-]?(?:0|[1-9][0-9]*)")
_REAL_TEXT = re.compile(
    r"[+-]?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
)
_SURROUNDING_SPACE = " \t"
_NUMBER_START = frozenset("+-.0123456789")  # the first character of any INTEGER or REAL


# ---------------------------------------------------------------- names


def slugify(text: str) -> str:
    """Fold ``text`` into lowercase ``[a-z0-9_]`` words joined by ``_`` (may be "")."""
    if _SAFE_NAME.match(text) and len(text) <= MAX_NAME_LENGTH:
        return text
    spelled = "".join(_SPELLED_SYMBOLS.get(ch) or _FOLDED_LETTERS.get(ch) or ch for ch in text)
    decomposed = unicodedata.normalize("NFKD", spelled)
    ascii_only = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    ascii_only = ascii_only.encode("ascii", "ignore").decode("ascii").lower()
    return re.sub(r"[^a-z0-9]+", "_", ascii_only).strip("_")


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


def classify_text(cell: str | None) -> CellKind:
    """The kind of one text cell under the module's type rules."""
    if cell is None:
        return "null"
    stripped = cell.strip()
    if not stripped:
        return "null"
    number = cell.strip(_SURROUNDING_SPACE)
    if number[0] not in _NUMBER_START:
        return "text"  # cheap exit for words: neither pattern can match
    if _INTEGER_TEXT.fullmatch(number):
        if len(number) < 16:
            return "integer"  # at most 15 digits: within 64 bits and exact as a float
        if len(number.lstrip("+-")) > 19:
            # Beyond 64 bits whatever the digits; never int() it: Python refuses strings
            # over 4,300 digits (and parsing them is quadratic).
            return "text"
        value = int(number)
        if not _INT64_MIN <= value <= _INT64_MAX:
            return "text"
        return "wide_integer" if abs(value) > _EXACT_FLOAT_LIMIT else "integer"
    if _REAL_TEXT.fullmatch(number):
        if len(number) < 16 and "e" not in number and "E" not in number:
            return "real"  # at most 15 significant digits, no exponent: a double keeps them all
        value = float(number)
        if not math.isfinite(value):
            return "text"
        # More digits than a double keeps (0.12345678901234567890): as REAL the value
        # would silently change, so the column stays TEXT, every digit as written.
        return "real" if Decimal(repr(value)) == Decimal(number) else "text"
    return "text"


def classify_value(value: Any) -> CellKind:
    """The kind of one typed value (from JSON) under the module's type rules."""
    if value is None:
        return "null"
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

    def sql_type(self) -> SqlType:
        kinds = self.seen - {"null"}
        if not kinds or "text" in kinds:
            return "TEXT"
        if "real" in kinds:
            # Integers beyond 2**53 would silently change value as floats.
            return "TEXT" if "wide_integer" in kinds else "REAL"
        return "INTEGER"


class TypeTracker:
    """Accumulates cell kinds per column position; ``types(width)`` gives the verdict."""

    def __init__(self) -> None:
        self._columns: list[_ColumnEvidence] = []
        # (position, evidence) of the columns not yet TEXT; None: recompute
        self._undecided: list[tuple[int, set[str]]] | None = None

    def observe(self, index: int, kind: CellKind) -> None:
        while len(self._columns) <= index:
            self._columns.append(_ColumnEvidence())
        self._columns[index].seen.add(kind)
        self._undecided = None

    def observe_text_row(self, cells: Sequence[str | None]) -> None:
        # Once a column has seen text it is TEXT whatever follows, so only the
        # columns still undecided are classified (most of the first pass on
        # files with many text columns).
        columns = self._columns
        if self._undecided is None or len(columns) < len(cells):
            while len(columns) < len(cells):
                columns.append(_ColumnEvidence())
            self._undecided = [(i, c.seen) for i, c in enumerate(columns) if "text" not in c.seen]
        width = len(cells)
        decided = False
        for index, seen in self._undecided:
            if index < width:
                kind = classify_text(cells[index])
                seen.add(kind)
                decided = decided or kind == "text"
        if decided:
            self._undecided = [(i, seen) for i, seen in self._undecided if "text" not in seen]

    def observe_value_row(self, values: Sequence[Any]) -> None:
        for index, value in enumerate(values):
            self.observe(index, classify_value(value))

    def types(self, width: int) -> list[SqlType]:
        found = [column.sql_type() for column in self._columns[:width]]
        return found + ["TEXT"] * (width - len(found))


def convert_text(cell: str | None, sql_type: SqlType) -> Any:
    """Load one text cell per its column's final type (NULL rule applied first)."""
    if cell is None or not cell.strip():
        return None
    if sql_type == "INTEGER":
        return int(cell.strip(_SURROUNDING_SPACE))
    if sql_type == "REAL":
        return float(cell.strip(_SURROUNDING_SPACE))
    return cell


def _text_cell(cell: str | None) -> str | None:
    return cell if cell is not None and cell.strip() else None


def _integer_cell(cell: str | None) -> int | None:
    return int(cell.strip(_SURROUNDING_SPACE)) if cell is not None and cell.strip() else None


def _real_cell(cell: str | None) -> float | None:
    return float(cell.strip(_SURROUNDING_SPACE)) if cell is not None and cell.strip() else None


_TEXT_CONVERTERS = {"TEXT": _text_cell, "INTEGER": _integer_cell, "REAL": _real_cell}


def text_converters(sql_types: Sequence[SqlType]) -> tuple[Any, ...]:
    """Per column, a function doing ``convert_text(cell, sql_type)``, for hot loops."""
    return tuple(_TEXT_CONVERTERS[sql_type] for sql_type in sql_types)


def convert_value(value: Any, sql_type: SqlType) -> Any:
    """Load one typed (JSON) value per its column's final type."""
    if value is None:
        return None
    if sql_type == "INTEGER":
        return int(value)
    if sql_type == "REAL":
        return float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return json.dumps(value)  # NaN / Infinity, as JSON spells them
    return json.dumps(value, ensure_ascii=False)


TYPE_RULES_SENTENCE = (
    "Column types were inferred from every row: INTEGER for whole numbers without "
    "leading zeros that fit in 64 bits, REAL for decimal and exponent forms such as "
    "`1.5` or `1e3`, TEXT for everything else (codes with leading zeros like `00501`, "
    "larger integers, decimals with more digits than a double keeps, `nan`, `inf`, "
    "`1_000`, `1,000`, and placeholders like `N/A` or "
    "`-`, which are not treated as NULL); TEXT values are stored exactly as written."
)
NULL_RULE_SENTENCE = "An empty or whitespace-only cell is stored as NULL."


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
