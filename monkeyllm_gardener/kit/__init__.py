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

# Every name loads on first use (PEP 562): importing one kit module (``derive`` uses
# ``kit.markdown``) must not load the workbook and tabular helpers with it.
_MODULES = ("protocols", "encoding", "markdown", "tabular", "sheets", "media", "sqlite")
# Where each public name lives, so a lookup imports its one module. A name missing
# here (added to a module's ``__all__`` later) is still found, by importing the
# modules in turn: this table only saves time.
_HOME = {
    **dict.fromkeys(("Converter", "Describer", "OptionalDependencies"), "protocols"),
    **dict.fromkeys(("detect_encoding", "is_blank_file", "read_text"), "encoding"),
    **dict.fromkeys(("first_h1", "split_frontmatter", "strip_frontmatter", "strip_inline_markdown"), "markdown"),
    **dict.fromkeys(("CellKind", "MAX_COLUMNS_PER_TABLE", "MAX_TABLES_PER_DATASET", "NumberToken", "SqlType",
                     "TablePart", "TooManyColumns", "TypeTracker", "classify_text", "classify_value",
                     "convert_text", "convert_value", "convert_value_column", "decimal_notes", "repair_headers",
                     "split_wide_table", "stored_real_differs", "table_name_from", "text_converters",
                     "text_row_converter", "text_rows_converter", "unique_name",
                     "value_converters", "wide_table_schema"), "tabular"),
    **dict.fromkeys(("CellComment", "ColumnPlan", "EMPTY_ROW_RUN_LIMIT", "MERGED_NOTE", "PlannedTable",
                     "SheetPlan", "chatter_warnings", "describe_tables", "empty_workbook_conversion",
                     "sheet_label", "stopped_warning", "survey_sheet", "with_warnings", "workbook_conversion"),
                    "sheets"),
    **dict.fromkeys(("MAX_TAG_CHARACTERS", "clean_tag", "media_conversion", "media_title"), "media"),
    **dict.fromkeys(("has_wal_data", "snapshot_database"), "sqlite"),
}
# These bring in the Curator's package, which a converter that never asks a model
# (and every worker process) should not pay for. A plugin imports them where it
# needs them, as the vision describer does. They are not in a module's ``__all__``.
_ON_FIRST_USE = {
    "ModelClient": "model", "ModelConfigError": "model", "ModelFailure": "model",
    "fold_tag": "tags",
}


def _module(name: str) -> Any:
    return importlib.import_module(f"{__name__}.{name}")


def _all_names() -> list[str]:
    return sorted([name for module in _MODULES for name in _module(module).__all__] + list(_ON_FIRST_USE))


def __getattr__(name: str) -> Any:
    if name == "__all__":  # ``from monkeyllm_gardener.kit import *``: every module's names
        value: Any = _all_names()
    elif name in _ON_FIRST_USE:
        return getattr(_module(_ON_FIRST_USE[name]), name)
    elif name in _MODULES:  # ``kit.sheets``: the module itself (importing it binds the name)
        return _module(name)
    elif name in _HOME and name in _module(_HOME[name]).__all__:
        value = getattr(_module(_HOME[name]), name)
    else:
        home = next((m for m in _MODULES if name in _module(m).__all__), None)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(_module(home), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_all_names()})
