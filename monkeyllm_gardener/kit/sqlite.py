"""SQLite files a converter reads: a private, complete copy of a live database.

A database exported while its application runs is often in WAL mode, with
committed rows still in its ``-wal`` file. A converter that inspects one (its
tables, columns and sample rows for ``Conversion.structure``) must read a copy,
never the source, so that no ``-wal``/``-shm``/``-journal`` file appears beside a
user's database and a read-only source works: ``snapshot_database`` makes that
copy the way the engine installs a SQLite payload (the engine is its home:
``monkeyllm_core.data.sqlite_copy``), and ``has_wal_data`` says whether a copy of
the main file alone would miss rows.
"""
from __future__ import annotations

from monkeyllm_core.data.sqlite_copy import has_wal_data, snapshot_database

__all__ = ["has_wal_data", "snapshot_database"]
