"""sniff: where does this exact string appear? A literal search over node bodies.

primitives.md, sniff. The tracker for what nobody lifts into a summary: an invoice
number, an error code, a SKU, a proper name. It reads bodies and never curated
metadata (that is locate's half of the split), so it reads bananas only: a branch
index's body is its children's summaries, replicated. Terms are literal, compared
case- and accent-insensitively (``folding``); a match is a line, and a node shows
at most three of its matching lines with ``match_count`` the real total.

Ranking: strength x (1 + alpha x heat), strength the share of the requested terms
the node holds, ties broken by match_count (then id, so equal answers are equal
bytes). AND-preferred, OR-tolerant: three of four terms beat one term forty times.
Past ``k``, or past the 800-token budget, whole nodes drop from the tail and
``truncated`` says so, with a hint. ``scanned_nodes`` is the number of bodies
searched: every banana in scope that passes ``type_filter`` (the body index answers
for the ones it proves cannot match, ``body_index``). Only the results shown are
read from disk, each checked against the index's copy.
"""
from __future__ import annotations

import heapq
from itertools import islice
from operator import itemgetter
from typing import Any, Collection, Iterable, Iterator, Sequence

from ..errors import VineError
from ..forest.rules import MASTER_ID, is_branch_id, trail_of
from .body_index import BodyIndex, Scope, read_body
from .context import DEFAULT_ALPHA, HeatOf
from .contract import BUDGETS, shed_tail, wire
from .folding import fold
from .literal import MATCHES_SHOWN, scan_folded, terms_and_lines

MAX_TERMS = 8
MIN_TERM_CHARS = 2
MIN_BOUNDED_CHARS = 3  # see _ranked


def no_heat(ids: Iterable[str]) -> dict[str, float]:
    return {}


def sniff(bodies: BodyIndex, terms: Sequence[str] | str, *, scope: str | None = None, k: int = 5,
          type_filter: str | Sequence[str] | None = None, heat_of: HeatOf = no_heat,
          alpha: float = DEFAULT_ALPHA, types: Collection[str] | None = None) -> dict[str, Any]:
    """The nodes whose bodies hold ``terms``, best first (see the module doc).

    ``types`` is the dialect's node types, to refuse an unknown ``type_filter``;
    ``heat_of`` gives the heat of the matched ids (the session's, when there is one)."""
    folded = check_terms(terms)
    check_k(k)
    wanted = check_type_filter(type_filter, types)
    catalog = bodies.catalog
    target = resolve_scope(catalog, scope)
    scanned = _count_in_scope(catalog, target, wanted)
    texts = bodies.candidates(folded, target)
    if texts is None:  # no usable index: every body in scope is read from its file
        texts = {}
        for node_id in _ids_in_scope(catalog, target, wanted):  # of a wanted type: the others are never read
            body = read_body(bodies.root, node_id)
            if body:
                texts[node_id] = fold(body)
    matched, ranked = _ranked(catalog, texts, folded, wanted, target, heat_of, alpha)
    results = _shown(bodies, islice(ranked, k), folded)
    response: dict[str, Any] = {"results": results, "scanned_nodes": scanned, "truncated": matched > k}
    if response["truncated"]:
        response["hint"] = (f"{matched} nodes matched; the first {k} are shown. Narrow with "
                            "scope=<branch>, add a term, or raise k.")
    shed_tail(response, "results", BUDGETS["sniff"],
              hint="The answer was cut to fit 800 tokens: narrow with scope=<branch> or a rarer term, "
                   "then pick(id, section) the node you want.")
    return response


