"""Built-in converter: a Word ``.docx`` becomes a markdown ``document`` node.

The container is checked first (empty file, encrypted document, ``.doc`` renamed,
truncated zip, zip bomb: see ``_container``). A Strict OOXML package, a template or
macro-enabled document named ``.docx`` and a package with relationships to missing
parts are read through a repaired in-memory copy (``_docx_package``). The body is then walked in
document order straight from the XML, so paragraphs and tables stay interleaved as
written; the parts beside it (notes, comments, headers, footers) follow the body.

Rendering rules:

- Headings: the ``Title`` style is the H1. When the document uses ``Title``,
  ``Heading N`` becomes level N+1 (capped at 6) so the title stays the only H1;
  without a Title, ``Heading N`` is level N (``_docx_styles``). ``Subtitle`` is an
  ordinary paragraph. Headings carry no emphasis markers.
- Lists: bullets ``- ``, numbers ``1. ``, nested by four spaces per level.
- Emphasis: ``**bold**``, ``*italic*``, ``~~strikethrough~~``, underline as
  ``<u>…</u>``; runs Word split are merged, a literal ``*`` is escaped (``_docx_format``).
- Tables become pipe tables; the first row is the header row. A horizontally or
  vertically merged cell is written once, in its first position, the other positions
  are empty. A nested table is flattened into its cell (cells joined by ``; ``, rows by
  ``<br>``). In cells ``|`` is escaped and line breaks become ``<br>``.
- Hyperlinks: ``[text](url)``, with the link's ``#anchor`` when it has one; a link to
  a bookmark inside the document is ``[text](#bookmark)``. ``HYPERLINK`` fields (the
  older way Word stores links) are links too. The bookmark itself is not written.
- Footnotes and endnotes: ``[^1]`` (endnotes ``[^e1]``) where the body refers to
  them, their text as definitions after the body (``_docx_parts``).
- Comments: a ``## Comments`` table after the body: each comment's text, the text
  it is anchored to and its author.
- Headers and footers: a ``## Headers and footers`` table, each distinct text once.
- Text boxes: their paragraphs follow the paragraph that anchors them (a box stored
  twice, as DrawingML and as a VML fallback, is read once).
- Pictures, charts, SmartArt and embedded objects: named placeholders, never inlined
  (``[image: image1.png]``, ``_docx_graphics``), counted in one warning per file.
- Equations: LaTeX-style text between ``$`` (inline) or ``$$`` (an equation paragraph):
  fractions, scripts, roots, delimiters and sums keep their structure (``_omml``).
- Ruby (East Asian reading aids): the base text, then the reading in parentheses.
- Not read: deleted (tracked) text, text moved away (``moveFrom``), and field codes
  (a field's shown result is read).
- Title: the first ``Title`` paragraph, else the first heading, else the core
  properties' title, else None (the file name). The core properties also give the
  passport's ``created``, ``source_modified``, ``source_author``, and tags or aliases
  from the keywords (``_docx_package``).
"""
from __future__ import annotations

import re
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from monkeyllm_plugins._container import check_zip_container
from monkeyllm_plugins._extras import INGEST_HINT
from monkeyllm_plugins._docx_format import (
    BOLD,
    ITALIC,
    STRIKE,
    UNDERLINE,
    Segment,
    common_marks,
    first_child,
    render,
    run_marks,
    without_marks,
)
from monkeyllm_plugins._docx_graphics import alt_chunk, placeholder_warning, placeholders
from monkeyllm_plugins._docx_links import field_target, hyperlink_target, is_hyperlink_field
from monkeyllm_plugins._docx_package import core_frontmatter, open_document
from monkeyllm_plugins._docx_parts import (
    Comments,
    Notes,
    comments_section,
    escape_cell,
    header_footer_parts,
    headers_section,
    note_definitions,
    part_element,
)
from monkeyllm_plugins._docx_styles import ParagraphStyles, document_styles
from monkeyllm_plugins._omml import equation_text

from monkeyllm_gardener import Conversion, ConversionError, hookimpl

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"

ALL_MARKS = (BOLD, ITALIC, STRIKE, UNDERLINE)
# Elements whose children are ordinary content (content controls, tracked insertions,
# bidirectional embeddings ``w:dir``/``w:bdo`` around right-to-left runs...).
_TRANSPARENT = {"sdt", "sdtContent", "ins", "smartTag", "customXml", "fldSimple", "moveTo", "dir", "bdo"}
# python-docx: "file '...' is not a Word file, content type is 'application/vnd...themeManager+xml'"
_MAIN_PART_TYPE = re.compile(r"content type is '[^']*?officedocument\.(?:(\w+)ml\.)?([A-Za-z]+)(?:\.main)?\+xml'",
                             re.IGNORECASE)
