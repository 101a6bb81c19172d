"""JSON files: an array of objects becomes a dataset, any other JSON a document.

The whole document is parsed in memory (JSON has no streaming record boundary in
the standard library). ``JsonRows`` keeps the parsed records for the load in the
process that converted the file, while the file still holds the bytes they were
parsed from; a pickled one re-parses the file when the engine loads rows, so a
Conversion stays small when it crosses a process boundary. The
survey and the load go a column (a key) at a time (``TypeTracker.observe_value_columns``,
``convert_value_column``): C-level passes over each column instead of a Python call per cell.

Numbers are parsed as their own tokens (``NumberToken``), never through ``float``:
a document's body shows ``1.50``, ``1e5`` and ``-0`` as the file wrote them, and a
dataset types each number by the text rules of ``kit.tabular`` (``1e400`` and
``0.10000000000000000001`` are TEXT, digits kept; ``1.50`` in a REAL column is 1.5,
with a manual note naming the column).

Dataset rules: keys are unioned in first-seen order and repaired like CSV headers;
a key missing from an object is NULL, as is ``null``; ``true``/``false`` are INTEGER
1/0 (``true``/``false`` text in a column that is TEXT anyway); strings stay TEXT even
when they look numeric; nested objects and arrays are stored as JSON text
(``render_json``: numbers as written, ``ensure_ascii=False``). The manual notes say
only what is specific to this file (renamed keys, nested columns, booleans, repeated
keys, columns read as decimal); the general NULL and typing rules live in the
forest's dialect, and a legacy encoding is a run-report warning only.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from itertools import chain, repeat
from pathlib import Path
from typing import Any, Iterator

from monkeyllm_gardener import Conversion, ConversionError, hookimpl
from monkeyllm_gardener.kit import (
    NumberToken,
    SqlType,
    TypeTracker,
    convert_value_column,
    decimal_notes,
    read_text,
    repair_headers,
    table_name_from,
    wide_table_schema,
)

MAX_DOCUMENT_CHARS = 50_000  # the rendered body of a non-tabular JSON file
# Records loaded together, a column at a time: the converted values of a batch are
# held at once, the parsed document is held anyway.
_BATCH = 1024


@dataclass(frozen=True, kw_only=True)
class JsonRows:
    """The records of a JSON array of objects (picklable): those ``convert`` parsed, or,
    once pickled, the file re-parsed on every iteration."""

    path: Path
    keys: tuple[str, ...]
    column_types: tuple[SqlType, ...]
    # the converter's parse and the bytes it was made from, in this process only
    # (``__getstate__`` leaves them behind)
    parsed: tuple[bytes, list[dict[str, Any]]] | None = field(default=None, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "parsed": None}

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        # the file is loaded as it is now: the parse stands for it while its bytes are the same
        if self.parsed is not None and self.path.read_bytes() == self.parsed[0]:
            records = self.parsed[1]
        else:
            records = _parse(self.path)[0]
        for start in range(0, len(records), _BATCH):
            batch = records[start:start + _BATCH]
            yield from zip(*[_loaded(values, sql_type)
                             for values, sql_type in zip(_columns(batch, self.keys), self.column_types)])


def _columns(records: list[dict[str, Any]], keys: Any) -> list[list[Any]]:
    """Each key's values in record order; None where a record lacks the key."""
    return [list(map(dict.get, records, repeat(key))) for key in keys]


def _loaded(values: list[Any], sql_type: SqlType) -> Any:
    """A column's values as stored: nested ones as JSON text (``_cell``), then
    ``convert_value_column``."""
    if _NESTED_TYPES & set(map(type, values)):
        values = list(map(_cell, values))
    return convert_value_column(values, sql_type)


class JsonConverter:
    name = "json"
    extensions = (".json",)

    def convert(self, path: Path) -> Conversion:
        path = Path(path)
        before = path.read_bytes()
        data, notes = _parse(path)
        if isinstance(data, list) and data and all(isinstance(item, dict) for item in data):
            keys = list(dict.fromkeys(chain.from_iterable(data)))  # every record's keys, first seen first
            if keys:
                # the parse stands for these bytes only if the file held them throughout it
                source = before if path.read_bytes() == before else None
                return _dataset(path, data, keys, notes, source)
        return _document(path, data, notes)


@dataclass(frozen=True, kw_only=True)
class _ParseNotes:
    encoding_warning: str | None
    duplicate_keys: int


def _parse(path: Path) -> tuple[Any, _ParseNotes]:
    text, encoding_warning = read_text(path)
    if not text.strip():
        raise ConversionError(f"empty file: {path.name} holds no JSON; add content or remove it")
    duplicates = 0

    def keep_last_counting_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal duplicates
        result = dict(pairs)
        duplicates += len(pairs) - len(result)
        return result

    try:
        # Every number stays the token the file wrote (NaN and Infinity included).
        data = json.loads(
            text, object_pairs_hook=keep_last_counting_duplicates,
            parse_int=NumberToken, parse_float=NumberToken, parse_constant=NumberToken,
        )
    except json.JSONDecodeError as error:
        raise ConversionError(
            f"invalid JSON at line {error.lineno}, column {error.colno}: {error.msg} "
            f"in {path.name}; fix it there"
        ) from None
    except RecursionError:
        raise ConversionError(
            f"JSON nested too deeply to read in {path.name}; flatten it or split the file"
        ) from None
    return data, _ParseNotes(encoding_warning=encoding_warning, duplicate_keys=duplicates)


_NESTED_TYPES = frozenset({dict, list})  # what json.loads makes of objects and arrays


