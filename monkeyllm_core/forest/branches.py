"""Branch indexes (``_index.md``): their template, entry lines and coverage.

Edits are surgical: one entry line is inserted or replaced, the rest of the text
(cross trails a person wrote, landmarks) is left exactly as it was.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..store.messages import one_line

SUB_BRANCHES = "Sub-branches"
DIRECT_BANANAS = "Direct bananas"
CROSS_TRAILS = "Cross trails"
LANDMARKS = "Landmarks"
EM_DASH = "\u2014"

_COVERAGE = re.compile(r"^(\d+) bananas?, (\d+) sub-branch(?:es)?$")


def coverage_text(bananas: int, branches: int) -> str:
    return f"{bananas} bananas, {branches} sub-branches"


def parse_coverage(text: object) -> tuple[int, int] | None:
    match = _COVERAGE.match(str(text or "").strip().rstrip("."))
    return (int(match.group(1)), int(match.group(2))) if match else None


def entry_line(child_id: str, summary: str, coverage: str | None = None) -> str:
    text = one_line(summary)
    if coverage is not None:
        if text and text[-1] not in ".!?…":
            text += "."
        text = f"{text} {coverage}."
    return f"- [[{child_id}]] {EM_DASH} {text}"


def branch_body(title: str, summary: str, *, master: bool = False) -> str:
    parts = [f"# {title}", "", f"> {one_line(summary)}", "",
             f"## {SUB_BRANCHES}", "", f"## {DIRECT_BANANAS}", "", f"## {CROSS_TRAILS}", ""]
    if master:
        parts += [f"## {LANDMARKS}", ""]
    return "\n".join(parts)


def _section_bounds(body: str, section: str) -> tuple[int, int] | None:
    """(start of the section's content, end of its content) or None."""
    heading = f"## {section}\n"
    if body.startswith(heading):
        start = len(heading)
    else:
        pos = body.find("\n" + heading)
        if pos == -1:
            if body.endswith("\n## " + section) or body.endswith("\n## " + section + "\n"):
                return len(body), len(body)
            return None
        start = pos + 1 + len(heading)
    nxt = body.find("\n## ", start - 1)
    end = len(body) if nxt == -1 else nxt + 1
    return start, end


def _ensure_section(body: str, section: str) -> str:
    if _section_bounds(body, section) is not None:
        return body
    if not body.endswith("\n"):
        body += "\n"
    return body + f"\n## {section}\n"


LISTINGS = (SUB_BRANCHES, DIRECT_BANANAS)


def _entry_span(body: str, child_id: str, bounds: list[tuple[int, int]]) -> tuple[int, int] | None:
    """Span of child_id's entry line (without its newline) inside ``bounds`` (the
    listings), so a cross trail or a landmark naming the same id is never taken for it."""
    needle = f"- [[{child_id}]]"
    pos = 0
    while True:
        pos = body.find(needle, pos)
        if pos == -1:
            return None
        if pos == 0 or body[pos - 1] == "\n":
            after = pos + len(needle)
            if (after == len(body) or body[after] in " \n") and any(lo <= pos < hi for lo, hi in bounds):
                end = body.find("\n", pos)
                return pos, len(body) if end == -1 else end
        pos += len(needle)


def refresh_repeats(body: str, old_lines: tuple[str, ...], new_line: str,
                    sections: tuple[str, ...] = (LANDMARKS, CROSS_TRAILS)) -> str:
    """Rewrite, in ``sections``, every line that repeats a child's old entry verbatim
    (one of ``old_lines``) as ``new_line``; a line a person wrote differently stays."""
    wanted = set(old_lines) - {new_line}
    if not wanted or not any(line in body for line in wanted):
        return body
    lines = body.split("\n")
    current = None
    for i, line in enumerate(lines):
        if line.startswith("## "):
            current = line[3:].strip()
        elif current in sections and line in wanted:
            lines[i] = new_line
    return "\n".join(lines)


_NON_SPACE = re.compile(r"\S")


_LISTED = re.compile(r"^- \[\[([^\]\n]+)\]\](?=[ \n]|$)", re.MULTILINE)


@dataclass(eq=False)
class Listing:
    """What one branch body lists: its two listings' bounds and entry counts, and
    (once the body has been listed into twice) the set of child ids it lists.

    It describes exactly one body string, held here: strings are immutable, so the
    facts are right for as long as the caller passes that very object back. A
    writer planting thousands of nodes into one branch then pays for the index's
    size once, not on every plant."""

    body: str
    bounds: dict[str, tuple[int, int] | None]
    counts: dict[str, int]
    ids: set[str] | None = None


def survey(body: str) -> Listing:
    bounds = {name: _section_bounds(body, name) for name in LISTINGS}
    counts = {name: body.count("\n- [[", b[0] - 1, b[1]) if b is not None else 0 for name, b in bounds.items()}
    return Listing(body=body, bounds=bounds, counts=counts)


def listed_ids(listing: Listing) -> set[str]:
    ids: set[str] = set()
    for bound in listing.bounds.values():
        if bound is not None:
            ids.update(m.group(1) for m in _LISTED.finditer(listing.body, *bound))
    return ids


def repeated_ids(listing: Listing) -> set[str]:
    """Ids named at the start of a line outside the two listings: the cross trails and
    landmarks that may repeat a child's entry. Only that part of the body is read."""
    ids: set[str] = set()
    pos = 0
    for lo, hi in sorted(b for b in listing.bounds.values() if b is not None) + [(len(listing.body),) * 2]:
        if lo > pos:
            ids.update(m.group(1) for m in _LISTED.finditer(listing.body, pos, lo))
        pos = max(pos, hi)
    return ids


def list_child(body: str, section: str, child_id: str, line: str,
               known: Listing | None = None) -> tuple[str | None, tuple[int, int] | None, Listing]:
    """Put child_id's entry line in the listings: replace its line, or append it at
    the end of ``section``'s list.

    Returns the new body (None when the line was already there as it is), the
    listings' counts (direct bananas, sub-branches) when the entry is new (for the
    coverage), and the Listing of the resulting body to pass back next time. With
    ``known`` describing this very body, a new child costs one copy of the text and
    no scan of it."""
    if known is not None and known.body is body:
        listing = known
        if listing.ids is None:  # listed into a second time: worth knowing every id
            listing.ids = listed_ids(listing)
    else:
        listing = survey(body)
    bounds = listing.bounds
    if listing.ids is not None and child_id not in listing.ids and "]" not in child_id:
        span = None
    else:
        span = _entry_span(body, child_id, [b for b in bounds.values() if b is not None])
    if span is not None:
        if body[span[0]:span[1]] == line:
            return None, None, listing
        cut, insert = span, line
        counts = listing.counts
    else:
        if bounds.get(section) is None or not body.endswith("\n"):
            # a hand-edited index lost the heading (put it back), or ends on a heading
            # line without its newline (the entry must not be glued to the heading)
            body = _ensure_section(body if body.endswith("\n") else body + "\n", section)
            listing = survey(body)
            bounds = listing.bounds
        start, end = bounds[section]  # type: ignore[misc]
        last = end
        while last > start and body[last - 1] == "\n":
            last -= 1
        gap = "\n" if end < len(body) else ""
        if _NON_SPACE.search(body, start, last):  # the list already has lines
            cut, insert = (last, end), "\n" + line + "\n" + gap
        else:
            cut, insert = (start, end), line + "\n" + gap
        counts = dict(listing.counts)
        counts[section] += 1
    new_body = "".join((body[:cut[0]], insert, body[cut[1]:]))
    shift = len(insert) - (cut[1] - cut[0])
    new_bounds = {}
    for name, bound in bounds.items():
        if bound is not None and bound[1] >= cut[1]:  # the cut lies in this section, or before it
            moves = bound[0] > cut[0] and bound[0] >= cut[1]  # a later section moves whole
            bound = (bound[0] + shift if moves else bound[0], bound[1] + shift)
        new_bounds[name] = bound
    ids = listing.ids
    if ids is not None and span is None:
        ids.add(child_id)  # the old body's Listing is dropped by the caller: its set can move on
    result = Listing(body=new_body, bounds=new_bounds, counts=counts, ids=ids)
    return new_body, ((counts[DIRECT_BANANAS], counts[SUB_BRANCHES]) if span is None else None), result


def section_entries(body: str, section: str) -> list[str]:
    """Child ids listed in a section, in order."""
    bounds = _section_bounds(body, section)
    if bounds is None:
        return []
    ids = []
    for line in body[bounds[0]:bounds[1]].splitlines():
        if line.startswith("- [[") and "]]" in line:
            ids.append(line[4:line.index("]]")])
    return ids


def count_entries(body: str, section: str) -> int:
    """How many entry lines a section holds (a C-speed count: indexes grow long)."""
    bounds = _section_bounds(body, section)
    if bounds is None:
        return 0
    start, end = bounds
    return body.count("\n- [[", start - 1, end)


def section_lines(body: str, section: str) -> list[str]:
    bounds = _section_bounds(body, section)
    if bounds is None:
        return []
    return [ln for ln in body[bounds[0]:bounds[1]].splitlines() if ln.startswith("- [[")]


def set_blockquote(body: str, summary: str) -> str:
    """The ``> summary`` line under the title mirrors the frontmatter summary."""
    lines = body.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("## "):
            break
        if line.startswith("> ") or line == ">":
            lines[i] = f"> {one_line(summary)}"
            # a multi-line blockquote collapses to the one line we own
            j = i + 1
            while j < len(lines) and lines[j].startswith(">"):
                del lines[j]
            return "\n".join(lines)
    # no blockquote: put one after the title line
    for i, line in enumerate(lines):
        if line.startswith("# "):
            lines[i + 1:i + 1] = ["", f"> {one_line(summary)}"]
            return "\n".join(lines)
    return f"> {one_line(summary)}\n\n" + body


def blockquote(body: str) -> str | None:
    for line in body.split("\n"):
        if line.startswith("## "):
            return None
        if line.startswith("> "):
            return line[2:]
    return None
