"""Word parts beside the body reach the node: headers and footers (each distinct one
once), footnotes and endnotes (as markdown footnotes), comments with the text they
are anchored to. Documents are built with python-docx; the notes parts, which
python-docx cannot write, are added as real package parts."""
from __future__ import annotations

from pathlib import Path

import docx
from docx.opc.constants import CONTENT_TYPE as CT
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.packuri import PackURI
from docx.opc.part import Part
from docx.oxml import parse_xml

from monkeyllm_gardener.derive import derive_summary

from _word_documents import W_NS, docx_markdown  # tests/plugins is on sys.path


# ---------------------------------------------------------------- headers and footers


def test_headers_and_footers_follow_the_body_in_their_own_section(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("The refund policy applies to every order.")
    section = document.sections[0]
    section.header.paragraphs[0].text = "ACME Corp | Confidential"
    section.footer.paragraphs[0].text = "Page 1"
    section.different_first_page_header_footer = True
    section.first_page_header.paragraphs[0].text = "Cover letterhead"
    markdown = docx_markdown(document, tmp_path / "policy.docx")
    assert markdown == (
        "The refund policy applies to every order.\n\n"
        "## Headers and footers\n\n"
        "| Where | Text |\n| --- | --- |\n"
        "| Header | ACME Corp \\| Confidential |\n"
        "| First-page header | Cover letterhead |\n"
        "| Footer | Page 1 |\n"
    )


def test_a_header_repeated_in_every_section_is_written_once(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("Chapter one.")
    document.sections[0].header.paragraphs[0].text = "Annual report 2026"
    for chapter in ("two", "three"):
        section = document.add_section()
        section.header.is_linked_to_previous = False  # its own header part, same text
        section.header.paragraphs[0].text = "Annual report 2026"
        document.add_paragraph(f"Chapter {chapter}.")
    second = document.add_section()
    second.footer.is_linked_to_previous = False
    second.footer.paragraphs[0].text = "Appendix footer"
    markdown = docx_markdown(document, tmp_path / "report.docx")
    assert markdown.count("Annual report 2026") == 1
    assert "| Header; header (section 2); header (section 3) | Annual report 2026 |" in markdown
    assert "| Footer (section 4) | Appendix footer |" in markdown


def test_even_page_headers_are_kept(tmp_path: Path) -> None:
    document = docx.Document()
    document.settings.odd_and_even_pages_header_footer = True
    document.add_paragraph("Body.")
    document.sections[0].even_page_header.paragraphs[0].text = "Left-hand pages"
    assert "| Even-page header | Left-hand pages |" in docx_markdown(document, tmp_path / "book.docx")


def test_headers_never_become_the_derived_summary(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("Short body.")
    document.sections[0].footer.paragraphs[0].text = "Strictly confidential. Do not forward."
    markdown = docx_markdown(document, tmp_path / "memo.docx")
    assert "Strictly confidential" in markdown
    assert derive_summary(markdown, title="memo", kind_hint="document") == "Short body."


# ---------------------------------------------------------------- footnotes and endnotes


def add_notes_part(document, kind: str, notes: dict[int, str]) -> None:
    """A real footnotes.xml / endnotes.xml, with Word's separator notes."""
    body = "".join(
        f'<w:{kind} w:id="{note_id}"><w:p><w:r><w:{kind}Ref/></w:r><w:r><w:t xml:space="preserve"> {text}</w:t></w:r></w:p>'
        f"</w:{kind}>"
        for note_id, text in notes.items()
    )
    xml = (f'<w:{kind}s {W_NS}><w:{kind} w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:{kind}>'
           f'<w:{kind} w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r></w:p>'
           f"</w:{kind}>{body}</w:{kind}s>")
    content_type = CT.WML_FOOTNOTES if kind == "footnote" else CT.WML_ENDNOTES
    reltype = RT.FOOTNOTES if kind == "footnote" else RT.ENDNOTES
    part = Part(PackURI(f"/word/{kind}s.xml"), content_type, xml.encode(), document.part.package)
    document.part.relate_to(part, reltype)


def add_note_reference(paragraph, kind: str, note_id: int) -> None:
    paragraph._p.append(parse_xml(f'<w:r {W_NS}><w:{kind}Reference w:id="{note_id}"/></w:r>'))


def test_footnotes_become_markdown_footnotes_in_reference_order(tmp_path: Path) -> None:
    document = docx.Document()
    paragraph = document.add_paragraph("Refunds take 30 days")
    add_note_reference(paragraph, "footnote", 7)  # Word's ids need not start at 1
    paragraph.add_run(" unless the card issuer is slower")
    add_note_reference(paragraph, "footnote", 3)
    paragraph.add_run(".")
    add_notes_part(document, "footnote", {3: "Some issuers take 60 days.", 7: "Calendar days."})
    assert docx_markdown(document, tmp_path / "notes.docx") == (
        "Refunds take 30 days[^1] unless the card issuer is slower[^2].\n\n"
        "[^1]: Calendar days.\n"
        "[^2]: Some issuers take 60 days.\n"
    )


def test_endnotes_have_their_own_labels_beside_footnotes(tmp_path: Path) -> None:
    document = docx.Document()
    paragraph = document.add_paragraph("Claim")
    add_note_reference(paragraph, "footnote", 1)
    paragraph.add_run(" and source")
    add_note_reference(paragraph, "endnote", 1)
    add_notes_part(document, "footnote", {1: "A footnote."})
    add_notes_part(document, "endnote", {1: "An endnote."})
    markdown = docx_markdown(document, tmp_path / "both.docx")
    assert "Claim[^1] and source[^e1]" in markdown
    assert "[^1]: A footnote.\n[^e1]: An endnote.\n" in markdown


def test_a_note_of_several_paragraphs_stays_one_definition(tmp_path: Path) -> None:
    document = docx.Document()
    add_note_reference(document.add_paragraph("Text"), "footnote", 1)
    add_notes_part(document, "footnote", {1: "First part."})
    part = document.part.rels[next(k for k, r in document.part.rels.items() if r.reltype == RT.FOOTNOTES)].target_part
    part._blob = part.blob.replace(b"First part.</w:t></w:r></w:p>",
                                   b"First part.</w:t></w:r></w:p><w:p><w:r><w:t>Second part.</w:t></w:r></w:p>")
    assert "[^1]: First part.<br>Second part.\n" in docx_markdown(document, tmp_path / "long.docx")


# ---------------------------------------------------------------- comments


def test_comments_keep_their_text_anchor_and_author(tmp_path: Path) -> None:
    document = docx.Document()
    paragraph = document.add_paragraph("Refunds are granted ")
    anchored = paragraph.add_run("within 30 days")
    paragraph.add_run(" of purchase.")
    document.add_comment(anchored, text="Legal says 14 days | check", author="Dana Reviewer", initials="DR")
    second = document.add_paragraph("Shipping is free.")
    document.add_comment(second.runs, text="Only in the EU.", author="Lee")
    markdown = docx_markdown(document, tmp_path / "reviewed.docx")
    assert markdown.startswith("Refunds are granted within 30 days of purchase.\n\nShipping is free.\n\n## Comments\n")
    assert (
        "| Comment | On the text | By |\n| --- | --- | --- |\n"
        "| Legal says 14 days \\| check | within 30 days | Dana Reviewer |\n"
        "| Only in the EU. | Shipping is free. | Lee |\n"
    ) in markdown


def test_a_comment_over_several_paragraphs_anchors_all_their_words(tmp_path: Path) -> None:
    document = docx.Document()
    first = document.add_paragraph("Clause one.")
    second = document.add_paragraph("Clause two.")
    document.add_comment([first.runs[0], second.runs[0]], text="Merge these.", author="Ann")
    assert "| Merge these. | Clause one. Clause two. | Ann |" in docx_markdown(document, tmp_path / "span.docx")
