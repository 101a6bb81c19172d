"""The built-in .docx converter: documents built with python-docx, markdown asserted."""
from __future__ import annotations

import io
from pathlib import Path

import docx
import openpyxl
import pytest
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.oxml import OxmlElement, parse_xml
from docx.oxml.ns import qn
from PIL import Image

from monkeyllm_gardener.conversion import ConversionError, UnsupportedFile
from monkeyllm_plugins.docx_document import DocxConverter
from lxml import etree

from _containers import OLE_MAGIC  # tests/plugins is on sys.path

NAMESPACES = (
    'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
    'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
    'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
    'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
    'xmlns:v="urn:schemas-microsoft-com:vml"'
)
# A text box as Word writes it: DrawingML first, the same box again as a VML fallback.
TEXT_BOX_RUN = f"""
<w:r {NAMESPACES}>
  <mc:AlternateContent>
    <mc:Choice Requires="wps">
      <w:drawing><wp:anchor><wp:docPr id="9" name="Text Box 9"/><a:graphic>
        <a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape">
          <wps:wsp><wps:txbx><w:txbxContent>
            <w:p><w:r><w:t>Boxed remark about margins</w:t></w:r></w:p>
          </w:txbxContent></wps:txbx></wps:wsp>
        </a:graphicData></a:graphic></wp:anchor></w:drawing>
    </mc:Choice>
    <mc:Fallback>
      <w:pict><v:shape><v:textbox><w:txbxContent>
        <w:p><w:r><w:t>Boxed remark about margins</w:t></w:r></w:p>
      </w:txbxContent></v:textbox></v:shape></w:pict>
    </mc:Fallback>
  </mc:AlternateContent>
</w:r>
"""


def add_hyperlink(paragraph, text: str, url: str) -> None:
    rel_id = paragraph.part.relate_to(url, RT.HYPERLINK, is_external=True)
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), rel_id)
    run = OxmlElement("w:r")
    text_el = OxmlElement("w:t")
    text_el.text = text
    run.append(text_el)
    link.append(run)
    paragraph._p.append(link)


def png_bytes() -> io.BytesIO:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), "red").save(buffer, format="PNG")
    buffer.seek(0)
    return buffer


def build_report(path: Path) -> Path:
    document = docx.Document()
    document.add_heading("Quarterly Report", 0)
    document.add_heading("Overview", 1)
    intro = document.add_paragraph("Figures come from ")
    add_hyperlink(intro, "the ledger", "https://example.com/ledger")
    intro.add_run(" and are final.")
    document.add_paragraph("First bullet", style="List Bullet")
    document.add_paragraph("Nested bullet", style="List Bullet 2")
    document.add_paragraph("Step one", style="List Number")
    document.add_paragraph("Step two", style="List Number")
    document.add_heading("Regions", 2)

    table = document.add_table(rows=4, cols=3)
    for cell, text in zip(table.rows[0].cells, ["Region", "Q1", "Notes"]):
        cell.text = text
    table.cell(1, 0).text = "North | East"
    table.cell(1, 1).text = "10"
    notes = table.cell(1, 2)
    notes.text = "line one"
    notes.paragraphs[0].add_run().add_break()
    notes.paragraphs[0].add_run("line two")
    vertical = table.cell(2, 0).merge(table.cell(3, 0))
    vertical.text = "South"
    table.cell(2, 1).text = "20"
    table.cell(3, 1).text = "21"
    vertical_note = table.cell(2, 2).merge(table.cell(3, 2))
    vertical_note.text = "shared note"
    inner = vertical_note.add_table(rows=2, cols=2)  # a nested table, flattened into the cell
    for (r, c), text in {(0, 0): "k", (0, 1): "v", (1, 0): "alpha", (1, 1): "beta"}.items():
        inner.cell(r, c).text = text

    wide = document.add_table(rows=2, cols=3)
    merged = wide.cell(0, 0).merge(wide.cell(0, 1))
    merged.text = "Span"
    wide.cell(0, 2).text = "C"
    wide.cell(1, 0).text = "a"
    wide.cell(1, 1).text = "b"
    wide.cell(1, 2).text = "c"

    anchor = document.add_paragraph("See the box.")
    anchor._p.append(parse_xml(TEXT_BOX_RUN))
    document.add_paragraph().add_run().add_picture(png_bytes())
    document.add_paragraph("Closing words.")
    document.save(path)
    return path


@pytest.fixture(scope="module")
def quarterly_report(tmp_path_factory: pytest.TempPathFactory):
    path = build_report(tmp_path_factory.mktemp("docx") / "report.docx")
    return DocxConverter().convert(path)


