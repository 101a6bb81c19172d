"""The read engine: the calls an agent walks a forest with (primitives.md).

One module per primitive (locate, look, move, scan, pick, sniff, harvest; query is
``data.query``), all answering through ``contract``: one serializer for measuring
and for the wire, the per-call token budgets, and whole-item truncation from the
tail. Reads never commit and never take the writer lock; what they remember
(heat, session traces) lives in ``_derived/``, outside git.

Beside the primitives: ``words`` (typed questions to search terms), ``headings``
and ``dataset_map`` (what a body says about its sections and its tables),
``catalog_reads`` (the catalog queries the calls share), ``heat`` and ``sessions``
(pheromone and traces, with ``outcome`` for what a closed hunt says), ``freshness``
(a read-only Vine rebuilds a catalog that no longer matches), ``context`` (what a
call is handed) and ``facade`` (the calls as ``Vine`` methods).
"""