def _ranked(catalog: Any, texts: dict[str, str], folded: list[str], wanted: set[str] | None, target: Scope,
            heat_of: HeatOf, alpha: float) -> tuple[int, Iterator[tuple[str, str, float, float]]]:
    """How many bodies hold a term, and their (id, folded body, score, heat), best first.

    The score needs only the terms a body holds. The lines, the tie-break, are
    counted for one score at a time, as the caller reads on (``_by_lines``):
    results past the budget are never counted, and the bodies holding every term
    usually come first and are few."""
    allowed = set(_ids_in_scope(catalog, target, wanted)) if wanted is not None else None
    # a term's hits (one C-level count) bound its lines, which lets _by_lines count
    # few of a common word's thousands of bodies; a term under three characters
    # crowds every line (`ba`), so its bound prunes nothing and costs more than `in`
    bounded = all(len(term) >= MIN_BOUNDED_CHARS for term in folded)
    found = []  # (id, folded body, terms held, hits or 0)
    for node_id, text in texts.items():
        if bounded:
            counts = [text.count(term) for term in folded]
            held, hits = len(counts) - counts.count(0), sum(counts)
        else:
            held, hits = sum(1 for term in folded if term in text), 0
        if held and (allowed is None or node_id in allowed):
            found.append((node_id, text, held, hits))
    heat = heat_of([node_id for node_id, *_ in found]) if found else {}
    scored: dict[float, list[tuple[int, str, tuple[str, str, float, float]]]] = {}
    for node_id, text, held, hits in found:
        node_heat = float(heat.get(node_id, 0.0))
        score = held / len(folded) * (1 + alpha * node_heat)
        scored.setdefault(score, []).append((-hits, node_id, (node_id, text, score, node_heat)))

    def best_first() -> Iterator[tuple[str, str, float, float]]:
        for score in sorted(scored, reverse=True):
            if bounded:
                yield from _by_lines(scored[score], folded)
            else:
                yield from _sorted_by_lines(scored[score], folded)
    return len(found), best_first()