def test_document_is_markdown_of_type_document_titled_from_the_title_style(quarterly_report) -> None:
    assert quarterly_report.kind == "markdown"
    assert quarterly_report.node_type == "document"
    assert quarterly_report.title == "Quarterly Report"


def test_title_is_h1_and_headings_shift_one_level_below_it(quarterly_report) -> None:
    lines = quarterly_report.markdown.splitlines()
    assert lines[0] == "# Quarterly Report"
    assert "## Overview" in lines and "### Regions" in lines
    assert sum(line.startswith("# ") for line in lines) == 1


def test_lists_become_markdown_lists_with_nesting(quarterly_report) -> None:
    assert "- First bullet\n    - Nested bullet\n1. Step one\n1. Step two" in quarterly_report.markdown


def test_hyperlink_keeps_its_text_and_url(quarterly_report) -> None:
    assert "Figures come from [the ledger](https://example.com/ledger) and are final." in quarterly_report.markdown


def test_table_is_a_pipe_table_with_merged_cells_written_once(quarterly_report) -> None:
    assert (
        "| Region | Q1 | Notes |\n"
        "| --- | --- | --- |\n"
        "| North \\| East | 10 | line one<br>line two |\n"
        "| South | 20 | shared note<br>k; v<br>alpha; beta |\n"
        "|  | 21 |  |"
    ) in quarterly_report.markdown
    assert quarterly_report.markdown.count("South") == 1
    assert quarterly_report.markdown.count("shared note") == 1


def test_horizontal_merge_is_written_in_its_first_position(quarterly_report) -> None:
    assert "| Span |  | C |\n| --- | --- | --- |\n| a | b | c |" in quarterly_report.markdown


def test_body_order_interleaves_paragraphs_and_tables(quarterly_report) -> None:
    text = quarterly_report.markdown
    order = [text.index(s) for s in ("## Overview", "### Regions", "| Region |", "| Span |", "See the box.", "Closing words.")]
    assert order == sorted(order)


def test_text_box_text_is_kept_once(quarterly_report) -> None:
    markdown = quarterly_report.markdown
    assert markdown.count("Boxed remark about margins") == 1
    assert markdown.index("See the box.") < markdown.index("Boxed remark about margins")


def test_image_is_named_never_inlined(quarterly_report) -> None:
    assert "[image: image1.png]" in quarterly_report.markdown
    assert "base64" not in quarterly_report.markdown and "data:image" not in quarterly_report.markdown


def numbered(paragraph, num_id: int, level: int) -> None:
    """Attach direct numbering (w:numPr), as Word does for "List Paragraph" lists."""
    props = paragraph._p.get_or_add_pPr()
    props.append(parse_xml(
        f'<w:numPr {NAMESPACES}><w:ilvl w:val="{level}"/><w:numId w:val="{num_id}"/></w:numPr>'
    ))


def test_direct_numbering_gives_bullets_or_numbers_from_the_numbering_part(tmp_path: Path) -> None:
    document = docx.Document()
    formats = {num.numId: num for num in document.part.numbering_part.element.num_lst}
    assert {1, 5} <= set(formats)  # the default template: 1 is a bullet list, 5 a decimal one
    numbered(document.add_paragraph("Apples", style="List Paragraph"), 1, 0)
    numbered(document.add_paragraph("Green ones", style="List Paragraph"), 1, 1)
    numbered(document.add_paragraph("Count them", style="List Paragraph"), 5, 0)
    numbered(document.add_paragraph("Not a list any more"), 0, 0)
    path = tmp_path / "lists.docx"
    document.save(path)
    assert DocxConverter().convert(path).markdown == (
        "- Apples\n    - Green ones\n1. Count them\n\nNot a list any more\n"
    )


