"""The optional dependencies of the built-in converters come in one extra, so every
built-in that needs one names the same fix."""
from __future__ import annotations

INGEST_HINT = 'pip install "monkeyllm[ingest]"'
