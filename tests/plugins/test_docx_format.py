"""Emphasis and links in Word documents, as markdown: bold, italic, strikethrough and
underline, with the runs Word splits merged back; hyperlinks with their anchors,
links to bookmarks, and links stored as HYPERLINK fields."""
from __future__ import annotations

from pathlib import Path

import docx
import pytest
from docx.enum.text import WD_UNDERLINE
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.oxml import OxmlElement, parse_xml
from docx.oxml.ns import qn
from docx.shared import Pt

from monkeyllm_plugins._docx_format import Segment, _render_spans, render

from _word_documents import W_NS, docx_markdown  # tests/plugins is on sys.path


def runs(*pieces: tuple[str, dict]) -> docx.Document:
    """A one-paragraph document made of runs with the given font properties."""
    document = docx.Document()
    paragraph = document.add_paragraph()
    for text, props in pieces:
        run = paragraph.add_run(text)
        for name, value in props.items():
            setattr(run.font, name, value)
    return document


B, I, S, U = {"bold": True}, {"italic": True}, {"strike": True}, {"underline": True}

CASES = [
    # (runs, markdown)
    ([("Refunds are ", {}), ("final", B), (".", {})], "Refunds are **final**."),
    ([("Word ", I), ("splits ", I), ("runs", I)], "*Word splits runs*"),
    ([("bold ", B), ("and", B)], "**bold and**"),  # the space stays inside: never "**bold** **and**"
    ([("Price: ", {}), ("$10 ", S), ("$8", {})], "Price: ~~$10~~ $8"),
    ([("Sign ", {}), ("here", U)], "Sign <u>here</u>"),
    ([("all three", {**B, **I}), (" then plain", {})], "***all three*** then plain"),
    ([("A bold ", B), ("italic", {**B, **I}), (" word", B)], "**A bold *italic* word**"),
    ([("Name: ", {}), ("        ", U), (" end", {})], "Name:          end"),  # an underlined blank gets no markers
    ([("", B), ("text", {})], "text"),  # an empty bold run writes nothing, never ****
    ([("x", {"bold": False}), ("y", {})], "xy"),
    ([("cost = (a+b)*0,9*c", {})], "cost = (a+b)\\*0,9\\*c"),  # a literal * is no emphasis
]


@pytest.mark.parametrize(("pieces", "expected"), CASES, ids=[c[1] for c in CASES])
def test_run_formatting_becomes_markdown_emphasis(tmp_path: Path, pieces, expected: str) -> None:
    markdown = docx_markdown(runs(*pieces), tmp_path / "runs.docx")
    assert markdown == expected + "\n"
    assert "****" not in markdown


def test_double_strike_and_double_underline_count_too(tmp_path: Path) -> None:
    document = runs(("gone", {}), (" kept", {"underline": WD_UNDERLINE.DOUBLE}))
    document.paragraphs[0].runs[0].font.double_strike = True
    assert docx_markdown(document, tmp_path / "double.docx") == "~~gone~~ <u>kept</u>\n"


def test_character_styles_give_their_emphasis(tmp_path: Path) -> None:
    document = docx.Document()
    paragraph = document.add_paragraph("Read ")
    paragraph.add_run("this", style="Strong")
    paragraph.add_run(" now", style="Emphasis")
    assert docx_markdown(document, tmp_path / "styled.docx") == "Read **this** *now*\n"


def test_headings_carry_no_emphasis_markers(tmp_path: Path) -> None:
    document = docx.Document()
    heading = document.add_heading("", 1)
    heading.add_run("Bold").bold = True
    heading.add_run(" heading")
    assert docx_markdown(document, tmp_path / "heading.docx") == "# Bold heading\n"


def test_a_bold_sentence_holding_a_link_is_one_span(tmp_path: Path) -> None:
    document = docx.Document()
    paragraph = document.add_paragraph()
    paragraph.add_run("See ").bold = True
    add_link(paragraph, "the ledger", url="https://example.com/ledger", bold=True)
    paragraph.add_run(" today").bold = True
    assert docx_markdown(document, tmp_path / "link.docx") == "**See [the ledger](https://example.com/ledger) today**\n"


# ---------------------------------------------------------------- links


def add_link(paragraph, text: str, *, url: str | None = None, anchor: str | None = None, bold: bool = False) -> None:
    link = OxmlElement("w:hyperlink")
    if url is not None:
        link.set(qn("r:id"), paragraph.part.relate_to(url, RT.HYPERLINK, is_external=True))
    if anchor is not None:
        link.set(qn("w:anchor"), anchor)
    run = OxmlElement("w:r")
    props = OxmlElement("w:rPr")
    style = OxmlElement("w:rStyle")
    style.set(qn("w:val"), "Hyperlink")  # underlined by its style: no <u> inside a link
    props.append(style)
    underline = OxmlElement("w:u")
    underline.set(qn("w:val"), "single")
    props.append(underline)
    if bold:
        props.append(OxmlElement("w:b"))
    run.append(props)
    text_el = OxmlElement("w:t")
    text_el.text = text
    run.append(text_el)
    link.append(run)
    paragraph._p.append(link)


