"""What every read call is handed: the catalog, the dialect, the files, and the heat.

One value object, built by ``Vine`` for each call, so a primitive is a plain
function of its arguments and this context: it never reaches into ``Vine``, and
the same function serves every transport. ``heat_of`` and ``alpha`` are the
ranking signal of concepts.md (score = strength x (1 + alpha x heat)).
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Callable, Iterable

from ..forest.dialect import Dialect
from ..forest.passport import Node

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

    def ranked(self, strength: float, heat: float) -> float:
        return strength * (1.0 + self.alpha * heat)