_OTHER_OFFICE = {"spreadsheet": ("an Excel workbook", ".xlsx"), "presentation": ("a PowerPoint presentation", ".pptx")}


def _local(element: Any) -> str:
    tag = element.tag
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


@dataclass
class _Context:
    """What the walker needs: the document's styles, and what it gathers on the way."""

    paragraphs: ParagraphStyles
    style_marks: dict[str, frozenset[str]]
    part: Any  # the part being walked (body, a header, the footnotes...): its relationships
    has_title: bool = False
    notes: Notes = field(default_factory=Notes)
    comments: Comments = field(default_factory=Comments)
    placeholders: Counter[str] = field(default_factory=Counter)


@dataclass
class _Block:
    text: str
    is_list_item: bool = False


@dataclass
class _Field:
    """A complex field (``fldChar`` begin .. separate .. end) being read."""

    instruction: str = ""
    result_start: int | None = None  # index of the first result segment


@dataclass
class _Inline:
    """Text of one paragraph plus blocks (text boxes) to emit after it."""

    segments: list[Segment] = field(default_factory=list)
    after: list[_Block] = field(default_factory=list)
    fields: list[_Field] = field(default_factory=list)

    @property
    def text(self) -> str:
        return render(self.segments)

    @property
    def plain(self) -> str:
        return render(without_marks(self.segments, ALL_MARKS))


class DocxConverter:
    name = "docx"
    extensions = (".docx",)
    requires: tuple[str, ...] = ("docx",)
    install_hint = INGEST_HINT

    def convert(self, path: Path) -> Conversion:
        path = Path(path)
        check_zip_container(path)
        try:
            document = open_document(path)
        except zipfile.BadZipFile:  # a member fails its checksum: bytes were damaged
            raise ConversionError(
                f"{path.name}: corrupt zip container (a part fails its checksum): copy or export the file again"
            ) from None
        except ValueError as error:
            raise ConversionError(_not_a_document(path, error)) from None
        except Exception as error:  # python-docx raises many types on foreign packages
            raise ConversionError(
                f"{path.name}: not a readable Word document ({type(error).__name__}): "
                "open it in Word and save it as .docx again"
            ) from None
        paragraphs, style_marks = document_styles(document)
        context = _Context(paragraphs=paragraphs, style_marks=style_marks, part=document.part)
        body = document.element.body
        context.has_title = any(context.paragraphs.kind(p).heading_level == 0 for p in body.iter(f"{W}p"))
        # A valid document has one body; some writers repeat it, and Word shows them all.
        bodies = document.element.iterchildren(f"{W}body")
        markdown = _join_blocks([block for each in bodies for block in _blocks(each, context)])
        markdown = _with_side_parts(markdown, document, context)
        title = _find_title(body, context)
        warning = placeholder_warning(path.name, dict(context.placeholders))
        return Conversion(
            kind="markdown",
            node_type="document",
            title=title,
            markdown=markdown,
            frontmatter=core_frontmatter(document, title),
            warnings=(warning,) if warning else (),
        )


def _not_a_document(path: Path, error: ValueError) -> str:
    """python-docx's "content type is ..." refusal, said as what the package holds."""
    match = _MAIN_PART_TYPE.search(str(error))
    if match is None:
        return (f"{path.name}: not a readable Word document (ValueError): "
                "open it in Word and save it as .docx again")
    family, kind = match.groups()
    if family in _OTHER_OFFICE:
        what, suffix = _OTHER_OFFICE[family]
        return f"{path.name}: {what}, not a Word document: rename it to {suffix}"
    return (f"{path.name}: not a Word document (its main part is a {kind}): "
            "check the file type and export it again")


def _with_side_parts(body: str, document: Any, context: _Context) -> str:
    """The body, then note definitions, ``## Comments`` and ``## Headers and footers``."""

    def render_part(element: Any, part: Any) -> str:
        outer, context.part = context.part, part
        try:
            return _cell_text(element, context)
        finally:
            context.part = outer

    header_rows: list[tuple[str, str]] = []
    for header in header_footer_parts(document):
        element = part_element(header.part)
        if element is None:
            continue
        before = Counter(context.placeholders)
        text = render_part(element, header.part)
        if any(text == seen for _, seen in header_rows):
            context.placeholders = before  # written once, so counted once
        header_rows.append((header.where, text))
    notes = note_definitions(context.notes, document.part, render_part)
    comments = comments_section(context.comments, document.part, render_part)
    extra = [text for text in (notes, comments, headers_section(header_rows)) if text]
    if not extra:
        return body
    return (body.rstrip("\n") + "\n\n" if body else "") + "\n\n".join(extra) + "\n"


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
        elif tag in ("commentRangeStart", "commentRangeEnd"):
            _comment_range(child, context)
        elif tag == "altChunk":
            yield _Block(_count(context, alt_chunk(child, context.part)))
        elif tag in _TRANSPARENT:
            yield from _blocks(child, context)


