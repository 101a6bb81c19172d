"""The literal scan of one body: which lines hold which terms, and how to show them.

This is sniff's ground truth, the same with or without the body index: a folded
body (a file's, or the index's folded copy of it) is scanned term by term, and the
lines shown are then taken from the original text. A match is a line:
``match_count`` counts lines holding at least one term, and the at most three lines
shown are the ones holding the most distinct terms (the earliest first among
equals), each with the heading it sits under and a window of about 25 tokens of
the line centred on its leftmost hit.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Sequence

from .folding import original_span
from .headings import Heading, headings

SNIPPET_CHARS = 100  # about 25 tokens at the contract's four characters per token
MATCHES_SHOWN = 3


class BodyScan:
    """The hits of some folded terms in one folded body: for each matching line (0-based),
    the indexes of the terms it holds (plain dicts and sets: a common term makes
    thousands of these per call)."""

    __slots__ = ("folded_body", "lines", "terms_held")

    def __init__(self, folded_body: str, lines: dict[int, set[int]], terms_held: int) -> None:
        self.folded_body = folded_body
        self.lines = lines
        self.terms_held = terms_held

    @property
    def match_count(self) -> int:
        return len(self.lines)

    def shown(self, body: str, terms: Sequence[str], limit: int = MATCHES_SHOWN) -> list[dict[str, object]]:
        """The lines worth showing, as ``{"section", "line", "snippet"}`` (line 1-based),
        taken from ``body``, the original text whose fold was scanned."""
        chosen = sorted(self.lines.items(), key=lambda item: (-len(item[1]), item[0]))[:limit]
        lines = body.split("\n")
        folded_lines = self.folded_body.split("\n")
        heads = headings(body)
        out: list[dict[str, object]] = []
        for line, held in chosen:
            folded_line = folded_lines[line]
            start, term = min((folded_line.find(terms[i]), -len(terms[i]), i) for i in held)[::2]
            span = original_span(lines[line], start, start + len(terms[term]))
            head = enclosing(heads, line + 1)
            out.append({"section": head.text if head else None, "line": line + 1,
                        "snippet": snippet(lines[line], *span)})
        return out


def enclosing(heads: list[Heading], line: int) -> Heading | None:
    """The nearest heading at or above the 1-based ``line``; None before the first."""
    current = None
    for head in heads:
        if head.line > line:
            break
        current = head
    return current


def scan_folded(folded: str, terms: Sequence[str]) -> BodyScan:
    """Every line of a folded body holding one of the folded ``terms`` (none spans a line)."""
    lines: dict[int, set[int]] = {}
    held = 0
    for index, term in enumerate(terms):
        at = folded.find(term)
        if at != -1:
            held += 1
        line = last = 0
        while at != -1:
            line += folded.count("\n", last, at)  # hits come in order: count only the gap
            if line in lines:
                lines[line].add(index)
            else:
                lines[line] = {index}
            last = folded.find("\n", at)
            if last == -1:
                break
            at = folded.find(term, last)  # the next line: a line counts once per term
    return BodyScan(folded, lines, held)


def nonblank_lines(folded: str) -> int:
    """The lines holding something other than whitespace: a term never is only
    whitespace (``sniff.check_terms``), so no term matches more lines than these."""
    return sum(map(bool, map(str.strip, folded.split("\n"))))


def line_counter(terms: Sequence[str]) -> Callable[[str], int]:
    """The matching lines of a folded body (``scan_folded``'s ``match_count``), without
    its per-hit Python loop, for counting many bodies against the same ``terms``.

    One C-level pass per body: ``term.*`` matches from a line's first hit to its end
    (``.`` is anything but a line break; SRE runs ``.*`` about twice as fast as the
    same ``[^\n]*``), so the next match is on a later line and the matches are the
    matching lines (a term holds no line break and at least two characters, so no
    match is empty). The terms are one alternation, compiled once, which counts a
    line holding several of them once; a term the body lacks matches nowhere in it."""
    findall = _lines_holding(tuple(terms)).findall
    return lambda folded: len(findall(folded))


@lru_cache(maxsize=256)
def _lines_holding(terms: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("(?:" + "|".join(map(re.escape, terms)) + ").*")


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
