"""``## `` sections of a markdown body: find, replace, append.

A section runs from its ``## Header`` line to the next ``## `` heading (or the end).
Headings inside fenced code blocks are not headings.
"""
from __future__ import annotations


def _heading_positions(body: str) -> list[tuple[int, str]]:
    """(offset of the line, header text) for every level-2 heading outside fences."""
    out: list[tuple[int, str]] = []
    offset = 0
    in_fence = False
    for line in body.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("```") or stripped.startswith("~~~"):
            in_fence = not in_fence
        elif not in_fence and line.startswith("## "):
            out.append((offset, line[3:].strip()))
        offset += len(line)
    return out


def section_span(body: str, header: str) -> tuple[int, int] | None:
    """Span of the whole section (heading line included) or None."""
    heads = _heading_positions(body)
    for i, (pos, name) in enumerate(heads):
        if name == header:
            end = heads[i + 1][0] if i + 1 < len(heads) else len(body)
            return pos, end
    return None


def outline(body: str) -> list[str]:
    """The ``## `` headers of ``body`` outside fences, in order. A body without a
    fence (most notes) has every ``## `` line as a header: one pass over its lines."""
    if "```" not in body and "~~~" not in body:
        return [line[3:].strip() for line in body.splitlines() if line.startswith("## ")]
    return [name for _, name in _heading_positions(body)]


def get_section(body: str, header: str) -> str | None:
    span = section_span(body, header)
    return None if span is None else body[span[0]:span[1]]


def _normalise(section_text: str) -> str:
    return section_text.strip("\n") + "\n"


def replace_section(body: str, header: str, section_text: str) -> str:
    """Replace a whole section (heading included) with section_text; append if absent."""
    span = section_span(body, header)
    if span is None:
        return append_section(body, section_text)
    before, after = body[:span[0]], body[span[1]:]
    middle = _normalise(section_text)
    if after:
        middle += "\n"
    return before + middle + after


def append_section(body: str, section_text: str) -> str:
    base = body.rstrip("\n")
    return (base + "\n\n" if base else "") + _normalise(section_text)


def section(header: str, content: str) -> str:
    content = content.strip("\n")
    return f"## {header}\n\n{content}\n" if content else f"## {header}\n"
