"""Derived titles and summaries: the scent a node gets when no model writes one.

Every function here is deterministic and returns a summary that obeys the core's
summary contract (``monkeyllm_core.forest.summary_contract``: non-empty, at most
240 characters, plain text on one line, no boilerplate opening), and holds itself
to the contract's shape on top: at most three sentences, and a boilerplate opening
in the text is dropped rather than failed on.

``derive_summary`` reads the opening prose of a markdown body. It skips what is not
prose (frontmatter, headings, code fences, tables, images, link-only lines, lines
holding only a converter's placeholders such as ``[image: logo.png]``, HTML
comments, rules), strips inline markdown to its text, and keeps whole sentences, at
most three, while they fit. A first sentence longer than the limit is cut at a word
boundary and ends with ``…``. A list item or paragraph without closing punctuation
counts as one sentence and gets a period.
"""
from __future__ import annotations

import re
from itertools import islice
from typing import Iterable, Iterator, Mapping, Sequence

from monkeyllm_core.forest.summary_contract import (
    SUMMARY_MAX_CHARS,
    SUMMARY_MAX_SENTENCES,
    boilerplate_opening,
    summary_error,
)
from monkeyllm_core.store.messages import one_line

# Markdown is read by the plugin kit's rules, so a derived title and a derived
# summary agree with what a converter sees (the kit is their home).
from monkeyllm_gardener.kit.markdown import FENCE as _FENCE
from monkeyllm_gardener.kit.markdown import MAX_LINE_CHARS as _MAX_LINE_CHARS
from monkeyllm_gardener.kit.markdown import MAX_SCANNED_CHARS as _MAX_SCANNED_CHARS
from monkeyllm_gardener.kit.markdown import first_h1, lines_with_next, strip_frontmatter, strip_inline_markdown

ELLIPSIS = "…"

_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")
_SETEXT_UNDERLINE = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_TABLE_LINE = re.compile(r"^\s*\|")
_TABLE_SEPARATOR = re.compile(r"^\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?\s*$")
_LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?")
_QUOTE_MARKER = re.compile(r"^\s*(?:>\s?)+")
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+")
# The tokens a link-only line is made of, and what may sit between them. Checked by
# removing the tokens, not by one anchored "(token separator?)+" pattern: that one
# backtracks exponentially on a line like "http://http://http://... !".
_LINK_TOKEN = re.compile(r"!?\[[^\]]*\]\([^)]*\)|\[\[[^\]]+\]\]|<[^>]+>|https?://\S+")
_LINK_SEPARATORS = re.compile(r"[\s,;|·•-]*")
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s")
# What a converter writes in place of content that is not text (docx_document).
_PLACEHOLDER_LINE = re.compile(r"^\s*(?:\[(?:image|chart|SmartArt|embedded object)\b[^\]]*\]\s*)+$")
# A summary needs the opening prose only. Several inline patterns (emphasis, links,
# comments) cost time quadratic in the length of a line without closing marks, so
# the deriver reads a bounded opening: long lines and paragraphs are cut, and text
# past the first _MAX_SCANNED_CHARS is never looked at (the kit's markdown bounds).
_MAX_BLOCK_CHARS = 2_000


def _prose_blocks(markdown: str) -> Iterator[str]:
    """Paragraphs and list items of plain prose, in order, inline markdown stripped.

    A generator: a block is final once yielded (what follows it never changes it),
    and a summary needs the first few sentences only, so ``derive_summary`` stops
    reading a long note after its opening paragraphs."""
    current: list[str] = []

    def flush() -> Iterator[str]:
        if current:
            text = strip_inline_markdown(" ".join(current)[:_MAX_BLOCK_CHARS])
            current.clear()
            if text:
                yield text

    opening = strip_frontmatter(markdown)[:_MAX_SCANNED_CHARS]
    if "\r" in opening:  # a search, not two copies of the note, when there is none (the usual case)
        opening = opening.replace("\r\n", "\n").replace("\r", "\n")
    fence: str | None = None
    in_comment = False
    for line, following in lines_with_next(opening):
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        line, in_comment = _outside_comments(line, in_comment)
        if in_comment and not line.strip():
            continue
        line = line[:_MAX_LINE_CHARS]
        fence_match = _FENCE.match(line)
        if fence_match:
            yield from flush()
            fence = fence_match.group(1)[0] * 3
            continue
        next_line = following[:_MAX_LINE_CHARS]
        if (
            not line.strip()
            or _HEADING.match(line)
            or _RULE.match(line)
            or _SETEXT_UNDERLINE.match(line)
            or _TABLE_LINE.match(line)
            or _TABLE_SEPARATOR.match(line)
            or _REFERENCE_DEF.match(line)
            or _PLACEHOLDER_LINE.match(line)
            or _is_link_only(_LIST_MARKER.sub("", line))
        ):
            yield from flush()
            continue
        if _SETEXT_UNDERLINE.match(next_line) and next_line.strip() and current == []:
            continue  # a setext heading's text line
        if _TABLE_SEPARATOR.match(next_line):
            yield from flush()
            continue  # a table header row written without a leading pipe
        line = _QUOTE_MARKER.sub("", line)
        if _LIST_MARKER.match(line):
            yield from flush()
            line = _LIST_MARKER.sub("", line)
        current.append(line.strip())
    yield from flush()