def _cell(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return render_json(value)
    return value


def render_json(value: Any, indent: int | None = None, level: int = 0) -> str:
    """``value`` as ``json.dumps(value, ensure_ascii=False, indent=indent)`` writes it,
    except that a ``NumberToken`` is written as its own token (``1.50`` stays ``1.50``,
    where ``json.dumps`` would quote it as a string)."""
    if isinstance(value, NumberToken):
        return str(value)
    if isinstance(value, dict):
        items = [(json.dumps(key, ensure_ascii=False), item) for key, item in value.items()]
        parts = [f"{key}: {render_json(item, indent, level + 1)}" for key, item in items]
        return _bracketed("{", parts, "}", indent, level)
    if isinstance(value, list):
        parts = [render_json(item, indent, level + 1) for item in value]
        return _bracketed("[", parts, "]", indent, level)
    return json.dumps(value, ensure_ascii=False)  # a string, true/false, null


def _bracketed(opening: str, parts: list[str], closing: str, indent: int | None, level: int) -> str:
    if not parts:
        return opening + closing
    if indent is None:
        return opening + ", ".join(parts) + closing
    inner, outer = " " * (indent * (level + 1)), " " * (indent * level)
    return f"{opening}\n{inner}" + f",\n{inner}".join(parts) + f"\n{outer}{closing}"


def _dataset(path: Path, data: list[dict[str, Any]], keys: list[str], parsed: _ParseNotes,
             source: bytes | None) -> Conversion:
    columns = _columns(data, keys)
    tracker = TypeTracker()
    # a nested value is TEXT as JSON text or not: the survey need not render it
    tracker.observe_value_columns(columns)
    nested: set[str] = set()
    booleans: set[str] = set()
    for key, values in zip(keys, columns):
        held = set(map(type, values))
        if held & _NESTED_TYPES:
            nested.add(key)
        if bool in held:
            booleans.add(key)
    types = tracker.types(len(keys))
    names, notes = repair_headers(keys)
    name_of = dict(zip(keys, names))
    type_of = dict(zip(keys, types))
    table = table_name_from(path.stem)

    if nested:
        listed = _listed(name_of[key] for key in keys if key in nested)
        notes.append(
            f"Nested objects and arrays in {listed} are stored as JSON text; "
            "read inside them with `json_extract(column, '$.key')`."
        )
    as_integers = [name_of[k] for k in keys if k in booleans and type_of[k] != "TEXT"]
    as_text = [name_of[k] for k in keys if k in booleans and type_of[k] == "TEXT"]
    if as_integers:
        notes.append(f"JSON `true`/`false` in {_listed(as_integers)} are stored as 1/0.")
    if as_text:
        notes.append(
            f"JSON `true`/`false` in {_listed(as_text)} are stored as the text "
            "`true`/`false` because those columns hold text too."
        )
    notes.extend(decimal_notes(names, tracker))
    notes.extend(_parse_notes(parsed))
    parts, schema, split_note = wide_table_schema(path, table, names, types,
                                                  fix="split the objects into narrower files")
    if split_note:
        notes.insert(0, split_note)
    rows = {
        part.name: JsonRows(
            path=path.resolve(),
            keys=tuple(keys[part.start:part.stop]),
            column_types=tuple(types[part.start:part.stop]),
            parsed=None if source is None else (source, data),
        )
        for part in parts
    }
    return Conversion(
        kind="dataset",
        title=path.stem,
        schema=schema,
        rows=rows,
        manual_notes=tuple(notes),
        warnings=tuple(_parse_warnings(path, parsed)),
    )


def _document(path: Path, data: Any, parsed: _ParseNotes) -> Conversion:
    try:
        pretty = render_json(data, indent=2)
    except RecursionError:
        raise ConversionError(
            f"JSON nested too deeply to show in {path.name}; flatten it or split the file"
        ) from None
    warnings = _parse_warnings(path, parsed)
    cut_note = ""
    if len(pretty) > MAX_DOCUMENT_CHARS:
        shown = pretty[:MAX_DOCUMENT_CHARS].rsplit("\n", 1)[0]
        total_lines = pretty.count("\n") + 1
        shown_lines = shown.count("\n") + 1
        cut_note = (
            f"\n_Cut: the first {shown_lines:,} of {total_lines:,} lines are shown; "
            f"the whole document is in the source file `{path.name}`._\n"
        )
        warnings.append(
            f"{path.name}: JSON document shown cut to {shown_lines:,} of {total_lines:,} lines"
        )
        pretty = shown
    fence = "`" * max(3, _longest_backtick_run(pretty) + 1)
    parts = [_describe(data), "", f"{fence}json", pretty, fence, cut_note]
    parts.extend(f"_{sentence}_" for sentence in _parse_notes(parsed))
    return Conversion(
        kind="markdown",
        node_type="document",
        title=path.stem,
        markdown="\n".join(parts).rstrip() + "\n",
        warnings=tuple(warnings),
    )


def _describe(data: Any) -> str:
    if isinstance(data, dict):
        if not data:
            return "An empty JSON object."
        keys = list(data)
        shown = ", ".join(f"`{key}`" for key in keys[:20])
        more = f" and {len(keys) - 20} more" if len(keys) > 20 else ""
        return f"A JSON object with {len(keys)} keys: {shown}{more}."
    if isinstance(data, list):
        if not data:
            return "An empty JSON array."
        if all(isinstance(item, dict) for item in data):
            return f"A JSON array of {len(data)} empty objects."
        return f"A JSON array of {len(data)} values (not all objects, so not a table)."
    return "A single JSON value."


def _parse_notes(parsed: _ParseNotes) -> list[str]:
    notes = []
    if parsed.duplicate_keys:
        notes.append(
            f"{parsed.duplicate_keys} repeated key(s) inside an object were found; "
            "JSON keeps the last value of each, so the earlier values are not stored."
        )
    return notes


def _parse_warnings(path: Path, parsed: _ParseNotes) -> list[str]:
    warnings = []
    if parsed.encoding_warning:
        warnings.append(f"{path.name}: {parsed.encoding_warning}")
    if parsed.duplicate_keys:
        warnings.append(
            f"{path.name}: {parsed.duplicate_keys} repeated key(s) inside objects; "
            "only the last value of each was kept"
        )
    return warnings


def _listed(names: Any) -> str:
    return ", ".join(f"`{name}`" for name in names)


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


@hookimpl
def register_converters(register) -> None:
    register(JsonConverter(), priority=0.0)
