"""harvest: one round trip from a question to the evidence, with no model anywhere.

primitives.md, harvest. A deterministic orchestration of the read calls:

1. ``locate(query, k*2)`` and ``sniff(terms, k*2)`` run, and their rankings are
   fused by reciprocal rank fusion (score = sum of 1 / (60 + rank)); the top k
   survive, each saying which ranker found it (``found_by``).
2. Each surviving banana's matches are refined by term scarcity: one sniff scoped
   to the node per term, and the matches merged rarest term first (fewest matching
   lines), one line per term in turn, so a rare exact term is not drowned by a
   common one under the per-node cap. A branch is never refined: a sniff scoped to
   an index reads its whole subtree.
3. Content per node: the whole body when it is at most 1200 tokens; else up to two
   of the sections its matches sit in, while they fit those 1200 tokens; else the
   outline, a map to ``pick(id, section)``. A body is never sliced.
4. A dataset also carries its notes (its ``Notes`` section), always: what a person
   wrote about reading the data matters whether or not the question shares its
   words.

With a canopy and a query embedder, locate's half is hybrid, and the bundle carries
locate's ``dense`` field: whether the vectors ranked it, or why not.

The whole bundle answers within 4000 tokens; past them whole results drop from the
tail and ``truncated`` is set. The calls it is built on are parameters (the Vine
hands in its own locate, sniff and body reader), so every hop is the same call an
agent could make, traced and heated the same way.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Mapping, Sequence

from ..errors import VineError, estimate_tokens
from ..forest.rules import is_branch_id, trail_of
from .contract import BUDGETS, shed_tail
from .dataset_map import notes
from .folding import fold
from .headings import Heading, headings, outline, section_of
from .literal import enclosing
from .sniff import MAX_TERMS, check_k
from .words import STOP_WORDS  # locate's list: one idea of a word without scent

RRF_K = 60
WHOLE_BODY_TOKENS = 1200
SECTIONS_PER_NODE = 2
MATCHES_PER_NODE = 3

Locate = Callable[..., Mapping[str, Any]]  # locate(query, k=5, scope="all", type_filter=None)
Sniff = Callable[..., Mapping[str, Any]]   # sniff(terms, scope=None, k=5, type_filter=None)
BodyOf = Callable[[str], str]              # a node's markdown body


def harvest(query: str, terms: Sequence[str] | None = None, k: int = 3, *, locate: Locate, sniff: Sniff,
            body_of: BodyOf, catalog: Any) -> dict[str, Any]:
    """The top k nodes for ``query`` with their evidence (see the module doc).

    ``terms`` are sniff's literal strings; without them they are the query's content
    words (``sniff_terms``)."""
    if not isinstance(query, str) or not query.strip():
        raise VineError("E_SCHEMA", "harvest needs a query", 'Ask in words, e.g. query="exchange deadlines".')
    check_k(k)
    used = list(terms) if terms is not None else sniff_terms(query)
    found = locate(query, k=k * 2)
    located = [r["id"] for r in found["results"]]
    sniffed = [r["id"] for r in sniff(used, k=k * 2)["results"]] if used else []
    results = []
    for node_id, score, found_by in fuse({"locate": located, "sniff": sniffed})[:k]:
        row = catalog.get(node_id)
        if row is None:
            continue  # gone since it was ranked
        matches = [] if is_branch_id(node_id) else refined_matches(node_id, used, sniff)
        try:
            body = body_of(node_id)
        except VineError:
            body = None  # an unreadable file: the id still leads to it
        result: dict[str, Any] = {
            "id": node_id, "title": row["title"], "type": row["type"], "trail": trail_of(node_id),
            "summary": row["summary"], "score": round(score, 4), "found_by": found_by, "matches": matches,
            "content": [] if body is None else content_of(body, matches),
        }
        if row["type"] == "dataset":
            result["notes"] = (notes(body) or None) if body is not None else None
        results.append(result)
    response: dict[str, Any] = {"query": query, "terms": used, "results": results, "truncated": False}
    if "dense" in found:  # whether locate's half used the canopy's vectors, and why not (as locate says)
        response["dense"] = found["dense"]
    shed_tail(response, "results", BUDGETS["harvest"],
              hint="The bundle was cut to fit 4000 tokens: ask for fewer results (k), or pick(id, section) "
                   "one of the ids.")
    return response


def fuse(rankings: Mapping[str, Sequence[str]]) -> list[tuple[str, float, list[str]]]:
    """Reciprocal rank fusion: (id, score, rankers that found it), best first; ties go
    to the better single rank, then the id."""
    scores: dict[str, float] = {}
    best: dict[str, int] = {}
    found_by: dict[str, list[str]] = {}
    for ranker, ids in rankings.items():
        for rank, node_id in enumerate(dict.fromkeys(ids), start=1):
            scores[node_id] = scores.get(node_id, 0.0) + 1 / (RRF_K + rank)
            best[node_id] = min(best.get(node_id, rank), rank)
            found_by.setdefault(node_id, []).append(ranker)
    order = sorted(scores, key=lambda node_id: (-scores[node_id], best[node_id], node_id))
    return [(node_id, scores[node_id], found_by[node_id]) for node_id in order]


def refined_matches(node_id: str, terms: Sequence[str], sniff: Sniff) -> list[dict[str, Any]]:
    """The node's matches, one scoped sniff per term, merged rarest term first."""
    per_term = []
    for position, term in enumerate(terms):
        found = sniff([term], scope=node_id, k=1)["results"]
        if found:
            per_term.append((found[0]["match_count"], position, list(found[0]["matches"])))
    per_term.sort(key=lambda entry: entry[:2])
    merged: list[dict[str, Any]] = []
    lines: set[int] = set()
    queues = [matches for _, _, matches in per_term]
    while queues and len(merged) < MATCHES_PER_NODE:
        for queue in list(queues):
            while queue and queue[0]["line"] in lines:
                queue.pop(0)  # a line another term already brought
            if not queue:
                queues.remove(queue)
                continue
            match = queue.pop(0)
            merged.append(match)
            lines.add(match["line"])
            if len(merged) == MATCHES_PER_NODE:
                break
    return merged