def _outside_comments(line: str, in_comment: bool) -> tuple[str, bool]:
    """The parts of ``line`` outside HTML comments, and whether a comment is still
    open at its end. A linear scan (a ``<!--.*?-->`` pattern is quadratic on a line of
    unclosed ``<!--``)."""
    if not in_comment and "<!--" not in line:  # most lines: nothing to cut
        return line, False
    kept: list[str] = []
    position = 0
    while position <= len(line):
        if in_comment:
            end = line.find("-->", position)
            if end == -1:
                return "".join(kept), True
            position, in_comment = end + 3, False
        else:
            start = line.find("<!--", position)
            if start == -1:
                kept.append(line[position:])
                break
            kept.append(line[position:start])
            position, in_comment = start + 4, True
    return "".join(kept), in_comment


def _is_link_only(line: str) -> bool:
    """A line made only of links, images, autolinks or bare URLs (and separators)."""
    if "[" not in line and "<" not in line and "http" not in line:
        return False  # no token can start: prose, decided without a scan per token
    rest, found = _LINK_TOKEN.subn(" ", line)
    return found > 0 and _LINK_SEPARATORS.fullmatch(rest) is not None


def _sentences(blocks: Iterable[str]) -> Iterator[str]:
    for block in blocks:
        for piece in _split_lazily(_SENTENCE_END, block):
            piece = piece.strip()
            if not piece:
                continue
            if piece[-1] not in ".!?…" and not (piece[-1] in "\"'”’)]" and piece.rstrip("\"'”’)]")[-1:] in ".!?…"):
                piece = piece.rstrip(":;,—–- ") + "."
            if len(piece) > 1:
                yield piece


def _split_lazily(pattern: re.Pattern[str], text: str) -> Iterator[str]:
    """``pattern.split(text)`` (a pattern without groups that never matches empty), one
    piece at a time: a summary takes three sentences of a paragraph that may hold thirty."""
    start = 0
    for match in pattern.finditer(text):
        yield text[start:match.start()]
        start = match.end()
    yield text[start:]


def _drop_boilerplate(sentence: str) -> str:
    """``This document describes the refund policy.`` -> ``The refund policy.``"""
    sentence = sentence.lstrip()
    while (opening := boilerplate_opening(sentence)) is not None:
        rest = sentence[len(opening):].lstrip(" :,-—–")
        sentence = rest[:1].upper() + rest[1:] if rest else ""
    return sentence


