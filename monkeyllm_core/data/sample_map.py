"""The sample map: the two generated sections of a dataset passport body.

``## Query manual`` lists every table with its declared column types and example
queries; ``## Sample rows`` shows up to three rows per table as a pipe table.
They are the only view a text primitive has into a payload, so every bound on
them is stated in the text (FOREST-FORMAT.md, Datasets).

Every identifier is written through ``quote_identifier``, so each example query in
a manual runs as written, whatever the tables and columns are called.

Cell rendering rules (sample rows): NULL is empty; a blob is ``<blob N bytes>``; a
float is Python's repr (``1240.0``); text longer than 120 characters is cut to 119
plus ``…``; ``|`` is escaped as ``\\|``; a line break inside a value (``\\n``,
``\\r\\n``, ``\\r`` and the other characters ``str.splitlines`` breaks on) is shown
as ``<br>``, because a pipe-table row must stay on one line and ``<br>`` keeps the
fact that the value had several lines visible.
"""
from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from ..errors import VineError
from .sqlnames import quote_identifier
from .query import open_readonly

MAX_SAMPLE_ROWS = 3
MAX_SAMPLE_COLUMNS = 12
MAX_SAMPLED_TABLES = 20
MAX_EXAMPLE_TABLES = 20
MAX_CELL_CHARS = 120
WIDE_TABLE_COLUMNS = 12

# str.splitlines breaks on all of these; any of them would split a table row.
_LINE_BREAKS = re.compile("\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


@dataclass(frozen=True, kw_only=True)
class Column:
    name: str
    declared_type: str


@dataclass(frozen=True, kw_only=True)
class Relation:
    """A table or view as the map describes it."""

    name: str
    kind: str  # "table" | "view"
    columns: tuple[Column, ...]
    row_count: int | None  # None for views, uncounted tables, and tables SQLite could not count


def _read_relations(connection: sqlite3.Connection, *, count_rows: bool = True) -> list[Relation]:
    objects = connection.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view') "
        "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid"
    ).fetchall()
    relations = []
    for kind, name in objects:
        try:
            columns = tuple(
                Column(name=column, declared_type=declared or "")
                for column, declared in connection.execute("SELECT name, type FROM pragma_table_info(?)", (name,))
            )
        except sqlite3.Error:  # a view over a table that no longer exists
            columns = ()
        relation = Relation(name=name, kind=kind, columns=columns, row_count=None)
        if kind == "table" and count_rows:
            relation = _counted(connection, relation)
        relations.append(relation)
    return relations


def _counted(connection: sqlite3.Connection, relation: Relation) -> Relation:
    try:
        count = connection.execute(f"SELECT COUNT(*) FROM {quote_identifier(relation.name)}").fetchone()[0]
    except sqlite3.Error:  # e.g. a virtual table whose module is not loaded
        count = None
    return replace(relation, row_count=count)


def _unreadable(db_path: str | os.PathLike[str], error: sqlite3.Error) -> VineError:
    return VineError(
        "E_SCHEMA",
        f"{os.fspath(db_path)} is not a readable SQLite database ({error})",
        "Check the file opens with `sqlite3 <file> .tables`; a damaged or encrypted database cannot be mapped.",
    )


def _relations(db_path: str | os.PathLike[str], *, count_rows: bool = True) -> list[Relation]:
    connection = open_readonly(db_path)
    try:
        return _read_relations(connection, count_rows=count_rows)
    except sqlite3.DatabaseError as error:
        raise _unreadable(db_path, error) from None
    finally:
        connection.close()


def _uncounted_relations(connection: sqlite3.Connection, db_path: str | os.PathLike[str]) -> list[Relation]:
    try:
        return _read_relations(connection, count_rows=False)
    except sqlite3.DatabaseError as error:
        raise _unreadable(db_path, error) from None


def describe_tables(db_path: str | os.PathLike[str]) -> dict:
    """``{"tables": {name: [columns]}, "views": {name: [columns]}, "row_counts": {table: n}}``.

    Raw names (not quoted), in creation order; SQLite's internal ``sqlite_*`` tables
    are skipped. A table SQLite cannot count has row count None.
    """
    relations = _relations(db_path)
    return {
        "tables": {r.name: [c.name for c in r.columns] for r in relations if r.kind == "table"},
        "views": {r.name: [c.name for c in r.columns] for r in relations if r.kind == "view"},
        "row_counts": {r.name: r.row_count for r in relations if r.kind == "table"},
    }


