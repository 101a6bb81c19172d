"""The parts of a Word document beside its body: headers, footers, footnotes,
endnotes and comments. Finding them and laying out what they say; the text of each
part is rendered by the body's own walker (``docx_document``), handed in as
``render(element, part) -> str``.

Layout, after the body:

- footnote and endnote definitions: ``[^1]: text`` (endnotes ``[^e1]``), numbered in
  the order the body first refers to them; a note of several paragraphs is one line,
  its paragraphs joined by ``<br>`` (so the definition stays one markdown block);
- ``## Comments``: a table ``| Comment | On the text | By |``, one row per comment in
  the order the body anchors them (then any the body never anchors);
- ``## Headers and footers``: a table ``| Where | Text |``, one row per distinct
  text, with every place it appears (``Header; first-page header``). A header that
  repeats across sections is written once.

Comments and headers are tables on purpose: the summary deriver reads prose only,
so the words of a running footer ("Page 1 of 3", "Confidential") never become a
node's derived summary. Definitions are skipped by the deriver too.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_RT = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
RT_FOOTNOTES, RT_ENDNOTES, RT_COMMENTS = _RT + "footnotes", _RT + "endnotes", _RT + "comments"

_PLACES = {"header": "header", "footer": "footer"}
_VARIANTS = {"default": "", "first": "first-page ", "even": "even-page "}
MAX_ANCHOR_CHARS = 120
_WORDS_BEFORE_MARK = 6

Render = Callable[[Any, Any], str]


def part_element(part: Any) -> Any | None:
    """The parsed XML root of a part (python-docx parses only the parts it knows)."""
    element = getattr(part, "element", None)
    if element is not None:
        return element
    from docx.oxml import parse_xml

    try:
        return parse_xml(part.blob)
    except Exception:  # an unparseable side part: the body is still converted
        return None


def related_part(document_part: Any, reltype: str) -> Any | None:
    for rel in document_part.rels.values():
        if rel.reltype == reltype and not rel.is_external:
            return rel.target_part
    return None


# ---------------------------------------------------------------- headers and footers


@dataclass(frozen=True, kw_only=True)
class HeaderPart:
    where: str  # "header", "first-page footer", "even-page header (section 2)", ...
    part: Any


def header_footer_parts(document: Any) -> list[HeaderPart]:
    """Every header and footer part the sections refer to, each once: section by
    section, headers before footers, the default one, then first-page, then even."""
    sections = list(document.element.body.iter(f"{W}sectPr"))
    seen: set[str] = set()
    found: list[HeaderPart] = []
    for number, section in enumerate(sections, start=1):
        references = sorted(
            section.iterchildren(f"{W}headerReference", f"{W}footerReference"),
            key=lambda ref: (ref.tag != f"{W}headerReference", list(_VARIANTS).index(_variant(ref))),
        )
        for reference in references:
            place = "header" if reference.tag == f"{W}headerReference" else "footer"
            rel = document.part.rels.get(reference.get(f"{R}id") or "")
            if rel is None or rel.is_external:
                continue
            name = str(rel.target_part.partname)
            if name in seen:
                continue
            seen.add(name)
            where = _VARIANTS[_variant(reference)] + _PLACES[place]
            if number > 1:
                where += f" (section {number})"
            found.append(HeaderPart(where=where, part=rel.target_part))
    return found


def _variant(reference: Any) -> str:
    variant = reference.get(f"{W}type", "default")
    return variant if variant in _VARIANTS else "default"


def headers_section(rows: Iterable[tuple[str, str]]) -> str:
    """``## Headers and footers`` from ``(where, text)`` rows, each distinct text once."""
    places: dict[str, list[str]] = {}
    for where, text in rows:
        if text.strip():
            places.setdefault(text, []).append(where)
    if not places:
        return ""
    lines = ["## Headers and footers", "", "| Where | Text |", "| --- | --- |"]
    for text, wheres in places.items():
        label = "; ".join(wheres)
        lines.append(f"| {escape_cell(label[:1].upper() + label[1:])} | {escape_cell(text)} |")
    return "\n".join(lines)


# ---------------------------------------------------------------- notes


