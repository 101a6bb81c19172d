"""Without the ingest extra, the office and media converters are unavailable, not broken.

The missing packages are simulated for real: ``vine`` runs in a subprocess whose
PYTHONPATH starts with a folder holding a ``sitecustomize.py``. Python imports it
at start-up, before any project code, and it puts a finder first on
``sys.meta_path`` that raises ModuleNotFoundError for openpyxl, python-docx (``docx``),
xlrd, pillow (``PIL``) and mutagen, exactly as on a machine where they were never
installed (both ``import`` and ``importlib.util.find_spec`` see them missing).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import VineRunner, write_wav

INSTALL_HINT = 'pip install "monkeyllm[ingest]"'
BLOCKED_MODULES = ("openpyxl", "docx", "xlrd", "PIL", "mutagen")
# converter name -> (the module it needs, a file it claims)
EXTRA_CONVERTERS = {
    "xlsx": ("openpyxl", "book.xlsx"),
    "docx": ("docx", "memo.docx"),
    "xls": ("xlrd", "old.xls"),
    "image": ("PIL", "photo.png"),
    "audio": ("mutagen", "beep.wav"),
}

SITECUSTOMIZE = f'''
import sys

_BLOCKED = {BLOCKED_MODULES!r}


class _NotInstalled:
    """Makes the optional packages look uninstalled to this interpreter."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split(".")[0] in _BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())
'''


def build_export(export: Path) -> None:
    """One file per extra-dependent converter, real bytes made with the real packages
    (in this test process, where they are installed), plus a CSV and a note."""
    import docx
    import openpyxl
    import xlwt
    from PIL import Image

    export.mkdir()
    workbook = openpyxl.Workbook()
    workbook.active.append(["sku", "qty"])
    workbook.active.append(["A-1", 3])
    workbook.save(export / "book.xlsx")
    document = docx.Document()
    document.add_paragraph("Refunds within 30 days.")
    document.save(export / "memo.docx")
    book = xlwt.Workbook()
    sheet = book.add_sheet("Stock")
    sheet.write(0, 0, "item")
    sheet.write(1, 0, "bolts")
    book.save(str(export / "old.xls"))
    Image.new("RGB", (4, 4), "blue").save(export / "photo.png")
    write_wav(export / "beep.wav")
    (export / "invoices.csv").write_text("id,total\n1,9.5\n2,3\n", encoding="utf-8")
    (export / "readme.md").write_text("# Read me\n\nThe export of March 2026.\n", encoding="utf-8")


@pytest.fixture(scope="module")
def without_extras(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("no-extras")
    blocker = root / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    vine_cli = VineRunner(root, env={"PYTHONPATH": str(blocker)})
    export = root / "export"
    build_export(export)
    forest = vine_cli.init(root / "forest", title="No extras")
    adopt = vine_cli.adopt(export, forest, "--jobs", "1", expect=None)
    plugins = vine_cli("plugins", "--json")
    return {"root": root, "env": vine_cli.env(), "forest": forest, "adopt": adopt, "plugins": plugins,
            "vine_cli": vine_cli}


def test_the_blocker_really_hides_the_packages(without_extras: dict[str, Any]) -> None:
    probe = ("import importlib, importlib.util\n"
             "for name in %r:\n"
             "    try:\n"
             "        importlib.import_module(name); print(name, 'imported')\n"
             "    except ModuleNotFoundError:\n"
             "        print(name, 'missing')\n"
             "import csv, sqlite3, yaml; print('stdlib ok')\n") % (BLOCKED_MODULES,)
    proc = subprocess.run([sys.executable, "-c", probe], env=without_extras["env"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n") == [f"{name} missing" for name in BLOCKED_MODULES] + ["stdlib ok", ""]


@pytest.mark.parametrize("converter", sorted(EXTRA_CONVERTERS))
def test_vine_plugins_shows_the_converter_unavailable_with_the_install_hint(without_extras: dict[str, Any],
                                                                          converter: str) -> None:
    proc = without_extras["plugins"]
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    found = [c for plugin in report["plugins"] for c in plugin["converters"] if c["name"] == converter]
    assert len(found) == 1, report
    module = EXTRA_CONVERTERS[converter][0]
    assert found[0]["available"] is False
    assert module in found[0]["unavailable_reason"] and INSTALL_HINT in found[0]["unavailable_reason"]
    claimed = EXTRA_CONVERTERS[converter][1].rsplit(".", 1)[1]
    assert converter not in report["extensions"].get(f".{claimed}", [])


def test_base_converters_stay_available(without_extras: dict[str, Any]) -> None:
    report = json.loads(without_extras["plugins"].stdout)
    available = {c["name"] for plugin in report["plugins"] for c in plugin["converters"] if c["available"]}
    assert {"csv", "json", "sqlite", "markdown"} <= available, available
    assert report["load_errors"] == []


@pytest.mark.parametrize("converter", sorted(EXTRA_CONVERTERS))
def test_files_of_an_unavailable_converter_are_unsupported_with_the_hint(without_extras: dict[str, Any],
                                                                        converter: str) -> None:
    adopt = without_extras["adopt"]
    report = json.loads(adopt.stdout)
    name = EXTRA_CONVERTERS[converter][1]
    lines = [line for line in report["unsupported"] if line.startswith(f"{name}: ")]
    assert len(lines) == 1, report
    assert INSTALL_HINT in lines[0] and EXTRA_CONVERTERS[converter][0] in lines[0]
    assert not any(line.startswith(f"{name}: ") for line in report["errors"])


def test_csv_and_markdown_still_plant_and_the_run_succeeds(without_extras: dict[str, Any]) -> None:
    adopt = without_extras["adopt"]
    assert adopt.returncode == 0, adopt.stdout + adopt.stderr  # unsupported is not a failure
    report = json.loads(adopt.stdout)
    assert sorted(report["planted"]) == ["invoices", "readme"]
    assert report["errors"] == []
    forest = without_extras["forest"]
    query = without_extras["vine_cli"]("query", "invoices", "SELECT id, total FROM invoices", "--forest", forest)
    assert query.returncode == 0, query.stderr
    assert json.loads(query.stdout)["rows"] == [[1, 9.5], [2, 3.0]]
    validate = without_extras["vine_cli"]("validate", "--forest", forest)
    assert validate.returncode == 0 and " 0 error(s)" in validate.stdout, validate.stdout
