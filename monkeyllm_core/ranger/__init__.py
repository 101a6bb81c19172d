"""The Ranger: the forest's maintenance pass (concepts.md, The Ranger).

One cycle (``cycle.run_cycle``) evaporates heat (``heat_table``), tends links by
use (``links``), rebuilds the master's Landmarks (``landmarks``) and reports
health (``health``). Its own room, beside ``forest/`` and ``read/``, because it
is a process over both: it reads heat as the read engine does and edits nodes
only through the ``Vine``'s audited write path, one commit per node.
"""
from __future__ import annotations

from .cycle import RangerReport, run_cycle
from .health import PayloadHashes

__all__ = ["RangerReport", "run_cycle", "PayloadHashes"]
