"""The master index's ``## Landmarks``: the most connected nodes, rebuilt in full.

Degree counts typed edges only (concepts.md, Typed edges): every link a passport
declares counts once for each of its two ends, and the folder tree counts for
nothing. The catalog's materialised inverses are left out, or a rel with an
inverse would count twice and one without (``discovered-shortcut``) once. A link
to a node that does not exist counts for the node that declares it.

Which nodes: the ten most connected, ranked by degree and then by id (so the
same graph always gives the same section), and after them every further node
tied with the tenth, up to twenty: the "ten to twenty" of concepts.md, so a tie
at the cut is not broken by the alphabet alone unless more than twenty share
it. A node without a typed edge is never a landmark; the master index and
``_meta/`` are not candidates. Each line repeats the node's branch entry
verbatim (``- [[id]] — summary``, a branch with its coverage), the line the
writer's upkeep keeps true when that summary changes.

The section is rebuilt from nothing and compared with what the master holds: when
it is the same text, nothing is written; else one ``Vine.graft`` of the master,
``ranger(landmarks)``.
"""
from __future__ import annotations

import sqlite3
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable

from ..forest import branches as br
from ..forest.rules import MASTER_ID
from ..forest.sections import replace_section, section, section_span
from ..forest.upkeep import BranchUpkeep
from ..vine import Vine

FEWEST, MOST = 10, 20
MESSAGE = "ranger(landmarks)"


@dataclass(frozen=True)
class Landmarks:
    nodes: list[tuple[str, int]]  # (id, degree), in section order
    changed: bool
    commit: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"changed": self.changed, "commit": self.commit,
                "nodes": [{"id": node, "degree": degree} for node, degree in self.nodes]}


def typed_degrees(db: sqlite3.Connection, without: Iterable[tuple[str, str, str]] = ()) -> Counter[str]:
    """Every node's typed-edge degree; ``without``: (source, rel, target) links a dry
    run would prune, which the catalog still holds."""
    degrees: Counter[str] = Counter()
    for source, target in db.execute("SELECT source, target FROM edges WHERE inferred = 0"):
        degrees[source] += 1
        if target != source:
            degrees[target] += 1
    for source, _rel, target in without:
        degrees[source] -= 1
        if target != source:
            degrees[target] -= 1
    return degrees


def pick_landmarks(degrees: Counter[str], exists: set[str]) -> list[tuple[str, int]]:
    ranked = sorted(((node, degree) for node, degree in degrees.items()
                     if degree > 0 and node in exists and node != MASTER_ID and not node.startswith("_meta/")),
                    key=lambda item: (-item[1], item[0]))
    picked = ranked[:FEWEST]
    if len(ranked) > FEWEST:
        cut = ranked[FEWEST - 1][1]
        for item in ranked[FEWEST:MOST]:  # ranked: the ties with the tenth come first
            if item[1] != cut:
                break
            picked.append(item)
    return picked


def refresh_landmarks(vine: Vine, degrees: Counter[str], *, dry_run: bool) -> Landmarks:
    db = vine.catalog.db
    exists = {row[0] for row in db.execute("SELECT id FROM nodes")}
    picked = pick_landmarks(degrees, exists)
    lines = []
    for node, _degree in picked:
        row = vine.catalog.get(node)
        lines.append(BranchUpkeep.entry_for(row) if row else f"- [[{node}]]")
    master = vine.read(MASTER_ID).body
    text = section(br.LANDMARKS, "\n".join(lines))
    if replace_section(master, br.LANDMARKS, text) == master:
        return Landmarks(picked, changed=False)
    if dry_run:
        return Landmarks(picked, changed=True)
    key = "replace_section" if section_span(master, br.LANDMARKS) is not None else "append_section"
    done = vine.graft(MASTER_ID, {key: {"header": br.LANDMARKS, "body": "\n".join(lines)}}, message=MESSAGE)
    return Landmarks(picked, changed=done["commit"] is not None, commit=done["commit"])
