"""Where a forest keeps its dialect, and so what makes a folder a forest.

Its own module, importing nothing: every command checks ``is_forest`` first,
before it knows whether it needs the dialect or the engine at all.
"""
from __future__ import annotations

import os

SCHEMA_PATH = "_meta/schema.md"


def is_forest(root: str | os.PathLike[str]) -> bool:
    """A folder is a forest when it holds the dialect, ``_meta/schema.md``."""
    return os.path.isfile(os.path.join(root, SCHEMA_PATH))
