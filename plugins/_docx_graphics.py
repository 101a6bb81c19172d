"""What a Word drawing, VML shape or OLE object holds that text cannot carry.

Pictures, charts, SmartArt graphics and embedded objects are never inlined (no
base64, no bytes): each becomes a named placeholder in the text, and the converter
counts them into one warning per file, so the report says what the node cannot
show. A placeholder keeps whatever words the graphic has:

- picture: ``[image: image1.png]``, plus the alt text when set (``— a red square``);
- chart: ``[chart: chart1.xml — Sales by region]``, with the chart's own title;
- SmartArt: ``[SmartArt: Plan; Build; Ship]``, the words of its nodes in order
  (the layout, arrows and colours are what is lost);
- embedded object (an OLE object, a chunk of another document):
  ``[embedded object: Excel.Sheet.12 (oleObject1.bin)]``; its preview picture is
  part of the object, not counted again.

Text boxes are not placeholders: the walker renders their paragraphs.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Iterator

from monkeyllm_plugins._docx_parts import part_element

R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
WP = "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}"
C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
CX = "{http://schemas.microsoft.com/office/drawing/2014/chartex}"
DGM = "{http://schemas.openxmlformats.org/drawingml/2006/diagram}"
V = "{urn:schemas-microsoft-com:vml}"
O = "{urn:schemas-microsoft-com:office:office}"

IMAGE, CHART, SMARTART, EMBEDDED = "image", "chart", "SmartArt graphic", "embedded object"
_KINDS = (IMAGE, CHART, SMARTART, EMBEDDED)
MAX_SMARTART_ITEMS = 50


@dataclass(frozen=True)
class Placeholder:
    kind: str  # one of IMAGE, CHART, SMARTART, EMBEDDED
    text: str  # the markdown written in its place


def _local(element: Any) -> str:
    tag = element.tag
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


def _inside_text_box(node: Any, stop: Any) -> bool:
    """True when ``node`` sits in a text box below ``stop`` (the box renders it)."""
    for ancestor in node.iterancestors():
        if ancestor is stop:
            return False
        if _local(ancestor) == "txbxContent":
            return True
    return False


def _own(element: Any, tag: str) -> Iterator[Any]:
    """Descendants named ``tag`` that are not inside a text box of ``element``."""
    for node in element.iter(tag):
        if not _inside_text_box(node, element):
            yield node


def placeholders(element: Any, part: Any) -> list[Placeholder]:
    """The placeholders for one ``w:drawing``, ``w:pict`` or ``w:object``; ``part``
    is the part whose relationships the element's ``r:`` ids refer to."""
    ole = next(_own(element, f"{O}OLEObject"), None)
    if ole is not None:  # the object's picture is its preview, not a second item
        return [_embedded(ole, part)]
    found = [_chart(chart, part) for chart in _own(element, f"{C}chart")]
    found += [_chart(chart, part) for chart in _own(element, f"{CX}chart")]
    found += [_smartart(ids, part) for ids in _own(element, f"{DGM}relIds")]
    found += _images(element, part)
    return found


def alt_chunk(element: Any, part: Any) -> Placeholder:
    """A ``w:altChunk``: a whole other document (HTML, RTF, docx) pasted in."""
    return Placeholder(EMBEDDED, f"[embedded object: {target_name(part, element.get(f'{R}id'))}]")


def _embedded(ole: Any, part: Any) -> Placeholder:
    prog_id = " ".join((ole.get("ProgID") or "").split())
    name = target_name(part, ole.get(f"{R}id"))
    label = f"{prog_id} ({name})" if prog_id else name
    return Placeholder(EMBEDDED, f"[embedded object: {label}]")


def _chart(chart: Any, part: Any) -> Placeholder:
    rel_id = chart.get(f"{R}id")
    name = target_name(part, rel_id)
    root = _related_root(part, rel_id)
    title = ""
    if root is not None:
        title_el = next(root.iter(f"{C}title", f"{CX}title"), None)
        if title_el is not None:
            title = " ".join("".join(t.text or "" for t in title_el.iter(f"{A}t")).split())
    return Placeholder(CHART, f"[chart: {name} — {title}]" if title else f"[chart: {name}]")


def _smartart(ids: Any, part: Any) -> Placeholder:
    root = _related_root(part, ids.get(f"{R}dm"))
    words: list[str] = []
    if root is not None:
        for point in root.iter(f"{DGM}pt"):
            if point.get("type", "node") != "node":
                continue  # the document, transitions and placeholders carry no text
            for paragraph in point.iter(f"{A}p"):
                text = " ".join("".join(t.text or "" for t in paragraph.iter(f"{A}t")).split())
                if text and len(words) < MAX_SMARTART_ITEMS:
                    words.append(text)
    return Placeholder(SMARTART, f"[SmartArt: {'; '.join(words)}]" if words else "[SmartArt]")


def _images(element: Any, part: Any) -> list[Placeholder]:
    alt = ""
    doc_pr = next(element.iter(f"{WP}docPr"), None)
    if doc_pr is not None:
        alt = " ".join((doc_pr.get("descr") or "").split())
    names = [target_name(part, b.get(f"{R}embed") or b.get(f"{R}link")) for b in _own(element, f"{A}blip")]
    names += [target_name(part, i.get(f"{R}id")) for i in _own(element, f"{V}imagedata")]
    return [Placeholder(IMAGE, f"[image: {n} — {alt}]" if alt else f"[image: {n}]") for n in names]


def target_name(part: Any, rel_id: str | None) -> str:
    """The file name a relationship points at (``image1.png``), never a path."""
    rel = part.rels.get(rel_id) if rel_id else None
    if rel is None:
        return "unnamed"
    target = rel.target_ref if rel.is_external else str(rel.target_part.partname)
    return PurePosixPath(target.replace("\\", "/")).name or "unnamed"


def _related_root(part: Any, rel_id: str | None) -> Any | None:
    rel = part.rels.get(rel_id) if rel_id else None
    if rel is None or rel.is_external:
        return None
    return part_element(rel.target_part)


def placeholder_warning(file_name: str, counts: dict[str, int]) -> str | None:
    """``refund.docx: 2 images and 1 chart kept as placeholders; ...`` or None."""
    listed = [_count(counts[kind], kind) for kind in _KINDS if counts.get(kind)]
    if not listed:
        return None
    joined = listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " and " + listed[-1]
    if sum(counts.values()) == 1:
        return f"{file_name}: {joined} kept as a placeholder; its content is not text"
    return f"{file_name}: {joined} kept as placeholders; their content is not text"


def _count(n: int, kind: str) -> str:
    if n == 1:
        return f"1 {kind}"
    return f"{n} {kind}s"
