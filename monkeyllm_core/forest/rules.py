"""The passport rules every write obeys: ids, the parent rule, the dialect,
confidence, source and link limits, and the summary contract
(``summary_contract``, its own module: the Gardener and the Curator build on it)."""
from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING, Any

from ..errors import VineError
from .summary_contract import check_summary

if TYPE_CHECKING:
    from .dialect import Dialect

MAX_LINKS = 50
SOURCES = ("manual", "ingest", "agent")
PAYLOAD_TYPES = ("sqlite", "pdf", "docx", "image", "audio")
MASTER_ID = "_index"
REQUIRED_KEYS = ("id", "type", "title", "summary", "created", "updated")

_ID_SEGMENT = re.compile(r"^[^/\\\x00]+$")


def check_id(node_id: str) -> None:
    """An id is a relative posix path without '.md' that stays inside the forest."""
    bad = (
        not isinstance(node_id, str) or not node_id or node_id.startswith("/")
        or node_id.endswith(".md") or "\\" in node_id
        or any(seg in ("", ".", "..") or not _ID_SEGMENT.match(seg) for seg in node_id.split("/"))
    )
    if bad:
        raise VineError("E_FRONTMATTER", f"invalid id {node_id!r}",
                        "An id is the node's path relative to the forest root, posix "
                        "separators, no '.md', no '..' or empty segments.")


# Folders the engine keeps out of the node graph (node_files and the walk skip them),
# and characters that would break an entry line's ``[[id]]`` wikilink or its line.
RESERVED_SEGMENTS = ("_derived", "_assets")
_WIKILINK_BREAKERS = re.compile(r"[\[\]|#\x00-\x1f\x7f]")


def check_new_id(node_id: str) -> None:
    """The stricter rule for an id being created: on top of ``check_id``, no hidden
    segment (``.git``, ``.x``: never listed, never read back), no segment the
    derived layer or the payload store owns, and nothing that breaks ``[[id]]``."""
    check_id(node_id)
    segments = node_id.split("/")
    bad = (any(seg.startswith(".") or seg in RESERVED_SEGMENTS for seg in segments)
           or _WIKILINK_BREAKERS.search(node_id) is not None
           or any(seg != seg.strip() for seg in segments))
    if bad:
        raise VineError("E_FRONTMATTER", f"invalid id {node_id!r}",
                        "An id may not start a segment with '.', use _derived or _assets as a folder, "
                        "or contain control characters, '[', ']', '|' or '#'.")


def is_branch_id(node_id: str) -> bool:
    return node_id == MASTER_ID or node_id.endswith("/_index")


def parent_of(node_id: str) -> str | None:
    """The parent rule: a/b/c under a/b/_index; a/_index and top-level x under _index."""
    if node_id == MASTER_ID:
        return None
    parts = node_id.split("/")
    if parts[-1] == "_index":
        parts = parts[:-1]
    if len(parts) <= 1:
        return MASTER_ID
    return "/".join(parts[:-1]) + "/_index"


def trail_of(node_id: str) -> list[str]:
    """Ancestor index ids from the root down, not including the node itself."""
    trail: list[str] = []
    parent = parent_of(node_id)
    while parent is not None:
        trail.append(parent)
        parent = parent_of(parent)
    return list(reversed(trail))


def node_path(node_id: str) -> str:
    return f"{node_id}.md"


def validate_passport(fm: dict[str, Any], dialect: Dialect, *, where: str | None = None) -> None:
    """Raise the first rule a passport breaks (E_FRONTMATTER or E_SCHEMA)."""
    where = where or str(fm.get("id", "node"))
    missing = [k for k in REQUIRED_KEYS if not fm.get(k)]
    if missing:
        raise VineError("E_FRONTMATTER", f"{where}: missing required field(s) {', '.join(missing)}",
                        "Every node needs id, type, title, summary, created and updated.")
    check_id(fm["id"])
    if not isinstance(fm["title"], str):
        raise VineError("E_FRONTMATTER", f"{where}: title must be a string", "Quote the title.")
    if fm["type"] not in dialect.types:
        raise VineError("E_SCHEMA", f"{where}: type '{fm['type']}' is not declared in _meta/schema.md",
                        f"Use one of: {', '.join(sorted(dialect.types))}, or declare it.")
    if (fm["type"] == "branch") != is_branch_id(fm["id"]):
        raise VineError("E_SCHEMA", f"{where}: only an _index node is a branch",
                        "A branch's id ends with '/_index'; a leaf is any other type.")
    check_summary(fm["summary"], where=where)
    for key in ("created", "updated"):
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(fm[key])[:10]):
            raise VineError("E_FRONTMATTER", f"{where}: {key} is not an ISO date",
                            "Write dates as YYYY-MM-DD.")
    if "confidence" in fm:
        conf = fm["confidence"]
        if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0 <= conf <= 1:
            raise VineError("E_FRONTMATTER", f"{where}: confidence must be a number in [0, 1]",
                            "Use e.g. 0.7 for unconfirmed content.")
    if "source" in fm and fm["source"] not in SOURCES:
        raise VineError("E_FRONTMATTER", f"{where}: source must be one of {', '.join(SOURCES)}",
                        "Use manual, ingest or agent.")
    if fm.get("payload_type") is not None and fm["payload_type"] not in PAYLOAD_TYPES:
        raise VineError("E_FRONTMATTER", f"{where}: payload_type must be one of {', '.join(PAYLOAD_TYPES)}",
                        "Use sqlite, pdf, docx, image or audio.")
    for key in ("tags", "aliases"):
        if key in fm and fm[key] is not None and (
                not isinstance(fm[key], list) or not all(isinstance(t, str) for t in fm[key])):
            raise VineError("E_FRONTMATTER", f"{where}: {key} must be a list of strings",
                            f"Write {key} as a YAML list.")
    links = fm.get("links") or []
    if not isinstance(links, list):
        raise VineError("E_FRONTMATTER", f"{where}: links must be a list", "Write links as a YAML list.")
    if len(links) > MAX_LINKS:
        raise VineError("E_FRONTMATTER", f"{where}: {len(links)} links, over the limit of {MAX_LINKS}",
                        "A node this connected should become a branch.")
    for link in links:
        if not isinstance(link, dict) or not isinstance(link.get("rel"), str) or not isinstance(link.get("target"), str):
            raise VineError("E_FRONTMATTER", f"{where}: each link needs a rel and a target",
                            "Write links as '- rel: related-to' / '  target: some/id'.")
        if not dialect.knows_rel(link["rel"]):
            raise VineError("E_SCHEMA", f"{where}: rel '{link['rel']}' is not declared in _meta/schema.md",
                            f"Use one of: {', '.join(dialect.rels)}, or declare it.")


def today() -> str:
    """The date written into ``created`` and ``updated``."""
    return dt.date.today().isoformat()
