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
from collections import Counter
from itertools import groupby, islice
from pathlib import Path
from typing import Any, Callable, Collection, Iterable, Iterator, Sequence

from ..errors import VineError
from ..forest.rules import MASTER_ID, is_branch_id, trail_of
from .body_index import BodyIndex, Copy, Lookup, Scope, read_body
from .context import DEFAULT_ALPHA, HeatOf
from .contract import BUDGETS, shed_tail, wire
from .folding import fold
from .literal import MATCHES_SHOWN, line_counter, nonblank_lines, scan_folded

MAX_TERMS = 8
MIN_TERM_CHARS = 2
MIN_BOUNDED_CHARS = 3  # see _line_bounds


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
    allowed = set(_ids_in_scope(catalog, target, wanted)) if wanted is not None else None
    lookup = bodies.lookup(folded, target)
    if lookup is None:  # no usable index: every body in scope is read from its file
        in_scope = allowed if allowed is not None else _ids_in_scope(catalog, target, None)
        lookup = _read_from_files(bodies.root, sorted(in_scope), len(folded))
    matched, ranked = _ranked(lookup, folded, allowed, heat_of, alpha)
    results = _shown(bodies, islice(ranked, k), folded)
    response: dict[str, Any] = {"results": results, "scanned_nodes": scanned, "truncated": matched > k}
    if response["truncated"]:
        response["hint"] = (f"{matched} nodes matched; the first {k} are shown. Narrow with "
                            "scope=<branch>, add a term, or raise k.")
    shed_tail(response, "results", BUDGETS["sniff"],
              hint="The answer was cut to fit 800 tokens: narrow with scope=<branch> or a rarer term, "
                   "then pick(id, section) the node you want.")
    return response


def _read_from_files(root: Path, ids: Iterable[str], terms: int) -> Lookup:
    """What the body index would say, every body read from its file (of a wanted
    type: the others are never read)."""
    copies: dict[int, Copy] = {}
    for node_id in ids:
        body = read_body(root, node_id)
        if body:
            text = fold(body)
            copies[len(copies)] = (node_id, text, nonblank_lines(text))
    return Lookup(copies=copies, lines=[None] * terms, at_most=set(), maybe=copies.keys())


def _ranked(lookup: Lookup, folded: list[str], allowed: set[str] | None, heat_of: HeatOf,
            alpha: float) -> tuple[int, Iterator[tuple[str, str, float, float]]]:
    """How many bodies hold a term, and their (id, folded body, score, heat), best first.

    The score needs only the terms a body holds. The lines, the tie-break, are
    known from the index for most bodies holding one term (``body_index``), and
    bounded for the others; those are counted for one score at a time, as the
    caller reads on (``_by_lines``): results past the budget are never counted, and
    the bodies holding every term usually come first and are few."""
    copies = lookup.copies
    bounds, held, loose = _line_bounds(lookup, folded)
    if allowed is not None:
        bounds = {rowid: bound for rowid, bound in bounds.items() if copies[rowid][0] in allowed}
    heat = heat_of(copies[rowid][0] for rowid in bounds) if bounds else {}
    hot = {node_id: float(value) for node_id, value in heat.items() if value}
    scored: dict[float, dict[int, int]] = {}  # score -> {rowid: its lines or a bound}
    if held is None and not hot:  # one term, nothing hot: one score, 1 / 1 * (1 + alpha * 0.0)
        if bounds:
            scored[1.0] = bounds
    else:
        for rowid, bound in bounds.items():
            strength = (held[rowid] if held is not None else 1) / len(folded)
            scored.setdefault(strength * (1 + alpha * hot.get(copies[rowid][0], 0.0)), {})[rowid] = bound

    def id_of(rowid: int) -> str:
        return copies[rowid][0]

    lines_in = line_counter(folded)

    def count(rowid: int) -> int:
        return lines_in(copies[rowid][1])

    def best_first() -> Iterator[tuple[str, str, float, float]]:
        for score in sorted(scored, reverse=True):
            for rowid in _by_lines(scored[score], loose, id_of, count):
                node_id, text, _nonblank = copies[rowid]
                yield node_id, text, score, hot.get(node_id, 0.0)
    return len(bounds), best_first()


