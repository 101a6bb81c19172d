"""What a Word paragraph is, from its style and numbering: a title, a heading of some
level, a bullet or numbered list item at some depth, or an ordinary paragraph.

- The ``Title`` style is the title (level 0); ``Heading N`` is level N. A custom style
  based on one of them (through ``basedOn``, up to ten steps) counts as that style.
- ``List Bullet*`` styles and bullet numbering are bullet items, ``List Number*`` and
  other numbering are numbered items; the depth is ``ilvl`` (or the digit in
  ``List Bullet 2``). Numbering removed on purpose (``numId`` 0) is no list.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"

_MAX_STYLE_DEPTH = 10
_HEADING_NAME = re.compile(r"^heading ([1-9])$", re.IGNORECASE)
_LIST_NAME = re.compile(r"^list (bullet|number)(?: ([2-9]))?$", re.IGNORECASE)


@dataclass(frozen=True, kw_only=True)
class StyleKind:
    heading_level: int | None = None  # 0 for Title
    list_marker: str | None = None  # "- " or "1. "
    list_level: int = 0


@dataclass(frozen=True, kw_only=True)
class ParagraphStyles:
    """The document's paragraph styles and list definitions, read once."""

    styles: dict[str, StyleKind]
    default_style: StyleKind
    number_formats: dict[tuple[str, str], str]  # (numId, ilvl) -> numFmt

    def kind(self, paragraph: Any) -> StyleKind:
        """The kind of one ``w:p`` (see the module docstring)."""
        props = paragraph.find(f"{W}pPr")
        style_el = props.find(f"{W}pStyle") if props is not None else None
        kind = (
            self.styles.get(style_el.get(f"{W}val", ""), StyleKind())
            if style_el is not None
            else self.default_style
        )
        if kind.heading_level is not None:
            return kind
        num = props.find(f"{W}numPr") if props is not None else None
        if num is None:
            return kind
        num_id_el, ilvl_el = num.find(f"{W}numId"), num.find(f"{W}ilvl")
        num_id = num_id_el.get(f"{W}val", "0") if num_id_el is not None else "0"
        ilvl = ilvl_el.get(f"{W}val", "0") if ilvl_el is not None else "0"
        if num_id == "0":  # numbering explicitly removed
            return StyleKind()
        # A level the definition leaves out follows the list's first level.
        fmt = self.number_formats.get((num_id, ilvl), self.number_formats.get((num_id, "0"), "decimal"))
        level = int(ilvl) if ilvl.isdigit() else 0
        return StyleKind(list_marker="- " if fmt in ("bullet", "none") else "1. ", list_level=level)


def read_paragraph_styles(document: Any) -> ParagraphStyles:
    raw: dict[str, tuple[str, str | None]] = {}  # style id -> (name, based-on id)
    default_id = None
    for style in document.styles.element.iterchildren(f"{W}style"):
        style_id = style.get(f"{W}styleId")
        if style_id is None or style.get(f"{W}type") not in (None, "paragraph"):
            continue
        name_el = style.find(f"{W}name")
        based_el = style.find(f"{W}basedOn")
        raw[style_id] = (
            name_el.get(f"{W}val", "") if name_el is not None else "",
            based_el.get(f"{W}val") if based_el is not None else None,
        )
        if style.get(f"{W}default") in ("1", "true"):
            default_id = style_id
    styles = {style_id: _resolve_style(style_id, raw) for style_id in raw}
    return ParagraphStyles(
        styles=styles,
        default_style=styles.get(default_id or "", StyleKind()),
        number_formats=_number_formats(document),
    )


def _resolve_style(style_id: str, raw: dict[str, tuple[str, str | None]]) -> StyleKind:
    current: str | None = style_id
    for _ in range(_MAX_STYLE_DEPTH):
        if current is None or current not in raw:
            break
        name, based_on = raw[current]
        if name.lower() == "title":
            return StyleKind(heading_level=0)
        heading = _HEADING_NAME.match(name)
        if heading:
            return StyleKind(heading_level=int(heading.group(1)))
        listed = _LIST_NAME.match(name)
        if listed:
            marker = "- " if listed.group(1).lower() == "bullet" else "1. "
            return StyleKind(list_marker=marker, list_level=int(listed.group(2) or 1) - 1)
        current = based_on
    return StyleKind()


def _number_formats(document: Any) -> dict[tuple[str, str], str]:
    try:
        numbering = document.part.numbering_part.element
    except Exception:  # no numbering part: the document has no numbered paragraphs
        return {}
    abstract: dict[str, dict[str, str]] = {}
    for node in numbering.iterchildren(f"{W}abstractNum"):
        levels = {}
        for level in node.iterchildren(f"{W}lvl"):
            fmt = level.find(f"{W}numFmt")
            fmt_value = fmt.get(f"{W}val", "decimal") if fmt is not None else "decimal"
            levels[level.get(f"{W}ilvl", "0")] = fmt_value
        abstract[node.get(f"{W}abstractNumId", "")] = levels
    formats: dict[tuple[str, str], str] = {}
    for num in numbering.iterchildren(f"{W}num"):
        ref = num.find(f"{W}abstractNumId")
        if ref is None:
            continue
        for ilvl, fmt in abstract.get(ref.get(f"{W}val", ""), {}).items():
            formats[(num.get(f"{W}numId", ""), ilvl)] = fmt
    return formats
