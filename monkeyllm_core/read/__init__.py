"""The read engine: the calls an agent walks a forest with (primitives.md).

One module per primitive (locate, look, move, scan, pick, sniff, harvest; query is
``data.query``), all answering through ``contract``: one serializer for measuring
and for the wire, the per-call token budgets, and whole-item truncation from the
tail. Reads never commit and never take the writer lock; what they remember
(heat, session traces) lives in ``_derived/``, outside git.
"""
