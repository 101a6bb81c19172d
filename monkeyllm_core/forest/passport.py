"""Passports: a node is ``---\\n<yaml>\\n---\\n\\n<body>\\n``.

Parsing and rendering are byte-stable for nodes we write: ``render(parse(text))``
returns ``text``. Keys are written in the canonical order of FOREST-FORMAT.md and
unknown keys pass through untouched, after the known ones, in their own order.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import VineError

_PYYAML: tuple[Any, Any, Any] | None = None  # (yaml, its Loader, its Dumper), once imported
# a passport's YAML in Python for the shapes a writer makes (block_yaml), or None
_BLOCK_RENDER: Callable[[dict[str, Any]], str | None] | None = None


def _pyyaml() -> tuple[Any, Any, Any]:
    """PyYAML with the safe loader and dumper, imported by the first parse or render:
    its import compiles the pure-Python reader's and resolver's patterns (about 20 ms),
    which a command that opens a forest and writes nothing (a no-change sync) never needs."""
    global _PYYAML, _BLOCK_RENDER
    if _PYYAML is None:
        import yaml
        from .block_yaml import block_yaml_renderer
        try:  # libyaml is ~9x faster than the pure-Python loader/dumper
            _PYYAML = (yaml, yaml.CSafeLoader, yaml.CSafeDumper)
        except AttributeError:  # pragma: no cover - PyYAML built without libyaml
            _PYYAML = (yaml, yaml.SafeLoader, yaml.SafeDumper)
        _BLOCK_RENDER = block_yaml_renderer(_PYYAML[2])
    return _PYYAML

KEY_ORDER = (
    "id", "type", "title", "summary", "created", "updated", "tags", "links",
    "confidence", "source", "payload", "payload_type", "payload_hash",
    "entity_kind", "aliases", "origin",
)
FENCE = "---\n"


@dataclass
class Node:
    """A parsed node: its passport (frontmatter) and its markdown body."""

    frontmatter: dict[str, Any]
    body: str

    @property
    def id(self) -> str:
        return str(self.frontmatter.get("id", ""))


def _normalise_value(value: Any) -> Any:
    """Dates become ISO strings so that a foreign forest's unquoted dates compare
    and re-render the way ours do."""
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()[:10] if isinstance(value, dt.date) and not isinstance(value, dt.datetime) else value.isoformat()
    return value


def parse_node(text: str, *, where: str = "node") -> Node:
    """Split and parse a node. Raises E_FRONTMATTER naming ``where`` on bad input."""
    yaml_text, body = split_node(text, where=where)
    return Node(frontmatter=_load_frontmatter(yaml_text, where), body=body)


def split_node(text: str, *, where: str = "node") -> tuple[str, str]:
    """(frontmatter YAML text, body) without parsing the YAML: for a reader that
    wants only the body (a digest's outline), the YAML is most of the cost."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith(FENCE):
        raise VineError("E_FRONTMATTER", f"{where}: no frontmatter block",
                        "A node starts with a line '---', YAML, then a line '---'.")
    end = text.find("\n---\n", 3)
    if end == -1:
        if text.endswith("\n---"):
            end = len(text) - 4
        else:
            raise VineError("E_FRONTMATTER", f"{where}: frontmatter block is not closed",
                            "Close the YAML block with a line '---'.")
    start = end + 5
    if text.startswith("\n", start):  # the blank line after the fence is not part of the body
        start += 1
    return text[4:end + 1], text[start:]


def _load_frontmatter(yaml_text: str, where: str) -> dict[str, Any]:
    yaml, loader, _dumper = _pyyaml()
    try:
        data = yaml.load(yaml_text, Loader=loader) if yaml_text.strip() else {}
    except (yaml.YAMLError, ValueError) as exc:  # ValueError: a date like 2026-13-45
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 2}" if mark is not None else ""
        raise VineError("E_FRONTMATTER", f"{where}: invalid YAML{at}",
                        "Fix the frontmatter so it parses as a YAML mapping.") from None
    if not isinstance(data, dict):
        raise VineError("E_FRONTMATTER", f"{where}: frontmatter is not a mapping",
                        "The frontmatter must be 'key: value' lines.")
    return {str(k): _normalise_value(v) for k, v in data.items()}


def ordered_frontmatter(frontmatter: dict[str, Any]) -> dict[str, Any]:
    """Canonical key order; confidence 1.0 is omitted (it is the default)."""
    out: dict[str, Any] = {}
    for key in KEY_ORDER:
        if key in frontmatter and frontmatter[key] is not None:
            if key == "confidence" and frontmatter[key] == 1.0:
                continue
            if key in ("tags", "links", "aliases") and frontmatter[key] == []:
                continue
            out[key] = frontmatter[key]
    for key, value in frontmatter.items():
        if key not in out and key not in KEY_ORDER and value is not None:
            out[key] = value
    return out


