"""Third-party plugins installed for real (a ``*.dist-info`` folder plus the module,
on PYTHONPATH) and exercised through `vine plugins` and `vine adopt`."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

BROKEN_MODULE = """
raise ImportError("mlcli_broken needs libpdfium, which is not installed")
"""

XYZ_MODULE = """
from monkeyllm_gardener.conversion import Conversion

class XyzConverter:
    name = "xyz-reader"
    def convert(self, path):
        text = path.read_text(encoding="utf-8")
        return Conversion(kind="markdown", title="XYZ " + path.stem,
                          markdown="# XYZ " + path.stem + "\\n\\nDecoded XYZ record: " + text.strip() + "\\n")
"""

GOOD_HOOK_MODULE = """
def add_compliance_tag(draft):
    draft.setdefault("tags", []).append("compliance")
    return draft
"""

RAISING_HOOK_MODULE = """
def mutate_then_raise(draft):
    draft["title"] = "HACKED BY HOOK"
    draft.setdefault("tags", []).append("hacked")
    raise RuntimeError("hook crashed halfway")
"""

DISTS = {
    # distribution name: (module name, module source, entry_points.txt)
    "mlcli-broken": ("mlcli_broken", BROKEN_MODULE, "[monkeyllm.converters]\npdf = mlcli_broken:PdfConverter\n"),
    "mlcli-xyz": ("mlcli_xyz", XYZ_MODULE, "[monkeyllm.converters]\nxyz = mlcli_xyz:XyzConverter\n"),
    "mlcli-good-hook": ("mlcli_good_hook", GOOD_HOOK_MODULE,
                        "[monkeyllm.hooks]\non_curate = mlcli_good_hook:add_compliance_tag\n"),
    "mlcli-raising-hook": ("mlcli_raising_hook", RAISING_HOOK_MODULE,
                           "[monkeyllm.hooks]\non_curate = mlcli_raising_hook:mutate_then_raise\n"),
}


@pytest.fixture
def site(tmp_path: Path, cli: Any) -> dict[str, str]:
    """A site folder holding the four distributions; the env that puts it on PYTHONPATH."""
    return {"PYTHONPATH": str(cli.install_dists(tmp_path / "site", DISTS))}


@pytest.fixture
def export(tmp_path: Path, cli: Any) -> Path:
    source = tmp_path / "export"
    cli.write(source / "record.xyz", "alpha=1 beta=2\n")
    cli.write(source / "plan.md", "# Plan\n\nThe plan for April 2026.\n")
    return source


def test_vine_plugins_lists_the_load_error_and_the_working_plugins(vine: Any, site: dict[str, str]) -> None:
    result = vine("plugins", "--json", env=site)
    assert result.returncode == 0, result.describe()
    report = result.json()
    errors = [e for e in report["load_errors"] if e["plugin"] == "mlcli-broken"]
    assert len(errors) == 1 and "libpdfium" in errors[0]["error"]
    assert report["extensions"][".xyz"] == ["xyz-reader"]
    names = {p["name"] for p in report["plugins"]}
    assert {"mlcli-xyz", "mlcli-good-hook", "mlcli-raising-hook"} <= names
    text = vine("plugins", env=site)
    assert any(line.startswith("  mlcli-broken [") and "libpdfium" in line for line in text.stdout.splitlines())


def test_adopt_uses_the_plugin_converter_and_discards_a_raising_hook(vine: Any, cli: Any, forest: Path,
                                                                     export: Path, site: dict[str, str]) -> None:
    result = vine("adopt", export, "--forest", forest, "--json", env=site)
    assert result.returncode == 0, result.describe()  # a broken plugin and a raising hook fail nothing
    report = result.json()
    assert sorted(report["planted"]) == ["plan", "record"]
    record = cli.node(forest, "record")
    assert record["title"] == "XYZ record"
    assert "Decoded XYZ record: alpha=1 beta=2" in cli.body(forest, "record")
    for node_id in ("plan", "record"):
        fm = cli.node(forest, node_id)
        assert fm["tags"] == ["compliance"], node_id  # the good hook's edit stands
        assert "HACKED" not in fm["title"], node_id  # the raising hook's edits are discarded
    failures = [w for w in report["warnings"] if "mlcli-raising-hook" in w]
    assert len(failures) == 2 and all("hook crashed halfway" in w for w in failures)
    vine.assert_consistent(forest)


def test_an_empty_plugin_allow_list_disables_third_party_plugins(vine: Any, cli: Any, forest: Path,
                                                                 export: Path, site: dict[str, str]) -> None:
    env = {**site, "MONKEYLLM_LOAD_PLUGINS": ""}
    plugins = vine("plugins", "--json", env=env).json()
    assert plugins["load_errors"] == []
    assert ".xyz" not in plugins["extensions"]
    assert not any(p["name"].startswith("mlcli-") for p in plugins["plugins"])
    report = vine("adopt", export, "--forest", forest, "--json", env=env).json()
    assert report["planted"] == ["plan"]
    assert report["unsupported"] == ["record.xyz: no converter for .xyz"]
    assert "tags" not in cli.node(forest, "plan")
    vine.assert_consistent(forest)


def test_an_allow_list_naming_one_plugin_loads_only_that_one(vine: Any, forest: Path, export: Path,
                                                             site: dict[str, str]) -> None:
    env = {**site, "MONKEYLLM_LOAD_PLUGINS": "mlcli-xyz"}
    plugins = vine("plugins", "--json", env=env).json()
    assert plugins["extensions"][".xyz"] == ["xyz-reader"]
    assert {p["name"] for p in plugins["plugins"] if p["name"].startswith("mlcli-")} == {"mlcli-xyz"}
    assert plugins["load_errors"] == []
