"""JSON files: an array of objects becomes a dataset, any other JSON a document.

The whole document is parsed in memory (JSON has no streaming record boundary in
the standard library); ``JsonRows`` re-parses the file when the engine loads rows,
so a Conversion stays small when it crosses a process boundary.

Dataset rules: keys are unioned in first-seen order and repaired like CSV headers;
a key missing from an object is NULL, as is ``null``; ``true``/``false`` are INTEGER
1/0 (``true``/``false`` text in a column that is TEXT anyway); numbers keep their
JSON type; strings stay TEXT even when they look numeric; nested objects and arrays
are stored as JSON text (``json.dumps``, ``ensure_ascii=False``). See ``_tabular`` for
how mixed columns resolve.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from monkeyllm_gardener.conversion import Conversion, ConversionError
from monkeyllm_gardener.hookspecs import hookimpl

from ._encoding import read_text
from ._tabular import (
    SqlType,
    TypeTracker,
    convert_value,
    repair_headers,
    table_name_from,
    wide_table_schema,
)

MAX_DOCUMENT_CHARS = 50_000  # the rendered body of a non-tabular JSON file


@dataclass(frozen=True, kw_only=True)
class JsonRows:
    """The records of a JSON array of objects, re-parsed on every iteration (picklable)."""

    path: Path
    keys: tuple[str, ...]
    column_types: tuple[SqlType, ...]

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        records, _ = _parse(self.path)
        for record in records:
            yield _row(record, self.keys, self.column_types)


class JsonConverter:
    name = "json"
    extensions = (".json",)

    def convert(self, path: Path) -> Conversion:
        path = Path(path)
        data, notes = _parse(path)
        if isinstance(data, list) and data and all(isinstance(item, dict) for item in data):
            keys = list(dict.fromkeys(key for record in data for key in record))
            if keys:
                return _dataset(path, data, keys, notes)
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
        data = json.loads(
            text, object_pairs_hook=keep_last_counting_duplicates, parse_int=_integer_or_digits
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


class WideIntegerDigits(str):
    """An integer literal too long for ``int()`` (Python refuses over 4,300 digits):
    kept as its exact digits, so it is TEXT like every integer beyond 64 bits."""


_MAX_INT_DIGITS = 4_000


def _integer_or_digits(literal: str) -> int | str:
    return int(literal) if len(literal) <= _MAX_INT_DIGITS else WideIntegerDigits(literal)


def _row(record: dict[str, Any], keys: tuple[str, ...], types: tuple[SqlType, ...]) -> tuple:
    return tuple(convert_value(_cell(record.get(key)), kind) for key, kind in zip(keys, types))


def _cell(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return value


def _dataset(path: Path, data: list[dict[str, Any]], keys: list[str], parsed: _ParseNotes) -> Conversion:
    tracker = TypeTracker()
    nested: set[str] = set()
    booleans: set[str] = set()
    for record in data:
        tracker.observe_value_row([_cell(record.get(key)) for key in keys])
        for key, value in record.items():
            if isinstance(value, (dict, list)):
                nested.add(key)
            elif isinstance(value, bool):
                booleans.add(key)
    types = tracker.types(len(keys))
    names, notes = repair_headers(keys)
    name_of = dict(zip(keys, names))
    type_of = dict(zip(keys, types))
    table = table_name_from(path.stem)

    notes.append("A JSON `null` or a key missing from an object is stored as NULL.")
    notes.append(
        "Numbers keep their JSON type: integers that fit in 64 bits are INTEGER, decimals "
        "are REAL, and a column mixing the two is REAL; strings stay TEXT exactly as "
        "written, even when they look like numbers; a column holding any text (or an "
        "integer beyond 64 bits, NaN or Infinity) is TEXT."
    )
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
    pretty = json.dumps(data, ensure_ascii=False, indent=2)
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
    if parsed.encoding_warning:
        notes.append(f"The file was {parsed.encoding_warning.split(';')[0]}.")
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
