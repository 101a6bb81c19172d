"""What the read calls ask the catalog: a node's row, its neighbours' scent, its typed edges.

Shared by look, move, scan and locate so that each says the same thing the same
way: an id that names no node is ``E_NOT_FOUND`` (a malformed id names no node
either, so a read never answers it with a format error), JSON columns come back
parsed, and typed edges read from the declaring side.

Edges: the catalog keeps each link as its declaring node wrote it (``inferred =
0``), plus a materialised inverse row. Reads use the declared rows only, so a rel
without an inverse (``discovered-shortcut``) is still seen from both ends: out of
the node that declares it under its own name, into the target under the dialect's
inverse name, or its own name when it has none.
"""
from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any, Iterable, Literal

from ..errors import VineError
from ..forest.catalog import JSON_COLUMNS, NODE_COLUMNS
from ..forest.dialect import Dialect
from ..forest.rules import MASTER_ID, check_id, is_branch_id

# Any number of ids in one bound parameter (a JSON list), so no statement outgrows
# SQLite's variable limit and none is cut into chunks: ``WHERE id IN {IDS_PARAM}``.
IDS_PARAM = "(SELECT value FROM json_each(?))"


def ids_param(ids: Iterable[str]) -> str:
    return json.dumps(list(ids), ensure_ascii=False)


def not_found(node_id: object) -> VineError:
    return VineError("E_NOT_FOUND", f"no node {node_id!r}",
                     "Ids are paths without .md (sales/exchange-policy, sales/_index); "
                     "find one with locate, or list a branch with scan.")


def row_of(db: sqlite3.Connection, node_id: object) -> dict[str, Any]:
    """The node's catalog row, JSON columns parsed; E_NOT_FOUND when there is none."""
    if not isinstance(node_id, str):
        raise not_found(node_id)
    try:
        check_id(node_id)
    except VineError:
        raise not_found(node_id) from None
    row = db.execute(f"SELECT {', '.join(NODE_COLUMNS)} FROM nodes WHERE id = ?", (node_id,)).fetchone()
    if row is None:
        raise not_found(node_id)
    return parsed(dict(zip(NODE_COLUMNS, row)))


def parsed(row: dict[str, Any]) -> dict[str, Any]:
    for key in JSON_COLUMNS:
        if key in row:
            row[key] = json_list(row[key])
    if "stale" in row:
        row["stale"] = bool(row["stale"])
    return row


def json_list(value: Any) -> list[Any]:
    if not value:
        return []
    try:
        data = json.loads(value)
    except (TypeError, ValueError):
        return []
    return data if isinstance(data, list) else []


def branch_of_scope(db: sqlite3.Connection, scope: object) -> str:
    """A branch id from what a caller names a region by: ``sales/_index``, or the
    folder ``sales`` (``""`` and ``"/"`` are the master index)."""
    if not isinstance(scope, str):
        raise not_found(scope)
    name = scope.strip().strip("/")
    if not name:
        return MASTER_ID
    if is_branch_id(name):
        return name
    exists = db.execute("SELECT kind FROM nodes WHERE id = ?", (name,)).fetchone()
    if exists is not None:
        return name  # a banana: the caller says what that means
    return f"{name}/_index"


@dataclass(frozen=True, kw_only=True)
class Scent:
    """What a read shows of a neighbour: its type, kind and summary (None: no such node)."""

    type: str | None
    kind: str | None
    summary: str | None


def scents(db: sqlite3.Connection, ids: Iterable[str]) -> dict[str, Scent]:
    wanted = list(dict.fromkeys(ids))
    rows = db.execute(f"SELECT id, type, kind, summary FROM nodes WHERE id IN {IDS_PARAM}", [ids_param(wanted)])
    out = {node: Scent(type=type_, kind=kind, summary=summary) for node, type_, kind, summary in rows}
    missing = Scent(type=None, kind=None, summary=None)
    return {node: out.get(node, missing) for node in wanted}


@dataclass(frozen=True, kw_only=True)
class Edge:
    rel: str                       # as it reads from the node asked about
    other: str                     # the node at the other end
    direction: Literal["out", "in"]


def typed_edges(db: sqlite3.Connection, node_id: str, dialect: Dialect, direction: str) -> list[Edge]:
    """The node's typed edges: ``out`` (its own links), ``in`` (links to it, under the
    inverse name), or ``both``; in declaration order."""
    edges: list[Edge] = []
    if direction in ("out", "both"):
        rows = db.execute("SELECT rel, target FROM edges WHERE source = ? AND inferred = 0 ORDER BY rowid", (node_id,))
        edges += [Edge(rel=rel, other=target, direction="out") for rel, target in rows]
    if direction in ("in", "both"):
        rows = db.execute("SELECT rel, source FROM edges WHERE target = ? AND inferred = 0 ORDER BY rowid", (node_id,))
        edges += [Edge(rel=dialect.inverse(rel) or rel, other=source, direction="in") for rel, source in rows]
    return edges


def degree(db: sqlite3.Connection, node_id: str) -> int:
    """Typed edges at the node, both ways (the folder tree is not an edge)."""
    return db.execute("SELECT (SELECT COUNT(*) FROM edges WHERE source = ? AND inferred = 0) + "
                      "(SELECT COUNT(*) FROM edges WHERE target = ? AND inferred = 0)", (node_id, node_id)).fetchone()[0]


def children_of(db: sqlite3.Connection, branch_id: str) -> list[tuple[str, str, str, str]]:
    """(id, kind, type, summary) of a branch's physical children: sub-branches first, then by id."""
    return db.execute("SELECT id, kind, type, summary FROM nodes WHERE parent = ? "
                      "ORDER BY kind = 'banana', id", (branch_id,)).fetchall()


def hottest_first(items: list[Any], heat: dict[str, float], key: Any) -> list[Any]:
    """A stable sort by heat, descending: ties keep the order they came in."""
    return sorted(items, key=lambda item: -heat.get(key(item), 0.0))
