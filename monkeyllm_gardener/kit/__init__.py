"""The plugin kit: the helpers the built-in converters use, offered to every plugin.

A third-party plugin can write what a built-in writes because the built-ins use
nothing else: ``monkeyllm_plugins`` imports only ``monkeyllm_gardener`` (``Conversion``,
``hookimpl``, ...), this kit and ``monkeyllm_core``'s public names, and a test holds
them to it. Every name in ``__all__`` is documented and stable: it changes only by
adding (a new argument has a default), like the hookspecs.

By job, one module each (``from monkeyllm_gardener.kit import ...`` takes any name
below; ``monkeyllm_gardener.kit.<module>`` holds it):

- ``protocols``: ``Converter``, ``Describer`` and ``OptionalDependencies``, the shape
  of what a plugin registers.
- ``encoding``: ``detect_encoding``, ``read_text``, ``is_blank_file``: decode a text
  file exactly, or fail with the fix (never mojibake).
- ``markdown``: ``split_frontmatter``, ``strip_frontmatter``, ``first_h1``,
  ``strip_inline_markdown``: a markdown source's frontmatter block and title.
- ``tags``: ``fold_tag``, free keywords as the forest spells tags (loaded on first use).
- ``tabular``: SQL-safe names (``repair_headers``, ``table_name_from``), type
  inference (``TypeTracker``) and the dataset schema (``wide_table_schema``).
- ``sheets``: workbooks: ``survey_sheet`` plans a sheet, ``workbook_conversion``
  makes the dataset.
- ``media``: ``media_conversion`` for images and audio, ``clean_tag`` for the text a
  file declares about itself.
- ``sqlite``: ``snapshot_database``, a private complete copy of a live database.
- ``model``: ``ModelClient``, the model endpoint the environment binds (loaded on
  first use).
"""
from __future__ import annotations

import importlib
from typing import Any

from monkeyllm_gardener.kit import encoding, markdown, media, protocols, sheets, sqlite, tabular
from monkeyllm_gardener.kit.encoding import *  # noqa: F403 - the kit is its modules' __all__
from monkeyllm_gardener.kit.markdown import *  # noqa: F403
from monkeyllm_gardener.kit.media import *  # noqa: F403
from monkeyllm_gardener.kit.protocols import *  # noqa: F403
from monkeyllm_gardener.kit.sheets import *  # noqa: F403
from monkeyllm_gardener.kit.sqlite import *  # noqa: F403
from monkeyllm_gardener.kit.tabular import *  # noqa: F403

_MODULES = (protocols, encoding, markdown, tabular, sheets, media, sqlite)
# Loaded on first use: these bring in the Curator's package, which a converter that
# never asks a model (and every worker process) should not pay for at start-up.
# A plugin imports them where it needs them, as the vision describer does.
_ON_FIRST_USE = {
    "ModelClient": "model", "ModelConfigError": "model", "ModelFailure": "model",
    "fold_tag": "tags",
}

__all__ = sorted([name for module in _MODULES for name in module.__all__] + list(_ON_FIRST_USE))


def __getattr__(name: str) -> Any:
    if name in _ON_FIRST_USE:
        return getattr(importlib.import_module(f"{__name__}.{_ON_FIRST_USE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