def _by_lines(tied: list[tuple[int, str, tuple[str, str, float, float]]],
              folded: list[str]) -> Iterator[tuple[str, str, float, float]]:
    """Equal scores, most matching lines first (then id), counting lines only as far
    as the caller reads on. ``tied``: (-hits, id, result) of each body.

    Counting a body's lines is a regex pass, and a common word ties thousands of
    bodies. Its hits bound its lines from above, so the bodies are taken in order
    of that bound, and a body whose lines are counted is yielded once no body still
    uncounted could beat it: not even one whose lines equal its bound. The order is
    exactly the full sort's."""
    uncounted = tied
    heapq.heapify(uncounted)
    counted: list[tuple[int, str, tuple[str, str, float, float]]] = []
    patience = max(64, len(tied) // 4)  # past it the bound is not pruning: count the rest and sort
    while uncounted or counted:
        if counted and (not uncounted or counted[0][:2] < uncounted[0][:2]):
            yield heapq.heappop(counted)[2]
            continue
        if len(counted) >= patience:
            yield from _sorted_by_lines([*counted, *uncounted], folded, known=len(counted))
            return
        _bound, node_id, entry = heapq.heappop(uncounted)
        heapq.heappush(counted, (-terms_and_lines(entry[1], folded)[1], node_id, entry))


def _sorted_by_lines(tied: list[tuple[int, str, tuple[str, str, float, float]]], folded: list[str],
                     known: int = 0) -> Iterator[tuple[str, str, float, float]]:
    """Every body's lines counted, then one sort (the first ``known`` are counted already)."""
    keyed = tied[:known] + [(-terms_and_lines(entry[1], folded)[1], node_id, entry)
                            for _hits, node_id, entry in tied[known:]]
    keyed.sort(key=itemgetter(0, 1))
    return (entry for *_key, entry in keyed)


def _shown(bodies: BodyIndex, ranked: Iterable[tuple[str, str, float, float]],
           folded: list[str]) -> list[dict[str, Any]]:
    """The results, their matches shown from the files on disk, as many as may fit."""
    results: list[dict[str, Any]] = []
    room = BUDGETS["sniff"] * 4  # characters: past them no further result can fit
    for node_id, text, score, node_heat in ranked:
        if room < 0:
            break  # only the results that may show are read from disk
        body = read_body(bodies.root, node_id)
        scan = scan_folded(text, folded)
        if body is None or fold(body) != text:
            bodies.forget(node_id)  # the index held an older body: it reads it again next time
            if not body or not (scan := scan_folded(fold(body), folded)).lines:
                continue
        node_type, title = _described(bodies.catalog, node_id)
        results.append({
            "id": node_id, "type": node_type, "title": title, "trail": trail_of(node_id),
            "score": round(score, 4), "heat": round(node_heat, 4), "match_count": scan.match_count,
            "truncated_matches": scan.match_count > MATCHES_SHOWN, "matches": scan.shown(body, folded),
        })
        room -= len(wire(results[-1]))
    return results


def check_terms(terms: Sequence[str] | str) -> list[str]:
    """The folded, distinct terms; E_SCHEMA unless 1-8 terms of at least 2 characters."""
    if isinstance(terms, str):
        terms = [terms]
    if not isinstance(terms, (list, tuple)) or not all(isinstance(term, str) for term in terms):
        raise VineError("E_SCHEMA", "terms must be a list of strings",
                        'Pass the exact strings to find, e.g. terms=["NF-4412", "exchange"].')
    if not 1 <= len(terms) <= MAX_TERMS:
        raise VineError("E_SCHEMA", f"sniff takes 1 to {MAX_TERMS} terms, not {len(terms)}",
                        "Keep the rarest exact strings; locate handles questions in words.")
    folded: list[str] = []
    for term in terms:
        if "\n" in term or "\r" in term:
            raise VineError("E_SCHEMA", f"term {term!r} spans lines", "A term is matched within one line.")
        if len(fold(term).strip()) < MIN_TERM_CHARS:
            raise VineError("E_SCHEMA", f"term {term!r} is shorter than {MIN_TERM_CHARS} characters",
                            "Every term needs at least 2 characters (after case and accent folding).")
        if fold(term) not in folded:
            folded.append(fold(term))
    return folded


def check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise VineError("E_SCHEMA", f"k must be a positive integer, not {k!r}", "For example k=5.")


def check_type_filter(type_filter: str | Sequence[str] | None, types: Collection[str] | None) -> set[str] | None:
    """The node types asked for (None: every type); E_SCHEMA for a type the dialect lacks."""
    if type_filter is None:
        return None
    wanted = [type_filter] if isinstance(type_filter, str) else type_filter
    if not isinstance(wanted, (list, tuple)) or not wanted or not all(isinstance(t, str) for t in wanted):
        raise VineError("E_SCHEMA", f"type_filter must be a type or a list of types, not {type_filter!r}",
                        'For example type_filter="dataset".')
    unknown = sorted(set(wanted) - set(types)) if types is not None else []
    if unknown:
        raise VineError("E_SCHEMA", f"unknown node type(s): {', '.join(unknown)}",
                        f"Types of this forest: {', '.join(sorted(types or ()))}.")
    return set(wanted)


def resolve_scope(catalog: Any, scope: str | None) -> Scope:
    """A scope names one node, or a branch (by its folder, ``sales``, or its index,
    ``sales/_index``) whose subtree is read; None or the master index: everything."""
    if scope is None or scope in ("", MASTER_ID):
        return Scope()
    if not isinstance(scope, str):
        raise VineError("E_SCHEMA", f"scope must be a node or branch id, not {scope!r}", 'For example scope="sales".')
    if is_branch_id(scope) and catalog.exists(scope):
        return Scope(prefix=scope[: -len("_index")])
    if catalog.exists(scope):
        return Scope(node=scope)
    if catalog.exists(f"{scope.rstrip('/')}/_index"):
        return Scope(prefix=scope.rstrip("/") + "/")
    raise VineError("E_NOT_FOUND", f"no node or branch {scope!r} to sniff in",
                    "Scope is a branch (sales or sales/_index) or a node id; locate with scope='branches' finds one.")


def _scope_sql(target: Scope, wanted: set[str] | None) -> tuple[str, list[Any]]:
    where, params = target.sql("id")
    if wanted is not None:
        where += f" AND type IN ({', '.join('?' * len(wanted))})"
        params += sorted(wanted)
    return where, params


def _count_in_scope(catalog: Any, target: Scope, wanted: set[str] | None) -> int:
    where, params = _scope_sql(target, wanted)
    return catalog.db.execute(f"SELECT COUNT(*) FROM nodes WHERE kind = 'banana'{where}", params).fetchone()[0]


def _ids_in_scope(catalog: Any, target: Scope, wanted: set[str] | None) -> list[str]:
    """The bananas in scope (of a wanted type, when some are asked for)."""
    where, params = _scope_sql(target, wanted)
    return [row[0] for row in catalog.db.execute(f"SELECT id FROM nodes WHERE kind = 'banana'{where}", params)]


def _described(catalog: Any, node_id: str) -> tuple[str | None, str | None]:
    """(type, title) of a banana shown."""
    row = catalog.db.execute("SELECT type, title FROM nodes WHERE id = ?", (node_id,)).fetchone()
    return (row[0], row[1]) if row else (None, None)
