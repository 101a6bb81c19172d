"""The summary contract, checked in code before anything a model wrote is planted.

The summary is the scent an agent navigates by. The core's contract
(``monkeyllm_core.forest.summary_contract``) is the floor every planted summary
obeys: non-empty, at most 60 tokens = 240 characters, plain text on one line, no
boilerplate opening. A model is held to more, on top of that floor: one to three
sentences, the month and year of dated content, the content's language, and
boilerplate caught in more wordings (and behind quotes or emphasis). So a summary
this module accepts is one every write accepts. Tags are lowercase single words
with accents folded.

``check_summary`` and ``trim_summary`` are public: the pipeline reuses them for
derived summaries and branch rollups.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Literal

from monkeyllm_core.forest import summary_contract as core
from monkeyllm_core.forest.summary_contract import SUMMARY_MAX_CHARS, SUMMARY_MAX_SENTENCES
from monkeyllm_gardener.curator.dates import describe_year_month, fold, year_months
from monkeyllm_gardener.curator.language import LANGUAGE_NAMES, detect_language

MAX_TAGS = 5
ELLIPSIS = "…"

# Openings that spend tokens without adding scent (compared case-insensitively,
# after leading whitespace and markup): the core's, which FOREST-FORMAT.md names,
# then the same habit in other words. The extra ones are refused for what a model
# wrote only: a person may well start a summary with "The document store ...".
CURATOR_BOILERPLATE_OPENINGS: tuple[str, ...] = (
    *core.BOILERPLATE_OPENINGS,
    "a file containing",
    "this document",
    "this file",
    "the document",
    "this page",
)

ProblemCode = Literal["empty", "unsafe", "boilerplate", "too_long", "sentences", "date", "language"]
# Failures cutting can fix: whole sentences come off first, then words.
TRIMMABLE: frozenset[str] = frozenset({"too_long", "sentences"})

# A sentence ends at . ! ? or … followed by whitespace and a capital letter or digit
# (so "e.g. the" and "1240.5" do not split), or at the end of the text.
# Characters that decorate a summary's opening words without changing them.
_MARKUP = re.compile(r"[^\w\s]|_")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=[\"'(\[]?[^\W_a-z])", re.UNICODE)


@dataclass(frozen=True, kw_only=True)
class SummaryProblem:
    code: ProblemCode
    message: str  # one line, phrased so it can be handed back to the model


def split_sentences(text: str) -> list[str]:
    text = " ".join(text.split())
    if not text:
        return []
    return [part for part in _SENTENCE_END.split(text) if part]


def summary_problems(
    summary: str, content: str, *, content_date: str | None = None
) -> list[SummaryProblem]:
    """Every way ``summary`` breaks the contract for ``content`` (empty: valid)."""
    text = " ".join(summary.split())
    if not text:
        return [SummaryProblem(code="empty", message="the summary is empty")]
    problems: list[SummaryProblem] = []
    if core.has_unsafe_characters(text):
        problems.append(
            SummaryProblem(
                code="unsafe",
                message="the summary holds a control, escape or bidi character; write plain text",
            )
        )
    opening = boilerplate_opening(text)
    if opening:
        problems.append(
            SummaryProblem(
                code="boilerplate",
                message=f"the summary opens with boilerplate ({opening!r}); "
                "start with what it is (category and subject)",
            )
        )
    if len(text) > SUMMARY_MAX_CHARS:
        problems.append(
            SummaryProblem(
                code="too_long",
                message=f"the summary has {len(text)} characters; the limit is "
                f"{SUMMARY_MAX_CHARS} characters",
            )
        )
    sentence_count = len(split_sentences(text))
    if sentence_count > SUMMARY_MAX_SENTENCES:
        problems.append(
            SummaryProblem(
                code="sentences",
                message=f"the summary has {sentence_count} sentences; write one to "
                f"{SUMMARY_MAX_SENTENCES}",
            )
        )
    dates = content_year_months(content, content_date=content_date)
    if dates and not dates & year_months(text, quarters=True):
        example = describe_year_month(max(dates))
        problems.append(
            SummaryProblem(
                code="date",
                message=f"the content is dated (e.g. {example}) but the summary states "
                "no month and year from it; include at least the month and year",
            )
        )
    content_language = detect_language(content)
    summary_language = detect_language(text)
    if content_language and summary_language and content_language != summary_language:
        problems.append(
            SummaryProblem(
                code="language",
                message=f"the summary is in {LANGUAGE_NAMES[summary_language]} but the "
                f"content is in {LANGUAGE_NAMES[content_language]}; write it in "
                f"{LANGUAGE_NAMES[content_language]}",
            )
        )
    return problems


def check_summary(summary: str, content: str, *, content_date: str | None = None) -> list[str]:
    """One-line reasons ``summary`` is invalid for ``content``; an empty list means valid."""
    return [problem.message for problem in summary_problems(summary, content, content_date=content_date)]


def boilerplate_opening(summary: str) -> str | None:
    """The boilerplate opening ``summary`` starts with, or None.

    Quotes, emphasis, list markers and other punctuation do not hide an opening:
    ``"This document describes ..."`` and ``**This file** ...`` are still boilerplate."""
    start = " ".join(_MARKUP.sub("", summary[:120]).split())
    return core.boilerplate_opening(start, CURATOR_BOILERPLATE_OPENINGS)


def content_year_months(content: str, *, content_date: str | None = None) -> set[tuple[int, int]]:
    """The (year, month) pairs that make ``content`` dated."""
    dates = year_months(content)
    if content_date:
        dates |= year_months(content_date)
    return dates


def trim_summary(
    summary: str, limit_chars: int = SUMMARY_MAX_CHARS, *, max_sentences: int = SUMMARY_MAX_SENTENCES
) -> str:
    """Cut ``summary`` to fit: whole sentences come off the end first (never the
    first one); if the first sentence alone is still too long, words come off and
    the cut is marked with ``…``. Whitespace is collapsed. Fits ``limit_chars``."""
    sentences = split_sentences(summary)
    if not sentences:
        return ""
    sentences = sentences[:max_sentences]
    while len(sentences) > 1 and len(" ".join(sentences)) > limit_chars:
        sentences.pop()
    text = " ".join(sentences)
    if len(text) <= limit_chars:
        return text
    words = text.split(" ")
    kept: list[str] = []
    for word in words:
        candidate = " ".join([*kept, word])
        if len(candidate) + len(ELLIPSIS) > limit_chars:
            break
        kept.append(word)
    if not kept:  # one enormous "word" (a URL, a hash): cut it by characters
        return text[: limit_chars - len(ELLIPSIS)] + ELLIPSIS
    return " ".join(kept).rstrip(",;:-–—.!?… ") + ELLIPSIS


def fold_tag(tag: str) -> str:
    """A tag as the forest stores it: lowercase, accents folded ("Café" -> "cafe"),
    one word (inner spaces and underscores become hyphens, other symbols go)."""
    folded = fold(str(tag)).strip()
    folded = re.sub(r"[\s_]+", "-", folded)
    folded = re.sub(r"[^a-z0-9-]", "", folded)
    return re.sub(r"-{2,}", "-", folded).strip("-")


def merge_tags(*groups: Iterable[object], limit: int = MAX_TAGS) -> tuple[list[str], list[str]]:
    """Fold and merge tag groups in priority order, without duplicates.

    Returns ``(tags, problems)``: at most ``limit`` tags, and one-line notes for
    every tag that could not be kept (nothing is dropped silently)."""
    tags: list[str] = []
    problems: list[str] = []
    overflow: list[str] = []
    for group in groups:
        for raw in group:
            if not isinstance(raw, str):
                problems.append(f"tag {_short(repr(raw))} dropped: not a string")
                continue
            tag = fold_tag(raw)
            if not tag:
                problems.append(f"tag {_short(repr(raw))} dropped: nothing left after folding")
                continue
            if tag in tags or tag in overflow:
                continue
            if len(tags) < limit:
                tags.append(tag)
            else:
                overflow.append(tag)
    if overflow:
        problems.append(f"tags capped at {limit}: dropped {', '.join(overflow)}")
    return tags, problems


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS
