"""look: the digest of one node, within 500 tokens (primitives.md, look).

What it is (passport fields from the catalog), what it connects to (typed edges,
at most 12 each way, hottest first, each outgoing one with its target's summary
cut to 25 tokens: a neighbour's scent, not a second digest), and what a pick would
cost (``stats.body_tokens``; ``stats.degree`` is the real count of typed edges,
whatever the cap showed). Then by kind: a banana's ``outline``; a branch's
``children`` (hottest first, summaries cut to 25 tokens), ``cross_trails`` and
``coverage``; a dataset's ``query_manual``, ``sample_rows`` and ``notes``, read
from its body (``dataset_map``), never from the payload.

Over budget the digest is cut in a fixed order, each step only if still needed:
the lists lose items from their tails, the longest list first (edges, children,
cross trails, outline); then ``sample_rows`` goes, because three generated rows
are cheaper to lose than a sentence a person wrote; then the manual's example
queries; then the notes if they could not fit even beside an empty manual; then
the manual's tables from the last, the notes, and the tags. ``truncated`` and a
hint naming the call that shows what was cut are then set. ``fields`` narrows the
digest before any of that (``id`` is always there); an unknown field is E_SCHEMA.

In a Gauntlet session (``ctx.frontier``) the edges and children are ordered by
closeness to the hunt's goal before the cap of 12 and the budget cut them, and the
digest says so: ``frontier: {"ranked": true, "toward": <the query>}``.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Iterable

from ..errors import VineError
from ..forest.branches import CROSS_TRAILS
from .catalog_reads import children_of, degree, row_of, scents, typed_edges
from .context import ReadContext
from .contract import BUDGETS, clip, fits, shed_evenly, wire
from .dataset_map import notes, query_manual, sample_rows
from .headings import outline, section_text

BUDGET = BUDGETS["look"]
EDGE_CAP = 12
SCENT_TOKENS = 25
FIELDS = ("id", "type", "title", "summary", "tags", "confidence", "updated", "edges_out", "edges_in",
          "outline", "children", "cross_trails", "coverage", "query_manual", "sample_rows", "notes", "stats")
_SHED_LISTS = ("edges_in", "edges_out", "children", "cross_trails", "outline")
_FRONTIER_LISTS = ("edges_out", "edges_in", "children")  # the lists the Gauntlet orders
_WIKILINK = re.compile(r"\[\[([^\]\n|#]+)(?:[|#][^\]\n]*)?\]\]")


def look(ctx: ReadContext, node_id: str, fields: Iterable[str] | str | None = None) -> dict[str, Any]:
    wanted = _wanted_fields(fields)
    row = row_of(ctx.db, node_id)
    node_id = row["id"]
    body = _body(ctx, node_id)
    edges_out = typed_edges(ctx.db, node_id, ctx.dialect, "out")
    edges_in = typed_edges(ctx.db, node_id, ctx.dialect, "in")
    children = children_of(ctx.db, node_id) if row["kind"] == "branch" and _any(wanted, "children") else []
    heat = ctx.heat_of([node_id, *(e.other for e in edges_out), *(e.other for e in edges_in),
                        *(child[0] for child in children)])
    digest: dict[str, Any] = {
        "id": node_id, "type": row["type"], "title": row["title"], "summary": row["summary"],
        "tags": row["tags"], "confidence": row["confidence"] if row["confidence"] is not None else 1.0,
        "updated": row["updated"],
    }
    if _any(wanted, "edges_out"):
        summaries = scents(ctx.db, [e.other for e in edges_out])
        digest["edges_out"] = [
            {"rel": e.rel, "target": e.other, "target_summary": _scent(summaries[e.other].summary)}
            for e in ctx.frontier_order(edges_out, heat, lambda e: e.other)[:EDGE_CAP]]
    if _any(wanted, "edges_in"):
        digest["edges_in"] = [{"rel": e.rel, "source": e.other}
                              for e in ctx.frontier_order(edges_in, heat, lambda e: e.other)[:EDGE_CAP]]
    if row["kind"] == "branch":
        digest["children"] = _children_that_could_fit(ctx.frontier_order(children, heat, lambda c: c[0]))
        trails = _cross_trails(body)
        if trails:
            digest["cross_trails"] = trails
        if row["coverage"]:
            digest["coverage"] = row["coverage"]
    else:
        digest["outline"] = outline(body)
    if row["type"] == "dataset" or row["payload_type"] == "sqlite":
        manual = query_manual(body)
        digest["query_manual"] = manual if manual is not None else {"tables": {}, "example_queries": []}
        samples = sample_rows(body)
        if samples is not None:
            digest["sample_rows"] = samples
        written = notes(body)
        if written is not None:
            digest["notes"] = written
    body_tokens = row["body_tokens"]
    digest["stats"] = {"body_tokens": body_tokens if body_tokens is not None else 0,
                       "degree": degree(ctx.db, node_id), "heat": round(heat[node_id], 4)}
    if wanted is not None:
        digest = {key: value for key, value in digest.items() if key == "id" or key in wanted}
    if ctx.frontier is not None and any(key in digest for key in _FRONTIER_LISTS):
        digest["frontier"] = ctx.frontier.report
    return fit_digest(digest, totals={"children": len(children)})


def _children_that_could_fit(children: list[tuple[str, str, str, str]]) -> list[dict[str, Any]]:
    """The children's entries, hottest first, stopping once they alone are longer than
    the whole budget: a branch of ten thousand is not clipped and measured in full."""
    entries, length = [], 0
    for child, _kind, _type, summary in children:
        entry = {"id": child, "summary": _scent(summary)}
        entries.append(entry)
        length += len(wire(entry)) + 1
        if length > BUDGET * 4:
            break
    return entries


def _wanted_fields(fields: Iterable[str] | str | None) -> set[str] | None:
    if fields is None:
        return None
    names = [fields] if isinstance(fields, str) else list(fields)
    unknown = [name for name in names if name not in FIELDS]
    if unknown or not all(isinstance(name, str) for name in names):
        raise VineError("E_SCHEMA", f"look: unknown field(s) {', '.join(map(repr, unknown))}",
                        f"Fields: {', '.join(FIELDS)}.")
    return set(names)


def _any(wanted: set[str] | None, *names: str) -> bool:
    return wanted is None or any(name in wanted for name in names)


def _body(ctx: ReadContext, node_id: str) -> str:
    """The body, or empty when the file cannot be read: the catalog still answers
    the digest (pick is where an unreadable file is an error)."""
    try:
        return ctx.read_body(node_id)
    except VineError:
        return ""


def _scent(summary: str | None) -> str | None:
    return None if summary is None else clip(summary, SCENT_TOKENS)


def _cross_trails(body: str) -> list[dict[str, Any]]:
    """The ``## Cross trails`` lines: where each points and what it says about it."""
    text = section_text(body, CROSS_TRAILS) or ""
    trails = []
    for line in text.splitlines():
        if not line.startswith(("- ", "* ")):
            continue
        link = _WIKILINK.search(line)
        said = _WIKILINK.sub(" ", line[2:])
        said = " ".join(said.replace("->", " ").replace("→", " ").split()).strip(" —–-:")
        trails.append({"target": link.group(1).strip() if link else None, "text": clip(said, SCENT_TOKENS)})
    return trails