@dataclass
class Notes:
    """Footnote and endnote references, labelled in the order the text meets them."""

    labels: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, id) -> label
    counts: dict[str, int] = field(default_factory=dict)  # kind -> notes labelled so far

    def label(self, kind: str, note_id: str) -> str:
        key = (kind, note_id)
        if key not in self.labels:
            count = self.counts[kind] = self.counts.get(kind, 0) + 1
            self.labels[key] = f"e{count}" if kind == "endnote" else str(count)
        return self.labels[key]


def note_definitions(notes: Notes, document_part: Any, render: Render) -> str:
    """``[^label]: text`` lines for every referenced note, in label order."""
    elements: dict[str, dict[str, Any]] = {}
    parts: dict[str, Any] = {}
    for kind, reltype in (("footnote", RT_FOOTNOTES), ("endnote", RT_ENDNOTES)):
        part = related_part(document_part, reltype)
        root = part_element(part) if part is not None else None
        parts[kind] = part
        elements[kind] = {} if root is None else {
            note.get(f"{W}id", ""): note for note in root.iterchildren(f"{W}{kind}")
        }
    lines = []
    for (kind, note_id), label in list(notes.labels.items()):
        note = elements[kind].get(note_id)
        text = render(note, parts[kind]).strip() if note is not None else ""
        lines.append(f"[^{label}]: {text or '(empty ' + kind + ')'}")
    return "\n".join(lines)


# ---------------------------------------------------------------- comments


@dataclass
class Comments:
    """Comment anchors met in the text: the words between commentRangeStart and End.
    A comment with no range (only its reference mark) is anchored to the words just
    before the mark, written after an ellipsis (``…build LLM applications``)."""

    order: list[str] = field(default_factory=list)  # comment ids, first mention first
    anchors: dict[str, list[str]] = field(default_factory=dict)
    open: set[str] = field(default_factory=set)
    sizes: dict[str, int] = field(default_factory=dict)
    recent: str = ""  # the last words of text met, for comments without a range

    def mention(self, comment_id: str) -> None:
        if comment_id not in self.anchors:
            self.order.append(comment_id)
            self.anchors[comment_id] = []
            words = self.recent.split()
            if len(self.recent) == MAX_ANCHOR_CHARS:
                words = words[1:]  # the first may be the tail of a word cut off
            words = words[-_WORDS_BEFORE_MARK:]
            if words:  # a reference met before any range: a point comment
                self.anchors[comment_id] = ["…" + " ".join(words)]
                self.sizes[comment_id] = MAX_ANCHOR_CHARS + 1  # nothing more to add

    def start(self, comment_id: str) -> None:
        if comment_id not in self.anchors:
            self.order.append(comment_id)
            self.anchors[comment_id] = []
        self.open.add(comment_id)

    def end(self, comment_id: str) -> None:
        self.open.discard(comment_id)

    def record(self, text: str) -> None:
        """Text that falls inside every open range (called for each piece of text)."""
        self.recent = (self.recent + text)[-MAX_ANCHOR_CHARS:]
        for comment_id in self.open:
            size = self.sizes.get(comment_id, 0)
            if size <= MAX_ANCHOR_CHARS:  # the anchor is cut to this length anyway
                self.anchors[comment_id].append(text)
                self.sizes[comment_id] = size + len(text)


def comments_section(comments: Comments, document_part: Any, render: Render) -> str:
    part = related_part(document_part, RT_COMMENTS)
    root = part_element(part) if part is not None else None
    if root is None:
        return ""
    by_id = {c.get(f"{W}id", ""): c for c in root.iterchildren(f"{W}comment")}
    ordered = [i for i in comments.order if i in by_id] + [i for i in by_id if i not in comments.anchors]
    rows = []
    for comment_id in ordered:
        element = by_id[comment_id]
        text = render(element, part).strip()
        anchor = _short(" ".join("".join(comments.anchors.get(comment_id, [])).split()))
        author = " ".join((element.get(f"{W}author") or "").split())
        if text or anchor:
            rows.append(f"| {escape_cell(text)} | {escape_cell(anchor)} | {escape_cell(author)} |")
    if not rows:
        return ""
    return "\n".join(["## Comments", "", "| Comment | On the text | By |", "| --- | --- | --- |", *rows])


def _short(text: str) -> str:
    return text if len(text) <= MAX_ANCHOR_CHARS else text[: MAX_ANCHOR_CHARS - 1].rstrip() + "…"


def escape_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>")
