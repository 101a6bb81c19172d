"""The pytest plugin shipped for plugin authors works as documented."""
from __future__ import annotations

import subprocess
from pathlib import Path


def test_forest_fixture_is_a_fresh_forest(forest: Path) -> None:
    assert (forest / "_meta" / "schema.md").is_file()
    log = subprocess.run(["git", "log", "--format=%s"], cwd=forest, capture_output=True, text=True).stdout
    assert log.strip() == "init: forest 'Test forest'"


def test_adopt_folder_plants_a_note(tmp_path: Path, forest: Path, adopt_folder) -> None:
    source = tmp_path / "export"
    source.mkdir()
    (source / "hello.md").write_text("# Hello\n\nThe first note of the export, from March 2026.\n")
    report = adopt_folder(source)
    assert report.planted == ["hello"]
    assert (forest / "hello.md").read_text().startswith("---\nid: hello\n")


def test_plugin_host_loads_a_module_by_name(plugin_host) -> None:
    host = plugin_host("monkeyllm_plugins.csv_dataset", builtins=False)
    assert [c.name for c in host.claimants(".csv")] == ["csv"]
    assert host.claimants(".md") == []
