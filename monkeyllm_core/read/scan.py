"""scan: a branch's children filtered by passport fields, from the catalog alone.

primitives.md, scan: no file is opened, so the call costs one SQL statement (two
when some nodes are warm) whatever the branch holds. ``filter`` keys:

- ``type``, ``kind``, ``payload_type``, ``source``: one value or a list of them;
- ``tags_any`` / ``tags_all``: at least one of / every one of these tags
  (compared without regard to ASCII case);
- ``updated_after`` / ``updated_before``: an ISO date; strictly after / before it;
- ``confidence_below``: a number; a node without a confidence counts as 1.0.

An unknown filter key, a value of the wrong shape, or an unknown field is
E_SCHEMA naming the allowed ones. ``recursive`` takes the whole subtree instead
of the direct children. Nodes come hottest first (then by id), at most ``limit``;
``truncated`` says more matched, or the 800-token budget dropped the tail. Every
node has its ``id`` plus the requested ``fields``; the catalog's JSON columns
(``tags``, ``aliases``) and ``trail`` come back as lists, ``heat`` is computed.
In a Gauntlet session the matches are ordered by closeness to the hunt's goal
before ``limit`` and the budget cut them, and the response says ``frontier:
{"ranked": true, "toward": ...}``.
"""
from __future__ import annotations

import re
from typing import Any, Iterable

from ..errors import VineError
from ..forest.catalog import NODE_COLUMNS
from ..forest.rules import MASTER_ID, parent_of, trail_of
from .catalog_reads import IDS_PARAM, branch_of_scope, ids_param, parsed, row_of
from .context import ReadContext
from .contract import BUDGETS, shed_tail

BUDGET = BUDGETS["scan"]
MAX_LIMIT = 1000
DEFAULT_FIELDS = ("type", "title", "summary")
COMPUTED_FIELDS = ("trail", "heat")
FIELDS = (*NODE_COLUMNS, *COMPUTED_FIELDS)
_ONE_OR_MANY = {"type": "type", "kind": "kind", "payload_type": "payload_type", "source": "source"}
FILTERS = (*_ONE_OR_MANY, "tags_any", "tags_all", "updated_after", "updated_before", "confidence_below")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}([T ][0-9:.+Z-]*)?")


def scan(ctx: ReadContext, parent_id: str, filter: dict[str, Any] | None = None,  # noqa: A002 (primitives.md)
         fields: Iterable[str] | str | None = None, recursive: bool = False, limit: int = 50) -> dict[str, Any]:
    columns = _fields(fields)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise VineError("E_SCHEMA", f"scan: limit must be a whole number from 1 to {MAX_LIMIT}, not {limit!r}",
                        "Ask for fewer fields to fit more nodes in one answer.")
    where, params = _where(filter)
    branch = row_of(ctx.db, branch_of_scope(ctx.db, parent_id))
    if branch["kind"] != "branch":
        raise VineError("E_SCHEMA", f"scan: {branch['id']} is a banana, not a branch",
                        f"scan lists what a branch holds; look('{branch['id']}') or move('{branch['id']}') "
                        "show a banana's neighbours.")
    selected = [c for c in dict.fromkeys(["id", *columns]) if c in NODE_COLUMNS]
    warm = ctx.warm()
    matching = _matching if ctx.frontier is None else _matching_toward_goal
    rows = matching(ctx, selected, branch["id"], recursive, where, params, limit, warm)
    nodes = [_shaped(row, columns, warm) for row in rows[:limit]]
    response: dict[str, Any] = {"nodes": nodes, "truncated": len(rows) > limit}
    if ctx.frontier is not None:
        response["frontier"] = ctx.frontier.report
    shed_tail(response, "nodes", BUDGET, hint=f"Nodes dropped by the {BUDGET}-token budget, not by the filter. "
                                              "Ask for fewer fields, lower the limit, or narrow the filter.")
    return response


