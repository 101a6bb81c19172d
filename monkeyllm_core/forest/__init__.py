"""The forest model: what a node, a branch and the dialect are, and the rules they obey.

- ``passport``: parse and render a node (YAML frontmatter + body), byte-stable.
- ``rules``: ids, the parent rule, dialect, source and link limits.
- ``summary_contract``: the rules every planted summary obeys, which the Gardener's
  deriver and the Curator extend.
- ``dialect``: node types and edge rels read from ``_meta/schema.md``.
- ``branches`` and ``upkeep``: branch indexes, their entry lines and coverage, kept true.
- ``sections`` and ``patches``: ``## `` sections of a body and the graft patch over them.
- ``catalog``: ``_derived/catalog.db`` (nodes, typed edges, entry search), disposable;
  ``catalog_entry``: what it keeps of one node file; ``parallel_read``: a rebuild's
  files parsed in worker processes.
- ``validate``: the whole-forest check behind ``vine validate``.
- ``init``: a new forest exactly as FOREST-FORMAT.md lays it out.
"""
