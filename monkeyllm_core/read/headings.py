"""The sections of a body as a reader names them: any heading level, any case.

The writer's ``forest.sections`` edits ``## `` sections, the ones it owns. A reader
meets bodies written by anyone (a converted Word file whose sections are ``#``, a
note that nests ``###`` under ``##``), so here every ATX heading counts (``#`` to
``######`` followed by a space, outside fenced code), and a section runs from its
heading to the next heading of the same or a higher level.

The **outline** is the list a digest shows: the headings of the shallowest level
under the title. A body's lone first ``# Title`` is its title, not a section, so
``# T / ## A / ### A.1 / ## B`` outlines as ``[A, B]``, and a dataset's
``### <table> — N rows`` blocks stay inside ``Sample rows``. Every outline entry
can be handed to ``pick(id, section=...)`` as it is.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_MAY_MATTER = ("#", "`", "~")
_ATX_OPEN = re.compile(r"(#{1,6})[ \t]+")


@dataclass(frozen=True, kw_only=True)
class Heading:
    level: int
    text: str
    start: int   # offset of the heading line
    line: int    # 1-based line number


def headings(body: str) -> list[Heading]:
    out: list[Heading] = []
    offset = 0
    fence: str | None = None
    for number, line in enumerate(body.splitlines(keepends=True), start=1):
        if line[:1] not in _MAY_MATTER and not line.lstrip()[:1] in ("`", "~"):
            offset += len(line)  # a plain line: neither a heading nor a fence
            continue
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
        elif stripped.startswith("```") or stripped.startswith("~~~"):
            fence = stripped[:3]
        else:
            found = _atx(line.rstrip("\r\n"))
            if found is not None:
                out.append(Heading(level=found[0], text=found[1], start=offset, line=number))
        offset += len(line)
    return out


def _atx(line: str) -> tuple[int, str] | None:
    """(level, text) of an ATX heading line: 1-6 ``#``, a space or tab, the text, an
    optional closing run of ``#`` after a space or tab. String operations, not one
    regex: a lazy text group before optional trailing spaces backtracks
    quadratically on a heading holding a long run of spaces, and the catalog
    outlines every body it indexes."""
    opening = _ATX_OPEN.match(line)
    if opening is None:
        return None
    text = line[opening.end():].rstrip(" \t")
    unclosed = text.rstrip("#")
    if unclosed != text and unclosed[-1:] in (" ", "\t"):
        text = unclosed
    text = text.strip()
    return (len(opening.group(1)), text) if text else None


def _sections_of(heads: list[Heading]) -> list[Heading]:
    if heads and heads[0].level == 1 and sum(1 for h in heads if h.level == 1) == 1:
        heads = heads[1:]  # the title
    return heads


def outline(body: str) -> list[str]:
    heads = _sections_of(headings(body))
    if not heads:
        return []
    top = min(h.level for h in heads)
    return [h.text for h in heads if h.level == top]


def _key(name: str) -> str:
    return " ".join(name.split()).casefold()


def find_section(body: str, name: str) -> tuple[Heading, str] | None:
    """The first section whose heading is ``name`` (case- and spacing-insensitive):
    its heading and its text, heading line included, up to the next heading of the
    same or a higher level."""
    wanted = _key(name)
    heads = headings(body)
    for head in heads:
        if _key(head.text) == wanted:
            return head, section_of(body, heads, head)
    return None


def section_of(body: str, heads: list[Heading], head: Heading) -> str:
    """The section ``head`` (one of ``headings(body)``) opens: its heading line and
    text, up to the next heading of the same or a higher level."""
    end = next((h.start for h in heads if h.start > head.start and h.level <= head.level), len(body))
    return body[head.start:end]


def section_text(body: str, name: str) -> str | None:
    """The section's content without its heading line, trimmed; None when absent."""
    found = find_section(body, name)
    if found is None:
        return None
    text = found[1]
    newline = text.find("\n")
    return "" if newline == -1 else text[newline + 1:].strip()
