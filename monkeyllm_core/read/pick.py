"""pick: a node's whole body, or one section of it (primitives.md, pick).

Whole: the body as the file holds it, when the response fits 4000 tokens. A body
that does not is never sliced: the answer is then its outline, the real
``body_tokens``, ``truncated: true`` and a hint to name a section. A section read
(headers matched without regard to case, at any level: ``headings``) has no cap:
it is the escape hatch that hint points at. An unknown section is E_NOT_FOUND,
with the outline in the hint so the next call can name a real one.

What pick returns is the banana: its trail (the branches above it and the node)
gets session-scoped heat (+0.1), so the rest of the hunt ranks toward it.
"""
from __future__ import annotations

from typing import Any

from ..errors import VineError, estimate_tokens
from ..forest.rules import trail_of
from .catalog_reads import row_of
from .context import ReadContext
from .contract import BUDGETS, fits, shed_tail
from .headings import find_section, outline

BUDGET = BUDGETS["pick"]
_HINT_OUTLINE_CHARS = 1500


def pick(ctx: ReadContext, node_id: str, section: str | None = None) -> dict[str, Any]:
    if section is not None and (not isinstance(section, str) or not section.strip()):
        raise VineError("E_SCHEMA", f"pick: section must be a header's text, not {section!r}",
                        "Leave section out for the whole body.")
    row = row_of(ctx.db, node_id)
    node_id, title = row["id"], row["title"]
    body = ctx.read_body(node_id)
    if section is not None:
        found = find_section(body, section)
        if found is None:
            raise VineError("E_NOT_FOUND", f"{node_id} has no section {section!r}", _sections_hint(body))
        heading, text = found
        response = {"id": node_id, "title": title, "section": heading.text, "body": text,
                    "body_tokens": estimate_tokens(text), "truncated": False}
    else:
        response = {"id": node_id, "title": title, "body": body, "body_tokens": estimate_tokens(body),
                    "truncated": False}
        if not fits(response, BUDGET):
            return _map_instead(node_id, title, body)
    ctx.deposit_session([*trail_of(node_id), node_id])
    return response


def _map_instead(node_id: str, title: str, body: str) -> dict[str, Any]:
    response = {"id": node_id, "title": title, "outline": outline(body), "body_tokens": estimate_tokens(body),
                "truncated": True,
                "hint": f"Body exceeds {BUDGET} tokens. Use section=<header> to harvest one section."}
    shed_tail(response, "outline", BUDGET)  # a body of thousands of headings: the map is cut, never the body
    return response


def _sections_hint(body: str) -> str:
    names = outline(body)
    if not names:
        return "This body has no sections; pick it without section."
    listed = ", ".join(names)
    if len(listed) > _HINT_OUTLINE_CHARS:
        listed = listed[:_HINT_OUTLINE_CHARS].rsplit(", ", 1)[0] + ", …"
    return f"Sections: {listed}."
