"""The headings of a body at every level, and the section each one opens.

The read calls name sections by any heading, not only ``## `` ones (primitives.md:
pick matches headers case-insensitively, any level), and sniff reports the heading
a match sits under. A heading is an ATX line, ``#`` to ``######`` then a space (or
nothing), outside fenced code blocks; its text drops the optional closing ``#``s.
A section runs from its heading to the next heading of the same or a higher level,
so a ``### `` subsection sits inside its ``## `` section.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


@dataclass(frozen=True, kw_only=True)
class Heading:
    line: int    # 0-based index of the heading's line in the body
    level: int   # 1 for ``#``, 2 for ``##``, ...
    text: str


def headings(lines: list[str]) -> list[Heading]:
    """Every heading of a body given as its lines, in order."""
    found: list[Heading] = []
    fence: str | None = None
    for index, line in enumerate(lines):
        opener = _FENCE.match(line)
        if fence is not None:
            if opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence):
                fence = None
            continue
        if opener:
            fence = opener.group(1)
            continue
        match = _ATX.match(line)
        if match:
            found.append(Heading(line=index, level=len(match.group(1)), text=(match.group(2) or "").strip()))
    return found


def enclosing(heads: list[Heading], line: int) -> Heading | None:
    """The nearest heading at or above ``line`` (0-based), or None before the first."""
    current = None
    for head in heads:
        if head.line > line:
            break
        current = head
    return current


def section_lines(heads: list[Heading], head: Heading, line_count: int) -> tuple[int, int]:
    """The lines ``[start, end)`` of the section ``head`` opens."""
    for other in heads:
        if other.line > head.line and other.level <= head.level:
            return head.line, other.line
    return head.line, line_count


def find_heading(heads: list[Heading], name: str) -> Heading | None:
    """The first heading whose text is ``name``, compared case-insensitively."""
    wanted = name.strip().casefold()
    return next((head for head in heads if head.text.casefold() == wanted), None)
