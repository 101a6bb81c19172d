"""A dataset's map, read back from its body: query manual, sample rows, notes.

look shows a dataset's tables and columns, a few example queries, sample rows and
the notes a person wrote, without opening the payload: the passport body already
carries them (``data.sample_map`` writes ``## Query manual`` and ``## Sample rows``,
FOREST-FORMAT.md, Datasets), and a digest must not cost a database open.

The parser reads what that writer writes and tolerates what other engines write:
a table line is any list item holding a code span ``name(col TYPE, ...)``, names
may be double-quoted (``"order"``, ``"名前"``; ``""`` escapes a quote), a column's
declared type is dropped, and an example query is any code span in the list under
``Example queries:`` (or any ``SELECT``/``WITH`` code span when that label is
missing). Sample rows are the first pipe table of ``## Sample rows``, cells
unescaped (``\\|``). Whatever cannot be read is left out, never guessed.
"""
from __future__ import annotations

import re
from typing import Any

from .headings import section_text

MAX_EXAMPLE_QUERIES = 3
MAX_SAMPLE_ROWS = 3
_CODE_SPAN = re.compile(r"(`+)\s?(.+?)\s?\1(?!`)")
_TABLE_HEADING = re.compile(r"^###\s+(.+?)\s+—\s+")
_BARE_NAME = re.compile(r"[^\s(),\"]+")


def query_manual(body: str) -> dict[str, Any] | None:
    text = section_text(body, "Query manual")
    if text is None:
        return None
    tables: dict[str, list[str]] = {}
    views: dict[str, list[str]] = {}
    examples: list[str] = []
    label = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith(("- ", "* ")):
            label = stripped.lower()
            continue
        span = _CODE_SPAN.search(stripped)
        if span is None:
            continue
        code = span.group(2)
        if label is not None and label.startswith("example"):
            examples.append(code)
            continue
        signature = _signature(code)
        if signature is not None:
            (views if "(view)" in stripped[span.end():] or (label or "").startswith("view") else tables)[
                signature[0]] = signature[1]
        elif re.match(r"(?i)(select|with)\b", code):
            examples.append(code)
    manual: dict[str, Any] = {"tables": tables}
    if views:
        manual["views"] = views
    manual["example_queries"] = examples[:MAX_EXAMPLE_QUERIES]
    return manual


def _identifier(text: str, at: int) -> tuple[str, int] | None:
    """An SQL name at ``text[at:]``, quoted or bare: (name, offset after it)."""
    if at < len(text) and text[at] == '"':
        out, i = [], at + 1
        while i < len(text):
            if text[i] == '"':
                if text[i + 1:i + 2] == '"':
                    out.append('"')
                    i += 2
                    continue
                return "".join(out), i + 1
            out.append(text[i])
            i += 1
        return None
    match = _BARE_NAME.match(text, at)
    return (match.group(0), match.end()) if match else None


def _signature(code: str) -> tuple[str, list[str]] | None:
    """``name(col TYPE, ...)`` as (name, [columns]); None when it is not one."""
    name = _identifier(code, 0)
    if name is None or not code[name[1]:].startswith("(") or not code.endswith(")"):
        return None
    columns: list[str] = []
    inner, at = code[name[1] + 1:-1], 0
    while at < len(inner):
        while at < len(inner) and inner[at] in " \t":
            at += 1
        column = _identifier(inner, at)
        if column is None:
            return None
        columns.append(column[0])
        comma = _next_comma(inner, column[1])
        at = comma + 1 if comma != -1 else len(inner)
    return name[0], columns


def _next_comma(text: str, at: int) -> int:
    quoted = False
    for i in range(at, len(text)):
        if text[i] == '"':
            quoted = not quoted
        elif text[i] == "," and not quoted:
            return i
    return -1


def sample_rows(body: str) -> dict[str, Any] | None:
    text = section_text(body, "Sample rows")
    if text is None:
        return None
    table: str | None = None
    rows: list[list[str]] = []
    columns: list[str] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        heading = _TABLE_HEADING.match(stripped)
        if heading and columns is None:
            table = _unquote(heading.group(1))
            continue
        if not stripped.startswith("|"):
            if columns is not None:
                break  # the first table ended
            continue
        cells = _cells(stripped)
        if columns is None:
            columns = cells
        elif all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
            continue
        elif len(rows) < MAX_SAMPLE_ROWS:
            rows.append(cells)
    if columns is None:
        return None
    out: dict[str, Any] = {}
    if table is not None:
        out["table"] = table
    out["columns"] = columns
    out["rows"] = rows
    return out


def _unquote(name: str) -> str:
    found = _identifier(name, 0)
    return found[0] if found is not None and found[1] == len(name) else name


def _cells(line: str) -> list[str]:
    inner = line.strip()
    if inner.startswith("|"):
        inner = inner[1:]
    if inner.endswith("|") and not inner.endswith("\\|"):
        inner = inner[:-1]
    cells, current, i = [], [], 0
    while i < len(inner):
        if inner[i] == "\\" and inner[i + 1:i + 2] == "|":
            current.append("|")
            i += 2
            continue
        if inner[i] == "|":
            cells.append("".join(current).strip())
            current = []
        else:
            current.append(inner[i])
        i += 1
    cells.append("".join(current).strip())
    return cells


def notes(body: str) -> str | None:
    return section_text(body, "Notes")
