"""The data layer: SQLite payloads, from birth to bounded reads and row writes.

- ``dataset``: a declarative schema becomes DDL and a newborn SQLite file.
- ``query``: read-only SQL, bounded in rows, time, value size and functions.
- ``tend``: one INSERT, UPDATE or DELETE in its own transaction.
- ``sample_map``: the ``## Query manual`` and ``## Sample rows`` sections.
- ``sqlnames`` and ``sqltext``: quoting identifiers and seeing a statement's words.
- ``sqlite_copy``: a private, self-contained copy of a live database (WAL included).
"""