def code_span(text: str) -> str:
    """``text`` as a markdown code span, whatever backticks it contains."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    padding = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{padding}{text}{padding}{fence}"


def _line_breaks_as_spaces(text: str) -> str:
    """``text`` with each line break made a space and nothing else changed. Not
    ``store.messages.one_line``: that also collapses runs of spaces and drops control
    characters, which would change a quoted identifier a reader copies into a query."""
    return _LINE_BREAKS.sub(" ", text)


def _signature(relation: Relation) -> str:
    columns = ", ".join(
        f"{quote_identifier(c.name)} {c.declared_type}" if c.declared_type else quote_identifier(c.name)
        for c in relation.columns
    )
    return f"{quote_identifier(relation.name)}({columns})"


def _has_line_break(name: str) -> bool:
    return bool(_LINE_BREAKS.search(name))


def render_query_manual(db_path: str | os.PathLike[str], notes: Iterable[str] = ()) -> str:
    """The whole ``## Query manual`` section for the database at ``db_path``.

    Lists every table with every column and its declared type, example queries
    (``SELECT * ... LIMIT 5`` and ``SELECT COUNT(*)``; only the COUNT on a table
    wider than 12 columns), the views, then ``notes``. Ends with one newline.
    """
    # the manual shows no counts; COUNT(*) on 5 GB is not free
    return _query_manual(_relations(db_path, count_rows=False), notes)


def render_map(db_path: str | os.PathLike[str], notes: Iterable[str] = (),
               row_counts: Mapping[str, int] | None = None) -> tuple[str, str]:
    """``(render_query_manual(...), render_sample_rows(...))`` from one connection and
    one read of the schema: opening a database and reading its schema costs about as
    much as rendering either section, and a writer maps every dataset it plants."""
    connection = open_readonly(db_path)
    try:
        relations = _uncounted_relations(connection, db_path)
        return _query_manual(relations, notes), _sample_rows(connection, relations, row_counts, db_path)
    finally:
        connection.close()


def _query_manual(relations: list[Relation], notes: Iterable[str]) -> str:
    tables = [r for r in relations if r.kind == "table"]
    views = [r for r in relations if r.kind == "view"]
    lines = ["## Query manual", ""]
    if not tables:
        lines += ["This database has no tables.", ""]
    else:
        lines.append("Tables:")
        lines += [f"- {code_span(_line_breaks_as_spaces(_signature(table)))}" for table in tables]
        lines.append("")
    if views:
        lines.append("Views (read-only, queried like tables):")
        lines += [f"- {code_span(_line_breaks_as_spaces(_signature(view)))} (view)" for view in views]
        lines.append("")
    examples: list[str] = []
    remarks: list[str] = []
    for table in tables[:MAX_EXAMPLE_TABLES]:
        name = quote_identifier(table.name)
        if _has_line_break(table.name):
            # A line break inside a quoted name cannot be written in a one-line query.
            remarks.append(f"Table {code_span(_line_breaks_as_spaces(name))} has a line break in its name, so no one-line example is given for it.")
            continue
        if len(table.columns) > WIDE_TABLE_COLUMNS:
            examples.append(f"SELECT COUNT(*) FROM {name}")
            remarks.append(
                f"Table {code_span(name)} has {len(table.columns)} columns, so `SELECT *` on it will not fit "
                "the query budget: select the columns you need by name, or aggregate."
            )
        else:
            examples += [f"SELECT * FROM {name} LIMIT 5", f"SELECT COUNT(*) FROM {name}"]
    if examples:
        lines.append("Example queries:")
        lines += [f"- {code_span(example)}" for example in examples]
        lines.append("")
    if any(_has_line_break(r.name) or any(_has_line_break(c.name) for c in r.columns) for r in relations):
        remarks.append("Some table or column names contain line breaks; they are shown above with each break as a space.")
    if len(tables) > MAX_EXAMPLE_TABLES:
        remarks.append(
            f"Examples cover the first {MAX_EXAMPLE_TABLES} of {len(tables)} tables; every table listed above is queried the same way."
        )
    for paragraph in [*remarks, *(_line_breaks_as_spaces(note).strip() for note in notes)]:
        if paragraph:
            lines += [paragraph, ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<blob {len(value)} bytes>"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _escape_cell(text: str) -> str:
    if len(text) > MAX_CELL_CHARS:
        text = text[: MAX_CELL_CHARS - 1] + "…"
    return _LINE_BREAKS.sub("<br>", text.replace("|", "\\|"))


def _sample_values(connection: sqlite3.Connection, table: Relation, columns: tuple[Column, ...]) -> list[list[str]]:
    """Up to three rows of ``columns``, read so a huge blob or text is never loaded whole.

    A blob arrives as its length only and text as its first 121 characters, which
    is enough to know whether the cell must be cut.
    """
    selected = []
    for column in columns:
        name = quote_identifier(column.name)
        selected += [
            f"typeof({name})",
            f"CASE typeof({name}) WHEN 'blob' THEN length({name}) WHEN 'text' THEN substr({name}, 1, {MAX_CELL_CHARS + 1}) ELSE {name} END",
        ]
    query = f"SELECT {', '.join(selected)} FROM {quote_identifier(table.name)} LIMIT {MAX_SAMPLE_ROWS}"
    rendered = []
    for row in connection.execute(query):
        cells = []
        for index in range(0, len(row), 2):
            kind, value = row[index], row[index + 1]
            text = f"<blob {value} bytes>" if kind == "blob" else _cell_text(value)
            cells.append(_escape_cell(text))
        rendered.append(cells)
    return rendered


def _sample_section(connection: sqlite3.Connection, table: Relation) -> list[str]:
    name = _line_breaks_as_spaces(quote_identifier(table.name))
    if table.row_count is None:
        return [f"### {name} — row count unavailable", "", "_SQLite could not read this table here (a virtual table whose module is not loaded?)._", ""]
    noun = "row" if table.row_count == 1 else "rows"
    lines = [f"### {name} — {table.row_count} {noun}", ""]
    if table.row_count == 0:
        return lines + ["_No rows._", ""]
    shown = table.columns[:MAX_SAMPLE_COLUMNS]
    try:
        rows = _sample_values(connection, table, shown)
    except sqlite3.Error as error:
        return lines + [f"_Sample rows could not be read: {_line_breaks_as_spaces(str(error))}._", ""]
    lines.append("| " + " | ".join(_escape_cell(c.name) for c in shown) + " |")
    lines.append("| " + " | ".join("---" for _ in shown) + " |")
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    lines.append("")
    hidden = len(table.columns) - len(shown)
    if hidden > 0:
        lines += [
            f"_{len(shown)} of {len(table.columns)} columns shown; the other {hidden} exist and are queryable "
            "(all are listed in the Query manual)._",
            "",
        ]
    return lines


def render_sample_rows(db_path: str | os.PathLike[str], row_counts: Mapping[str, int] | None = None) -> str:
    """The whole ``## Sample rows`` section for the database at ``db_path``.

    One ``### <table> — N rows`` block per table (at most 20), up to 3 rows and 12
    columns each, every omission stated. Ends with one newline. ``row_counts``, when
    the caller already counted (it loaded the rows), spares a COUNT(*) per table.
    """
    connection = open_readonly(db_path)
    try:
        return _sample_rows(connection, _uncounted_relations(connection, db_path), row_counts, db_path)
    finally:
        connection.close()


def _sample_rows(connection: sqlite3.Connection, relations: list[Relation], row_counts: Mapping[str, int] | None,
                 db_path: str | os.PathLike[str]) -> str:
    known = dict(row_counts or {})
    try:
        tables = [replace(r, row_count=known[r.name]) if r.name in known else _counted(connection, r)
                  for r in relations if r.kind == "table"]
    except sqlite3.DatabaseError as error:
        raise _unreadable(db_path, error) from None
    lines = ["## Sample rows", ""]
    if not tables:
        lines += ["_This database has no tables._", ""]
    for table in tables[:MAX_SAMPLED_TABLES]:
        lines += _sample_section(connection, table)
    if len(tables) > MAX_SAMPLED_TABLES:
        lines += [
            f"_{MAX_SAMPLED_TABLES} of {len(tables)} tables sampled; the other {len(tables) - MAX_SAMPLED_TABLES} "
            "exist and are queryable (all are listed in the Query manual)._",
            "",
        ]
    return "\n".join(lines).rstrip("\n") + "\n"
