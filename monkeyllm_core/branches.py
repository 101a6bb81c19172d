"""Branch indexes (``_index.md``): their template, entry lines and coverage.

Edits are surgical: one entry line is inserted or replaced, the rest of the text
(cross trails a person wrote, landmarks) is left exactly as it was.
"""
from __future__ import annotations

import re

SUB_BRANCHES = "Sub-branches"
DIRECT_BANANAS = "Direct bananas"
CROSS_TRAILS = "Cross trails"
LANDMARKS = "Landmarks"
EM_DASH = "\u2014"

_COVERAGE = re.compile(r"^(\d+) bananas?, (\d+) sub-branch(?:es)?$")


def one_line(text: str) -> str:
    """Entry lines repeat a summary on one line."""
    return " ".join(str(text).split())


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


def find_entry(body: str, child_id: str, sections: tuple[str, ...] = LISTINGS) -> tuple[int, int] | None:
    """Span of the entry line for child_id (without its newline) in one of ``sections``:
    by default the two listings, so a cross trail or a landmark naming the same id is
    never taken for the child's own entry."""
    needle = f"- [[{child_id}]]"
    bounds = [b for b in (_section_bounds(body, name) for name in sections) if b is not None]
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


def upsert_entry(body: str, section: str, child_id: str, line: str) -> str:
    """Replace child_id's entry line, or append it at the end of the section's list."""
    span = find_entry(body, child_id)
    if span is not None:
        return body[:span[0]] + line + body[span[1]:]
    body = _ensure_section(body, section)
    start, end = _section_bounds(body, section)  # type: ignore[misc]
    content = body[start:end]
    stripped = content.rstrip("\n")
    if stripped.strip():
        new_content = stripped + "\n" + line + "\n" + ("\n" if end < len(body) else "")
    else:
        new_content = line + "\n" + ("\n" if end < len(body) else "")
    return body[:start] + new_content + body[end:]


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
