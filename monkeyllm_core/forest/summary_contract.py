"""The summary contract: the rules every planted summary obeys (FOREST-FORMAT.md).

The summary is the scent an agent navigates by: every branch index that lists a
node repeats it, entry search indexes it, and a model reads it before deciding
whether to pay for the body. So the engine refuses, at every write and in
``vine validate``, a summary that is empty, over 60 tokens (tokens = ceil(chars /
4), so 240 characters), not plain text on one line, or that opens with boilerplate
(``this document describes``, ``file containing``: tokens spent without scent).

This is the floor, defined here once. Whoever writes summaries holds them to more
on top of it, never to less, and imports these rules rather than restating them:
the Gardener's deriver (``monkeyllm_gardener.derive``) drops a boilerplate opening
instead of failing on it; the Curator (``monkeyllm_gardener.curator.contract``)
adds one to three sentences, the content's date and language, and more wordings of
the boilerplate habit for what a model wrote.
"""
from __future__ import annotations

import re
from typing import Any, Iterable

from ..errors import VineError, estimate_tokens

SUMMARY_MAX_TOKENS = 60
SUMMARY_MAX_CHARS = SUMMARY_MAX_TOKENS * 4
# The normative shape (concepts.md): what it is, the key content, optionally what
# is not here. Writers aim for it; the engine does not count sentences, since where
# a sentence ends is a judgment ("e.g.", "1,240.5") a writer makes, not a rule.
SUMMARY_MAX_SENTENCES = 3
# Exactly the openings FOREST-FORMAT.md names. A wider list belongs to a writer
# (the Curator's), not here: "The document store holds..." is a fine summary a
# person may write, and ``vine validate`` must not refuse forests the format allows.
BOILERPLATE_OPENINGS: tuple[str, ...] = ("this document describes", "file containing")

# C0/C1 controls (newline and tab included: a summary is one line) and bidi controls
_UNSAFE_IN_SUMMARY = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def boilerplate_opening(summary: str, openings: Iterable[str] = BOILERPLATE_OPENINGS) -> str | None:
    """The one of ``openings`` that ``summary`` starts with, compared case-insensitively
    after leading whitespace; None when it starts with none of them."""
    lowered = summary.lstrip().lower()
    for opening in openings:
        if lowered.startswith(opening):
            return opening
    return None


def has_unsafe_characters(summary: str) -> bool:
    """True when ``summary`` holds a control, escape or bidi character, which would
    break the one line every index repeats it on, or drive a terminal showing it."""
    return _UNSAFE_IN_SUMMARY.search(summary) is not None


def summary_error(summary: Any, *, where: str | None = None) -> VineError | None:
    """The first rule ``summary`` breaks, as the error a write raises (``E_FRONTMATTER``,
    its message led by ``where: `` when given); None when it obeys them all."""
    lead = f"{where}: " if where else ""
    if not isinstance(summary, str) or not summary.strip():
        return VineError("E_FRONTMATTER", f"{lead}summary is empty",
                         "Write 1-3 sentences saying what this is and what it holds.")
    if estimate_tokens(summary) > SUMMARY_MAX_TOKENS:
        return VineError("E_FRONTMATTER",
                         f"{lead}summary is {len(summary)} characters, over the 60-token limit",
                         f"Keep the summary within {SUMMARY_MAX_CHARS} characters.")
    if has_unsafe_characters(summary):
        return VineError("E_FRONTMATTER", f"{lead}summary holds a control, escape or bidi character",
                         "Write the summary as plain text on one line; every index that lists the node repeats it.")
    opening = boilerplate_opening(summary)
    if opening is not None:
        return VineError("E_FRONTMATTER", f"{lead}summary opens with boilerplate '{opening}'",
                         "Start with what the node is: category and subject.")
    return None


def check_summary(summary: Any, *, where: str) -> None:
    """Raise ``summary_error`` when there is one."""
    error = summary_error(summary, where=where)
    if error is not None:
        raise error
