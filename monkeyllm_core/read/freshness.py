"""Reads answer from a catalog that matches the forest, whoever wrote the forest.

A writable Vine keeps its catalog true itself (it rebuilds a stale one when it
opens, and every write updates it). A read-only Vine did not, beyond building a
missing one: a forest whose last commit came from another engine, from git
(``git pull``, ``git checkout``) or from a catalog of an older layout would be read
through rows that no longer describe it. So before its first read call a read-only
Vine checks the two facts the catalog records, its layout version and the commit
it was built from; if either differs, it rebuilds the catalog from the files
without taking the writer lock (the catalog is disposable, and a reader taking the
lock would make a writer starting then fail with E_LOCKED).

A writer at work (its lock card names a live process) is left alone: its catalog
rows run ahead of HEAD until its next checkpoint by design, and it keeps them true.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

from ..forest.catalog import SCHEMA_VERSION
from ..store.history import head_commit
from ..writing.writer_probe import probe


def catalog_is_current(db: sqlite3.Connection, root: Path) -> bool:
    try:
        meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('schema_version', 'head')"))
    except sqlite3.Error:
        return False
    return meta.get("schema_version") == SCHEMA_VERSION and meta.get("head") == head_commit(root)


def needs_rebuild(db: sqlite3.Connection, root: Path) -> bool:
    """Whether a read-only reader should rebuild the catalog before reading."""
    return not catalog_is_current(db, root) and not probe(root).active