def fit_digest(digest: dict[str, Any], totals: dict[str, int] | None = None) -> dict[str, Any]:
    """Cut the digest to the budget in the module doc's order, saying what went.

    The hint is part of the response, so it is measured too: after it is written
    the cutting goes on, with the hint in place, until the whole response fits."""
    if fits(digest, BUDGET):
        return digest
    whole = {key: len(digest[key]) for key in _SHED_LISTS if isinstance(digest.get(key), list)}
    whole.update({key: total for key, total in (totals or {}).items() if key in whole})
    lost: dict[str, int] = {}
    dropped: list[str] = []
    digest["truncated"] = True
    digest["hint"] = ""
    for _ in range(len(_LATER_STEPS) + 2):
        for key, count in shed_evenly(digest, [key for key in _SHED_LISTS if key in digest], BUDGET).items():
            lost[key] = lost.get(key, 0) + count
        for step, label in _LATER_STEPS:
            if fits(digest, BUDGET):
                break
            if step(digest):
                dropped.append(label)
        shown = [f"{whole[key] - len(digest.get(key) or [])} of {whole[key]} {key}" for key in lost]
        digest["hint"] = _hint(digest["id"], shown + dropped)
        if fits(digest, BUDGET):
            break
    return digest


def _drop(key: str) -> Callable[[dict[str, Any]], bool]:
    def step(digest: dict[str, Any]) -> bool:
        return digest.pop(key, None) is not None
    return step


def _drop_examples(digest: dict[str, Any]) -> bool:
    manual = digest.get("query_manual")
    if not manual or not manual.get("example_queries"):
        return False
    manual["example_queries"] = []
    return True


def _shed_manual_tables(digest: dict[str, Any]) -> bool:
    manual = digest.get("query_manual")
    if not manual:
        return False
    dropped = False
    for kind in ("views", "tables"):
        names = list(manual.get(kind) or {})
        while names and not fits(digest, BUDGET):
            del manual[kind][names.pop()]
            dropped = True
    return dropped


def _shed_tags(digest: dict[str, Any]) -> bool:
    return bool(digest.get("tags")) and bool(shed_evenly(digest, ["tags"], BUDGET))


def _drop_notes_that_cannot_fit(digest: dict[str, Any]) -> bool:
    """Notes too long to fit even beside an empty manual go before the manual's
    tables: keeping them would cost every table and still not fit."""
    if "notes" not in digest:
        return False
    manual = digest.get("query_manual") or {}
    bare = dict(digest, query_manual={key: {} if key in ("tables", "views") else value
                                      for key, value in manual.items()})
    if fits(bare, BUDGET):
        return False
    del digest["notes"]
    return True


_LATER_STEPS = (
    (_drop("sample_rows"), "sample_rows"),
    (_drop_examples, "example_queries"),
    (_drop_notes_that_cannot_fit, "notes"),
    (_shed_manual_tables, "query_manual tables"),
    (_drop("notes"), "notes"),
    (_shed_tags, "tags"),
)


def _hint(node_id: str, cut: list[str]) -> str:
    ways = []
    joined = " ".join(cut)
    if "edges" in joined:
        ways.append(f"move('{node_id}', direction='both') for every edge")
    if "children" in joined:
        ways.append(f"scan('{node_id}') for the children")
    if any(word in joined for word in ("outline", "sample_rows", "notes", "query_manual", "example_queries")):
        ways.append(f"pick('{node_id}', section=...) for a section")
    ways.append("look with fields=[...] for less")
    return f"Digest over {BUDGET} tokens; dropped {', '.join(cut)}. Use {'; '.join(ways)}."
