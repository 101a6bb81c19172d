"""A graft patch applied to a passport and body: pure, so every rule of graft is
here and nothing is written until the engine commits the result.

Keys: ``set_frontmatter`` (None removes a key; id, type and created never
change; a branch's coverage is counted, never set), ``add_links`` (an existing
link is *fortified*: no new edge), ``remove_links``, ``body``,
``replace_section`` and ``append_section``.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from ..errors import VineError
from .rules import check_id, is_branch_id
from .sections import append_section, replace_section, section, section_span

# concepts.md, the confidence lifecycle: an agent mints a shortcut at 0.5
SHORTCUT_REL = "discovered-shortcut"
SHORTCUT_CONFIDENCE = 0.5

PATCH_KEYS = frozenset({"set_frontmatter", "add_links", "remove_links", "append_section",
                        "replace_section", "body"})


def apply_patch(node_id: str, old: Mapping[str, Any], body: str, patch: Mapping[str, Any], *,
                exists: Callable[[str], bool]) -> tuple[dict[str, Any], str, list[str], list[dict[str, Any]]]:
    """Returns (frontmatter, body, what changed for the commit message, fortified links)."""
    fm = dict(old)
    what: list[str] = []
    fortified: list[dict[str, Any]] = []
    unknown = set(patch) - PATCH_KEYS
    if unknown:
        raise VineError("E_FRONTMATTER", f"graft: unknown patch key(s) {', '.join(sorted(unknown))}",
                        "Use set_frontmatter, add_links, remove_links, append_section, replace_section or body.")
    _check_patch_shape(patch)
    for key, value in (patch.get("set_frontmatter") or {}).items():
        if key in ("id", "type", "created") and value != old.get(key):
            raise VineError("E_FRONTMATTER", f"{node_id}: {key} cannot change",
                            "Ids are immutable; plant a new node instead.")
        if key == "coverage" and is_branch_id(node_id):
            continue  # coverage is counted by the engine, never set
        if value is None:
            if key in fm:
                fm.pop(key)
                what.append(f"unset {key}")
        elif fm.get(key) != value:
            fm[key] = value
            what.append(f"set {key}")
    if fm.get("summary") != old.get("summary") and "summary_source" not in (patch.get("set_frontmatter") or {}):
        # whoever set this summary, it is no longer the machine-derived one
        fm.pop("summary_source", None)
    links = [dict(link) for link in (fm.get("links") or [])]
    added = 0
    for link in patch.get("add_links") or []:
        link = dict(link)
        if link.get("rel") == SHORTCUT_REL:
            link.setdefault("confidence", SHORTCUT_CONFIDENCE)  # minted by an agent: unconfirmed until walked
        match = next((l for l in links if l.get("rel") == link.get("rel") and l.get("target") == link.get("target")), None)
        if match is not None:
            fortified.append({"rel": link.get("rel"), "target": link.get("target")})
            continue
        if not isinstance(link.get("target"), str):
            raise VineError("E_FRONTMATTER", f"{node_id}: a link needs a target", "Give rel and target.")
        check_id(link["target"])  # a target is an id: never a path outside the forest
        if not exists(link["target"]):
            raise VineError("E_NOT_FOUND", f"{node_id}: link target {link['target']!r} does not exist",
                            "Link only to existing node ids.")
        links.append(link)
        added += 1
    removed = 0
    for link in patch.get("remove_links") or []:
        keep = [l for l in links if not (l.get("target") == link.get("target")
                                         and (link.get("rel") is None or l.get("rel") == link.get("rel")))]
        removed += len(links) - len(keep)
        links = keep
    if added:
        what.append(f"+{added} links")
    if removed:
        what.append(f"-{removed} links")
    if added or removed:
        fm["links"] = links
    if "body" in patch:
        if patch["body"] != body:
            body = str(patch["body"])
            what.append("set body")
    if patch.get("replace_section"):
        spec = patch["replace_section"]
        header = spec["header"]
        if section_span(body, header) is None:
            raise VineError("E_NOT_FOUND", f"{node_id}: no section '{header}'",
                            "Use append_section to add a new section.")
        new = replace_section(body, header, section(header, spec.get("body", "")))
        if new != body:
            body = new
            what.append(f"replace '{header}'")
    if patch.get("append_section"):
        spec = patch["append_section"]
        body = append_section(body, section(spec["header"], spec.get("body", "")))
        what.append(f"append '{spec['header']}'")
    return fm, body, what, fortified


def _check_patch_shape(patch: Mapping[str, Any]) -> None:
    """A malformed patch is an E_FRONTMATTER error naming the key, never a TypeError."""
    def bad(key: str, shape: str) -> VineError:
        return VineError("E_FRONTMATTER", f"graft: {key} must be {shape}",
                         "See primitives.md, graft: the patch keys and their shapes.")
    if "set_frontmatter" in patch and not isinstance(patch["set_frontmatter"] or {}, Mapping):
        raise bad("set_frontmatter", "a mapping of frontmatter keys to values")
    for key in ("add_links", "remove_links"):
        links = patch.get(key) or []
        if not isinstance(links, list) or not all(isinstance(link, Mapping) for link in links):
            raise bad(key, "a list of {rel, target} mappings")
    for key in ("append_section", "replace_section"):
        spec = patch.get(key)
        if spec and not (isinstance(spec, Mapping) and isinstance(spec.get("header"), str)
                         and spec["header"].strip() and "\n" not in spec["header"]
                         and isinstance(spec.get("body", ""), str)):
            raise bad(key, "a mapping with a one-line 'header' and a string 'body'")
    if "body" in patch and not isinstance(patch["body"], str):
        raise bad("body", "a string")
