"""The built-in plugins: ordinary pluggy plugin modules, loaded last.

They use exactly the hookspecs a third party does; loading them last makes them
the generic fallbacks behind command hooks and installed plugins. A built-in that
fails to import (a missing optional dependency at import time, a bug) is reported
by ``vine plugins`` like any broken plugin and never stops the host.
"""
from __future__ import annotations

BUILTIN_PLUGIN_MODULES: tuple[str, ...] = (
    "monkeyllm_plugins.markdown_text",
    "monkeyllm_plugins.csv_dataset",
    "monkeyllm_plugins.json_data",
    "monkeyllm_plugins.sqlite_db",
    "monkeyllm_plugins.xlsx_dataset",
    "monkeyllm_plugins.xls_dataset",
    "monkeyllm_plugins.docx_document",
    "monkeyllm_plugins.image_media",
    "monkeyllm_plugins.audio_media",
    "monkeyllm_plugins.vision_describer",
)
