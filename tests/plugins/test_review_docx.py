"""Word text wrapped in bidirectional embeddings (``w:dir``, ``w:bdo``), as Word writes
around right-to-left runs, is document text and must reach the body."""
from __future__ import annotations

from pathlib import Path

import docx
from lxml import etree
from monkeyllm_plugins.docx_document import DocxConverter

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
