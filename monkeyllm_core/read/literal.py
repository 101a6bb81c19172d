"""The literal scan of one body: which lines hold which terms, and how to show them.

This is sniff's ground truth. The body index only narrows which bodies are worth
scanning; every result sniff returns comes from here, run on the body as it is on
disk, so a result of the indexed search is by construction a result of the plain
scan. A match is a line: ``match_count`` counts lines holding at least one term,
and the at most three lines shown are the ones holding the most distinct terms
(the earliest first among equals), each with the heading it sits under and a
window of about 25 tokens of the line centred on its leftmost hit.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .folding import fold, original_span
from .headings import enclosing, headings

SNIPPET_CHARS = 100  # about 25 tokens at the contract's four characters per token
MATCHES_SHOWN = 3


@dataclass(frozen=True, kw_only=True)
class LineHit:
    line: int                # 0-based line of the body
    terms: frozenset[int]    # which of the folded terms the line holds


class BodyScan:
    """The hits of some folded terms in one body."""

    def __init__(self, body: str, folded_body: str, hits: list[LineHit]) -> None:
        self.body = body
        self.folded_body = folded_body
        self.hits = hits

    @property
    def match_count(self) -> int:
        return len(self.hits)

    def matched_terms(self) -> frozenset[int]:
        return frozenset().union(*(hit.terms for hit in self.hits))

    def shown(self, terms: Sequence[str], limit: int = MATCHES_SHOWN) -> list[dict[str, object]]:
        """The lines worth showing, as ``{"section", "line", "snippet"}`` (line 1-based)."""
        chosen = sorted(self.hits, key=lambda hit: (-len(hit.terms), hit.line))[:limit]
        lines = self.body.split("\n")
        folded_lines = self.folded_body.split("\n")
        heads = headings(lines)
        out: list[dict[str, object]] = []
        for hit in chosen:
            folded_line = folded_lines[hit.line]
            start, term = min((folded_line.find(terms[i]), -len(terms[i]), i) for i in hit.terms)[::2]
            span = original_span(lines[hit.line], start, start + len(terms[term]))
            head = enclosing(heads, hit.line)
            out.append({"section": head.text if head else None, "line": hit.line + 1,
                        "snippet": snippet(lines[hit.line], *span)})
        return out


def scan_body(body: str, terms: Sequence[str]) -> BodyScan:
    """Every line of ``body`` holding one of the folded ``terms`` (none spans a line)."""
    folded = fold(body)
    found: dict[int, set[int]] = {}
    for index, term in enumerate(terms):
        at = folded.find(term)
        line = last = 0
        while at != -1:
            line += folded.count("\n", last, at)  # hits come in order: count only the gap
            found.setdefault(line, set()).add(index)
            last = folded.find("\n", at)
            if last == -1:
                break
            at = folded.find(term, last)  # the next line: a line counts once per term
    hits = [LineHit(line=line, terms=frozenset(found[line])) for line in sorted(found)]
    return BodyScan(body, folded, hits)


def snippet(line: str, start: int, end: int, width: int = SNIPPET_CHARS) -> str:
    """About ``width`` characters of ``line`` centred on ``[start, end)``, the hit kept
    whole, a word cut at either edge dropped (where the line has spaces)."""
    line = line.rstrip("\r")
    if len(line) <= width:
        return line.strip()
    centre = (start + end) // 2
    lo = max(0, min(centre - width // 2, len(line) - width))
    hi = min(len(line), lo + width)
    lo, hi = min(lo, start), max(hi, end)
    if lo > 0 and not line[lo - 1].isspace():
        cut = line.find(" ", lo, start)
        if cut != -1:
            lo = cut + 1
    if hi < len(line) and not line[hi].isspace():
        cut = line.rfind(" ", end, hi)
        if cut != -1:
            hi = cut
    return line[lo:hi].strip()
