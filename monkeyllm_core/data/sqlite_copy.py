"""A private, self-contained copy of a SQLite database, made without writing beside it.

``snapshot_database(source, target)`` is how a database becomes a payload:

- the source is only ever read: no connection is opened on it, so no ``-wal``,
  ``-shm`` or ``-journal`` file can appear beside it, and a source on a read-only
  disk adopts like any other;
- a WAL-mode database may hold committed data in its ``-wal`` file that the main
  file does not have yet; the ``-wal`` is copied too, and the copy is checkpointed
  in a private folder beside ``target``, so every committed row is in the result;
- the result is in rollback-journal mode (header bytes 18-19 are 1, 1): a read-only
  query on it never needs a ``-wal``/``-shm`` beside it, so querying the forest
  creates no side files and works for a user who cannot write to it.

A rollback-mode database with no ``-wal`` is copied byte for byte, never opened.
The work folder is ``.<target name>.snapshot-<random>`` beside ``target``, so the
writer's crash recovery, which knows the payloads it journalled, finds the one a
kill during a snapshot leaves (``remove_snapshot_work``).
``vine``'s payload install uses it too (``needs_snapshot``), so a WAL database
planted by any caller lands in rollback-journal mode.
"""
from __future__ import annotations

import glob
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

_JOURNAL_VERSION_OFFSET = 18  # header bytes 18 and 19: write and read format versions
_WAL = 2  # header bytes 18-19: 1 = rollback journal, 2 = WAL


def wal_file(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def has_wal_data(path: Path) -> bool:
    """True when a non-empty ``-wal`` sits beside ``path`` (committed data may be in it)."""
    try:
        return wal_file(path).stat().st_size > 0
    except OSError:
        return False


def journal_versions(path: Path) -> tuple[int, int]:
    """Header bytes 18 and 19 of the database at ``path`` ((0, 0) when too short)."""
    with open(path, "rb") as handle:
        header = handle.read(_JOURNAL_VERSION_OFFSET + 2)
    if len(header) < _JOURNAL_VERSION_OFFSET + 2:
        return (0, 0)
    return header[_JOURNAL_VERSION_OFFSET], header[_JOURNAL_VERSION_OFFSET + 1]


def needs_snapshot(path: str | os.PathLike[str]) -> bool:
    """True unless ``path`` can be copied byte for byte: a WAL-mode database, or one
    with ``-wal`` data beside it, needs ``snapshot_database``."""
    path = Path(path)
    if not path.is_file():  # a FIFO or device: reading its header would consume it
        return False
    try:
        return has_wal_data(path) or _WAL in journal_versions(path)
    except OSError:
        return False


def snapshot_database(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """Write a rollback-journal copy of ``source`` (with its ``-wal`` data) at ``target``.

    ``target`` must not exist yet; its folder holds the short-lived work folder, so
    the final rename never crosses filesystems. Raises ``OSError`` or
    ``sqlite3.Error`` when the copy cannot be made; nothing is left behind then.
    """
    source, target = Path(source), Path(target)
    work = Path(tempfile.mkdtemp(prefix=_work_prefix(target), dir=target.parent))
    try:
        copy = work / "snapshot.db"  # *.db: gitignored, should a crash leave it behind
        shutil.copyfile(source, copy)
        with_wal = has_wal_data(source)
        if with_wal:
            shutil.copyfile(wal_file(source), wal_file(copy))
        if with_wal or _WAL in journal_versions(copy):
            _to_rollback_journal(copy)
        os.replace(copy, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _work_prefix(target: Path) -> str:
    return f".{target.name}.snapshot-"


def remove_snapshot_work(target: str | os.PathLike[str]) -> None:
    """Delete the work folders a kill during ``snapshot_database(..., target)`` left."""
    target = Path(target)
    for path in target.parent.glob(glob.escape(_work_prefix(target)) + "*"):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)


def _to_rollback_journal(copy: Path) -> None:
    """Checkpoint the copy's WAL into it and switch it to rollback-journal mode. The
    connection is the copy's only one, so SQLite recovers the ``-wal`` on open and
    deletes it (and the ``-shm``) when the mode changes."""
    connection = sqlite3.connect(copy, isolation_level=None)
    try:
        mode = connection.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
    finally:
        connection.close()
    if str(mode).lower() != "delete":
        raise sqlite3.OperationalError(f"journal mode stayed {mode!r}")
