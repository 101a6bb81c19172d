"""Reading markdown a converter produced or was given: its frontmatter block, its
title and its inline markup reduced to text.

A markdown source may open with a YAML frontmatter block (Obsidian, Hugo, Jekyll):
``split_frontmatter`` finds it without parsing it, so the converter decides what
the block means (only ``Conversion.frontmatter`` keys reach the passport).
``first_h1`` is the title the Gardener gives a markdown node when the converter
names none; a converter that wants the same title calls it itself.

Everything here is pure, deterministic and bounded: several inline patterns
(emphasis, links) cost time quadratic in the length of a line without closing
marks, so only a bounded opening of the text is read (``MAX_SCANNED_CHARS``, lines
cut at ``MAX_LINE_CHARS``). The Gardener's summary deriver reads markdown by the
same rules (``monkeyllm_gardener.derive``), so a title and a summary agree on what
is a heading, a code fence or frontmatter.
"""
from __future__ import annotations

import re
from itertools import chain, pairwise
from typing import Iterator

__all__ = ["first_h1", "split_frontmatter", "strip_frontmatter", "strip_inline_markdown"]

# Shared with the summary deriver, not part of the kit's promise: a fenced code
# block's opening line, and the bounded opening both readers look at (and how they
# split it into lines: ``lines_with_next``).
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
MAX_LINE_CHARS = 2_000
MAX_SCANNED_CHARS = 200_000

_FRONTMATTER_OPEN = re.compile(r"---[ \t]*\r?\n")
_FRONTMATTER_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_WIKILINK = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]")
_FOOTNOTE = re.compile(r"\[\^[^\]]+\]")
_AUTOLINK = re.compile(r"<((?:https?|mailto):[^>\s]+)>")
_HTML_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_EMPHASIS = re.compile(r"(\*\*|__|~~)(.+?)\1|(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?!\w)|(?<![\w_])_(?!\s)(.+?)(?<!\s)_(?![\w])")
_CODE_SPAN = re.compile(r"`+([^`]*)`+")
_ATX_H1 = re.compile(r"\s{0,3}#(?!#)\s")
_SETEXT_H1_UNDERLINE = re.compile(r"^\s{0,3}=+\s*$")


def lines_with_next(text: str) -> Iterator[tuple[str, str]]:
    """Each line of ``text.split("\\n")`` with the one after it ("" after the last),
    split as they are read: both readers stop early (at the title, after a few
    sentences), and splitting a long note whole cost more than reading its opening."""
    return pairwise(chain(_lines(text), ("",)))


def _lines(text: str) -> Iterator[str]:
    start = 0
    while (end := text.find("\n", start)) != -1:
        yield text[start:end]
        start = end + 1
    yield text[start:]


def split_frontmatter(text: str) -> tuple[str, str] | None:
    """``(yaml block, rest)`` when ``text`` opens with a ``---`` line and a later
    closing ``---`` (or ``...``) line; None otherwise. The block is not parsed."""
    text = text.lstrip("\ufeff")
    match = _FRONTMATTER_OPEN.match(text)
    if match is None:
        return None
    close = _FRONTMATTER_CLOSE.search(text, match.end())
    if close is None:
        return None
    return text[match.end():close.start()], text[close.end():]


def strip_frontmatter(markdown: str) -> str:
    """The text after a leading YAML frontmatter block, if any."""
    split = split_frontmatter(markdown)
    return markdown if split is None else split[1]


def strip_inline_markdown(text: str) -> str:
    """Inline markdown reduced to its visible text, whitespace collapsed."""
    # Each pattern needs a mark of its own; most text holds few of them, so a pattern
    # runs only when its mark is in the text (the same result, minus the scans).
    if "[" in text:
        if "![" in text:
            text = _IMAGE.sub("", text)
        if "[[" in text:
            text = _WIKILINK.sub(_wikilink_text, text)
        if "](" in text:
            text = _LINK.sub(r"\1", text)
        if "][" in text:
            text = _REF_LINK.sub(r"\1", text)
        if "[^" in text:
            text = _FOOTNOTE.sub("", text)
    if "<" in text:
        text = _AUTOLINK.sub(r"\1", text)
        text = _HTML_TAG.sub("", text)
    if "`" in text:
        text = _CODE_SPAN.sub(r"\1", text)
    for _ in range(3):  # nested emphasis (***bold italic***)
        if "*" not in text and "_" not in text and "~~" not in text:
            break
        stripped = _EMPHASIS.sub(_emphasis_text, text)
        if stripped == text:
            break
        text = stripped
    return " ".join(text.split())  # what ``\s+`` -> " " and strip() give, in one pass


def _wikilink_text(match: re.Match[str]) -> str:
    return match.group(2) or match.group(1)


def _emphasis_text(match: re.Match[str]) -> str:
    return match.group(2) or match.group(3) or match.group(4) or ""


def first_h1(markdown: str) -> str | None:
    """Text of the first level-1 heading (``# Title`` or a ``===`` setext), outside
    frontmatter and code fences; None when there is none."""
    opening = strip_frontmatter(markdown)[:MAX_SCANNED_CHARS]
    if "\r" in opening:  # one search instead of a copy when there is none (the usual note)
        opening = opening.replace("\r\n", "\n")
    fence: str | None = None
    for whole_line, whole_next in lines_with_next(opening):
        line = whole_line[:MAX_LINE_CHARS]
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        fence_match = FENCE.match(line)
        if fence_match:
            fence = fence_match.group(1)[0] * 3
            continue
        match = _ATX_H1.match(line)
        if match:
            title = strip_inline_markdown(_without_closing_hashes(line[match.end():]))
            if title:
                return title
        if line.strip() and _SETEXT_H1_UNDERLINE.match(whole_next[:MAX_LINE_CHARS]):
            title = strip_inline_markdown(line)
            if title:
                return title
    return None


def _without_closing_hashes(text: str) -> str:
    """ATX heading text without its optional closing ``#`` run (linear, no regex
    backtracking over long runs of spaces)."""
    text = text.strip()
    bare = text.rstrip("#")
    if bare != text and (not bare or bare[-1].isspace()):
        text = bare.rstrip()
    return text
