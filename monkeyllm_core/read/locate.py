"""locate: a question in, ranked entry points out (primitives.md, locate).

Searches curated metadata only (title, aliases, tags, summary; never bodies),
through the catalog's FTS5 table with BM25, title weighted heaviest and summary
lightest, over bananas and branches alike (``scope``: all | branches | bananas;
``type_filter``: one type or a list).

The question becomes search terms in ``words`` (so nothing a person types can be
an FTS5 syntax error). AND first: the nodes that carry every term. When fewer
than ``k`` do, OR fills in, and each OR-only candidate is rated by how many of the
terms it carries, so a node with three of four terms outranks one with a single
term, however rare: AND-preferred, OR-tolerant. The fill-in searches the rarer
terms only, up to about 1,000 documents (``_selective``): BM25 scores every
document a query matches, and that is what keeps a question with a very common
word cheap on a large forest. Strength, in (0, 1], is

    (terms matched / terms asked) x (1 + bm25 / best bm25) / 2, over its maximum,

and the score is strength x (1 + alpha x heat). Heat reorders the candidates:
the best 3k (at least 15) by lexical rank, plus every warm node that matched, so
a warm node is lifted even when it ties with a hundred others; heat never admits
a node that matched nothing. ``truncated`` is true when more than ``k`` nodes matched, and when the
800-token budget dropped results from the tail.

Hybrid (primitives.md: "the RRF fusion of lexical and vector ranks when a Canopy
index and a matching query embedder are both present"): the lexical candidates are
ranked by strength, the canopy's nearest ``3k`` (at least 15) nodes within scope
and type by cosine (``canopy/dense.py``), and each node's strength becomes its
reciprocal-rank fusion, sum of 1 / (60 + rank) over the lists it is in (k = 60,
the constant of Cormack et al., which the fusion is known to be insensitive to),
over its maximum, so again in (0, 1]; then heat applies as above. A node only the
vector half found enters the results: that is what hybrid buys. The response
then carries ``dense: {"used": true, "model", "stale"}``, or ``{"used": false,
"reason"}`` when the canopy could not take part (another model, an embedder that
failed, a canopy file that is not whole) and the ranking is BM25 alone; without a
canopy file, or with no embedder configured, there is no ``dense`` field and
nothing changes.
"""
from __future__ import annotations

import heapq
import json
import sqlite3
from operator import itemgetter
from typing import Any, Iterable

from ..errors import VineError
from ..forest.catalog import BM25_RANK
from ..forest.rules import trail_of
from .catalog_reads import IDS_PARAM, ids_param
from .context import ReadContext
from .contract import BUDGETS, shed_tail
from .words import Term, fold, query_terms

BUDGET = BUDGETS["locate"]
SCOPES = {"all": None, "branches": "branch", "bananas": "banana"}
MAX_K = 50
OR_UNION_CAP = 1000  # documents an OR fill-in may score (see _selective)
RRF_K = 60


def locate(ctx: ReadContext, query: str, k: int = 5, scope: str = "all",
           type_filter: str | Iterable[str] | None = None) -> dict[str, Any]:
    if not isinstance(query, str):
        raise VineError("E_SCHEMA", "locate: query must be a string", "Ask a question, e.g. 'exchange policy deadlines'.")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise VineError("E_SCHEMA", f"locate: k must be a whole number from 1 to {MAX_K}, not {k!r}",
                        "k is how many entry points to return; 3 to 5 is usual.")
    if scope not in SCOPES:
        raise VineError("E_SCHEMA", f"locate: scope must be all, branches or bananas, not {scope!r}",
                        "branches lands on whole regions, bananas on leaves.")
    types = _types(ctx, type_filter)
    terms = query_terms(query)
    if not terms:
        return {"results": [], "truncated": False}
    pool = max(3 * k, 15)
    filters, params = _filters(SCOPES[scope], types)
    warm = ctx.warm() if ctx.alpha else None  # one snapshot of the heat for the whole call
    warm_ids = _warm_rowids(ctx, warm)
    everything = _search(ctx, " AND ".join(t.match() for t in terms), filters, params, pool + 1, warm_ids)
    matched = {node: len(terms) for node in everything}
    if len(everything) <= k and len(terms) > 1:
        anything = _search(ctx, " OR ".join(t.match() for t in _selective(ctx, terms)), filters, params,
                           pool + 1, warm_ids)
        extra = [node for node in anything if node not in everything]
        matched.update(_terms_matched(ctx, terms, extra))
        everything.update({node: anything[node] for node in extra})
    dense_ranks, dense = ctx.dense.ranks(query, SCOPES[scope], types, pool) if ctx.dense else (None, None)
    candidates = _ranked(ctx, everything, matched, len(terms), warm)
    if dense_ranks is not None:
        candidates = _fused(ctx, candidates, dense_ranks, warm)
    more_than_k = len(candidates) > k
    results = _results(ctx, candidates[:k])
    response: dict[str, Any] = {"results": results, "truncated": more_than_k}
    if dense is not None:
        response["dense"] = dense
    shed_tail(response, "results", BUDGET,
              hint=f"Results dropped by the {BUDGET}-token budget. Lower k, or narrow the query or the scope.")
    return response


def _types(ctx: ReadContext, type_filter: str | Iterable[str] | None) -> list[str]:
    if type_filter is None:
        return []
    types = [type_filter] if isinstance(type_filter, str) else list(type_filter)
    unknown = [t for t in types if t not in ctx.dialect.types]
    if unknown or not types:
        raise VineError("E_SCHEMA", f"locate: unknown type(s) {', '.join(map(repr, unknown)) or '(none given)'}",
                        f"Types: {', '.join(sorted(ctx.dialect.types))}.")
    return types


def _filters(kind: str | None, types: list[str]) -> tuple[str, list[Any]]:
    sql, params = "", []
    if kind:
        sql += " AND n.kind = ?"
        params.append(kind)
    if types:
        sql += f" AND n.type IN ({', '.join('?' * len(types))})"
        params += types
    return sql, params


def _selective(ctx: ReadContext, terms: list[Term]) -> list[Term]:
    """The terms the OR fill-in searches: the rarest first, while the documents they
    are in add up to OR_UNION_CAP (the rarest always). BM25 scores every document
    an OR matches, so one word in every tenth summary would make each fill-in score
    a tenth of the forest; a word that common weighs little in BM25 anyway, and
    the candidates are still rated by every term they carry (``_terms_matched``)."""
    counted = []
    for place, term in enumerate(terms):
        df = _document_frequency(ctx, term)
        if df is None:
            return terms  # no vocabulary table here: search them all
        counted.append((df, place, term))
    chosen: list[Term] = []
    total = 0
    for df, _place, term in sorted(counted, key=lambda c: (c[0], c[1])):
        if chosen and total + df > OR_UNION_CAP:
            break
        chosen.append(term)
        total += df
    return [term for term in terms if term in chosen]


def _document_frequency(ctx: ReadContext, term: Term) -> int | None:
    """Documents holding the term (for a prefix, an upper bound: the sum over the
    words it starts), from an fts5vocab view made once per connection in temp."""
    if term.prefix:
        sql, params = "SELECT sum(doc) FROM temp.nodes_vocab WHERE term >= ? AND term < ?", (term.stem, term.stem + "\U0010ffff")
    else:
        sql, params = "SELECT doc FROM temp.nodes_vocab WHERE term = ?", (term.stem,)
    for attempt in (1, 2):
        try:
            row = ctx.db.execute(sql, params).fetchone()
            return int(row[0] or 0) if row else 0
        except sqlite3.OperationalError:
            if attempt == 2:
                return None
            try:
                ctx.db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.nodes_vocab USING fts5vocab(main, nodes_fts, row)")
            except sqlite3.Error:
                return None
    return None


def _warm_rowids(ctx: ReadContext, warm: dict[str, float] | None) -> set[int]:
    """The catalog rowids of the warm nodes (the full-text table shares them)."""
    if not warm:
        return set()
    rows = ctx.db.execute(f"SELECT rowid FROM nodes WHERE id IN {IDS_PARAM}", [ids_param(warm)])
    return {rowid for (rowid,) in rows}


def _search(ctx: ReadContext, match: str, filters: str, params: list[Any], limit: int,
            warm: set[int]) -> dict[str, float]:
    """id -> BM25 strength (higher is better) of the best ``limit`` matches (ties by
    rowid), and of every warm match.

    BM25 is what a query costs: FTS5 computes it for every row the query matches,
    whatever the LIMIT. So one statement scores every match once, inside the
    full-text table (joined with the node rows only to filter: in a join SQLite
    would compute it twice), and the best rows and the warm ones are picked here;
    only those are then named. A second statement for the warm rows would match
    the query again, and a ``rowid IN (...)`` given to FTS5 would gather the
    query's term statistics once per id."""
    scored = f"SELECT rowid, {BM25_RANK} AS rank FROM nodes_fts WHERE nodes_fts MATCH ?"
    if filters:
        rows = ctx.db.execute(f"SELECT f.rowid, f.rank FROM ({scored}) AS f JOIN nodes n ON n.rowid = f.rowid "
                              f"WHERE 1{filters}", [match, *params]).fetchall()
    else:
        rows = ctx.db.execute(scored, [match]).fetchall()
    # FTS5 yields rows by rowid and nsmallest is stable: ties go to the lower rowid
    chosen = dict(heapq.nsmallest(limit, rows, key=itemgetter(1)))
    if warm:
        chosen.update((rowid, rank) for rowid, rank in rows if rowid in warm)
    if not chosen:
        return {}
    names = dict(ctx.db.execute(f"SELECT rowid, id FROM nodes WHERE rowid IN {IDS_PARAM}", [json.dumps(list(chosen))]))
    return {names[rowid]: -rank for rowid, rank in chosen.items() if rowid in names}


