"""Dataset birth: a declarative schema becomes DDL and a newborn SQLite file.

A model or converter never writes DDL. It declares the shape as data::

    {"clients": {"columns": {"name": "TEXT", "site": "TEXT"}, "primary_key": ["name"]}}

and this module validates it, generates the CREATE TABLE statements (every
identifier through ``quote_identifier``) and loads the rows with placeholders in
one transaction. A failed birth leaves no file behind.
"""
from __future__ import annotations

import os
import re
import sqlite3
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import VineError
from .sqlnames import quote_identifier

NAME_PATTERN = re.compile(r"[a-z_][a-z0-9_]*")
MAX_NAME_CHARS = 64
COLUMN_TYPES = ("TEXT", "INTEGER", "REAL", "BLOB")
MAX_TABLES = 10
MAX_COLUMNS = 50
TABLE_KEYS = frozenset({"columns", "primary_key"})
SIDECAR_SUFFIXES = ("-journal", "-wal", "-shm")

_NAME_RULE = ("names are one word of lowercase letters (any script), digits and underscore, no leading digit, "
              "at most 64 characters: ^[a-z_][a-z0-9_]*$ in ASCII")
_NAME_CATEGORIES = frozenset({"Ll", "Lm", "Lo", "Mn", "Mc", "Me", "Nd"})  # no uppercase, no symbols


def is_schema_name(name: object) -> bool:
    """A valid table or column name: ``^[a-z_][a-z0-9_]*$``, or the same shape in any
    script (``名前``, ``имя``, ``preço``: lowercase letters, combining marks, decimal
    digits and ``_``, not starting with a digit or a mark), at most 64 characters.
    Non-ASCII names are double-quoted by ``quote_identifier`` wherever SQL is written."""
    if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME_CHARS:
        return False
    if NAME_PATTERN.fullmatch(name):
        return True
    if name[0].isdigit() or unicodedata.category(name[0]).startswith("M"):
        return False
    return all(char == "_" or (not char.isascii() or char.isdigit() or char.islower())
               and unicodedata.category(char) in _NAME_CATEGORIES for char in name)


def _schema_error(message: str, hint: str) -> VineError:
    return VineError("E_SCHEMA", message, hint)


def _check_name(name: object, what: str) -> None:
    if not is_schema_name(name):
        raise _schema_error(f"invalid {what} name {name!r}", f"Table and column {_NAME_RULE}.")


def _column_type(table: str, column: str, declared: object) -> str:
    """The canonical type; the four names are accepted in any letter case."""
    if isinstance(declared, str) and declared.strip().upper() in COLUMN_TYPES:
        return declared.strip().upper()
    raise _schema_error(
        f"column {table}.{column} has type {declared!r}",
        "Column types are one of TEXT, INTEGER, REAL, BLOB.",
    )


def _primary_key(table: str, spec: Mapping[str, Any]) -> list[str]:
    declared = spec.get("primary_key")
    if declared is None:
        return []
    keys = [declared] if isinstance(declared, str) else declared
    if not isinstance(keys, Sequence) or not all(isinstance(key, str) for key in keys):
        raise _schema_error(
            f"table {table}: primary_key must be a list of column names, got {declared!r}",
            "Write primary_key as a list of declared column names, e.g. [\"id\"].",
        )
    columns = spec["columns"]
    for key in keys:
        if key not in columns:
            raise _schema_error(
                f"table {table}: primary_key names {key!r}, which is not a declared column",
                f"primary_key may only name declared columns: {', '.join(columns)}.",
            )
    if len(set(keys)) != len(keys):
        raise _schema_error(
            f"table {table}: primary_key repeats a column ({', '.join(keys)})",
            "Name each primary key column once.",
        )
    return list(keys)