def test_an_external_link_keeps_its_anchor(tmp_path: Path) -> None:
    document = docx.Document()
    paragraph = document.add_paragraph("Read ")
    add_link(paragraph, "the terms", url="https://example.com/terms", anchor="refunds")
    assert docx_markdown(document, tmp_path / "anchor.docx") == "Read [the terms](https://example.com/terms#refunds)\n"


def test_a_link_to_a_bookmark_inside_the_document(tmp_path: Path) -> None:
    document = docx.Document()
    add_link(document.add_paragraph("See "), "the appendix", anchor="appendix_a")
    target = document.add_paragraph()
    target._p.append(parse_xml(f'<w:bookmarkStart {W_NS} w:id="0" w:name="appendix_a"/>'))
    target.add_run("Appendix A")
    target._p.append(parse_xml(f'<w:bookmarkEnd {W_NS} w:id="0"/>'))
    assert docx_markdown(document, tmp_path / "bookmark.docx") == "See [the appendix](#appendix_a)\n\nAppendix A\n"


def field_runs(instruction: str, shown: str) -> str:
    return (f'<w:p {W_NS}><w:r><w:t xml:space="preserve">Visit </w:t></w:r>'
            '<w:r><w:fldChar w:fldCharType="begin"/></w:r>'
            f'<w:r><w:instrText xml:space="preserve">{instruction}</w:instrText></w:r>'
            '<w:r><w:fldChar w:fldCharType="separate"/></w:r>'
            f'<w:r><w:t>{shown}</w:t></w:r>'
            '<w:r><w:fldChar w:fldCharType="end"/></w:r>'
            '<w:r><w:t>.</w:t></w:r></w:p>')


@pytest.mark.parametrize(("instruction", "expected"), [
    (' HYPERLINK "https://example.com/help" \\o "tip" ', "Visit [our help](https://example.com/help)."),
    (' HYPERLINK \\l "_Toc1" ', "Visit [our help](#_Toc1)."),
    (' HYPERLINK "https://example.com/a b" \\l "part 2" ', "Visit [our help](https://example.com/a%20b#part%202)."),
    (' PAGE ', "Visit our help."),  # another field: its shown result is plain text, the code is not
], ids=["url", "bookmark", "url-and-anchor", "not-a-link"])
def test_hyperlink_fields_are_links(tmp_path: Path, instruction: str, expected: str) -> None:
    document = docx.Document()
    document.element.body.insert(0, parse_xml(field_runs(instruction, "our help")))
    markdown = docx_markdown(document, tmp_path / "field.docx")
    assert markdown == expected + "\n"
    assert "HYPERLINK" not in markdown and "PAGE" not in markdown


def test_a_simple_hyperlink_field_is_a_link(tmp_path: Path) -> None:
    document = docx.Document()
    document.element.body.insert(0, parse_xml(
        f'<w:p {W_NS}><w:fldSimple w:instr=" HYPERLINK &quot;https://example.com&quot; ">'
        '<w:r><w:t>site</w:t></w:r></w:fldSimple></w:p>'))
    assert docx_markdown(document, tmp_path / "simple.docx") == "[site](https://example.com)\n"


# Text without emphasis takes ``render``'s short way: the same markdown as its spans.
PLAIN_SEGMENTS = [
    [Segment("Refunds are final.")],
    [Segment("  lead and trail  "), Segment("*starred* a*b"), Segment("")],
    [Segment("\t"), Segment("[^1]", raw=True), Segment(" x "), Segment("", raw=True), Segment("   ")],
    [Segment("[a*b](http://x/*)", raw=True), Segment(" ** "), Segment("\n"), Segment("名前 *")],
    [Segment("   ")],
    [],
]


@pytest.mark.parametrize("segments", PLAIN_SEGMENTS)
def test_text_without_emphasis_renders_as_its_spans_do(segments: list[Segment]) -> None:
    assert render(segments) == _render_spans(segments)


def test_runs_without_emphasis_read_as_runs_with_properties_that_set_none(tmp_path: Path) -> None:
    # a run with no w:rPr (the short way) and one whose w:rPr sets only a size (the long way)
    pieces = [("  a*b ", {}), ("\tc  ", {}), (" (x)*2 ", {})]
    plain = docx_markdown(runs(*pieces), tmp_path / "plain.docx")
    sized = docx_markdown(runs(*[(text, {"size": Pt(11)}) for text, _ in pieces]), tmp_path / "sized.docx")
    assert plain == sized == "a\\*b \tc   (x)\\*2\n"


def test_first_child_finds_what_find_finds() -> None:
    from monkeyllm_plugins._docx_format import first_child

    run = parse_xml(f'<w:r {W_NS}><!-- a note --><w:t>x</w:t><w:rPr><w:b w:val="0"/><w:b/></w:rPr>'
                    f'<w:sdt><w:rPr/></w:sdt><w:rPr><w:i/></w:rPr></w:r>')
    for element in [run, *run.iter()]:
        if not isinstance(element.tag, str):
            continue
        for name in ("rPr", "b", "i", "t", "sdt", "u"):
            assert first_child(element, qn(f"w:{name}")) is element.find(qn(f"w:{name}"))
