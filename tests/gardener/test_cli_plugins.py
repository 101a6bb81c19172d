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


def test_vine_plugins_lists_the_load_error_and_the_working_plugins(vine_cli: Any, site: dict[str, str]) -> None:
    result = vine_cli("plugins", "--json", env=site)
    assert result.returncode == 0, result.describe()
    report = result.json()
    errors = [e for e in report["load_errors"] if e["plugin"] == "mlcli-broken"]
    assert len(errors) == 1 and "libpdfium" in errors[0]["error"]
    assert report["extensions"][".xyz"] == ["xyz-reader"]
    names = {p["name"] for p in report["plugins"]}
    assert {"mlcli-xyz", "mlcli-good-hook", "mlcli-raising-hook"} <= names
    text = vine_cli("plugins", env=site)
    assert any(line.startswith("  mlcli-broken [") and "libpdfium" in line for line in text.stdout.splitlines())


def test_adopt_uses_the_plugin_converter_and_discards_a_raising_hook(vine_cli: Any, cli: Any, forest: Path,
                                                                     export: Path, site: dict[str, str]) -> None:
    result = vine_cli("adopt", export, "--forest", forest, "--json", env=site)
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
    vine_cli.assert_consistent(forest)


def test_an_empty_plugin_allow_list_disables_third_party_plugins(vine_cli: Any, cli: Any, forest: Path,
                                                                 export: Path, site: dict[str, str]) -> None:
    env = {**site, "MONKEYLLM_LOAD_PLUGINS": ""}
    plugins = vine_cli("plugins", "--json", env=env).json()
    assert plugins["load_errors"] == []
    assert ".xyz" not in plugins["extensions"]
    assert not any(p["name"].startswith("mlcli-") for p in plugins["plugins"])
    report = vine_cli("adopt", export, "--forest", forest, "--json", env=env).json()
    assert report["planted"] == ["plan"]
    assert report["unsupported"] == ["record.xyz: no converter for .xyz"]
    assert "tags" not in cli.node(forest, "plan")
    vine_cli.assert_consistent(forest)


def test_an_allow_list_naming_one_plugin_loads_only_that_one(vine_cli: Any, forest: Path, export: Path,
                                                             site: dict[str, str]) -> None:
    env = {**site, "MONKEYLLM_LOAD_PLUGINS": "mlcli-xyz"}
    plugins = vine_cli("plugins", "--json", env=env).json()
    assert plugins["extensions"][".xyz"] == ["xyz-reader"]
    assert {p["name"] for p in plugins["plugins"] if p["name"].startswith("mlcli-")} == {"mlcli-xyz"}
    assert plugins["load_errors"] == []


EXITING_PLUGIN = '''
import sys
from monkeyllm_gardener.conversion import Conversion
from monkeyllm_gardener.hookspecs import hookimpl

class ExitingConverter:
    """Wraps a command-line tool's main(), which calls sys.exit on input it rejects."""
    name = "exiting-md"
    extensions = (".md",)
    def convert(self, path):
        if "REJECT" in path.read_text():
            sys.exit(2)
        return Conversion(kind="markdown", markdown=path.read_text())

class ExitingDescriber:
    name = "exiting-describer"
    kinds = ("image",)
    def describe(self, path, info):
        sys.exit(3)

@hookimpl
def register_converters(register):
    register(ExitingConverter())

@hookimpl
def register_describers(register):
    register(ExitingDescriber())

@hookimpl
def on_curate(draft):
    draft["tags"] = ["half-done"]
    raise SystemExit(4)
'''


def pluggy_dist(module: str, source: str) -> tuple[str, str, str]:
    """A distribution whose module is one pluggy plugin (entry-point group ``monkeyllm``)."""
    return module, source, f"[monkeyllm]\n{module} = {module}\n"


def test_plugin_calling_sys_exit_fails_one_file_not_the_batch(vine_cli: Any, cli: Any, forest: Path,
                                                             tmp_path: Path) -> None:
    site = cli.install_dists(tmp_path / "site", {"exiting_plugin": pluggy_dist("exiting_plugin", EXITING_PLUGIN)})
    source = tmp_path / "export"
    cli.write(source / "accepted.md", "Accepted note about the March 2026 budget.\n")
    cli.write(source / "rejected.md", "REJECT this one. Still a note about pricing.\n")
    cli.write_png(source / "photo.png", size=(4, 3))
    env = {"PYTHONPATH": str(site), "MONKEYLLM_LOAD_PLUGINS": "exiting_plugin"}
    proc = vine_cli("adopt", source, "--forest", forest, "--json", env=env)
    report = proc.json()
    assert sorted(report["planted"]) == ["accepted", "photo", "rejected"], report
    warnings = "\n".join(report["warnings"])
    fallbacks = "\n".join(report["errors"])  # a converter that failed before a fallback is an error
    assert "exiting-md" in fallbacks and "SystemExit" in fallbacks and "converted by" in fallbacks
    assert proc.returncode == 0  # ... but the files planted: the run did not fail
    assert "exiting-describer" in warnings
    assert "on_curate" in warnings
    assert "half-done" not in cli.node(forest, "accepted").get("tags", [])  # partial edits discarded
    assert "REJECT this one" in (forest / "rejected.md").read_text(encoding="utf-8")  # the built-in took over


TAGGING_PLUGIN = '''
from monkeyllm_gardener.hookspecs import hookimpl

@hookimpl
def on_curate(draft):
    draft.setdefault("tags", []).append("compliance")
    return draft
'''

BAD_SUMMARY_PLUGIN = '''
from monkeyllm_gardener.hookspecs import hookimpl

@hookimpl
def on_curate(draft):
    draft["summary"] = "This document describes " + "x" * 300
    return draft
'''


def test_one_hooks_invalid_summary_does_not_discard_another_hooks_tags(vine_cli: Any, cli: Any, forest: Path,
                                                                      tmp_path: Path) -> None:
    site = cli.install_dists(tmp_path / "site", {
        "a_tagging_plugin": pluggy_dist("a_tagging_plugin", TAGGING_PLUGIN),
        "b_bad_summary_plugin": pluggy_dist("b_bad_summary_plugin", BAD_SUMMARY_PLUGIN),
    })
    source = tmp_path / "export"
    cli.write(source / "policy.md", "Travel is reimbursed within 30 days.\n")
    env = {"PYTHONPATH": str(site), "MONKEYLLM_LOAD_PLUGINS": "a_tagging_plugin,b_bad_summary_plugin"}
    report = vine_cli("adopt", source, "--forest", forest, "--json", env=env).json()
    assert report["planted"] == ["policy"], report
    node = cli.node(forest, "policy")
    assert node["summary"] == "Travel is reimbursed within 30 days."
    assert "compliance" in node.get("tags", [])
    assert any("b_bad_summary_plugin" in line and "discarded" in line for line in report["warnings"]), report
