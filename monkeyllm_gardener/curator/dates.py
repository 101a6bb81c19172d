"""Finding (year, month) pairs in text, in the formats people actually write.

Used by the summary contract: dated content must carry at least its month and year
in the summary, because search matches summaries and a date left in the body is
invisible to a time-scoped search. Recognised: ISO ``2026-03-14`` and ``2026-03``,
``14/03/2026`` / ``03/14/2026`` / ``14.03.2026`` (both readings when ambiguous),
month names and abbreviations in English, Portuguese, Spanish, French and German
followed by a year (``March 2026``, ``14 de março de 2026``, ``Mar. 14, 2026``),
and, in summaries only, quarters (``Q1 2026`` covers January to March).
"""
from __future__ import annotations

import re
import unicodedata

YearMonth = tuple[int, int]

_MONTH_WORDS: dict[int, tuple[str, ...]] = {
    1: ("january", "jan", "janeiro", "enero", "ene", "janvier", "janv", "januar", "jänner"),
    2: ("february", "feb", "fevereiro", "fev", "febrero", "fevrier", "fevr", "fev", "februar"),
    3: ("march", "mar", "marco", "marzo", "mars", "marz"),
    4: ("april", "apr", "abril", "abr", "avril", "avr"),
    5: ("may", "maio", "mayo", "mai"),
    6: ("june", "jun", "junho", "junio", "juin", "juni"),
    7: ("july", "jul", "julho", "julio", "juillet", "juil", "juli"),
    8: ("august", "aug", "agosto", "ago", "aout"),
    9: ("september", "sep", "sept", "setembro", "set", "septiembre", "septembre"),
    10: ("october", "oct", "outubro", "out", "octubre", "octobre", "oktober", "okt"),
    11: ("november", "nov", "novembro", "noviembre", "novembre"),
    12: ("december", "dec", "dezembro", "dez", "diciembre", "dic", "decembre", "dezember"),
}
MONTH_BY_WORD = {word: month for month, words in _MONTH_WORDS.items() for word in words}
# Short words that are also ordinary words ("may", "mar", "set", "out") need a year
# right after them (at most a day number and punctuation in between) to count.
_YEAR = r"(19\d\d|20\d\d)"
_MONTH_ALTERNATION = "|".join(sorted(MONTH_BY_WORD, key=len, reverse=True))
_MONTH_NAME_THEN_YEAR = re.compile(
    rf"\b({_MONTH_ALTERNATION})\b\.?(?:[\s,]+\d{{1,2}}(?:st|nd|rd|th)?)?[\s,]*(?:de\s+|of\s+)?{_YEAR}\b"
)
# "January to March 2026", "janeiro a março de 2026": a month name a few words
# before a year that another month name is attached to.
_MONTH_RANGE = re.compile(
    rf"\b({_MONTH_ALTERNATION})\b\.?\s*(?:-|–|—|to|a|al|au|bis|through|until)\s*"
    rf"({_MONTH_ALTERNATION})\b\.?[\s,]*(?:de\s+|of\s+)?{_YEAR}\b"
)
_ISO = re.compile(rf"\b{_YEAR}-(0[1-9]|1[0-2])(?:-(\d\d))?\b")
_NUMERIC = re.compile(rf"\b(\d{{1,2}})[/.](\d{{1,2}})[/.]{_YEAR}\b")
_QUARTER = re.compile(rf"\bq([1-4])\s*[/-]?\s*{_YEAR}\b|\b{_YEAR}\s*[/-]?\s*q([1-4])\b")


def fold(text: str) -> str:
    """Lowercase with accents folded: "Março" -> "marco"."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()


def year_months(text: str, *, quarters: bool = False) -> set[YearMonth]:
    """Every (year, month) the text states. ``quarters`` also expands ``Q1 2026``."""
    folded = fold(text)
    found: set[YearMonth] = set()
    for match in _ISO.finditer(folded):
        found.add((int(match.group(1)), int(match.group(2))))
    for match in _NUMERIC.finditer(folded):
        first, second, year = int(match.group(1)), int(match.group(2)), int(match.group(3))
        for month in (second, first):  # day/month first (most of the world), then US order
            if 1 <= month <= 12:
                found.add((year, month))
    for match in _MONTH_NAME_THEN_YEAR.finditer(folded):
        found.add((int(match.group(2)), MONTH_BY_WORD[match.group(1)]))
    for match in _MONTH_RANGE.finditer(folded):
        year = int(match.group(3))
        start, end = MONTH_BY_WORD[match.group(1)], MONTH_BY_WORD[match.group(2)]
        found.update((year, month) for month in range(min(start, end), max(start, end) + 1))
    if quarters:
        for match in _QUARTER.finditer(folded):
            quarter = int(match.group(1) or match.group(4))
            year = int(match.group(2) or match.group(3))
            found.update((year, month) for month in range(3 * quarter - 2, 3 * quarter + 1))
    return found


def describe_year_month(value: YearMonth) -> str:
    """``(2026, 3)`` -> ``"March 2026"``, for messages handed back to the model."""
    year, month = value
    return f"{_MONTH_WORDS[month][0].capitalize()} {year}"