def validate_schema(schema: object) -> None:
    """Raise VineError E_SCHEMA unless ``schema`` is a valid declarative dataset schema.

    Rules (primitives.md, "Planting a dataset"): table and column names match
    ``^[a-z_][a-z0-9_]*$``, or the same shape in another script (``is_schema_name``),
    with at most 64 characters; types are TEXT, INTEGER,
    REAL or BLOB; primary_key only names declared columns; 1 to 10 tables of 1 to
    50 columns. Table names may not start with ``sqlite_``, which SQLite reserves.
    """
    if not isinstance(schema, Mapping) or not schema:
        raise _schema_error("a dataset schema needs at least one table", "Declare 1 to 10 tables: {table: {\"columns\": {name: TYPE}}}.")
    if len(schema) > MAX_TABLES:
        raise _schema_error(f"the schema declares {len(schema)} tables", "At most 10 tables per dataset; split it into several datasets.")
    for table, spec in schema.items():
        _check_name(table, "table")
        if table.startswith("sqlite_"):
            raise _schema_error(f"table name {table!r} starts with sqlite_", "SQLite reserves names starting with sqlite_ for itself; rename the table.")
        if not isinstance(spec, Mapping):
            raise _schema_error(f"table {table}: expected a mapping with 'columns'", "Declare {\"columns\": {name: TYPE}, \"primary_key\": [...]}.")
        unknown = sorted(str(key) for key in spec if key not in TABLE_KEYS)
        if unknown:
            raise _schema_error(f"table {table}: unknown key(s) {', '.join(unknown)}", "A table declares only 'columns' and optionally 'primary_key'.")
        columns = spec.get("columns")
        if not isinstance(columns, Mapping) or not columns:
            raise _schema_error(f"table {table} declares no columns", "Each table needs 1 to 50 columns: {name: TYPE}.")
        if len(columns) > MAX_COLUMNS:
            raise _schema_error(f"table {table} declares {len(columns)} columns", "At most 50 columns per table; split the table.")
        for column, declared in columns.items():
            if not is_schema_name(column):
                raise _schema_error(f"table {table}: invalid column name {column!r}", f"Table and column {_NAME_RULE}.")
            _column_type(table, column, declared)
        _primary_key(table, spec)


def generate_ddl(schema: Mapping[str, Any]) -> list[str]:
    """One CREATE TABLE statement per table, in declaration order.

    Validates first. Every identifier goes through ``quote_identifier``, so a
    column named ``order`` is written ``"order"`` and the statement runs.
    """
    validate_schema(schema)
    return _ddl(schema)


def _ddl(schema: Mapping[str, Any]) -> list[str]:
    """``generate_ddl`` for a schema already validated."""
    statements = []
    for table, spec in schema.items():
        parts = [f"{quote_identifier(column)} {_column_type(table, column, declared)}" for column, declared in spec["columns"].items()]
        keys = _primary_key(table, spec)
        if keys:
            parts.append(f"PRIMARY KEY ({', '.join(quote_identifier(key) for key in keys)})")
        statements.append(f"CREATE TABLE {quote_identifier(table)} ({', '.join(parts)})")
    return statements


class _RowFeed:
    """Streams one table's rows into executemany, checking width and counting.

    The count doubles as the 1-based number of the row SQLite is working on when
    it fails, because executemany pulls exactly one row per execution.
    """

    def __init__(self, table: str, width: int, rows: Iterable[Sequence[Any]]) -> None:
        self.table = table
        self.width = width
        self.rows = rows
        self.count = 0

    def __iter__(self) -> Iterator[Sequence[Any]]:
        width = self.width
        for row in self.rows:
            self.count += 1
            # a tuple or a list (what every converter yields) skips the ABC checks
            if (type(row) is not tuple and type(row) is not list) and (
                    isinstance(row, (str, bytes, bytearray, Mapping)) or not isinstance(row, Sequence)):
                raise _schema_error(
                    f"table {self.table}, row {self.count}: a row must be a list of values, got {type(row).__name__}",
                    f"Give each row as a list of {self.width} value(s) in column order.",
                )
            if len(row) != width:
                raise _schema_error(
                    f"table {self.table}, row {self.count} has {len(row)} value(s), the table has {self.width} column(s)",
                    "Give every row exactly one value per declared column, in column order (None for empty).",
                )
            yield row


