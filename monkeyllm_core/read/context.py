"""What every read call is handed: the catalog, the dialect, the files, and the heat.

One value object, built by ``Vine`` for each call, so a primitive is a plain
function of its arguments and this context: it never reaches into ``Vine``, and
the same function serves every transport. ``heat_of`` and ``alpha`` are the
ranking signal of concepts.md (score = strength x (1 + alpha x heat)).

The canopy's two handles are None unless it can take part (``canopy/dense.py``):
``dense`` is locate's vector half when a query embedder is configured; ``frontier``
is the Gauntlet, set when the session has a goal the canopy can rank toward.
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable

from ..forest.dialect import Dialect
from ..forest.passport import Node
from .catalog_reads import hottest_first

if TYPE_CHECKING:
    from ..canopy.dense import DenseSearch, Frontier

HeatOf = Callable[[Iterable[str]], "dict[str, float]"]
DEFAULT_ALPHA = 0.3  # how much heat weighs in every ranking (concepts.md)


@dataclass(frozen=True, kw_only=True)
class ReadContext:
    db: sqlite3.Connection                                 # the catalog
    dialect: Dialect
    read_node: Callable[[str], Node]                       # a node's file, parsed (E_NOT_FOUND when absent)
    read_body: Callable[[str], str]                        # its body only, the YAML left unparsed
    heat_of: HeatOf                                        # blended heat, 0.0 when cold
    warm: Callable[[], "dict[str, float]"]                 # every warm node and its heat
    deposit_session: Callable[[Iterable[str]], None]       # session-scoped scent (+0.1)
    alpha: float = DEFAULT_ALPHA
    dense: "DenseSearch | None" = None
    frontier: "Frontier | None" = None

    def ranked(self, strength: float, heat: float) -> float:
        return strength * (1.0 + self.alpha * heat)

    def frontier_order(self, items: Iterable[Any], heat: "dict[str, float]", key: Callable[[Any], str]) -> list[Any]:
        """A candidate list in the order its cap sees it: hottest first (stable), then,
        in a Gauntlet session, closest to the goal first."""
        hottest = hottest_first(list(items), heat, key)
        return hottest if self.frontier is None else self.frontier.order(hottest, key, heat)
