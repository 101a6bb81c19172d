"""Built-in converter: a Word ``.docx`` becomes a markdown ``document`` node.

The container is checked first (empty file, encrypted document, ``.doc`` renamed,
truncated zip, zip bomb: see ``_container``). The body is then walked in document
order straight from the XML, so paragraphs and tables stay interleaved as written.

Rendering rules:

- Headings: the ``Title`` style is the H1. When the document uses ``Title``,
  ``Heading N`` becomes level N+1 (capped at 6) so the title stays the only H1;
  without a Title, ``Heading N`` is level N. Custom styles based on a heading style
  count as that heading. ``Subtitle`` is an ordinary paragraph.
- Lists: ``List Bullet*`` styles and bullet numbering give ``- ``, ``List Number*``
  styles and other numbering give ``1. ``; the nesting level (``ilvl``, or the digit in
  ``List Bullet 2``) indents by four spaces.
- Tables become pipe tables; the first row is the header row. A horizontally or
  vertically merged cell is written once, in its first position, the other positions
  are empty. A nested table is flattened into its cell (cells joined by ``; ``, rows by
  ``<br>``). In cells ``|`` is escaped and line breaks become ``<br>``.
- Hyperlinks: ``[text](url)`` for external links, the text alone otherwise.
- Text boxes: their paragraphs follow the paragraph that anchors them (a box stored
  twice, as DrawingML and as a VML fallback, is read once).
- Images: named, never inlined: ``[image: image1.png]`` (plus the alt text when set).
- Equations: LaTeX-style text between ``$`` (inline) or ``$$`` (an equation paragraph):
  fractions, scripts, roots, delimiters and sums keep their structure (``_omml``).
- Not read: headers, footers, footnotes, comments and deleted (tracked) text.
- Title: the first ``Title`` paragraph, else the first heading, else None.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Iterable

from monkeyllm_plugins._container import check_zip_container
from monkeyllm_plugins._omml import equation_text

from monkeyllm_gardener.conversion import Conversion, ConversionError
from monkeyllm_gardener.hookspecs import hookimpl

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
WP = "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}"
V = "{urn:schemas-microsoft-com:vml}"

_MAX_STYLE_DEPTH = 10
_HEADING_NAME = re.compile(r"^heading ([1-9])$", re.IGNORECASE)
_LIST_NAME = re.compile(r"^list (bullet|number)(?: ([2-9]))?$", re.IGNORECASE)
# Elements whose children are ordinary content (content controls, tracked insertions,
# bidirectional embeddings ``w:dir``/``w:bdo`` around right-to-left runs...).
_TRANSPARENT = {"sdt", "sdtContent", "ins", "smartTag", "customXml", "fldSimple", "moveTo", "dir", "bdo"}


def _local(element: Any) -> str:
    tag = element.tag
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


@dataclass(frozen=True, kw_only=True)
class StyleKind:
    heading_level: int | None = None  # 0 for Title
    list_marker: str | None = None  # "- " or "1. "
    list_level: int = 0


@dataclass
class _Context:
    """What the walker needs from the document: style kinds, numbering, relationships."""

    styles: dict[str, StyleKind]
    default_style: StyleKind
    number_formats: dict[tuple[str, str], str]  # (numId, ilvl) -> numFmt
    part: Any  # the python-docx document part, for relationships
    has_title: bool = False


@dataclass
class _Block:
    text: str
    is_list_item: bool = False


@dataclass
class _Inline:
    """Text of one paragraph plus blocks (text boxes) to emit after it."""

    pieces: list[str] = field(default_factory=list)
    after: list[_Block] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.pieces)


class DocxConverter:
    name = "docx"
    extensions = (".docx",)
    requires: tuple[str, ...] = ("docx",)
    install_hint = 'pip install "monkeyllm[ingest]"'

    def convert(self, path: Path) -> Conversion:
        path = Path(path)
        check_zip_container(path)
        import docx

        try:
            document = docx.Document(str(path))
        except Exception as error:  # python-docx raises many types on foreign packages
            raise ConversionError(
                f"{path.name}: not a readable Word document ({type(error).__name__}): "
                "open it in Word and save it as .docx again"
            ) from None
        context = _build_context(document)
        body = document.element.body
        context.has_title = any(
            _paragraph_kind(p, context).heading_level == 0 for p in body.iter(f"{W}p")
        )
        blocks = list(_blocks(body, context))
        title = _find_title(body, context)
        return Conversion(
            kind="markdown",
            node_type="document",
            title=title,
            markdown=_join_blocks(blocks),
        )


# ---------------------------------------------------------------- document facts


def _build_context(document: Any) -> _Context:
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
    default = styles.get(default_id or "", StyleKind())
    return _Context(
        styles=styles,
        default_style=default,
        number_formats=_number_formats(document),
        part=document.part,
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


def _paragraph_kind(paragraph: Any, context: _Context) -> StyleKind:
    props = paragraph.find(f"{W}pPr")
    style_el = props.find(f"{W}pStyle") if props is not None else None
    kind = (
        context.styles.get(style_el.get(f"{W}val", ""), StyleKind())
        if style_el is not None
        else context.default_style
    )
    if kind.heading_level is not None:
        return kind
    num = props.find(f"{W}numPr") if props is not None else None
    if num is not None:
        num_id_el, ilvl_el = num.find(f"{W}numId"), num.find(f"{W}ilvl")
        num_id = num_id_el.get(f"{W}val", "0") if num_id_el is not None else "0"
        ilvl = ilvl_el.get(f"{W}val", "0") if ilvl_el is not None else "0"
        if num_id == "0":  # numbering explicitly removed
            return StyleKind()
        # A level the definition leaves out follows the list's first level.
        fmt = context.number_formats.get(
            (num_id, ilvl), context.number_formats.get((num_id, "0"), "decimal")
        )
        level = int(ilvl) if ilvl.isdigit() else 0
        return StyleKind(list_marker="- " if fmt in ("bullet", "none") else "1. ", list_level=level)
    return kind


# ---------------------------------------------------------------- walking


def _blocks(container: Any, context: _Context) -> Iterable[_Block]:
    for child in container.iterchildren():
        tag = _local(child)
        if tag == "p":
            yield from _paragraph_blocks(child, context)
        elif tag == "tbl":
            table = _render_table(child, context)
            if table:
                yield _Block(table)
        elif tag in _TRANSPARENT:
            yield from _blocks(child, context)


def _paragraph_blocks(paragraph: Any, context: _Context) -> Iterable[_Block]:
    inline = _inline(paragraph, context)
    text = inline.text.strip()
    if text:
        kind = _paragraph_kind(paragraph, context)
        if kind.heading_level is not None:
            level = kind.heading_level + 1 if context.has_title else max(kind.heading_level, 1)
            yield _Block("#" * min(level, 6) + " " + " ".join(text.split()))
        elif kind.list_marker:
            indent = "    " * kind.list_level
            yield _Block(indent + kind.list_marker + text.replace("\n", " "), is_list_item=True)
        else:
            yield _Block(text)
    yield from inline.after


def _inline(element: Any, context: _Context, into: _Inline | None = None) -> _Inline:
    inline = into if into is not None else _Inline()
    for child in element.iterchildren():
        tag = _local(child)
        if tag == "r":
            _run(child, context, inline)
        elif tag == "hyperlink":
            linked = _inline(child, context)
            url = _external_target(context, child.get(f"{R}id"))
            text = linked.text
            inline.pieces.append(f"[{text}]({url})" if url and text.strip() else text)
            inline.after.extend(linked.after)
        elif tag in _TRANSPARENT:
            _inline(child, context, inline)
        elif tag == "AlternateContent":
            _alternate(child, context, inline)
        elif tag in ("oMath", "oMathPara"):
            equation = equation_text(child)
            if equation:
                inline.pieces.append(f"${equation}$" if tag == "oMath" else f"$${equation}$$")
    return inline


def _run(run: Any, context: _Context, inline: _Inline) -> None:
    for child in run.iterchildren():
        tag = _local(child)
        if tag == "t":
            inline.pieces.append(child.text or "")
        elif tag == "tab":
            inline.pieces.append("\t")
        elif tag in ("br", "cr"):
            if child.get(f"{W}type") not in ("page", "column"):
                inline.pieces.append("\n")
        elif tag == "noBreakHyphen":
            inline.pieces.append("-")
        elif tag in ("drawing", "pict", "object"):
            _graphic(child, context, inline)
        elif tag == "AlternateContent":
            _alternate(child, context, inline)


def _alternate(element: Any, context: _Context, inline: _Inline) -> None:
    """mc:AlternateContent holds the same content twice: read the first choice only."""
    for choice in element.iterchildren():
        if _local(choice) in ("Choice", "Fallback"):
            for child in choice.iterchildren():
                if _local(child) == "r":
                    _run(child, context, inline)
                else:
                    _graphic(child, context, inline)
            return


def _graphic(element: Any, context: _Context, inline: _Inline) -> None:
    """A drawing, VML shape or OLE object: images are named, text boxes kept."""
    boxes = list(element.iter(f"{W}txbxContent"))
    # A nested text box lives inside an outer one; read only the outermost.
    outer = [box for box in boxes if not any(b is not box and _contains(b, box) for b in boxes)]
    for box in outer:
        inline.after.extend(_blocks(box, context))
    for name, alt in _images(element, context):
        inline.pieces.append(f"[image: {name} — {alt}]" if alt else f"[image: {name}]")


def _contains(ancestor: Any, element: Any) -> bool:
    return any(parent is ancestor for parent in element.iterancestors())


def _images(element: Any, context: _Context) -> list[tuple[str, str]]:
    found = []
    alt = ""
    doc_pr = next(element.iter(f"{WP}docPr"), None)
    if doc_pr is not None:
        alt = " ".join((doc_pr.get("descr") or "").split())
    for blip in element.iter(f"{A}blip"):
        if not _inside_text_box(blip, element):
            found.append((_image_name(context, blip.get(f"{R}embed") or blip.get(f"{R}link")), alt))
    for image in element.iter(f"{V}imagedata"):
        if not _inside_text_box(image, element):
            found.append((_image_name(context, image.get(f"{R}id")), alt))
    return found


def _inside_text_box(node: Any, stop: Any) -> bool:
    """True when ``node`` sits in a text box below ``stop`` (the box renders it)."""
    for ancestor in node.iterancestors():
        if ancestor is stop:
            return False
        if _local(ancestor) == "txbxContent":
            return True
    return False


def _image_name(context: _Context, rel_id: str | None) -> str:
    rel = context.part.rels.get(rel_id) if rel_id else None
    if rel is None:
        return "unnamed"
    target = rel.target_ref if rel.is_external else str(rel.target_part.partname)
    return PurePosixPath(target).name or "unnamed"


def _external_target(context: _Context, rel_id: str | None) -> str | None:
    rel = context.part.rels.get(rel_id) if rel_id else None
    if rel is None or not rel.is_external:
        return None
    url = rel.target_ref
    # A URL with spaces or parentheses would break the markdown link syntax.
    return url.replace(" ", "%20").replace("(", "%28").replace(")", "%29")


# ---------------------------------------------------------------- tables


def _table_rows(table: Any, context: _Context) -> list[list[str]]:
    """The table as a grid of cell texts, merged cells written once."""
    grid: list[list[str]] = []
    for row in _children(table, "tr"):
        cells: list[str] = []
        props = row.find(f"{W}trPr")
        before = _int_val(props.find(f"{W}gridBefore")) if props is not None else 0
        cells.extend([""] * before)
        for cell in _children(row, "tc"):
            cell_props = cell.find(f"{W}tcPr")
            span, continued = 1, False
            if cell_props is not None:
                span = max(_int_val(cell_props.find(f"{W}gridSpan")) or 1, 1)
                merge = cell_props.find(f"{W}vMerge")
                continued = merge is not None and merge.get(f"{W}val", "continue") == "continue"
            cells.append("" if continued else _cell_text(cell, context))
            cells.extend([""] * (span - 1))
        grid.append(cells)
    return grid


def _children(element: Any, name: str) -> Iterable[Any]:
    """Direct children named ``name``, looking through content controls."""
    for child in element.iterchildren():
        tag = _local(child)
        if tag == name:
            yield child
        elif tag in _TRANSPARENT:
            yield from _children(child, name)


def _int_val(element: Any) -> int:
    if element is None:
        return 0
    value = element.get(f"{W}val", "0")
    return int(value) if value.isdigit() else 0


def _cell_text(cell: Any, context: _Context) -> str:
    parts: list[str] = []
    for child in cell.iterchildren():
        tag = _local(child)
        if tag == "tbl":  # a nested table, flattened into the cell
            rows = _table_rows(child, context)
            parts.extend("; ".join(c for c in row if c) for row in rows if any(row))
        elif tag == "p":  # plain text in a cell: no heading or list markers
            inline = _inline(child, context)
            parts.append(inline.text.strip())
            parts.extend(block.text.strip() for block in inline.after)
        elif tag in _TRANSPARENT:
            parts.extend(block.text.strip() for block in _blocks(child, context))
    text = "<br>".join(part for part in parts if part)
    return text.replace("\n", "<br>")


def _escape_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>")


def _render_table(table: Any, context: _Context) -> str:
    grid = _table_rows(table, context)
    if not any(any(cell for cell in row) for row in grid):
        return ""
    width = max(len(row) for row in grid)
    lines = []
    for index, row in enumerate(grid):
        padded = [_escape_cell(cell) for cell in row] + [""] * (width - len(row))
        lines.append("| " + " | ".join(padded) + " |")
        if index == 0:
            lines.append("|" + " --- |" * width)
    return "\n".join(lines)


# ---------------------------------------------------------------- assembly


def _find_title(body: Any, context: _Context) -> str | None:
    first_heading = None
    for paragraph in body.iter(f"{W}p"):
        level = _paragraph_kind(paragraph, context).heading_level
        if level is None:
            continue
        text = " ".join(_plain_text(paragraph).split())
        if not text:
            continue
        if level == 0:
            return text
        first_heading = first_heading or text
    return first_heading


def _plain_text(paragraph: Any) -> str:
    return "".join(
        node.text or ""
        for node in paragraph.iter(f"{W}t")
        if not any(_local(a) == "txbxContent" for a in node.iterancestors())
    )


def _join_blocks(blocks: list[_Block]) -> str:
    out: list[str] = []
    previous: _Block | None = None
    for block in blocks:
        if previous is not None:
            out.append("\n" if previous.is_list_item and block.is_list_item else "\n\n")
        out.append(block.text)
        previous = block
    return "".join(out) + ("\n" if out else "")


@hookimpl
def register_converters(register: Any) -> None:
    register(DocxConverter(), priority=0.0)
