"""Character formatting of Word runs, written as markdown emphasis.

Marks kept: bold ``**``, italic ``*``, strikethrough (single or double) ``~~`` and
underline. Markdown has no underline, so it is written as the raw HTML ``<u>…</u>``
CommonMark allows (the summary deriver strips tags); inside a hyperlink it is
dropped, because links are underlined by their style and the link syntax already
says so. A run's marks come from its own properties, else from its character style
(``Strong``, ``Emphasis``, a custom style, through ``basedOn``); a paragraph style's
formatting (a heading's bold) is not repeated on every run.

Rendering merges what Word split: adjacent runs with the same marks are one span,
a space between two bold runs stays inside the span (``**a b**``, never
``**a** **b**``), spaces at a span's edge move outside its markers (markdown needs
a marker to touch text), and a span of only spaces gets no markers (underlined
blanks of a form), so ``****`` is never written. Spans open longest-lasting first,
so a bold sentence holding an italic word nests (``**a *b* c**``); when two spans
cross (bold ends inside an italic phrase), the one opened later stops at the
crossing: the text is kept, that bit of emphasis is not. A literal ``*`` in the
text is escaped (``\\*``), so ``(a+b)*0,9*c`` is not read as emphasis.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"

BOLD, ITALIC, STRIKE, UNDERLINE = "bold", "italic", "strike", "underline"
_OPEN = {BOLD: "**", ITALIC: "*", STRIKE: "~~", UNDERLINE: "<u>"}
_CLOSE = {BOLD: "**", ITALIC: "*", STRIKE: "~~", UNDERLINE: "</u>"}
_ORDER = (BOLD, ITALIC, STRIKE, UNDERLINE)
_OFF = ("0", "false", "off", "none")
_MAX_STYLE_DEPTH = 10

Marks = frozenset
_NO_MARKS: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Segment:
    """A piece of inline text with its marks. ``raw`` text (a link, an image name, a
    footnote reference) is already markdown: it is never split at its spaces."""

    text: str
    marks: frozenset[str] = frozenset()
    raw: bool = False


def first_child(element: Any, tag: str) -> Any:
    """``element.find(tag)`` for a plain ``{namespace}name`` tag: the first direct child
    so named, or None, without ElementPath's parsing of the path (half the time, and
    the walk asks this of every run, cell and paragraph)."""
    return next(element.iterchildren(tag), None)


def _toggle(props: Any, name: str) -> bool | None:
    element = first_child(props, f"{W}{name}") if props is not None else None
    if element is None:
        return None
    return element.get(f"{W}val", "1").lower() not in _OFF


def marks_of_properties(props: Any) -> dict[str, bool]:
    """The marks a ``w:rPr`` sets explicitly (on or off); absent ones are left out."""
    found: dict[str, bool] = {}
    for mark, names in ((BOLD, ("b",)), (ITALIC, ("i",)), (STRIKE, ("strike", "dstrike"))):
        values = [v for v in (_toggle(props, n) for n in names) if v is not None]
        if values:
            found[mark] = any(values)
    underline = first_child(props, f"{W}u") if props is not None else None
    if underline is not None:
        found[UNDERLINE] = underline.get(f"{W}val", "single").lower() not in _OFF
    return found


def character_style_marks(styles_element: Any) -> dict[str, frozenset[str]]:
    """Character style id -> the marks it sets, following ``basedOn``."""
    raw: dict[str, tuple[dict[str, bool], str | None]] = {}
    if styles_element is None:
        return {}
    for style in styles_element.iterchildren(f"{W}style"):
        if style.get(f"{W}type") != "character":
            continue
        based = style.find(f"{W}basedOn")
        raw[style.get(f"{W}styleId", "")] = (
            marks_of_properties(style.find(f"{W}rPr")),
            based.get(f"{W}val") if based is not None else None,
        )
    resolved: dict[str, frozenset[str]] = {}
    for style_id in raw:
        chain: list[dict[str, bool]] = []
        current: str | None = style_id
        for _ in range(_MAX_STYLE_DEPTH):
            if current is None or current not in raw:
                break
            chain.append(raw[current][0])
            current = raw[current][1]
        merged: dict[str, bool] = {}
        for marks in reversed(chain):  # the base first, the style itself last
            merged.update(marks)
        resolved[style_id] = frozenset(m for m, on in merged.items() if on)
    return resolved


def run_marks(run: Any, style_marks: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """A run's marks: its own properties over its character style's."""
    props = first_child(run, f"{W}rPr")
    if props is None:  # most runs: no properties, so no marks and no character style
        return _NO_MARKS
    style = first_child(props, f"{W}rStyle")
    marks = set(style_marks.get(style.get(f"{W}val", ""), ())) if style is not None else set()
    for mark, on in marks_of_properties(props).items():
        (marks.add if on else marks.discard)(mark)
    return frozenset(marks)


# ---------------------------------------------------------------- rendering


def common_marks(segments: Sequence[Segment]) -> frozenset[str]:
    """The marks every non-blank segment shares (a link's text takes them outside)."""
    shared: frozenset[str] | None = None
    for segment in segments:
        if segment.text.strip():
            shared = segment.marks if shared is None else shared & segment.marks
    return shared or frozenset()


def without_marks(segments: Iterable[Segment], marks: Iterable[str]) -> list[Segment]:
    drop = frozenset(marks)
    return [Segment(s.text, s.marks - drop, s.raw) for s in segments]


def render(segments: Sequence[Segment]) -> str:
    """Markdown for a sequence of segments (see the module docstring)."""
    for segment in segments:
        if segment.marks:
            return _render_spans(segments)
    # No emphasis to place: the spans and blanks would give the text as it is, with a
    # literal ``*`` escaped outside raw text (blanks hold none).
    return "".join([s.text if s.raw else s.text.replace("*", "\\*") for s in segments])


def _render_spans(segments: Sequence[Segment]) -> str:
    """``render``'s general case: spans opened and closed around the text."""
    pieces = _resolve_blanks(_split_edges(segments))
    out: list[str] = []
    stack: list[str] = []
    suppressed: set[str] = set()
    for index, piece in enumerate(pieces):
        suppressed &= piece.marks  # a mark that pauses may open again later
        wanted = piece.marks - suppressed
        while stack and not set(stack) <= wanted:
            mark = stack.pop()
            out.append(_CLOSE[mark])
            if mark in wanted:  # closed only to close a mark opened before it: a crossing
                suppressed.add(mark)
                wanted = wanted - {mark}
        opening = sorted(wanted - set(stack), key=lambda m: (-_lasting(pieces, index, m), _ORDER.index(m)))
        for mark in opening:
            out.append(_OPEN[mark])
            stack.append(mark)
        out.append(piece.text if piece.raw else piece.text.replace("*", "\\*"))
    out.extend(_CLOSE[mark] for mark in reversed(stack))
    return "".join(out)


def _split_edges(segments: Iterable[Segment]) -> list[Segment | None]:
    """Segments with the spaces at their edges split off as blanks (``None`` marks)."""
    out: list[Any] = []
    for segment in segments:
        if not segment.text:
            continue
        if segment.raw:
            out.append(segment)
            continue
        core = segment.text.strip()
        if not core:
            out.append(_Blank(segment.text))
            continue
        start = segment.text.index(core[0])
        lead, trail = segment.text[:start], segment.text[start + len(core):]
        if lead:
            out.append(_Blank(lead))
        out.append(Segment(core, segment.marks))
        if trail:
            out.append(_Blank(trail))
    return out


@dataclass(frozen=True)
class _Blank:
    text: str


def _resolve_blanks(pieces: list[Any]) -> list[Segment]:
    """A blank takes the marks its two neighbours share, so ``**a** **b**`` is one
    span and a span's edge spaces fall outside it."""
    before: list[Segment | None] = []
    last: Segment | None = None
    for piece in pieces:
        before.append(last)
        if not isinstance(piece, _Blank):
            last = piece
    resolved: list[Segment] = []
    after: Segment | None = None
    for index in range(len(pieces) - 1, -1, -1):
        piece = pieces[index]
        if isinstance(piece, _Blank):
            left = before[index]
            marks = left.marks & after.marks if left is not None and after is not None else frozenset()
            resolved.append(Segment(piece.text, marks, raw=True))
        else:
            resolved.append(piece)
            after = piece
    resolved.reverse()
    return resolved


def _lasting(pieces: Sequence[Segment], start: int, mark: str) -> int:
    count = 0
    for piece in pieces[start:]:
        if mark not in piece.marks:
            break
        count += 1
    return count
