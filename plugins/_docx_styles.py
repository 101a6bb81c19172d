"""What a Word paragraph is, from its style and numbering: a title, a heading of some
level, a bullet or numbered list item at some depth, or an ordinary paragraph.

- The ``Title`` style is the title (level 0); ``Heading N`` is level N. A custom style
  based on one of them (through ``basedOn``, up to ten steps) counts as that style.
- ``List Bullet*`` styles and bullet numbering are bullet items, ``List Number*`` and
  other numbering are numbered items; the depth is ``ilvl`` (or the digit in
  ``List Bullet 2``). Numbering removed on purpose (``numId`` 0) is no list.

Documents made from one template share their ``styles.xml`` byte for byte, and it is
most of the package (python-docx's default one is 350 KB, the body a few KB): what
is read from it is kept per process with the part's bytes (``document_styles``), found
by their size and CRC-32 and confirmed byte for byte, and a styles part already read
is not parsed again (``LazyStylesPart``). A part seen for the first time is parsed
when the package is opened, as python-docx does, so a broken one fails there, with
the same error.
"""
from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Any

from monkeyllm_plugins._docx_format import character_style_marks, first_child

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"

_MAX_STYLE_DEPTH = 10
_STYLES_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles"
_STYLES_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"
_KEPT_STYLE_PARTS = 16
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
        props = first_child(paragraph, f"{W}pPr")
        style_el = first_child(props, f"{W}pStyle") if props is not None else None
        kind = (
            self.styles.get(style_el.get(f"{W}val", ""), StyleKind())
            if style_el is not None
            else self.default_style
        )
        if kind.heading_level is not None:
            return kind
        num = first_child(props, f"{W}numPr") if props is not None else None
        if num is None:
            return kind
        num_id_el, ilvl_el = first_child(num, f"{W}numId"), first_child(num, f"{W}ilvl")
        num_id = num_id_el.get(f"{W}val", "0") if num_id_el is not None else "0"
        ilvl = ilvl_el.get(f"{W}val", "0") if ilvl_el is not None else "0"
        if num_id == "0":  # numbering explicitly removed
            return StyleKind()
        # A level the definition leaves out follows the list's first level.
        fmt = self.number_formats.get((num_id, ilvl), self.number_formats.get((num_id, "0"), "decimal"))
        level = int(ilvl) if ilvl.isdigit() else 0
        return StyleKind(list_marker="- " if fmt in ("bullet", "none") else "1. ", list_level=level)


def document_styles(document: Any) -> tuple[ParagraphStyles, dict[str, frozenset[str]]]:
    """The paragraph styles and the character styles' marks
    (``_docx_format.character_style_marks``), read from a styles part once per process."""
    part = _styles_part(document)
    key = getattr(part, "styles_key", None)
    kept = _STYLES_READ.get(key) if key is not None else None
    if kept is None:
        element = document.styles.element
        read = _paragraph_styles(element), character_style_marks(element)
        if key is not None:
            if len(_STYLES_READ) >= _KEPT_STYLE_PARTS:
                del _STYLES_READ[next(iter(_STYLES_READ))]  # the oldest
            _STYLES_READ[key] = (part.styles_blob, read)
    else:
        read = kept[1]
    (styles, default_style), marks = read
    return ParagraphStyles(styles=styles, default_style=default_style,
                           number_formats=_number_formats(document)), marks


# (size, CRC-32) of a styles part -> (its bytes, ((paragraph styles, default style),
# character style marks))
_STYLES_READ: dict[tuple[int, int], tuple[bytes, tuple[tuple[dict[str, StyleKind], StyleKind],
                                                       dict[str, frozenset[str]]]]] = {}


def _styles_key(blob: bytes) -> tuple[int, int] | None:
    """Where a styles part's reading is kept: its size and CRC-32 (a third of a
    SHA-256's time), None when another part with the same size and CRC was read (it
    is read the ordinary way then, never taken for the other)."""
    key = (len(blob), zlib.crc32(blob))
    kept = _STYLES_READ.get(key)
    return key if kept is None or kept[0] == blob else None


def _styles_part(document: Any) -> Any:
    try:
        return document.part.part_related_by(_STYLES_REL)
    except KeyError:  # python-docx makes a default one: read it the ordinary way
        return None


def _paragraph_styles(styles_element: Any) -> tuple[dict[str, StyleKind], StyleKind]:
    raw: dict[str, tuple[str, str | None]] = {}  # style id -> (name, based-on id)
    default_id = None
    for style in styles_element.iterchildren(f"{W}style"):
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
    return styles, styles.get(default_id or "", StyleKind())


def use_lazy_styles_parts() -> None:
    """Have python-docx load styles parts as ``LazyStylesPart`` (its registry of part
    classes is the way it offers to replace one)."""
    from docx.opc.part import PartFactory

    PartFactory.part_type_for[_STYLES_TYPE] = _lazy_styles_part_class()


def _lazy_styles_part_class() -> type:
    global _LAZY_CLASS
    if _LAZY_CLASS is not None:
        return _LAZY_CLASS
    from docx.oxml.parser import parse_xml
    from docx.parts.styles import StylesPart

    class LazyStylesPart(StylesPart):
        """A styles part whose XML is parsed when first used: at once when its bytes
        were never read in this process (so a broken part fails as it always did),
        else only if something asks for the element."""

        _parsed: Any = None
        _source: bytes = b""
        styles_key: tuple[int, int] | None = None
        styles_blob: bytes = b""

        @classmethod
        def load(cls, partname: Any, content_type: str, blob: bytes, package: Any) -> Any:
            key = _styles_key(blob)
            if key is not None and key in _STYLES_READ:  # these very bytes were read
                part = cls(partname, content_type, None, package)
                part._source = blob
            else:
                part = cls(partname, content_type, parse_xml(blob), package)
            part.styles_key, part.styles_blob = key, blob
            return part

        @property
        def _element(self) -> Any:
            if self._parsed is None and self._source:
                self._parsed = parse_xml(self._source)
            return self._parsed

        @_element.setter
        def _element(self, element: Any) -> None:
            self._parsed = element

    _LAZY_CLASS = LazyStylesPart
    return LazyStylesPart


_LAZY_CLASS: type | None = None


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
            fmt = first_child(level, f"{W}numFmt")
            fmt_value = fmt.get(f"{W}val", "decimal") if fmt is not None else "decimal"
            levels[level.get(f"{W}ilvl", "0")] = fmt_value
        abstract[node.get(f"{W}abstractNumId", "")] = levels
    formats: dict[tuple[str, str], str] = {}
    for num in numbering.iterchildren(f"{W}num"):
        ref = first_child(num, f"{W}abstractNumId")
        if ref is None:
            continue
        for ilvl, fmt in abstract.get(ref.get(f"{W}val", ""), {}).items():
            formats[(num.get(f"{W}numId", ""), ilvl)] = fmt
    return formats
