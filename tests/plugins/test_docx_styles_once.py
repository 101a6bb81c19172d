"""Issue 16: a Word styles part is read once per process (``_docx_styles.document_styles``,
``LazyStylesPart``): documents from one template share ``styles.xml`` byte for byte.
The markdown must not change by a byte whether a document's styles were read before
or not, a document with its own styles must get its own, a broken styles part must
fail as it always did, and python-docx must still see the whole part."""
from __future__ import annotations

import io
import zipfile
import zlib
from pathlib import Path

import docx
import pytest
from docx.enum.style import WD_STYLE_TYPE
from docx.enum.text import WD_BREAK

from monkeyllm_gardener import ConversionError
from monkeyllm_plugins import _docx_styles
from monkeyllm_plugins._docx_package import open_document
from monkeyllm_plugins.docx_document import DocxConverter

STYLES_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles"


def styled_document(*, emphasis_italic: bool = False) -> docx.document.Document:
    """Title, headings (one through a custom style based on Heading 2), lists, a
    custom character style, a table with merged cells: what styles decide."""
    document = docx.Document()
    document.add_paragraph("Quarterly review", style="Title")
    document.add_heading("Scope", level=1)
    custom = document.styles.add_style("Minutes Heading", WD_STYLE_TYPE.PARAGRAPH)
    custom.base_style = document.styles["Heading 2"]
    document.add_paragraph("Minutes", style="Minutes Heading")
    marker = document.styles.add_style("Marker", WD_STYLE_TYPE.CHARACTER)
    if emphasis_italic:
        marker.font.italic = True
    else:
        marker.font.bold = True
    paragraph = document.add_paragraph("Plain then ")
    paragraph.add_run("marked", style="Marker")
    paragraph.add_run(" text.").add_break(WD_BREAK.LINE)
    document.add_paragraph("first point", style="List Bullet")
    document.add_paragraph("nested point", style="List Bullet 2")
    document.add_paragraph("counted", style="List Number")
    table = document.add_table(rows=3, cols=3)
    for r, row in enumerate(table.rows):
        for c, cell in enumerate(row.cells):
            cell.text = f"r{r}c{c} ünï 名前"
    table.cell(0, 0).merge(table.cell(0, 1))
    table.cell(1, 2).merge(table.cell(2, 2))
    return document


def converted(path: Path) -> tuple[str | None, str, object, tuple[str, ...]]:
    conversion = DocxConverter().convert(path)
    return conversion.title, conversion.markdown, conversion.frontmatter, conversion.warnings


def test_a_document_whose_styles_were_read_before_converts_byte_for_byte_the_same(tmp_path: Path) -> None:
    path = tmp_path / "review.docx"
    styled_document().save(path)
    _docx_styles._STYLES_READ.clear()
    first = converted(path)  # styles parsed and read
    assert open_document(path).part.part_related_by(STYLES_REL)._parsed is None  # now skipped
    second = converted(path)
    assert second == first
    title, markdown, _, _ = first
    assert title == "Quarterly review"
    assert "## Scope" in markdown and "### Minutes" in markdown
    assert "Plain then **marked** text." in markdown
    assert "- first point\n    - nested point\n1. counted" in markdown
    # python-docx's merge joins the merged cells' paragraphs; the merge is written once
    assert "| r0c0 ünï 名前<br>r0c1 ünï 名前 |  | r0c2 ünï 名前 |" in markdown
    assert "| r2c0 ünï 名前 | r2c1 ünï 名前 |  |" in markdown


def test_a_document_with_its_own_styles_gets_its_own(tmp_path: Path) -> None:
    bold, italic = tmp_path / "bold.docx", tmp_path / "italic.docx"
    styled_document().save(bold)
    styled_document(emphasis_italic=True).save(italic)
    for _ in range(2):  # read before or not, each keeps its own marks
        assert "Plain then **marked** text." in converted(bold)[1]
        assert "Plain then *marked* text." in converted(italic)[1]


