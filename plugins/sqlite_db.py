"""Built-in converter: a SQLite database is adopted whole.

The file is copied beside its passport; the engine generates the ``## Query
manual`` and ``## Sample rows`` from the installed copy. This converter only checks
that the file is a readable database with something to query, and gathers warnings.
Nothing is rebuilt row by row, so adopting 5 GB costs the same as 5 MB: no COUNT(*),
no integrity scan, only the schema and three rows per table.

The source is never written to, nor is anything created beside it:

- with no ``-wal`` file beside it, it is read through ``immutable=1`` (no locks, no
  ``-wal``/``-shm``/``-journal`` read or created);
- with a non-empty ``-wal`` (a WAL database with changes not yet checkpointed, often
  one an application still has open), the database and its ``-wal`` are copied into
  a private temporary folder and read there, so committed rows still in the ``-wal``
  are seen (``monkeyllm_core.data.sqlite_copy``).

The payload the Gardener installs is made the same way (``snapshot_database``, in
the worker stage): every committed row, in rollback-journal mode, so a query on the
forest never creates side files. A leftover ``-journal`` (an interrupted
transaction) is not replayed: a warning says the copy holds the file as it is.
"""
from __future__ import annotations

import sqlite3
import tempfile
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from monkeyllm_gardener import Conversion, ConversionError, hookimpl
from monkeyllm_gardener.kit import has_wal_data, snapshot_database

from ._extras import INGEST_HINT

SQLITE_MAGIC = b"SQLite format 3\x00"
_SAMPLE_ROWS = 3
# A view is a stored query: one that never ends (a recursive CTE sorted whole) would
# hang the adopt. Each sample read gets this long, like a query primitive call.
_SAMPLE_SECONDS = 2.0
_PROGRESS_STEPS = 10_000


@dataclass(frozen=True, kw_only=True)
class SchemaObject:
    kind: str  # "table" or "view"
    name: str


class SqliteConverter:
    name = "sqlite"
    extensions = (".db", ".sqlite", ".sqlite3")
    requires: tuple[str, ...] = ()
    install_hint = INGEST_HINT

    def convert(self, path: Path) -> Conversion:
        path = path if isinstance(path, Path) else Path(path)  # the host passes a Path: not parsed again
        _read_header(path)
        warnings = _journal_warnings(path)
        if has_wal_data(path):
            structure = _read_through_private_copy(path, warnings)
        else:
            structure = _read_structure(path, path, warnings)
        return Conversion(
            kind="payload",
            payload_type="sqlite",
            payload_path=path,
            node_type="dataset",
            title=path.stem,
            structure=structure,
            warnings=tuple(warnings),
        )


@hookimpl
def register_converters(register) -> None:
    register(SqliteConverter(), priority=0.0)