def _line_bounds(lookup: Lookup, folded: list[str]) -> tuple[dict[int, int], Counter[int] | None, set[int]]:
    """Every body holding a term -> its matching lines, or a bound on them for the
    bodies in the set returned (``loose``); and, for several terms, how many each holds.

    A term the index cannot place is looked for in each candidate copy: its hits (one
    C-level count) bound its lines, and so do the copy's non-blank lines; a term under
    three characters crowds every line (`ba`), so counting its hits costs more than
    they bound, and the non-blank lines alone bound it."""
    copies = lookup.copies
    loose = set(lookup.at_most)
    per_term: list[dict[int, int]] = []
    for term, known in zip(folded, lookup.lines):
        if known is not None:
            per_term.append(known)
            continue
        found: dict[int, int] = {}
        if len(term) >= MIN_BOUNDED_CHARS:
            for rowid in lookup.maybe:
                _id, text, nonblank = copies[rowid]
                hits = text.count(term)
                if hits:
                    found[rowid] = min(hits, nonblank)
        else:
            for rowid in lookup.maybe:
                _id, text, nonblank = copies[rowid]
                if term in text:
                    found[rowid] = nonblank
        loose.update(found)
        per_term.append(found)
    if len(per_term) == 1:
        return per_term[0], None, loose
    bounds: dict[int, int] = {}
    held: Counter[int] = Counter()
    for found in per_term:
        held.update(found.keys())
        shared = found.keys() & bounds.keys()  # their terms' lines may be the same lines
        merged = dict(found)
        for rowid in shared:
            merged[rowid] = min(merged[rowid] + bounds[rowid], copies[rowid][2])
        loose |= shared
        bounds.update(merged)
    return bounds, held, loose


def _by_lines(tied: dict[int, int], loose: set[int], id_of: Callable[[int], str],
              count: Callable[[int], int]) -> Iterator[int]:
    """Equal scores, most matching lines first, then id, counting lines only as far
    as the caller reads on. ``tied``: each body's lines, or for a rowid in ``loose``
    a bound on them from above, which ``count`` makes exact.

    The bodies whose lines are known come in order (``_in_order``). The others wait
    in groups of equal bound, highest first; a group is counted before the next body
    is yielded if its bound could beat or tie that body's lines, so no body still
    uncounted can come before one yielded. The order is exactly the full sort's."""
    known = tied if not loose else {rowid: lines for rowid, lines in tied.items() if rowid not in loose}
    ready = _in_order(known, id_of)
    head = next(ready, None)
    waiting = [rowid for rowid in tied if rowid in loose] if loose else []
    waiting.sort(key=tied.__getitem__, reverse=True)
    groups = groupby(waiting, key=tied.__getitem__)
    group = next(groups, None)
    counted: list[tuple[int, str, int]] = []  # a heap, of the waiting bodies counted
    while True:
        best = counted[0] if counted and (head is None or counted[0] < head) else head
        if group is not None and (best is None or group[0] >= -best[0]):
            for rowid in group[1]:
                heapq.heappush(counted, (-count(rowid), id_of(rowid), rowid))
            group = next(groups, None)
            continue
        if best is None:
            return
        if best is head:
            head = next(ready, None)
        else:
            heapq.heappop(counted)
        yield best[2]


def _in_order(lines: dict[int, int], id_of: Callable[[int], str]) -> Iterator[tuple[int, str, int]]:
    """(-lines, id, rowid) of every body, most lines first, then id: one C-level sort
    by lines, and ids looked up only for the groups of equal lines the caller reaches
    (a common word's bodies are thousands; the answer shows a handful)."""
    by_lines = sorted(lines, key=lines.__getitem__, reverse=True)
    for matching, group in groupby(by_lines, key=lines.__getitem__):
        for node_id, rowid in sorted((id_of(rowid), rowid) for rowid in group):
            yield -matching, node_id, rowid


def _shown(bodies: BodyIndex, ranked: Iterator[tuple[str, str, float, float]],
           folded: list[str]) -> list[dict[str, Any]]:
    """The results, their matches shown from the files on disk, as many as may fit."""
    results: list[dict[str, Any]] = []
    room = BUDGETS["sniff"] * 4  # characters: past them no further result can fit
    # only the results that may show are ranked to the end and read from disk: the
    # next is not even asked for once there is no room
    while room >= 0 and (result := next(ranked, None)) is not None:
        node_id, text, score, node_heat = result
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
