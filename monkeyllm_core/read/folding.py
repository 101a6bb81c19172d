"""Case and accent folding for sniff's literal search, with the way back to the original text.

sniff is literal but forgiving: ``NF-4412`` finds ``nf-4412``, ``relatorio`` finds
``Relatório``, ``STRASSE`` finds ``Straße``. Terms and bodies are folded the same
way and compared as plain substrings, so "literal" means exactly: the folded term
is a substring of the folded line.

Folding is per character, which is what keeps it a homomorphism (the fold of a
line is the folds of its characters, joined): a match found in the folded line is
mapped back to its span in the original line by summing the lengths of the
characters' folds, which the snippet needs. A character's fold is its NFKD
decomposition, case-folded (Unicode full case folding, so ``ß`` is ``ss``),
decomposed again (case folding can produce a decomposable character, ``İ``), minus
every combining mark (canonical combining class not 0: the accents of Latin, Greek
and Cyrillic, Hebrew and Arabic points, Thai tone marks), then recomposed (NFC),
so a Hangul syllable stays one syllable and ``하`` does not match inside ``한``.

Folding never produces or removes a line break, so the folded body has the same
lines as the original.
"""
from __future__ import annotations

import unicodedata

FOLD_VERSION = "1"  # part of the body index's format: a change of fold rebuilds it


def _fold_char(ch: str) -> str:
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", ch).casefold())
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return unicodedata.normalize("NFC", bare)


class _FoldTable(dict):
    """``str.translate`` table: code point -> its fold, computed once per character seen."""

    def __missing__(self, code: int) -> str:
        folded = _fold_char(chr(code))
        self[code] = folded
        return folded


_TABLE = _FoldTable()
_ASCII = frozenset(map(chr, range(128)))


def fold(text: str) -> str:
    """The folded text.

    Done in C where the rule allows: ``lower()`` is the fold of ASCII, and of every
    other character the fold of its lowercase is its own fold (``Σ``, final or not,
    is ``σ``), so only the few distinct characters still unfolded after it are
    replaced, one ``str.replace`` each. That is exact because a fold is a fixed
    point: the characters a replacement brings in are already folded. Both
    properties are tested over the whole BMP."""
    lowered = text.lower()
    if lowered.isascii():
        return lowered
    for ch in set(lowered).difference(_ASCII):
        folded = _TABLE[ord(ch)]
        if folded != ch:
            lowered = lowered.replace(ch, folded)
    return lowered


def original_span(line: str, start: int, end: int) -> tuple[int, int]:
    """The span of ``line`` whose fold is ``fold(line)[start:end]``.

    A character whose fold is empty (a lone combining mark) belongs to the span of
    the character before it; one whose fold is longer (``ß``) is inside the span
    when any part of its fold is."""
    if line.isascii():
        return start, end
    at = 0
    first = last = None
    for index, ch in enumerate(line):
        size = len(_TABLE[ord(ch)])
        if first is None and at + size > start:
            first = index
        if at < end:
            last = index + 1
        at += size
        if at >= end and first is not None:
            break
    if first is None:
        return len(line), len(line)
    return first, max(last or first, first)
