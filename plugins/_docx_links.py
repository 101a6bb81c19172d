"""Where a Word link points, as a markdown link target.

- ``w:hyperlink`` with an external relationship: the URL, plus ``#anchor`` when the
  link names one (``w:anchor``) and the URL has no fragment yet;
- ``w:hyperlink`` with only ``w:anchor``: ``#bookmark``, a place inside the document;
- a ``HYPERLINK`` field (``HYPERLINK "url" \\l "anchor"``, the older way Word stores
  links, as ``w:fldSimple`` or as ``fldChar``/``instrText`` runs): the same rules;
  the ``\\o`` (tooltip) and ``\\t`` (frame) switches are skipped.

Spaces and parentheses are percent-encoded, so the target cannot break out of the
markdown link syntax.
"""
from __future__ import annotations

import re
import urllib.parse
from typing import Any

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"

_HYPERLINK_FIELD = re.compile(r"^\s*HYPERLINK\b(.*)$", re.IGNORECASE | re.DOTALL)
_FIELD_TOKEN = re.compile(r'"([^"]*)"|(\S+)')


def is_hyperlink_field(instruction: str) -> bool:
    return _HYPERLINK_FIELD.match(instruction) is not None


def hyperlink_target(part: Any, link: Any) -> str | None:
    """The target of a ``w:hyperlink``: its external URL (plus ``#anchor``), or
    ``#bookmark`` for a link inside the document; None when it has neither."""
    rel_id, anchor = link.get(f"{R}id"), link.get(f"{W}anchor")
    rel = part.rels.get(rel_id) if rel_id else None
    if rel is not None and rel.is_external:
        return url_with_anchor(rel.target_ref, anchor)
    return url_with_anchor("", anchor) if anchor else None


def field_target(instruction: str) -> str | None:
    """The target of ``HYPERLINK "url" \\l "anchor"`` (switches ``\\o`` ``\\t`` skipped)."""
    match = _HYPERLINK_FIELD.match(instruction)
    if match is None:
        return None
    tokens = [quoted or bare for quoted, bare in _FIELD_TOKEN.findall(match.group(1))]
    url, anchor, index = "", None, 0
    while index < len(tokens):
        token = tokens[index]
        if token.lower() == "\\l" and index + 1 < len(tokens):
            anchor, index = tokens[index + 1], index + 2
        elif token.lower() in ("\\o", "\\t") and index + 1 < len(tokens):
            index += 2
        elif token.startswith("\\"):
            index += 1
        else:
            url, index = url or token, index + 1
    return url_with_anchor(url, anchor) if url or anchor else None


def url_with_anchor(base: str, anchor: str | None) -> str:
    url = base
    if anchor and "#" not in base:
        url += "#" + urllib.parse.quote(anchor, safe="-._~!$&'*+,;=:@/?")
    # A URL with spaces or parentheses would break the markdown link syntax.
    return url.replace(" ", "%20").replace("(", "%28").replace(")", "%29")