def _read_header(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            header = handle.read(100)
    except OSError as error:
        raise ConversionError(f"{path.name}: cannot read the file ({error.strerror})") from error
    if not header:
        raise ConversionError(f"{path.name}: not a SQLite database (bad header): the file is empty")
    if not header.startswith(SQLITE_MAGIC):
        raise ConversionError(
            f"{path.name}: not a SQLite database (bad header): it is another format or an "
            "encrypted database (e.g. SQLCipher); export an unencrypted SQLite copy"
        )
    return header


def _read_through_private_copy(path: Path, warnings: list[str]) -> dict[str, dict[str, Any]]:
    """Read a database whose ``-wal`` holds data: a private copy of both, checkpointed."""
    with tempfile.TemporaryDirectory(prefix="monkeyllm-sqlite-") as work:
        copy = Path(work) / "db"
        try:
            snapshot_database(path, copy)
        except (OSError, sqlite3.Error) as error:
            raise ConversionError(
                f"{path.name}: cannot read the database with its {path.name}-wal file "
                f"({_one_line(error)}); checkpoint it (PRAGMA wal_checkpoint) and sync again"
            ) from None
        return _read_structure(copy, path, warnings)


def _read_structure(db: Path, path: Path, warnings: list[str]) -> dict[str, dict[str, Any]]:
    """Tables, views, their columns and first rows of the database file ``db`` (the
    source ``path`` or a private copy of it); messages name ``path``."""
    try:
        connection = sqlite3.connect(_read_only_uri(db), uri=True)
    except sqlite3.Error as error:
        raise ConversionError(f"{path.name}: cannot open the database ({error})") from error
    try:
        objects = _list_tables_and_views(connection, path)
        if not any(obj.kind == "table" for obj in objects):
            raise ConversionError(f"{path.name}: database has no tables: nothing to query")
        structure: dict[str, dict[str, Any]] = {"tables": {}, "views": {}, "samples": {}}
        for obj in objects:
            warning = _sample_read_problem(connection, obj, path, structure)
            if warning:
                warnings.append(warning)
    finally:
        connection.close()
    return structure


def _one_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def _read_only_uri(path: Path) -> str:
    # Percent-encoding the absolute path keeps '#', '?' and '%' in folder names from
    # being read as URI syntax. immutable=1: no locks, no -wal, -shm or -journal is
    # read or created, so nothing ever appears beside the file (callers read a
    # private copy instead when a -wal holds data).
    return "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro&immutable=1"


def _journal_warnings(path: Path) -> list[str]:
    if _non_empty(path.with_name(path.name + "-journal")):
        return [
            f"{path.name}: a {path.name}-journal file sits beside it (an interrupted "
            "transaction); the copy holds the database as it is on disk, without rolling "
            "it back; open it once with sqlite3 and sync again"
        ]
    return []


def _non_empty(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def _list_tables_and_views(connection: sqlite3.Connection, path: Path) -> list[SchemaObject]:
    try:
        rows = connection.execute(
            "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY rowid"
        ).fetchall()
    except sqlite3.DatabaseError as error:
        raise ConversionError(_unreadable_message(path, error)) from error
    # SQLite reserves every name starting with sqlite_ (any case) for itself.
    return [
        SchemaObject(kind=kind, name=name)
        for kind, name in rows
        if not str(name).lower().startswith("sqlite_")
    ]


def _sample_read_problem(connection: sqlite3.Connection, obj: SchemaObject, path: Path,
                         structure: dict[str, dict[str, Any]]) -> str | None:
    """Read the first rows the engine will sample. A damaged page fails the file; a
    view or virtual table this SQLite cannot evaluate only earns a warning, because
    the rest of the database is still queryable."""
    quoted = '"' + obj.name.replace('"', '""') + '"'
    deadline = time.monotonic() + _SAMPLE_SECONDS
    connection.set_progress_handler(lambda: time.monotonic() > deadline, _PROGRESS_STEPS)
    try:
        cursor = connection.execute(f"SELECT * FROM {quoted} LIMIT {_SAMPLE_ROWS}")
        rows = cursor.fetchall()
        columns = [d[0] for d in cursor.description or ()]
        structure["tables" if obj.kind == "table" else "views"][obj.name] = columns
        # blobs are named, not carried: the structure crosses process boundaries
        structure["samples"][obj.name] = [
            [f"<blob {len(v)} bytes>" if isinstance(v, bytes) else v for v in row] for row in rows]
    except sqlite3.OperationalError as error:
        if time.monotonic() > deadline and "interrupt" in str(error).lower():
            return (
                f"{path.name}: {obj.kind} {obj.name!r} did not return its first rows within "
                f"{_SAMPLE_SECONDS:g} s; the rest of the database is adopted"
            )
        if _is_damage(error):
            raise ConversionError(_unreadable_message(path, error)) from error
        return f"{path.name}: {obj.kind} {obj.name!r} cannot be read here ({error}); the rest of the database is adopted"
    except sqlite3.DatabaseError as error:
        raise ConversionError(_unreadable_message(path, error)) from error
    finally:
        connection.set_progress_handler(None, 0)
    return None


def _is_damage(error: sqlite3.Error) -> bool:
    text = str(error).lower()
    return "malformed" in text or "not a database" in text or "corrupt" in text


def _unreadable_message(path: Path, error: sqlite3.Error) -> str:
    return (
        f"{path.name}: corrupt or encrypted SQLite database ({error}); "
        "repair it (sqlite3 .recover) or export a readable copy"
    )
