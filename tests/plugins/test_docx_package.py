"""The Word package around the text: Strict OOXML documents convert, the core
properties reach the passport, and what text cannot carry (pictures, charts,
SmartArt, embedded objects) is named in the node and counted in one warning,
through the converter and through the real ``vine adopt``."""
from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from pathlib import Path
from typing import Any

import docx
import pytest
import yaml
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.packuri import PackURI
from docx.opc.part import Part
from docx.oxml import parse_xml
from PIL import Image

from monkeyllm_gardener.conversion import ConversionError
from monkeyllm_plugins.docx_document import DocxConverter

_TRANSITIONAL = re.compile(rb"http://schemas\.openxmlformats\.org/(wordprocessingml|drawingml|officeDocument)/2006/")


# ---------------------------------------------------------------- Strict OOXML


def make_strict(source: Path, target: Path) -> None:
    """Rewrite a transitional package as Strict OOXML: every namespace and
    relationship type under http://purl.oclc.org/ooxml/ (the OPC names stay)."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for member in old.infolist():
            data = old.read(member)
            if member.filename.endswith((".xml", ".rels")):
                data = _TRANSITIONAL.sub(rb"http://purl.oclc.org/ooxml/\1/", data)
            new.writestr(member, data)


def test_a_strict_ooxml_document_converts_instead_of_failing(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("Strict memo", 0)
    paragraph = document.add_paragraph("Kept ")
    paragraph.add_run("bold").bold = True
    document.add_paragraph("An item", style="List Bullet")
    document.sections[0].footer.paragraphs[0].text = "Strict footer"
    document.core_properties.author = "Ines Strict"
    transitional, strict = tmp_path / "plain.docx", tmp_path / "strict.docx"
    document.save(transitional)
    make_strict(transitional, strict)
    with pytest.raises(Exception):  # python-docx alone refuses it: the file really is strict
        docx.Document(str(strict))
    conversion = DocxConverter().convert(strict)
    assert conversion.title == "Strict memo"
    assert conversion.markdown.startswith("# Strict memo\n\nKept **bold**\n\n- An item\n")
    assert "| Footer | Strict footer |" in conversion.markdown
    assert conversion.frontmatter["author"] == "Ines Strict"
    with zipfile.ZipFile(strict) as package:  # the file on disk is untouched
        assert b"http://purl.oclc.org/ooxml/wordprocessingml/main" in package.read("word/document.xml")


# ---------------------------------------------------------------- core properties


def with_properties(**props) -> docx.Document:
    document = docx.Document()
    for name, value in props.items():
        setattr(document.core_properties, name, value)
    return document


def test_core_properties_become_passport_fields(tmp_path: Path) -> None:
    document = with_properties(
        author="Dana Writer", keywords="Refunds; policy, customer service",
        created=dt.datetime(2024, 3, 5, 9, 30), modified=dt.datetime(2025, 1, 2, 8, 0), title="Refund policy",
    )
    document.add_paragraph("Body without a heading.")
    path = tmp_path / "policy.docx"
    document.save(path)
    front = DocxConverter().convert(path).frontmatter
    assert front["title"] == "Refund policy"  # the body has no title of its own
    assert front["author"] == "Dana Writer"
    assert front["created"].date() == dt.date(2024, 3, 5) and front["modified"].date() == dt.date(2025, 1, 2)
    assert front["tags"] == ["refunds", "policy"]  # single words are tags, lowercased
    assert front["aliases"] == ["customer service"]  # a phrase is no tag


def test_the_title_a_reader_sees_wins_over_the_core_title(tmp_path: Path) -> None:
    document = with_properties(title="Template title")
    document.add_heading("Refund policy", 0)
    path = tmp_path / "titled.docx"
    document.save(path)
    conversion = DocxConverter().convert(path)
    assert conversion.title == "Refund policy"
    assert "title" not in conversion.frontmatter
    assert conversion.frontmatter["aliases"] == ["Template title"]


def rewrite_member(source: Path, target: Path, name: str, change) -> None:
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for member in old.infolist():
            data = old.read(member)
            new.writestr(member, change(data) if member.filename == name else data)


@pytest.mark.parametrize("stamp", ["1601-01-01T00:00:00Z", "1899-12-30T00:00:00Z", "last tuesday"])
def test_a_zero_or_unreadable_date_is_no_date(tmp_path: Path, stamp: str) -> None:
    document = with_properties(author="Kim")
    document.add_paragraph("Dated oddly.")
    source, odd = tmp_path / "source.docx", tmp_path / "odd.docx"
    document.save(source)
    rewrite_member(source, odd, "docProps/core.xml",
                   lambda data: re.sub(rb"(<dcterms:created[^>]*>)[^<]*(</dcterms:created>)",
                                       rb"\g<1>" + stamp.encode() + rb"\g<2>", data))
    front = DocxConverter().convert(odd).frontmatter
    assert "created" not in front
    assert front["author"] == "Kim"


def test_a_package_without_core_properties_declares_nothing(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("No properties.")
    source, stripped = tmp_path / "with.docx", tmp_path / "without.docx"
    document.save(source)
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(stripped, "w") as new:
        for member in old.infolist():
            data = old.read(member)
            if member.filename == "docProps/core.xml":
                continue
            if member.filename == "_rels/.rels":
                data = re.sub(rb'<Relationship [^>]*core-properties[^>]*/>', b"", data)
            new.writestr(member, data)
    assert DocxConverter().convert(stripped).frontmatter == {}  # not python-docx's made-up defaults


# ---------------------------------------------------------------- placeholders

NS = ('xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
      'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
      'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
      'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" '
      'xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" '
      'xmlns:dgm="http://schemas.openxmlformats.org/drawingml/2006/diagram" '
      'xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office"')
CHART_XML = (b'<c:chartSpace xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" '
             b'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><c:chart><c:title><c:tx><c:rich>'
             b'<a:p><a:r><a:t>Refunds by month</a:t></a:r></a:p></c:rich></c:tx></c:title></c:chart></c:chartSpace>')
SMARTART_XML = (b'<dgm:dataModel xmlns:dgm="http://schemas.openxmlformats.org/drawingml/2006/diagram" '
                b'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><dgm:ptLst>'
                b'<dgm:pt modelId="0" type="doc"/>'
                + b"".join(b'<dgm:pt modelId="%d"><dgm:t><a:p><a:r><a:t>%s</a:t></a:r></a:p></dgm:t></dgm:pt>' % (i, w)
                           for i, w in enumerate((b"Request", b"Approve", b"Refund"), start=1))
                + b"</dgm:ptLst></dgm:dataModel>")


def png_stream() -> io.BytesIO:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), "red").save(buffer, format="PNG")
    buffer.seek(0)
    return buffer


def relate(document, name: str, content_type: str, reltype: str, blob: bytes) -> str:
    part = Part(PackURI(name), content_type, blob, document.part.package)
    return document.part.relate_to(part, reltype)


def drawing(graphic_data: str) -> str:
    return (f'<w:r {NS}><w:drawing><wp:inline><wp:extent cx="1" cy="1"/><wp:docPr id="1" name="g"/>'
            f"<a:graphic><a:graphicData>{graphic_data}</a:graphicData></a:graphic></wp:inline></w:drawing></w:r>")


def build_refund(path: Path) -> Path:
    """Two pictures, a chart, a SmartArt graphic and an embedded workbook."""
    document = with_properties(author="Dana Writer", keywords="refunds; finance",
                               created=dt.datetime(2024, 3, 5, 9, 30))
    document.add_paragraph("Refunds rose in March.")
    document.add_paragraph().add_run().add_picture(png_stream())
    document.add_paragraph().add_run().add_picture(png_stream())  # the same picture twice: two placeholders
    chart_id = relate(document, "/word/charts/chart1.xml",
                      "application/vnd.openxmlformats-officedocument.drawingml.chart+xml", RT.CHART, CHART_XML)
    document.add_paragraph()._p.append(parse_xml(drawing(f'<c:chart r:id="{chart_id}"/>')))
    data_id = relate(document, "/word/diagrams/data1.xml",
                     "application/vnd.openxmlformats-officedocument.drawingml.diagramData+xml",
                     RT.DIAGRAM_DATA, SMARTART_XML)
    document.add_paragraph()._p.append(parse_xml(drawing(f'<dgm:relIds r:dm="{data_id}"/>')))
    ole_id = relate(document, "/word/embeddings/oleObject1.bin", "application/vnd.openxmlformats-officedocument.oleObject",
                    RT.OLE_OBJECT, b"\xd0\xcf\x11\xe0 not really a workbook")
    preview_id, _ = document.part.get_or_add_image(png_stream())
    document.add_paragraph()._p.append(parse_xml(
        f'<w:r {NS}><w:object><v:shape id="s1"><v:imagedata r:id="{preview_id}"/></v:shape>'
        f'<o:OLEObject Type="Embed" ProgID="Excel.Sheet.12" ShapeID="s1" r:id="{ole_id}"/></w:object></w:r>'))
    document.save(path)
    return path


def test_what_text_cannot_carry_is_named_in_place(tmp_path: Path) -> None:
    markdown = DocxConverter().convert(build_refund(tmp_path / "refund.docx")).markdown
    assert markdown.count("[image: image1.png]") == 2
    assert "[chart: chart1.xml — Refunds by month]" in markdown
    assert "[SmartArt: Request; Approve; Refund]" in markdown
    assert "[embedded object: Excel.Sheet.12 (oleObject1.bin)]" in markdown
    assert "base64" not in markdown


def test_one_warning_per_file_counts_the_placeholders(tmp_path: Path) -> None:
    conversion = DocxConverter().convert(build_refund(tmp_path / "refund.docx"))
    assert conversion.warnings == (
        "refund.docx: 2 images, 1 chart, 1 SmartArt graphic and 1 embedded object kept as placeholders; "
        "their content is not text",
    )


def test_a_paragraph_holding_only_placeholders_is_not_the_summary(tmp_path: Path) -> None:
    from monkeyllm_gardener.derive import derive_summary

    document = docx.Document()
    document.add_paragraph().add_run().add_picture(png_stream())
    document.add_paragraph("Refunds rose in March.")
    path = tmp_path / "picture-first.docx"
    document.save(path)
    markdown = DocxConverter().convert(path).markdown
    assert markdown == "[image: image1.png]\n\nRefunds rose in March.\n"
    assert derive_summary(markdown, title="t", kind_hint="document") == "Refunds rose in March."


def test_a_document_with_only_text_has_no_warning(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("Just words.")
    path = tmp_path / "words.docx"
    document.save(path)
    assert DocxConverter().convert(path).warnings == ()


def test_a_logo_in_a_repeated_header_is_counted_once(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("Body.")
    document.sections[0].header.paragraphs[0].add_run().add_picture(png_stream())
    section = document.add_section()
    section.header.is_linked_to_previous = False
    section.header.paragraphs[0].add_run().add_picture(png_stream())
    path = tmp_path / "logo.docx"
    document.save(path)
    conversion = DocxConverter().convert(path)
    assert conversion.markdown.count("[image: image1.png]") == 1
    assert conversion.warnings == ("logo.docx: 1 image kept as a placeholder; its content is not text",)


# ---------------------------------------------------------------- through the real CLI


def test_adopt_plants_the_passport_fields_and_reports_the_warning(vine_cli: Any, tmp_path: Path) -> None:
    export = tmp_path / "export"
    export.mkdir()
    build_refund(export / "refund.docx")
    forest = vine_cli.init(tmp_path / "forest", title="Docs")
    report = vine_cli.adopt(export, forest).json()
    assert report["planted"] == ["refund"]
    assert report["warnings"] == [
        "refund.docx: 2 images, 1 chart, 1 SmartArt graphic and 1 embedded object kept as placeholders; "
        "their content is not text"
    ]
    text = (forest / "refund.md").read_text(encoding="utf-8")
    passport = yaml.safe_load(text[4:text.index("\n---\n", 4)])
    assert passport["created"] == "2024-03-05"
    assert passport["source_author"] == "Dana Writer"
    assert passport["tags"] == ["refunds", "finance"]
    assert passport["summary"] == "Refunds rose in March."
    assert "[chart: chart1.xml — Refunds by month]" in text
    validate = vine_cli("validate", "--forest", forest)
    assert " 0 error(s)" in validate.stdout, validate.stdout


# ---------------------------------------------------------------- packages Word opens and python-docx refuses

DOCUMENT_TYPE = b"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"


def saved(tmp_path: Path, text: str = "Kept text.") -> Path:
    document = docx.Document()
    document.add_paragraph(text)
    path = tmp_path / "source.docx"
    document.save(path)
    return path


@pytest.mark.parametrize("main_type", [
    b"application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml",  # .dotx
    b"application/vnd.ms-word.document.macroEnabled.main+xml",  # .docm
], ids=["template", "macro-enabled"])
def test_a_template_or_macro_document_named_docx_converts(tmp_path: Path, main_type: bytes) -> None:
    renamed = tmp_path / "letter.docx"
    rewrite_member(saved(tmp_path), renamed, "[Content_Types].xml", lambda data: data.replace(DOCUMENT_TYPE, main_type))
    with pytest.raises(ValueError):  # python-docx alone refuses it
        docx.Document(str(renamed))
    assert DocxConverter().convert(renamed).markdown == "Kept text.\n"


def test_a_picture_missing_from_the_zip_is_a_placeholder_not_a_failure(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("Before the picture.")
    document.add_paragraph().add_run().add_picture(png_stream())
    source, broken = tmp_path / "source.docx", tmp_path / "broken.docx"
    document.save(source)
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(broken, "w") as new:
        for member in old.infolist():
            if not member.filename.startswith("word/media/"):
                new.writestr(member, old.read(member))
    conversion = DocxConverter().convert(broken)
    assert conversion.markdown == "Before the picture.\n\n[image: unnamed]\n"
    assert conversion.warnings == ("broken.docx: 1 image kept as a placeholder; its content is not text",)


def test_a_theme_named_docx_says_what_it_is(tmp_path: Path) -> None:
    theme = tmp_path / "colours.docx"
    rewrite_member(saved(tmp_path), theme, "[Content_Types].xml", lambda data: data.replace(
        DOCUMENT_TYPE, b"application/vnd.openxmlformats-officedocument.themeManager+xml"))
    with pytest.raises(ConversionError, match=r"^colours\.docx: not a Word document \(its main part is a "
                                              r"themeManager\): check the file type and export it again$"):
        DocxConverter().convert(theme)


def test_a_part_failing_its_checksum_is_reported_corrupt(tmp_path: Path) -> None:
    stored = tmp_path / "stored.docx"
    with zipfile.ZipFile(saved(tmp_path, "Checksum target.")) as old, zipfile.ZipFile(stored, "w") as new:
        for member in old.infolist():
            new.writestr(member.filename, old.read(member), compress_type=zipfile.ZIP_STORED)
    data = stored.read_bytes()
    stored.write_bytes(data.replace(b"Checksum target.", b"Checksum tarXet."))  # same length, wrong CRC
    with pytest.raises(ConversionError, match=r"^stored\.docx: corrupt zip container \(a part fails its checksum\)"):
        DocxConverter().convert(stored)