def _fields(fields: Iterable[str] | str | None) -> list[str]:
    names = list(DEFAULT_FIELDS) if fields is None else [fields] if isinstance(fields, str) else list(fields)
    unknown = [name for name in names if name not in FIELDS]
    if unknown:
        raise VineError("E_SCHEMA", f"scan: unknown field(s) {', '.join(map(repr, unknown))}",
                        f"Fields: {', '.join(FIELDS)}.")
    return [name for name in dict.fromkeys(names) if name != "id"]


def _subtree(branch_id: str, recursive: bool) -> tuple[list[str], list[Any]]:
    """The SQL for "under this branch": its direct children, or every id below its folder."""
    if not recursive:
        return ["parent = ?"], [branch_id]
    if branch_id == MASTER_ID:
        return ["id != ?"], [branch_id]
    folder = branch_id[: -len("_index")]  # "sales/"; "0" sorts right after "/", so the range is the folder
    return ["id > ?", "id < ?", "id != ?"], [folder, folder[:-1] + "0", branch_id]


def _under(node_id: str, branch_id: str, recursive: bool) -> bool:
    """The same test in Python, for the few warm ids."""
    if node_id == branch_id:
        return False
    if not recursive:
        return parent_of(node_id) == branch_id
    return branch_id == MASTER_ID or node_id.startswith(branch_id[: -len("_index")])


def _where(filter: dict[str, Any] | None) -> tuple[list[str], list[Any]]:  # noqa: A002
    if filter is None:
        return [], []
    if not isinstance(filter, dict):
        raise VineError("E_SCHEMA", "scan: filter must be a mapping of filter names to values",
                        f"Filters: {', '.join(FILTERS)}.")
    unknown = [key for key in filter if key not in FILTERS]
    if unknown:
        raise VineError("E_SCHEMA", f"scan: unknown filter(s) {', '.join(map(repr, unknown))}",
                        f"Filters: {', '.join(FILTERS)}.")
    where: list[str] = []
    params: list[Any] = []
    for key, column in _ONE_OR_MANY.items():
        if key in filter:
            values = _strings(key, filter[key])
            where.append(f"{column} IN ({', '.join('?' * len(values))})")
            params += values
    if "tags_any" in filter:
        tags = [tag.lower() for tag in _strings("tags_any", filter["tags_any"])]
        if all(_plain(tag) for tag in tags):
            where.append("(" + " OR ".join("tags LIKE ? ESCAPE '\\'" for _ in tags) + ")")
            params += [_like(tag) for tag in tags]
        where.append(f"EXISTS (SELECT 1 FROM json_each(nodes.tags) WHERE lower(value) IN ({', '.join('?' * len(tags))}))")
        params += tags
    if "tags_all" in filter:
        for tag in _strings("tags_all", filter["tags_all"]):
            if _plain(tag):
                where.append("tags LIKE ? ESCAPE '\\'")
                params.append(_like(tag))
            where.append("EXISTS (SELECT 1 FROM json_each(nodes.tags) WHERE lower(value) = ?)")
            params.append(tag.lower())
    for key, op in (("updated_after", ">"), ("updated_before", "<")):
        if key in filter:
            value = filter[key]
            if not isinstance(value, str) or not _DATE.fullmatch(value):
                raise VineError("E_SCHEMA", f"scan: {key} must be an ISO date (YYYY-MM-DD), not {value!r}",
                                f"e.g. {{'{key}': '2026-03-01'}}.")
            # updated is a date: "after 2026-03-01" is from 2026-03-02 on
            where.append(f"substr(updated, 1, {len(value)}) {op} ?")
            params.append(value)
    if "confidence_below" in filter:
        value = filter["confidence_below"]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise VineError("E_SCHEMA", f"scan: confidence_below must be a number, not {value!r}",
                            "e.g. {'confidence_below': 0.8} for unconfirmed knowledge.")
        where.append("COALESCE(confidence, 1.0) < ?")
        params.append(float(value))
    return where, params


