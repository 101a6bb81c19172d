"""The read engine's room (issue 12): locate, look, move, scan, pick, sniff, query
and harvest (primitives.md), each a module here, sharing one budget and serializer
module and the session traces kept in ``_derived/``.

Reads are served from the catalog and the files, never from a model, and never
block a writer. Until the engine moves in, ``Vine.read``, ``Vine.trail``,
``Vine.search`` and ``Vine.query`` (over ``data/query.py``) are the read calls.
"""
