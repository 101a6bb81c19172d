"""The built-in plugins are written the way a third party writes one.

Every module of ``plugins/`` (installed as ``monkeyllm_plugins``) may import only:

- the plugin API: ``monkeyllm_gardener``'s ``__all__``, ``monkeyllm_gardener.kit`` (and
  its modules) by their ``__all__``, ``hookimpl`` from ``monkeyllm_gardener.hookspecs``;
- ``monkeyllm_core``'s ``__all__``;
- its own private helpers, ``plugins/_*.py`` (docx parsing, image metadata, ...),
  never another converter's module;
- anything outside the project (the standard library, openpyxl, pillow, ...).

Checked by parsing every import statement of every module with ``ast``, imports
inside functions included, against the names those packages really export.
"""
from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import monkeyllm_core
import monkeyllm_gardener
import monkeyllm_gardener.kit
import monkeyllm_plugins
from monkeyllm_gardener.host.builtins import BUILTIN_PLUGIN_MODULES

PLUGINS_DIR = Path(monkeyllm_plugins.__file__).parent
PROJECT_PACKAGES = ("monkeyllm_core", "monkeyllm_gardener", "monkeyllm_plugins")


def plugin_api() -> dict[str, frozenset[str]]:
    """Each module a plugin may import from, and the names it may take from it."""
    api = {
        "monkeyllm_gardener": frozenset(monkeyllm_gardener.__all__),
        "monkeyllm_gardener.hookspecs": frozenset({"hookimpl"}),
        "monkeyllm_gardener.kit": frozenset(monkeyllm_gardener.kit.__all__),
        "monkeyllm_core": frozenset(monkeyllm_core.__all__),
    }
    for found in pkgutil.iter_modules(monkeyllm_gardener.kit.__path__, "monkeyllm_gardener.kit."):
        api[found.name] = frozenset(importlib.import_module(found.name).__all__)
    return api


def private_helpers() -> frozenset[str]:
    return frozenset(path.stem for path in PLUGINS_DIR.glob("_*.py") if path.stem != "__init__")


def forbidden_imports(source: str) -> list[str]:
    """One line per import in ``source`` that the rule of the module docstring refuses."""
    api, helpers = plugin_api(), private_helpers()
    problems: list[str] = []

    def check_plugin_module(parts: list[str], where: str) -> None:
        if len(parts) != 1 or parts[0] not in helpers:
            problems.append(f"{where}: only private helpers plugins/_*.py may be imported, not {'.'.join(parts)!r}")

    for node in ast.walk(ast.parse(source)):
        where = f"line {getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "monkeyllm_plugins":
                    check_plugin_module(parts[1:], where)
                elif parts[0] in PROJECT_PACKAGES and alias.name not in api:
                    problems.append(f"{where}: {alias.name} is not part of the plugin API")
        elif isinstance(node, ast.ImportFrom):
            names = [alias.name for alias in node.names]
            if node.level:  # relative: this package's own modules
                if node.level > 1:
                    problems.append(f"{where}: relative import above plugins/")
                elif node.module is None:
                    for name in names:
                        check_plugin_module([name], where)
                else:
                    check_plugin_module(node.module.split("."), where)
                continue
            module = node.module or ""
            parts = module.split(".")
            if parts[0] == "monkeyllm_plugins":
                if len(parts) == 1:
                    for name in names:
                        check_plugin_module([name], where)
                else:
                    check_plugin_module(parts[1:], where)
            elif parts[0] in PROJECT_PACKAGES:
                if module not in api:
                    problems.append(f"{where}: {module} is not part of the plugin API (wanted {', '.join(names)})")
                    continue
                for name in names:
                    if name not in api[module]:
                        problems.append(f"{where}: {module}.{name} is not a public name of the plugin API")
    return problems


def plugin_sources() -> dict[str, str]:
    return {path.name: path.read_text(encoding="utf-8") for path in sorted(PLUGINS_DIR.glob("*.py"))}


def test_every_builtin_module_imports_only_the_plugin_api_and_its_private_helpers() -> None:
    sources = plugin_sources()
    # the check reads the real package: every built-in plugin module is among the files
    assert {name.rsplit(".", 1)[1] + ".py" for name in BUILTIN_PLUGIN_MODULES} <= set(sources)
    problems = {name: found for name, source in sources.items() if (found := forbidden_imports(source))}
    assert problems == {}


@pytest.mark.parametrize(
    "statement",
    [
        "from monkeyllm_gardener.derive import first_h1",
        "from monkeyllm_gardener.media import media_conversion",
        "def describe():\n    from monkeyllm_gardener.curator.settings import CuratorSettings",
        "import monkeyllm_gardener.host",
        "from monkeyllm_gardener.kit import no_such_helper",
        "from monkeyllm_gardener.kit.tabular import slugify",  # public-looking, not in __all__
        "from monkeyllm_gardener import kit",
        "from monkeyllm_core.data.sqlite_copy import snapshot_database",
        "from monkeyllm_plugins.csv_dataset import CsvConverter",  # another converter's module
        "from .json_data import JsonRows",
        "from . import csv_dataset",
        "import monkeyllm_plugins.xlsx_dataset",
    ],
)
def test_the_check_refuses_what_a_third_party_could_not_import(statement: str) -> None:
    assert forbidden_imports(statement)


@pytest.mark.parametrize(
    "statement",
    [
        "from monkeyllm_gardener import Conversion, ConversionError, hookimpl",
        "from monkeyllm_gardener.hookspecs import hookimpl",
        "from monkeyllm_gardener.kit import read_text, repair_headers",
        "from monkeyllm_gardener.kit.sheets import survey_sheet",
        "from monkeyllm_core import Vine",
        "from ._container import check_zip_container",
        "from monkeyllm_plugins._docx_parts import part_element",
        "import openpyxl\nfrom PIL import Image",
    ],
)
def test_the_check_accepts_the_plugin_api(statement: str) -> None:
    assert forbidden_imports(statement) == []