def test_without_a_title_heading_one_is_h1_and_titles_the_document(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("Preamble.")
    document.add_heading("Minutes", 1)
    document.add_heading("Attendees", 2)
    path = tmp_path / "minutes.docx"
    document.save(path)
    conversion = DocxConverter().convert(path)
    assert conversion.markdown == "Preamble.\n\n# Minutes\n\n## Attendees\n"
    assert conversion.title == "Minutes"


def test_plain_document_has_no_title_so_the_file_name_is_used(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("Just a line.")
    path = tmp_path / "plain.docx"
    document.save(path)
    conversion = DocxConverter().convert(path)
    assert conversion.title is None
    assert conversion.markdown == "Just a line.\n"


@pytest.mark.parametrize(
    ("content", "error", "expected"),
    [
        (b"", ConversionError, r"^memo\.docx: empty file"),
        (OLE_MAGIC + bytes(600) + "EncryptedPackage".encode("utf-16-le"), UnsupportedFile,
         r"^memo\.docx: encrypted \(password-protected\) document: remove the password and export again$"),
        (OLE_MAGIC + bytes(600) + "WordDocument".encode("utf-16-le"), UnsupportedFile,
         r"^memo\.docx: this is a legacy Word \.doc renamed \.docx: open it in Word and save it as \.docx$"),
    ],
    ids=["zero-byte", "encrypted", "doc-renamed"],
)
def test_container_problems_fail_with_their_own_message(tmp_path: Path, content: bytes, error, expected: str) -> None:
    path = tmp_path / "memo.docx"
    path.write_bytes(content)
    with pytest.raises(error, match=expected):
        DocxConverter().convert(path)


def test_a_workbook_renamed_docx_is_not_a_word_document(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    path = tmp_path / "sheet.docx"
    book.save(path)
    with pytest.raises(ConversionError, match=r"^sheet\.docx: an Excel workbook, not a Word document: rename it to \.xlsx$"):
        DocxConverter().convert(path)


MATH = 'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math"'


def _math_run(text: str) -> str:
    return f"<m:r><m:t>{text}</m:t></m:r>"


EQUATIONS = [
    # (OMML inside m:oMath, what the markdown says)
    (f"<m:f><m:num>{_math_run('a')}</m:num><m:den>{_math_run('b+1')}</m:den></m:f>", r"\frac{a}{b+1}"),
    (f"<m:sSup><m:e>{_math_run('x')}</m:e><m:sup>{_math_run('2')}</m:sup></m:sSup>", "{x}^{2}"),
    (f"<m:sSub><m:e>{_math_run('x')}</m:e><m:sub>{_math_run('i')}</m:sub></m:sSub>", "{x}_{i}"),
    (f"<m:rad><m:radPr><m:degHide m:val=\"1\"/></m:radPr><m:deg/><m:e>{_math_run('y')}</m:e></m:rad>",
     r"\sqrt{y}"),
    (f"<m:d><m:dPr><m:begChr m:val=\"[\"/><m:endChr m:val=\"]\"/></m:dPr><m:e>{_math_run('0')}</m:e>"
     f"<m:e>{_math_run('1')}</m:e></m:d>", "[0|1]"),
    (f"<m:nary><m:naryPr><m:chr m:val=\"\u2211\"/></m:naryPr><m:sub>{_math_run('i=1')}</m:sub>"
     f"<m:sup>{_math_run('n')}</m:sup><m:e>{_math_run('i')}</m:e></m:nary>", "\u2211_{i=1}^{n} i"),
    (f"<m:acc><m:e>{_math_run('v')}</m:e></m:acc>{_math_run(' = E')}", "v = E"),  # unknown structure: text kept
]


@pytest.mark.parametrize(("omml", "expected"), EQUATIONS,
                         ids=["fraction", "superscript", "subscript", "root", "delimiters", "sum", "other"])
def test_an_inline_equation_keeps_its_structure_as_latex_text(tmp_path: Path, omml: str, expected: str) -> None:
    document = docx.Document()
    paragraph = document.add_paragraph("Growth follows ")
    paragraph._p.append(parse_xml(f"<m:oMath {MATH}>{omml}</m:oMath>"))
    paragraph.add_run(" each year.")
    path = tmp_path / "maths.docx"
    document.save(path)
    assert DocxConverter().convert(path).markdown == f"Growth follows ${expected}$ each year.\n"


def test_an_equation_paragraph_is_display_math(tmp_path: Path) -> None:
    document = docx.Document()
    paragraph = document.add_paragraph()
    paragraph._p.append(parse_xml(
        f"<m:oMathPara {MATH}><m:oMath>{_math_run('E=m')}"
        f"<m:sSup><m:e>{_math_run('c')}</m:e><m:sup>{_math_run('2')}</m:sup></m:sSup></m:oMath></m:oMathPara>"))
    path = tmp_path / "display.docx"
    document.save(path)
    assert DocxConverter().convert(path).markdown == "$$E=m{c}^{2}$$\n"


W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def test_runs_inside_bidi_embeddings_are_kept_in_order(tmp_path: Path) -> None:
    document = docx.Document()
    paragraph = document.add_paragraph("Contract with ")
    for tag, text in (("dir", "שלום בע״מ"), ("bdo", "شركة")):
        wrapper = etree.SubElement(paragraph._p, f"{{{W}}}{tag}")
        wrapper.set(f"{{{W}}}val", "rtl")
        run = etree.SubElement(wrapper, f"{{{W}}}r")
        etree.SubElement(run, f"{{{W}}}t").text = text
    path = tmp_path / "contract.docx"
    document.save(path)
    markdown = DocxConverter().convert(path).markdown
    assert markdown == "Contract with שלום בע״מشركة\n"
