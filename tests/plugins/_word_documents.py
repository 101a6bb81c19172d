"""Word documents made in code with python-docx for the docx converter tests: the
WordprocessingML namespace for raw XML, and a document saved then converted."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from monkeyllm_plugins.docx_document import DocxConverter

W_NS = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def docx_markdown(document: Any, path: Path) -> str:
    """Save the python-docx ``document`` at ``path``; the markdown the converter makes of it."""
    document.save(path)
    return DocxConverter().convert(path).markdown
