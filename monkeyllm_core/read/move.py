"""move: the neighbours of a node, within 600 tokens (primitives.md, move).

Along typed edges: ``direction`` ``out`` (the node's own links), ``in`` (links to
it, each under the dialect's inverse name, so a ``mentioned-in`` link shows as
``mentions`` from the other side) or ``both``; ``rel`` keeps one relation, named
as it reads from this node. ``rel="children"`` is a branch's physical children
instead (``direction="in"``: the branch it sits in, the way back up). Every
neighbour carries its type, full summary and heat, and the list is hottest first;
there is no ``k``: everything that matches is collected and the tail is dropped
until the response fits, with a hint pointing at scan, which filters. In a
Gauntlet session the list is ordered by closeness to the hunt's goal before that
cut, and the response says ``frontier: {"ranked": true, "toward": ...}``.
"""
from __future__ import annotations

from typing import Any

from ..errors import VineError
from ..forest.rules import parent_of
from .catalog_reads import Edge, children_of, row_of, scents, typed_edges
from .context import ReadContext
from .contract import BUDGETS, shed_tail

BUDGET = BUDGETS["move"]
DIRECTIONS = ("out", "in", "both")
CHILDREN = "children"


def move(ctx: ReadContext, node_id: str, rel: str | None = None, direction: str = "out") -> dict[str, Any]:
    if direction not in DIRECTIONS:
        raise VineError("E_SCHEMA", f"move: direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}",
                        "out follows the node's own links, in the links to it, both all of them.")
    _check_rel(ctx, rel)
    row = row_of(ctx.db, node_id)
    node_id = row["id"]
    if rel == CHILDREN:
        edges = _structural(ctx, row, direction)
    else:
        edges = [e for e in typed_edges(ctx.db, node_id, ctx.dialect, direction) if rel is None or e.rel == rel]
    heat = ctx.heat_of(e.other for e in edges)
    known = scents(ctx.db, (e.other for e in edges))
    neighbors = [{"id": e.other, "rel": e.rel, "direction": e.direction, "type": known[e.other].type,
                  "summary": known[e.other].summary, "heat": round(heat[e.other], 4)}
                 for e in ctx.frontier_order(edges, heat, lambda e: e.other)]
    response: dict[str, Any] = {"neighbors": neighbors, "truncated": False}
    if ctx.frontier is not None:
        response["frontier"] = ctx.frontier.report
    shed_tail(response, "neighbors", BUDGET, hint=_hint(node_id, rel, len(neighbors)))
    return response


def _check_rel(ctx: ReadContext, rel: str | None) -> None:
    if rel is None or rel == CHILDREN:
        return
    names = set(ctx.dialect.rels) | {inverse for inverse in ctx.dialect.rels.values() if inverse}
    if not isinstance(rel, str) or rel not in names:
        raise VineError("E_SCHEMA", f"move: rel {rel!r} is not declared in _meta/schema.md",
                        f"Use children, or one of: {', '.join(sorted(names))}.")


def _structural(ctx: ReadContext, row: dict[str, Any], direction: str) -> list[Edge]:
    if row["kind"] != "branch" and direction == "out":
        raise VineError("E_SCHEMA", f"move: {row['id']} is a banana and has no children",
                        f"Use move('{row['id']}') for its typed edges, or rel='children' with direction='in' "
                        "for the branch it sits in.")
    edges: list[Edge] = []
    if direction in ("out", "both") and row["kind"] == "branch":
        edges += [Edge(rel=CHILDREN, other=child, direction="out") for child, *_ in children_of(ctx.db, row["id"])]
    parent = parent_of(row["id"])
    if direction in ("in", "both") and parent is not None:
        edges.append(Edge(rel=CHILDREN, other=parent, direction="in"))
    return edges


def _hint(node_id: str, rel: str | None, total: int) -> str:
    if rel == CHILDREN:
        return (f"{total} neighbours matched; the tail was dropped by the {BUDGET}-token budget. "
                f"scan('{node_id}', filter={{...}}, fields=['id', 'title']) lists them filtered and cheaper.")
    return (f"{total} neighbours matched; the tail was dropped by the {BUDGET}-token budget. "
            "Name one rel, pick a direction, or use scan with a filter.")