def cut_at_word(text: str, limit: int = SUMMARY_MAX_CHARS) -> str:
    """``text`` if it fits, else cut at a word boundary so that it plus ``…`` fits."""
    if len(text) <= limit:
        return text
    cut = text[: limit - len(ELLIPSIS)]
    if " " in cut[limit // 2:]:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:.-—–") + ELLIPSIS


def is_valid_summary(summary: str) -> bool:
    """True when ``summary`` obeys the core's summary contract (a write would take it)."""
    return summary_error(summary) is None


def derive_title(markdown: str, fallback: str) -> str:
    """The first H1 of ``markdown``, else ``fallback``."""
    return first_h1(markdown) or fallback


def title_sentence(title: str, kind_hint: str = "note") -> str:
    """The never-empty fallback: ``Note titled "<title>".`` (within 240 chars)."""
    kind = (one_line(kind_hint) or "note").capitalize()
    title = one_line(title) or "untitled"
    head = f'{kind} titled "'
    room = SUMMARY_MAX_CHARS - len(head) - len('".')
    if len(title) > room:
        title = cut_at_word(title, room)
    return f'{head}{title}".'


def derive_summary(markdown: str, *, title: str, kind_hint: str = "note") -> str:
    """A summary from the opening sentences of ``markdown`` (see the module docstring);
    ``title_sentence(title, kind_hint)`` when the text has no usable prose."""
    # Read lazily: the text after the last sentence the summary can hold is never scanned.
    sentences = _sentences(_prose_blocks(markdown))
    for sentence in sentences:
        first = _drop_boilerplate(sentence)
        if len(first) > 1 and any(ch.isalnum() for ch in first):
            break
    else:
        return title_sentence(title, kind_hint)
    summary = cut_at_word(first)
    for sentence in islice(sentences, SUMMARY_MAX_SENTENCES - 1):
        candidate = f"{summary} {sentence}"
        if len(candidate) > SUMMARY_MAX_CHARS:
            break
        summary = candidate
    summary = one_line(summary)
    return summary if is_valid_summary(summary) else title_sentence(title, kind_hint)


def _count(n: int, singular: str, plural: str | None = None) -> str:
    return f"{n:,} {singular if n == 1 else (plural or singular + 's')}"


def _fit_list(head: str, items: Sequence[str], tail: str = ".", limit: int = SUMMARY_MAX_CHARS) -> str:
    """``head`` + as many ``items`` (comma-joined) as fit, then ``and N more`` + ``tail``."""
    items = [one_line(i) for i in items if one_line(i)]
    for shown in range(len(items), -1, -1):
        listed = ", ".join(items[:shown])
        hidden = len(items) - shown
        if hidden:
            listed = f"{listed} and {hidden:,} more" if listed else f"{hidden:,} more"
        text = f"{head}{listed}{tail}"
        if len(text) <= limit:
            return text
    return cut_at_word(f"{head.rstrip(' ,;:')}{tail}", limit)


def _quoted_title(title: str, room: int = 80) -> str:
    return '"' + cut_at_word(one_line(title) or "untitled", room) + '"'


def summary_for_dataset(
    title: str, row_counts: Mapping[str, int], columns: Mapping[str, Sequence[str]]
) -> str:
    """``Dataset "orders-2026": table orders_2026 with 1,240 rows; columns id, customer, ...``

    Several tables are listed with their row counts (as many as fit, then ``and N more``);
    the columns are given for a single-table dataset.
    """
    head = f"Dataset {_quoted_title(title)}: "
    tables = list(row_counts) or list(columns)
    if not tables:
        return f"{head}no tables."
    if len(tables) == 1:
        table = tables[0]
        rows = row_counts.get(table)
        described = f"table {table}" + (f" with {_count(rows, 'row')}" if rows is not None else "")
        table_columns = list(columns.get(table, ()))
        if not table_columns:
            return cut_at_word(f"{head}{described}.")
        return _fit_list(f"{head}{described}; columns ", table_columns)
    entries = [
        f"{t} ({_count(row_counts[t], 'row')})" if t in row_counts else t for t in tables
    ]
    return _fit_list(f"{head}{_count(len(tables), 'table')}: ", entries)


def summary_for_media(title: str, info_line: str, *, kind: str = "media") -> str:
    """``Image "whiteboard pricing": PNG format, 640x480 pixels, 12,345 bytes.``"""
    label = {"image": "Image", "audio": "Audio recording"}.get(kind, "Media file")
    info = one_line(info_line).rstrip(".")
    text = f"{label} {_quoted_title(title)}" + (f": {info}." if info else ".")
    return cut_at_word(text)


def summary_for_branch(
    title: str, child_titles: Sequence[str], n_bananas: int, n_branches: int
) -> str:
    """``Folder "Invoices": 12 nodes and 2 sub-branches, including Q1 report, Q2 report
    and 10 more.`` Child titles are listed in the order given (the index order)."""
    head = f"Folder {_quoted_title(title)}: "
    if n_bananas == 0 and n_branches == 0:
        return f"{head}empty so far."
    counts = _count(n_bananas, "node")
    if n_branches:
        counts += f" and {_count(n_branches, 'sub-branch', 'sub-branches')}"
    if not [t for t in child_titles if one_line(t)]:
        return cut_at_word(f"{head}{counts}.")
    return _fit_list(f"{head}{counts}, including ", child_titles)
