"""From a question someone typed to the words entry search should look for.

locate takes questions as people type them ("which region closed the most
orders in 2026?", "Relatório de exportações?"), in English or Portuguese, and
must never hand SQLite's FTS5 a syntax error. So a query is never passed through:
it is cut into words (letters and digits only, so no quote, hyphen or operator
survives), lowercased, folded the way the catalog's ``unicode61 remove_diacritics
2`` tokenizer folds the index (Latin accents only: ``exportações`` is
``exportacoes``, Cyrillic and CJK are left as they are), stripped of the stop words
of both languages, and reduced by a light stemmer to a stem searched as a prefix,
so ``orders``, ``order`` and ``ordering`` meet at ``order*``, ``closed`` and
``close`` at ``clos*``, ``exportações`` and ``exportação`` at ``exporta*``.

The stemmer only strips endings (plural, gender, ``-ing``/``-ed``, ``-ção``/``-ções``)
and never leaves a stem under four letters; numbers and words of three letters or
fewer are matched whole. Over-stemming costs a little precision, never a crash,
and BM25 still ranks the closest matches first.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

MAX_TERMS = 16
MIN_STEM = 4

# Written for this engine: function words that carry no scent in questions, in
# English and Portuguese, compared after folding (so ``é`` and ``e`` both go).
STOP_WORDS = frozenset("""
a about above after again against all also am an and any are as at be been before being
below between both but by can could did do does doing done down during each either else
ever every few for from further get got had has have having he her here hers him his how
i if in into is it its itself just me more most much must my no nor not of off on once
only or other our ours out over own please same shall she should show so some such tell
than that the their theirs them then there these they this those through to too under
until up upon very was we were what whats when where which while who whom whose why
will with within without would you your yours
ao aos as ate com como da das de dela dele deles depois do dos e ela elas ele eles em
entre era eram essa esse esta estao estas este estes eu foi foram ha isso isto ja lhe
mais mas me menos meu minha muito muitos na nao nas nem no nos nossa nosso num numa o
onde os ou para pela pelas pelo pelos por porque pra qual quais quando que quem se sem
ser seu seus sim sob sobre sua suas tambem tem tinha todas todo todos tu um uma umas uns
voce voces
""".split())

# Endings stripped by the light stemmer, longest first; each leaves a stem that is
# searched as a prefix. English and Portuguese share one list: the language of a
# question is not known, and a Portuguese ending never ends a plain English word.
_ENDINGS = (
    "acoes", "icoes", "coes", "ations", "ation", "acao", "icao", "cao", "mente",
    "ings", "ing", "oes", "ies", "ied", "ais", "al", "ed", "es", "os", "as", "ao",
    "s", "y", "e", "o", "a",
)


@dataclass(frozen=True, kw_only=True)
class Term:
    """One word of a query as FTS5 will match it."""

    word: str      # the folded word as typed
    stem: str      # what is searched
    prefix: bool   # stem searched as a prefix (``"stem"*``)

    def match(self) -> str:
        """The FTS5 phrase: quoted, so no word is ever read as an operator."""
        return f'"{self.stem}"*' if self.prefix else f'"{self.stem}"'


class _LatinFolding(dict):
    """``str.translate`` table, filled on first sight of each character: a Latin
    letter with marks decomposes to an ASCII letter plus combining marks, and folds
    to that letter; anything else stays as it is."""

    def __missing__(self, code: int) -> str:
        ch = chr(code)
        base = unicodedata.normalize("NFD", ch)
        folded = base[0] if (base[0].isascii() and base[0].isalpha()
                             and all(unicodedata.combining(c) for c in base[1:])) else ch
        self[code] = folded
        return folded


_FOLDING = _LatinFolding()
_WORD = re.compile(r"[^\W_]+")  # runs of letters and digits (str.isalnum), as unicode61 cuts them


def fold(text: str) -> str:
    """Lowercase, with the accents of Latin letters removed (as the index folds them)."""
    text = unicodedata.normalize("NFC", text).lower()
    return text if text.isascii() else text.translate(_FOLDING)


def words_of(text: str) -> list[str]:
    """The folded runs of letters and digits, in order."""
    return _WORD.findall(fold(text))


def stem(word: str) -> str:
    """The word without its inflectional ending, never shorter than MIN_STEM letters."""
    if len(word) <= MIN_STEM or not word.isalpha():
        return word
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= MIN_STEM:
            return word[: -len(ending)]
    return word


def query_terms(query: str) -> list[Term]:
    """The content words of ``query`` as search terms, deduplicated, at most MAX_TERMS.

    Stop words and one-letter words are dropped; a query made of nothing else keeps
    its words (``The Who`` still searches for something)."""
    words = [w for w in words_of(query) if len(w) > 1 or w.isdigit()]
    content = [w for w in words if w not in STOP_WORDS] or words
    terms: list[Term] = []
    seen: set[str] = set()
    for word in content:
        if len(word) <= 3 or not word.isalpha():
            term = Term(word=word, stem=word, prefix=False)
        else:
            term = Term(word=word, stem=stem(word), prefix=True)
        if term.stem in seen:
            continue
        seen.add(term.stem)
        terms.append(term)
        if len(terms) == MAX_TERMS:
            break
    return terms