def content_of(body: str, matches: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The whole body, or the matched sections, or the outline (module doc, step 3)."""
    body_tokens = estimate_tokens(body)
    if body_tokens <= WHOLE_BODY_TOKENS:
        return [{"section": None, "body": body, "body_tokens": body_tokens}]
    heads = headings(body)
    chosen: list[Heading] = []
    for match in matches:
        head = enclosing(heads, int(match["line"]))
        if head is not None and head not in chosen:
            chosen.append(head)
    content, room = [], WHOLE_BODY_TOKENS
    for head in chosen[:SECTIONS_PER_NODE]:
        text = section_of(body, heads, head).rstrip("\n") + "\n"
        tokens = estimate_tokens(text)
        if tokens <= room:
            content.append({"section": head.text, "body": text, "body_tokens": tokens})
            room -= tokens
    if content:
        return content
    return [{"section": None, "outline": outline(body), "body_tokens": body_tokens}]


_EDGES = re.compile(r"^[\W_]+|[\W_]+$")
_PLURAL = (("ções", "ç"), ("ões", ""), ("ies", ""), ("s", ""))  # each leaves a literal stem of both forms


def sniff_terms(query: str) -> list[str]:
    """The query's literal strings worth sniffing for, in query order, at most 8.

    A token holding a digit or inner punctuation (``NF-4412``, ``e-mail``) is kept
    whole; a word is kept unless it is a stop word or under three letters (an
    all-capitals acronym such as ``SP`` stays), and loses a plural ending, since a
    literal stem still finds both forms (``orders`` -> ``order``). With more than 8,
    the codes and then the longest words are kept."""
    kept: list[str] = []
    for token in query.split():
        token = _EDGES.sub("", token)
        if len(token) < 2:
            continue
        code = any(ch.isdigit() for ch in token) or not token.isalpha()
        if not code:
            if fold(token) in STOP_WORDS or (len(token) < 3 and not token.isupper()):
                continue
            token = _singular(token)
        if fold(token) not in (fold(t) for t in kept):
            kept.append(token)
    if len(kept) <= MAX_TERMS:
        return kept
    ranked = sorted(kept, key=lambda t: (not any(ch.isdigit() for ch in t), -len(t), kept.index(t)))
    best = set(ranked[:MAX_TERMS])
    return [t for t in kept if t in best]


def _singular(word: str) -> str:
    lowered = word.lower()
    for ending, replacement in _PLURAL:
        if lowered.endswith(ending) and len(word) - len(ending) >= 4 and not lowered.endswith("ss"):
            return word[: len(word) - len(ending)] + replacement
    return word
