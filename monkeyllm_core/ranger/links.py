"""Tending links by use (concepts.md, the confidence lifecycle).

A link below ``promoted_confidence`` whose two endpoints both still hold heat of
at least ``promote_floor`` after evaporation is confirmed by use: it rises to
``promoted_confidence``. A link below ``prune_below`` whose two endpoints have no
heat left at all (no row after evaporation) was never walked, or not for long
enough: it is removed. A link without a confidence is a confirmed one (1.0), and
a confirmed link is never touched, whatever the settings say.

The catalog names the nodes worth opening (an edge below either threshold); the
decision is made on the passport read from its file, so the edit writes exactly
the links the file holds, with only the tended ones changed. Each node's edit is
one ``Vine.graft`` (the audited write path: validated, indexed, one commit), its
promotions and its prunes apart, with the messages ``ranger(promote): <id>`` and
``ranger(prune): <id>``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..errors import VineError
from ..read.ranger_settings import RangerSettings
from ..vine import Vine

PROMOTE, PRUNE = "promote", "prune"


@dataclass(frozen=True)
class LinkEdit:
    node: str
    rel: str
    target: str
    confidence: float          # before the edit
    to: float | None = None    # after a promotion; None: pruned

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"node": self.node, "rel": self.rel, "target": self.target,
                               "confidence": self.confidence}
        if self.to is not None:
            out["to"] = self.to
        return out


@dataclass
class LinkTending:
    promoted: list[LinkEdit] = field(default_factory=list)
    pruned: list[LinkEdit] = field(default_factory=list)
    commits: list[dict[str, str]] = field(default_factory=list)  # {"message", "commit"}
    failed: list[str] = field(default_factory=list)               # "<id>: <error line>"


def decide(source: str, link: Mapping[str, Any], heat: Mapping[str, float], settings: RangerSettings) -> str | None:
    """PROMOTE, PRUNE or None for one link of ``source``'s passport."""
    confidence = link.get("confidence", 1.0)
    target = link.get("target")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not isinstance(target, str):
        return None  # a malformed link: validate reports it, the Ranger leaves it alone
    if confidence >= 1.0:
        return None
    floor = settings.promote_floor
    if confidence < settings.promoted_confidence and heat.get(source, 0.0) >= floor and heat.get(target, 0.0) >= floor:
        return PROMOTE
    if confidence < settings.prune_below and source not in heat and target not in heat:
        return PRUNE
    return None


def candidate_sources(vine: Vine, settings: RangerSettings) -> list[str]:
    """The nodes holding a link that either rule could touch (the catalog's explicit edges)."""
    ceiling = max(settings.promoted_confidence, settings.prune_below)
    rows = vine.catalog.db.execute(
        "SELECT DISTINCT source FROM edges WHERE inferred = 0 AND typeof(confidence) IN ('real', 'integer') "
        "AND confidence < ? AND confidence < 1.0 ORDER BY source", (ceiling,))
    return [row[0] for row in rows]


def tend_links(vine: Vine, heat: Mapping[str, float], settings: RangerSettings, *, dry_run: bool) -> LinkTending:
    result = LinkTending()
    for node_id in candidate_sources(vine, settings):
        try:
            links = vine.read(node_id).frontmatter.get("links")
        except VineError:
            continue  # an unreadable passport: validate names it
        if not isinstance(links, list):
            continue
        decisions = [decide(node_id, link, heat, settings) if isinstance(link, dict) else None for link in links]
        if not any(decisions):
            continue
        promoted = [_edit(node_id, link, settings.promoted_confidence)
                    for link, d in zip(links, decisions) if d == PROMOTE]
        pruned = [_edit(node_id, link, None) for link, d in zip(links, decisions) if d == PRUNE]
        if dry_run:
            result.promoted += promoted
            result.pruned += pruned
            continue
        try:
            if promoted:
                raised = [dict(link, confidence=settings.promoted_confidence) if d == PROMOTE else link
                          for link, d in zip(links, decisions)]
                _commit(vine, node_id, raised, PROMOTE, result)
                result.promoted += promoted
                links = raised
            if pruned:
                kept = [link for link, d in zip(links, decisions) if d != PRUNE]
                _commit(vine, node_id, kept, PRUNE, result)
                result.pruned += pruned
        except VineError as exc:
            result.failed.append(f"{node_id}: {exc.one_line()}")
    return result


def _edit(node_id: str, link: Mapping[str, Any], to: float | None) -> LinkEdit:
    return LinkEdit(node=node_id, rel=str(link.get("rel")), target=str(link["target"]),
                    confidence=float(link.get("confidence", 1.0)), to=to)


def _commit(vine: Vine, node_id: str, links: list[Any], verb: str, result: LinkTending) -> None:
    message = f"ranger({verb}): {node_id}"
    done = vine.graft(node_id, {"set_frontmatter": {"links": links}}, message=message)
    if done["commit"]:
        result.commits.append({"message": message, "commit": done["commit"]})