def test_a_broken_styles_part_fails_as_it_always_did(tmp_path: Path) -> None:
    good = tmp_path / "good.docx"
    styled_document().save(good)
    converted(good)  # a styles part in the cache
    broken = tmp_path / "broken.docx"
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(broken, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            target.writestr(item, data[: len(data) // 2] if item.filename == "word/styles.xml" else data)
    with pytest.raises(ConversionError, match=r"^broken.docx: not a readable Word document \(XMLSyntaxError\)"):
        DocxConverter().convert(broken)


def test_python_docx_still_sees_and_saves_a_styles_part_read_before(tmp_path: Path) -> None:
    path = tmp_path / "review.docx"
    styled_document().save(path)
    converted(path)
    document = open_document(path)
    assert document.part.part_related_by(STYLES_REL)._parsed is None
    names = [style.name for style in document.styles]  # parsed now, on first use
    assert "Minutes Heading" in names and "Marker" in names
    document.styles.add_style("Added Later", WD_STYLE_TYPE.PARAGRAPH)
    out = io.BytesIO()
    document.save(out)
    reopened = docx.Document(io.BytesIO(out.getvalue()))
    assert [style.name for style in reopened.styles] == names + ["Added Later"]


def _with_crc(data: bytes, target: int, positions: list[int]) -> bytes:
    """``data`` with bit 0x02 flipped at some of ``positions`` (each an ``a``, so each
    stays a letter: ``a`` <-> ``c``) so that its CRC-32 is ``target``: CRC-32 is affine,
    so the flips' effects add up (XOR) and a linear system over GF(2) picks them."""
    base = zlib.crc32(data)
    rows: list[tuple[int, int]] = []  # (effect on the CRC, flips giving it), reduced
    for index, position in enumerate(positions):
        flipped = bytearray(data)
        flipped[position] ^= 0x02
        rows.append((zlib.crc32(bytes(flipped)) ^ base, 1 << index))
    # Gaussian elimination on the effects, keeping which flips make each row
    basis: dict[int, tuple[int, int]] = {}  # top bit -> (effect, combo)
    for effect, combo in rows:
        while effect:
            top = effect.bit_length() - 1
            if top not in basis:
                basis[top] = (effect, combo)
                break
            effect, combo = effect ^ basis[top][0], combo ^ basis[top][1]
    wanted, combo = target ^ base, 0
    while wanted:
        top = wanted.bit_length() - 1
        assert top in basis, "the flips cannot reach the target CRC"
        wanted, combo = wanted ^ basis[top][0], combo ^ basis[top][1]
    out = bytearray(data)
    for index, position in enumerate(positions):
        if combo >> index & 1:
            out[position] ^= 0x02
    return bytes(out)


def test_another_styles_part_with_the_same_size_and_crc_is_read_as_its_own(tmp_path: Path) -> None:
    # the kept reading is found by size and CRC-32 and confirmed byte for byte: a part
    # that only shares the size and the CRC (made here on purpose) is never taken for it
    bold, italic = tmp_path / "bold.docx", tmp_path / "italic.docx"
    styled_document().save(bold)
    styled_document(emphasis_italic=True).save(italic)
    padding = b"<!--" + b"a" * 96 + b"-->"
    parts = {}
    for path in (bold, italic):
        with zipfile.ZipFile(path) as archive:
            parts[path] = {item.filename: archive.read(item) for item in archive.infolist()}
        styles = parts[path]["word/styles.xml"]
        start = styles.index(b"?>") + 2
        parts[path]["word/styles.xml"] = styles[:start] + padding + styles[start:]
    mine, other = parts[bold]["word/styles.xml"], parts[italic]["word/styles.xml"]
    assert len(mine) == len(other) and mine != other
    start = other.index(padding) + 4
    other = _with_crc(other, zlib.crc32(mine), list(range(start, start + 96)))
    assert zlib.crc32(other) == zlib.crc32(mine) and len(other) == len(mine) and other != mine
    parts[italic]["word/styles.xml"] = other
    for path in (bold, italic):
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, data in parts[path].items():
                archive.writestr(name, data)
    _docx_styles._STYLES_READ.clear()
    for _ in range(2):
        assert "Plain then **marked** text." in converted(bold)[1]
        assert "Plain then *marked* text." in converted(italic)[1]