def _plain(tag: str) -> bool:
    """A tag JSON writes as it is (no escape), so its quoted form is a substring of the column."""
    return '"' not in tag and "\\" not in tag and tag.isprintable()


def _like(tag: str) -> str:
    """A LIKE pattern for the quoted tag in the JSON text: a cheap string test that
    skips most rows before json_each reads the list exactly (LIKE ignores ASCII case,
    as the exact test does)."""
    escaped = tag.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f'%"{escaped}"%'


def _strings(key: str, value: Any) -> list[str]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise VineError("E_SCHEMA", f"scan: {key} must be a string or a non-empty list of strings, not {value!r}",
                        f"e.g. {{'{key}': ['a', 'b']}}.")
    return values


def _matching(ctx: ReadContext, selected: list[str], branch_id: str, recursive: bool, where: list[str],
              params: list[Any], limit: int, warm: dict[str, float]) -> list[dict[str, Any]]:
    """The first ``limit + 1`` matches, hottest first then by id.

    Only warm nodes can outrank the id order, and they are few (the heat table is
    the size of what is warm): those under the branch are picked out in Python and
    fetched by id, the cold ones read in id order up to what is still needed, so
    the statement stops early in a big subtree."""
    columns = ", ".join(selected)
    hot: list[dict[str, Any]] = []
    candidates = [node for node in warm if _under(node, branch_id, recursive)]
    if candidates:
        rows = ctx.db.execute(f"SELECT {columns} FROM nodes WHERE id IN {IDS_PARAM}"
                              + "".join(f" AND {w}" for w in where), [ids_param(candidates), *params])
        hot = sorted((dict(zip(selected, r)) for r in rows), key=lambda row: (-warm[row["id"]], row["id"]))
    if len(hot) > limit:
        return [parsed(row) for row in hot]
    scope, scope_params = _subtree(branch_id, recursive)
    cold = [dict(zip(selected, r)) for r in ctx.db.execute(
        f"SELECT {columns} FROM nodes WHERE {' AND '.join([*scope, *where])} ORDER BY id LIMIT ?",
        [*scope_params, *params, limit + 1 + len(hot)])]
    taken = {row["id"] for row in hot}
    rows_out = hot + [row for row in cold if row["id"] not in taken]
    return [parsed(row) for row in rows_out[: limit + 1]]


def _matching_toward_goal(ctx: ReadContext, selected: list[str], branch_id: str, recursive: bool,
                          where: list[str], params: list[Any], limit: int,
                          warm: dict[str, float]) -> list[dict[str, Any]]:
    """The first ``limit + 1`` matches in the Gauntlet's order. That order needs every
    match's id (the closest may sort last by id), so the ids are read in full,
    ordered (hottest first, then closest to the goal), and only the first are
    fetched with their columns."""
    scope, scope_params = _subtree(branch_id, recursive)
    ids = [node for (node,) in ctx.db.execute(
        f"SELECT id FROM nodes WHERE {' AND '.join([*scope, *where])} ORDER BY id", [*scope_params, *params])]
    chosen = ctx.frontier_order(ids, warm, lambda node: node)[: limit + 1]
    rows = {row[0]: dict(zip(selected, row)) for row in ctx.db.execute(
        f"SELECT {', '.join(selected)} FROM nodes WHERE id IN {IDS_PARAM}", [ids_param(chosen)])}
    return [parsed(rows[node]) for node in chosen if node in rows]


def _shaped(row: dict[str, Any], columns: list[str], heat: dict[str, float]) -> dict[str, Any]:
    node: dict[str, Any] = {"id": row["id"]}
    for column in columns:
        if column == "trail":
            node["trail"] = trail_of(row["id"])
        elif column == "heat":
            node["heat"] = round(heat.get(row["id"], 0.0), 4)
        else:
            node[column] = row[column]
    return node
