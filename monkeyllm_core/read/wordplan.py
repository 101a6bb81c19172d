"""Words of folded text, and what a literal term says about the words of a body holding it.

The body index stores, per body, the set of its words, tokenized by FTS5's
``ascii`` tokenizer: a word is a maximal run of ASCII letters and digits and of
every character above U+007F. That rule is simple enough to reproduce here
exactly (``word_lines``), which is what makes the index sound: the words this module
computes for a body are the words FTS5 holds for it, and the vocabulary the index
keeps is exactly the words it has seen.

A literal term (already folded) cut by the same rule gives pieces, and a body
holding the term holds, for each piece:

- a piece with a separator on both sides inside the term: that exact word;
- the last piece, when the term ends inside a word: a word that starts with it;
- the first piece, when the term starts inside a word: a word that ends with it
  (one that contains it, when the term is a single open piece).

A body holding every piece's word is only a candidate (the pieces may sit apart);
the literal scan decides. A term with no piece at all (only separators, ``->``)
says nothing, and every body is a candidate.

A term that is one open piece (word characters only, ``xchang``) says more: every
place it occurs lies inside one word (a separator would end the word), so the lines
holding it are exactly the lines holding a word that contains it. A body holding
one such word has that word's line count as the term's (``word_lines``), which is
what lets the index rank by lines without scanning (``body_index``).
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from itertools import chain
from typing import Literal

_WORD = re.compile(r"[0-9A-Za-z\u0080-\U0010ffff]+")

PieceKind = Literal["exact", "prefix", "suffix", "infix"]


@dataclass(frozen=True, kw_only=True)
class Piece:
    word: str
    kind: PieceKind


def word_lines(folded: str) -> Counter[str]:
    """Each distinct word of folded text, as the ``ascii`` tokenizer cuts them, with
    the number of lines it is on (a word never holds a line break)."""
    return Counter(chain.from_iterable(map(set, map(_WORD.findall, folded.split("\n")))))


def pieces_of(folded_term: str) -> list[Piece]:
    """What a body must hold, word by word, to hold ``folded_term``."""
    found = list(_WORD.finditer(folded_term))
    pieces = []
    for index, match in enumerate(found):
        open_left = index == 0 and match.start() == 0
        open_right = index == len(found) - 1 and match.end() == len(folded_term)
        if open_left and open_right:
            kind: PieceKind = "infix"
        elif open_left:
            kind = "suffix"
        elif open_right:
            kind = "prefix"
        else:
            kind = "exact"
        pieces.append(Piece(word=match.group(), kind=kind))
    return pieces