def render_frontmatter(frontmatter: dict[str, Any]) -> str:
    return _dump(ordered_frontmatter(frontmatter))


def _dump(mapping: dict[str, Any]) -> str:
    yaml, _loader, dumper = _pyyaml()
    # the same bytes as the dump below, without building PyYAML's nodes and events,
    # for the shapes block_yaml proves (about 10x cheaper); None: any other shape
    text = _BLOCK_RENDER(mapping) if _BLOCK_RENDER is not None else None
    if text is not None:
        return text
    return yaml.dump(mapping, Dumper=dumper, sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=1_000_000)


def _canonical_body(body: str) -> str:
    """The body as a rendered node holds it: no leading blank lines, one final newline.
    A body already in that form is returned as is (an index can be a megabyte: no copy)."""
    if not body.startswith("\n") and body.endswith("\n") and not body.endswith("\n\n"):
        return body
    return body.strip("\n") + "\n"


def render_node(frontmatter: dict[str, Any], body: str) -> str:
    return "".join((FENCE, render_frontmatter(frontmatter), FENCE, "\n", _canonical_body(body)))


def render_node_parsed(frontmatter: dict[str, Any], body: str, *, where: str = "node") -> tuple[str, Node]:
    """The rendered text and exactly what ``parse_node`` returns for it, without
    copying the body back out of the text: the writer re-reads a branch index on
    every plant beneath it, and the index can hold thousands of lines."""
    rendered = _render_from_fragments(frontmatter, where)
    if rendered is None:
        header = render_frontmatter(frontmatter)
        parsed_fm = None
    else:
        header, parsed_fm = rendered
    body = _canonical_body(body)
    text = "".join((FENCE, header, FENCE, "\n", body))
    if text.find("\n---\n", 3) != len(FENCE) + len(header) - 1:
        return text, parse_node(text, where=where)  # a fence inside the YAML: parse it the long way
    if parsed_fm is None:
        parsed_fm = _load_frontmatter(header, where)
    return text, Node(frontmatter=parsed_fm, body=body)


# A branch's passport is rendered again (and read back) on every plant beneath it,
# and between two plants only its coverage changes. A block mapping of scalars is
# dumped entry by entry, each from column 0, so its YAML is the concatenation of
# each ``key: value`` dumped alone, and it loads back entry by entry too
# (tests/core/test_passport.py holds both to the full dump on tricky values). Each
# entry's text and loaded value are remembered: a branch costs one small dump for
# the entry that changed instead of a dump and a load of the whole mapping.
# bool is an int; a date is left out: one date object under two keys is dumped as an anchor
_FRAGMENT_TYPES = (str, int, float)
_FRAGMENTS: dict[tuple[str, type, Any], tuple[str, str, Any]] = {}  # (key, type, value) -> (YAML, key, loaded value)
_FRAGMENTS_KEPT = 4096


def _render_from_fragments(frontmatter: dict[str, Any], where: str) -> tuple[str, dict[str, Any]] | None:
    """(the YAML render_frontmatter gives, what _load_frontmatter gives for it), or
    None when a value is not a string or a number (a date, a list or a mapping may
    be one object under two keys, which a whole dump writes as an anchor)."""
    ordered = ordered_frontmatter(frontmatter)
    if not ordered:
        return None
    pieces: list[str] = []
    parsed: dict[str, Any] = {}
    for key, value in ordered.items():
        if not isinstance(key, str) or not isinstance(value, _FRAGMENT_TYPES):
            return None
        # a float by its repr: -0.0 == 0.0 (and nan is no key at all), their YAML differs
        cache_key = (key, type(value), repr(value) if type(value) is float else value)
        fragment = _FRAGMENTS.get(cache_key)
        if fragment is None:
            text = _dump({key: value})
            loaded = _load_frontmatter(text, where)
            if len(loaded) != 1:
                return None
            (loaded_key, loaded_value), = loaded.items()
            if len(_FRAGMENTS) >= _FRAGMENTS_KEPT:
                _FRAGMENTS.clear()
            fragment = _FRAGMENTS[cache_key] = (text, loaded_key, loaded_value)
        pieces.append(fragment[0])
        parsed[fragment[1]] = fragment[2]
    if len(parsed) != len(pieces):
        return None  # two keys that load as one: let the whole dump and load decide
    return "".join(pieces), parsed


def yaml_dump(data: Any) -> str:
    """Safe YAML for config files, in the same style as passports."""
    yaml, _loader, dumper = _pyyaml()
    return yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=1_000_000)


def yaml_load(text: str) -> Any:
    yaml, loader, _dumper = _pyyaml()
    return yaml.load(text, Loader=loader)
