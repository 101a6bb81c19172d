"""Built-in converter: a SQLite database is adopted whole.

The file is copied beside its passport as it stands; the engine generates the
``## Query manual`` and ``## Sample rows`` from the installed copy. This converter
only checks that the file is a readable database with something to query, and
gathers warnings. Nothing is rebuilt row by row, so adopting 5 GB costs the same as
5 MB: no COUNT(*), no integrity scan, only the schema and three rows per table.
"""
from __future__ import annotations

import sqlite3
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from monkeyllm_gardener.conversion import Conversion, ConversionError
from monkeyllm_gardener.hookspecs import hookimpl

SQLITE_MAGIC = b"SQLite format 3\x00"
# Header bytes 18 and 19 are the write and read format versions: 2 means WAL mode.
_WAL_FORMAT_VERSION = 2
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
    install_hint = 'pip install "monkeyllm[ingest]"'

    def convert(self, path: Path) -> Conversion:
        header = _read_header(path)
        warnings = _sidecar_warnings(path, header)
        uncheckpointed = _has_uncheckpointed_changes(path)
        try:
            connection = sqlite3.connect(_read_only_uri(path), uri=True)
        except sqlite3.Error as error:
            raise ConversionError(f"{path.name}: cannot open the database ({error})") from error
        try:
            objects = _list_tables_and_views(connection, path)
            if not any(obj.kind == "table" for obj in objects):
                hint = (
                    "; its -wal file holds changes not yet checkpointed: checkpoint it and sync again"
                    if uncheckpointed
                    else ""
                )
                raise ConversionError(f"{path.name}: database has no tables: nothing to query{hint}")
            structure: dict[str, dict[str, Any]] = {"tables": {}, "views": {}, "samples": {}}
            for obj in objects:
                warning = _sample_read_problem(connection, obj, path, structure)
                if warning:
                    warnings.append(warning)
        finally:
            connection.close()
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


def _read_only_uri(path: Path) -> str:
    # Percent-encoding the absolute path keeps '#', '?' and '%' in folder names from
    # being read as URI syntax. immutable=1: no locks, no -wal or -journal is read or
    # created, so we see exactly the bytes the Gardener will copy.
    return "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro&immutable=1"


def _sidecar_warnings(path: Path, header: bytes) -> list[str]:
    warnings: list[str] = []
    wal_mode = len(header) > 19 and header[18] == _WAL_FORMAT_VERSION
    if _has_uncheckpointed_changes(path) and wal_mode:
        warnings.append(
            f"{path.name}: a non-empty {path.name}-wal file sits beside it; changes not yet "
            "checkpointed into the database are not part of the copy; checkpoint it "
            "(PRAGMA wal_checkpoint) and sync again"
        )
    if _non_empty(path.with_name(path.name + "-journal")):
        warnings.append(
            f"{path.name}: a {path.name}-journal file sits beside it (an interrupted "
            "transaction); the copy holds the database as it is on disk, without rolling "
            "it back; open it once with sqlite3 and sync again"
        )
    return warnings


def _has_uncheckpointed_changes(path: Path) -> bool:
    return _non_empty(path.with_name(path.name + "-wal"))


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