def _paragraph_blocks(paragraph: Any, context: _Context) -> Iterable[_Block]:
    inline = _inline(paragraph, context)
    context.comments.record(" ")  # an anchor running over paragraphs keeps them apart
    kind = context.paragraphs.kind(paragraph)
    if kind.heading_level is not None:
        text = " ".join(inline.plain.split())
        if text:
            level = kind.heading_level + 1 if context.has_title else max(kind.heading_level, 1)
            yield _Block("#" * min(level, 6) + " " + text)
    else:
        text = inline.text.strip()
        if text and kind.list_marker:
            indent = "    " * kind.list_level
            yield _Block(indent + kind.list_marker + text.replace("\n", " "), is_list_item=True)
        elif text:
            yield _Block(text)
    yield from inline.after


def _inline(element: Any, context: _Context, into: _Inline | None = None) -> _Inline:
    inline = into if into is not None else _Inline()
    for child in element.iterchildren():
        tag = _local(child)
        if tag == "r":
            _run(child, context, inline)
        elif tag == "hyperlink":
            _link(_inline(child, context), hyperlink_target(context.part, child), inline)
        elif tag == "fldSimple" and is_hyperlink_field(child.get(f"{W}instr") or ""):
            _link(_inline(child, context), field_target(child.get(f"{W}instr") or ""), inline)
        elif tag in ("commentRangeStart", "commentRangeEnd"):
            _comment_range(child, context)
        elif tag in _TRANSPARENT:
            _inline(child, context, inline)
        elif tag == "ruby":
            _ruby(child, context, inline)
        elif tag == "AlternateContent":
            _alternate(child, context, inline)
        elif tag in ("oMath", "oMathPara"):
            equation = equation_text(child)
            if equation:
                inline.segments.append(
                    Segment(f"${equation}$" if tag == "oMath" else f"$${equation}$$", raw=True)
                )
    return inline


def _run(run: Any, context: _Context, inline: _Inline) -> None:
    marks = run_marks(run, context.style_marks)
    for child in run.iterchildren():
        tag = _local(child)
        if tag == "t":
            _text(inline, context, child.text or "", marks)
        elif tag in ("tab", "ptab"):
            _text(inline, context, "\t", marks)
        elif tag in ("br", "cr"):
            if child.get(f"{W}type") not in ("page", "column"):
                _text(inline, context, "\n", marks)
        elif tag == "noBreakHyphen":
            _text(inline, context, "-", marks)
        elif tag in ("footnoteReference", "endnoteReference"):
            label = context.notes.label(tag[: -len("Reference")], child.get(f"{W}id", ""))
            inline.segments.append(Segment(f"[^{label}]", raw=True))
        elif tag == "commentReference":
            context.comments.mention(child.get(f"{W}id", ""))
        elif tag == "fldChar":
            _field_char(child, inline)
        elif tag == "instrText" and inline.fields:
            inline.fields[-1].instruction += child.text or ""
        elif tag in ("drawing", "pict", "object"):
            _graphic(child, context, inline)
        elif tag == "ruby":
            _ruby(child, context, inline)
        elif tag == "AlternateContent":
            _alternate(child, context, inline)


def _ruby(ruby: Any, context: _Context, inline: _Inline) -> None:
    """East Asian ruby: the base text, then its reading in parentheses (東京(とうきょう))."""
    base, reading = ruby.find(f"{W}rubyBase"), ruby.find(f"{W}rt")
    if base is not None:
        _inline(base, context, inline)
    if reading is not None:
        text = _inline(reading, context).plain.strip()
        if text:
            inline.segments.append(Segment(f"({text})", raw=True))


def _text(inline: _Inline, context: _Context, text: str, marks: frozenset[str]) -> None:
    inline.segments.append(Segment(text, marks))
    context.comments.record(text)


