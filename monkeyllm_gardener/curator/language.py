"""A small stopword-frequency language guesser for en/pt/es/fr/de.

Good enough to catch a summary written in English for a Portuguese document; not a
general language identifier. It answers None unless the evidence is clear, and the
contract only enforces "same language" when both texts are confidently detected.
"""
from __future__ import annotations

import re
from collections import Counter

# Words chosen to be frequent in one language and rare in the others (Portuguese and
# Spanish share "de", "a", "que", so those carry no weight here).
STOPWORDS: dict[str, frozenset[str]] = {
    "en": frozenset(
        "the and of to is are was were with for this that from by on which it its be "
        "have has not or at an as will would their they these those".split()
    ),
    "pt": frozenset(
        "o os da do das dos em no na nos nas um uma é são foi com para por não mais "
        "ao aos pelo pela também seu sua como ou até".split()
    ),
    "es": frozenset(
        "el los las del en un una es son fue con para por no más al se su sus como "
        "o hasta también pero este esta y".split()
    ),
    "fr": frozenset(
        "le la les des du un une est sont été avec pour par pas plus au aux ce cette "
        "et en sur qui dans ou ne".split()
    ),
    "de": frozenset(
        "der die das und ist sind war mit für von zu den dem des ein eine nicht auf "
        "auch im als oder wird werden".split()
    ),
}

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
MIN_HITS = 3  # fewer stopword hits than this is too little evidence
MIN_LEAD = 1.5  # the winner must beat the runner-up by this factor


def detect_language(text: str) -> str | None:
    """The language code of ``text`` when confidently detected, else None."""
    words = [word.lower() for word in _WORD.findall(text[:20_000])]
    scores: Counter[str] = Counter()
    for word in words:
        for language, stopwords in STOPWORDS.items():
            if word in stopwords:
                scores[language] += 1
    if not scores:
        return None
    ranked = scores.most_common()
    best_language, best = ranked[0]
    runner_up = ranked[1][1] if len(ranked) > 1 else 0
    if best < MIN_HITS or best < MIN_LEAD * runner_up:
        return None
    return best_language


LANGUAGE_NAMES = {"en": "English", "pt": "Portuguese", "es": "Spanish", "fr": "French", "de": "German"}