def _terms_matched(ctx: ReadContext, terms: list[Term], ids: list[str]) -> dict[str, int]:
    """How many of ``terms`` each of ``ids`` carries in its metadata, read the way the
    index reads it (folded like ``words``; a prefix term starts a word, an exact one
    is a whole word), so no second full-text query per term is needed."""
    counts = dict.fromkeys(ids, 0)
    rows = ctx.db.execute(f"SELECT id, title, aliases, tags, summary FROM nodes WHERE id IN {IDS_PARAM}",
                          [ids_param(ids)])
    for node, *texts in rows:
        folded = fold(" ".join(str(t or "") for t in texts))
        counts[node] = sum(1 for term in terms if _carries(folded, term))
    return counts


def _carries(folded: str, term: Term) -> bool:
    """Whether a word of ``folded`` starts with the stem (is the stem, for an exact term)."""
    stem, at = term.stem, folded.find(term.stem)
    while at != -1:
        starts = at == 0 or not folded[at - 1].isalnum()
        after = at + len(stem)
        if starts and (term.prefix or after == len(folded) or not folded[after].isalnum()):
            return True
        at = folded.find(stem, at + 1)
    return False


def _ranked(ctx: ReadContext, bm25: dict[str, float], matched: dict[str, int], asked: int,
            warm: dict[str, float] | None) -> list[tuple[str, float, float, float]]:
    """(id, score, strength, heat), best first. ``warm``: the call's snapshot of every
    warm node (None when heat is off: the heat shown is then read for these ids)."""
    best = max(bm25.values(), default=0.0) or 1.0
    raw = {node: max(matched.get(node, 1), 1) / asked * (1.0 + max(value, 0.0) / best) / 2.0
           for node, value in bm25.items()}
    top = max(raw.values(), default=1.0) or 1.0
    heat = {node: warm.get(node, 0.0) for node in raw} if warm is not None else ctx.heat_of(raw)
    ranked = []
    for node, value in raw.items():
        strength = value / top
        ranked.append((node, ctx.ranked(strength, heat[node]), strength, heat[node]))
    ranked.sort(key=lambda item: (-item[1], -item[2], item[0]))
    return ranked


def _fused(ctx: ReadContext, lexical: list[tuple[str, float, float, float]], dense: list[str],
           warm: dict[str, float] | None) -> list[tuple[str, float, float, float]]:
    """The lexical candidates and the vector ranks as one list: strength is the RRF
    of the two ranks (the lexical one by strength alone, before heat), normalised."""
    by_strength = sorted(lexical, key=lambda item: (-item[2], item[0]))
    fused: dict[str, float] = {}
    for ranking in ([node for node, *_ in by_strength], dense):
        for rank, node in enumerate(ranking, start=1):
            fused[node] = fused.get(node, 0.0) + 1.0 / (RRF_K + rank)
    top = max(fused.values(), default=1.0)
    heat = {node: warm.get(node, 0.0) for node in fused} if warm is not None else ctx.heat_of(fused)
    ranked = [(node, ctx.ranked(value / top, heat[node]), value / top, heat[node]) for node, value in fused.items()]
    ranked.sort(key=lambda item: (-item[1], -item[2], item[0]))
    return ranked


def _results(ctx: ReadContext, candidates: list[tuple[str, float, float, float]]) -> list[dict[str, Any]]:
    ids = [node for node, *_ in candidates]
    if not ids:
        return []
    rows = {row[0]: row for row in ctx.db.execute(
        f"SELECT id, kind, type, title, summary, coverage FROM nodes WHERE id IN ({', '.join('?' * len(ids))})", ids)}
    results = []
    for node, score, _strength, heat in candidates:
        _id, kind, type_, title, summary, coverage = rows[node]
        result: dict[str, Any] = {"id": node, "kind": kind, "type": type_, "title": title, "summary": summary,
                                  "trail": trail_of(node), "score": round(score, 4), "heat": round(heat, 4)}
        if kind == "branch":
            result["coverage"] = coverage
        results.append(result)
    return results