def _comment_range(element: Any, context: _Context) -> None:
    comment_id = element.get(f"{W}id", "")
    if _local(element) == "commentRangeStart":
        context.comments.start(comment_id)
    else:
        context.comments.end(comment_id)


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
    """A drawing, VML shape or OLE object: text boxes kept, the rest named."""
    boxes = list(element.iter(f"{W}txbxContent"))
    # A nested text box lives inside an outer one; read only the outermost.
    outer = [box for box in boxes if not any(b is not box and _contains(b, box) for b in boxes)]
    for box in outer:
        inline.after.extend(_blocks(box, context))
    for placeholder in placeholders(element, context.part):
        inline.segments.append(Segment(_count(context, placeholder), raw=True))


def _count(context: _Context, placeholder: Any) -> str:
    context.placeholders[placeholder.kind] += 1
    return placeholder.text


def _contains(ancestor: Any, element: Any) -> bool:
    return any(parent is ancestor for parent in element.iterancestors())


# ---------------------------------------------------------------- links


def _link(linked: _Inline, url: str | None, inline: _Inline) -> None:
    """The link's text as ``[text](url)``; the text alone when there is no target.
    Emphasis shared by the whole text goes outside the brackets, so a bold sentence
    holding a link stays one bold span."""
    inline.after.extend(linked.after)
    shared = common_marks(linked.segments)
    text = render(without_marks(linked.segments, shared | {UNDERLINE}))
    if not url or not text.strip():
        inline.segments.extend(linked.segments)
        return
    core = text.strip()
    lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()):]
    core = core.replace("[", "\\[").replace("]", "\\]")
    inline.segments.extend(
        [Segment(lead), Segment(f"[{core}]({url})", shared - {UNDERLINE}, raw=True), Segment(trail)]
    )


def _field_char(element: Any, inline: _Inline) -> None:
    kind = element.get(f"{W}fldCharType")
    if kind == "begin":
        inline.fields.append(_Field())
    elif kind == "separate" and inline.fields:
        inline.fields[-1].result_start = len(inline.segments)
    elif kind == "end" and inline.fields:
        done = inline.fields.pop()
        target = field_target(done.instruction)
        if target and done.result_start is not None:
            result = _Inline(segments=inline.segments[done.result_start:])
            del inline.segments[done.result_start:]
            _link(result, target, inline)


# ---------------------------------------------------------------- tables


def _table_rows(table: Any, context: _Context) -> list[list[str]]:
    """The table as a grid of cell texts, merged cells written once."""
    grid: list[list[str]] = []
    for row in _children(table, "tr"):
        cells: list[str] = []
        props = first_child(row, f"{W}trPr")
        before = _int_val(first_child(props, f"{W}gridBefore")) if props is not None else 0
        cells.extend([""] * before)
        for cell in _children(row, "tc"):
            cell_props = first_child(cell, f"{W}tcPr")
            span, continued = 1, False
            if cell_props is not None:
                span = max(_int_val(first_child(cell_props, f"{W}gridSpan")) or 1, 1)
                merge = first_child(cell_props, f"{W}vMerge")
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
    """A cell (or a header, a note, a comment) as one line: paragraphs joined by
    ``<br>``, no heading or list markers, nested tables flattened."""
    parts: list[str] = []
    for child in cell.iterchildren():
        tag = _local(child)
        if tag == "tbl":  # a nested table, flattened into the cell
            rows = _table_rows(child, context)
            parts.extend("; ".join(c for c in row if c) for row in rows if any(row))
        elif tag == "p":
            inline = _inline(child, context)
            context.comments.record(" ")
            parts.append(inline.text.strip())
            parts.extend(block.text.strip() for block in inline.after)
        elif tag in ("commentRangeStart", "commentRangeEnd"):
            _comment_range(child, context)
        elif tag == "altChunk":
            parts.append(_count(context, alt_chunk(child, context.part)))
        elif tag in _TRANSPARENT:
            parts.extend(block.text.strip() for block in _blocks(child, context))
    text = "<br>".join(part for part in parts if part)
    return text.replace("\n", "<br>")


def _render_table(table: Any, context: _Context) -> str:
    grid = _table_rows(table, context)
    if not any(any(cell for cell in row) for row in grid):
        return ""
    width = max(len(row) for row in grid)
    lines = []
    for index, row in enumerate(grid):
        padded = [escape_cell(cell) for cell in row] + [""] * (width - len(row))
        lines.append("| " + " | ".join(padded) + " |")
        if index == 0:
            lines.append("|" + " --- |" * width)
    return "\n".join(lines)


# ---------------------------------------------------------------- assembly


def _find_title(body: Any, context: _Context) -> str | None:
    first_heading = None
    for paragraph in body.iter(f"{W}p"):
        level = context.paragraphs.kind(paragraph).heading_level
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