def _remove_newborn(db_path: Path) -> None:
    for path in (db_path, *(db_path.with_name(db_path.name + suffix) for suffix in SIDECAR_SUFFIXES)):
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def _claim_new_file(db_path: Path) -> None:
    """Create ``db_path`` empty (an empty file is a valid empty SQLite database).

    O_EXCL makes "must not exist" atomic, so two births never share a file.
    """
    for suffix in SIDECAR_SUFFIXES:
        sidecar = db_path.with_name(db_path.name + suffix)
        if os.path.lexists(sidecar):
            # SQLite would replay a stale hot journal into the newborn file.
            raise _schema_error(f"stale {sidecar.name} exists beside {db_path}", f"Remove {sidecar} (it belongs to no database) and plant again.")
    try:
        descriptor = os.open(db_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        raise _schema_error(f"payload exists: {db_path}", "A newborn dataset never overwrites a payload; choose another id or remove the file.") from None
    except FileNotFoundError:
        raise VineError("E_NOT_FOUND", f"folder {db_path.parent} does not exist", "Create the parent branch folder before planting the dataset.") from None
    os.close(descriptor)


def _insert_rows(connection: sqlite3.Connection, schema: Mapping[str, Any], rows: Mapping[str, Iterable[Sequence[Any]]]) -> dict[str, int]:
    counts = {table: 0 for table in schema}
    for table, table_rows in rows.items():
        columns = list(schema[table]["columns"])
        placeholders = ", ".join("?" for _ in columns)
        statement = f"INSERT INTO {quote_identifier(table)} VALUES ({placeholders})"
        feed = _RowFeed(table, len(columns), table_rows)
        try:
            connection.executemany(statement, feed)
        except VineError:
            raise
        except (sqlite3.Error, OverflowError, ValueError, TypeError) as error:
            raise _schema_error(
                f"table {table}, row {feed.count}: {error}",
                "Values must be text, integer (64-bit), real, bytes or None and satisfy the primary key; store huge integers as TEXT.",
            ) from None
        counts[table] = feed.count
    return counts


def create_dataset(
    db_path: str | os.PathLike[str],
    schema: Mapping[str, Any],
    rows: Mapping[str, Iterable[Sequence[Any]]] | None = None,
) -> dict[str, int]:
    """Birth a SQLite payload at ``db_path`` from ``schema`` and optional ``rows``.

    ``rows`` maps table -> iterable of row sequences; each iterable is consumed
    once and never materialised, so a generator of millions of rows is fine.
    DDL and every row load in one transaction. On any failure the newborn file and
    its journals are deleted before the error propagates: a failed birth leaves
    nothing. Returns the number of rows loaded per table (0 for tables without rows).
    """
    validate_schema(schema)
    rows = rows or {}
    unknown = [str(table) for table in rows if table not in schema]
    if unknown:
        raise _schema_error(f"rows given for undeclared table(s): {', '.join(unknown)}", f"Declared tables: {', '.join(schema)}.")
    ddl = _ddl(schema)  # validated above
    target = Path(db_path)
    _claim_new_file(target)
    connection: sqlite3.Connection | None = None
    try:
        connection = sqlite3.connect(target, isolation_level=None)
        # The file is deleted on failure anyway, so skip the journal and fsyncs
        # while loading. journal_mode=OFF is per connection: the file on disk stays
        # in the default rollback-journal mode (DELETE), one self-contained file.
        connection.execute("PRAGMA journal_mode=OFF")
        connection.execute("PRAGMA synchronous=OFF")
        connection.execute("BEGIN")
        for statement in ddl:
            connection.execute(statement)
        counts = _insert_rows(connection, schema, rows)
        connection.execute("COMMIT")
        connection.close()
        connection = None
    except BaseException:
        if connection is not None:
            connection.close()
        _remove_newborn(target)
        raise
    return counts
