"""Hostile inputs found in review: each is adopted by the real ``vine`` CLI in a
subprocess, and must end as one clear report line, fast, with nothing lost."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from monkeyllm_gardener.testing import isolated_env

VINE = [sys.executable, "-m", "monkeyllm_gardener.cli"]


def _env(tmp_path: Path) -> dict[str, str]:
    return isolated_env(tmp_path / "home", {"MONKEYLLM_LOAD_PLUGINS": ""})


def _vine(tmp_path: Path, *args: Any, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*VINE, *map(str, args)], check=False, cwd=tmp_path, env=_env(tmp_path),
                          capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def adopt(tmp_path: Path, export: Path, timeout: float = 60) -> tuple[Path, dict[str, Any]]:
    forest = tmp_path / "forest"
    init = _vine(tmp_path, "init", "--forest", forest, "--title", "Review")
    assert init.returncode == 0, init.stderr
    proc = _vine(tmp_path, "adopt", export, "--forest", forest, "--json", timeout=timeout)
    assert proc.returncode in (0, 1), proc.stderr
    return forest, json.loads(proc.stdout)


def passport(forest: Path, node_id: str) -> dict[str, Any]:
    text = (forest / f"{node_id}.md").read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---\n", 2)[1])


@pytest.mark.parametrize(
    "name, hostile_line",
    [
        # Unclosed emphasis markers: quadratic in the line length for the inline stripper.
        ("emphasis.md", "*a " * 60_000),
        # A line of glued URLs: exponential backtracking in the link-only line check.
        ("urls.md", "http://" * 60 + " !"),
        # A heading with a long run of spaces: quadratic in the H1 title pattern.
        ("heading.md", "# a" + " " * 200_000 + "b"),
    ],
)
def test_markdown_with_pathological_lines_plants_quickly(tmp_path: Path, name: str, hostile_line: str) -> None:
    export = tmp_path / "export"
    export.mkdir()
    (export / name).write_text(f"Budget approved for March 2026.\n\n{hostile_line}\n", encoding="utf-8")
    started = time.monotonic()
    forest, report = adopt(tmp_path, export, timeout=60)
    assert time.monotonic() - started < 30
    node_id = name.removesuffix(".md")
    assert report["planted"] == [node_id]
    assert passport(forest, node_id)["summary"].startswith("Budget approved for March 2026.")


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


def _install_plugin(tmp_path: Path, module_name: str, source: str) -> Path:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / f"{module_name}.py").write_text(source, encoding="utf-8")
    dist_info = site / f"{module_name}-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module_name}\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text(f"[monkeyllm]\n{module_name} = {module_name}\n")
    return site


def test_plugin_calling_sys_exit_fails_one_file_not_the_batch(tmp_path: Path) -> None:
    site = _install_plugin(tmp_path, "exiting_plugin", EXITING_PLUGIN)
    export = tmp_path / "export"
    export.mkdir()
    (export / "accepted.md").write_text("Accepted note about the March 2026 budget.\n")
    (export / "rejected.md").write_text("REJECT this one. Still a note about pricing.\n")
    from PIL import Image
    Image.new("RGB", (4, 3), "red").save(export / "photo.png")
    forest = tmp_path / "forest"
    env = {**_env(tmp_path), "PYTHONPATH": str(site), "MONKEYLLM_LOAD_PLUGINS": "exiting_plugin"}
    run = lambda *args: subprocess.run([*VINE, *map(str, args)], check=False, cwd=tmp_path, env=env,
                                       capture_output=True, text=True, timeout=120)
    assert run("init", "--forest", forest, "--title", "Review").returncode == 0
    proc = run("adopt", export, "--forest", forest, "--json")
    assert "Traceback" not in proc.stderr, proc.stderr
    report = json.loads(proc.stdout)
    assert sorted(report["planted"]) == ["accepted", "photo", "rejected"], report
    warnings = "\n".join(report["warnings"])
    fallbacks = "\n".join(report["errors"])  # a converter that failed before a fallback is an error
    assert "exiting-md" in fallbacks and "SystemExit" in fallbacks and "converted by" in fallbacks
    assert proc.returncode == 0  # ... but the files planted: the run did not fail
    assert "exiting-describer" in warnings
    assert "on_curate" in warnings
    assert "half-done" not in passport(forest, "accepted").get("tags", [])  # partial edits discarded
    assert "REJECT this one" in (forest / "rejected.md").read_text(encoding="utf-8")  # the built-in took over


def test_decimals_a_double_cannot_hold_keep_every_digit(tmp_path: Path) -> None:
    export = tmp_path / "export"
    export.mkdir()
    (export / "readings.csv").write_text(
        "sensor,value\nA,1.5\nB,0.12345678901234567890\nC,3.14159265358979323846\n", encoding="utf-8"
    )
    forest, report = adopt(tmp_path, export)
    assert report["planted"] == ["readings"]
    import sqlite3

    with sqlite3.connect(forest / "readings.db") as db:
        values = [row[0] for row in db.execute("SELECT value FROM readings ORDER BY rowid")]
    assert [str(v) for v in values] == ["1.5", "0.12345678901234567890", "3.14159265358979323846"]


def test_database_with_a_view_that_never_ends_is_adopted_with_a_warning(tmp_path: Path) -> None:
    import sqlite3

    export = tmp_path / "export"
    export.mkdir()
    with sqlite3.connect(export / "crm.db") as db:
        db.execute("CREATE TABLE customers(name TEXT)")
        db.execute("INSERT INTO customers VALUES ('Northwind')")
        db.execute(
            "CREATE VIEW forever AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
            "SELECT x FROM c ORDER BY x DESC"
        )
    db_file = export / "crm.db"
    started = time.monotonic()
    forest, report = adopt(tmp_path, export, timeout=60)
    assert time.monotonic() - started < 30
    assert report["planted"] == ["crm"]
    assert any("forever" in line and "first rows" in line for line in report["warnings"]), report
    assert (forest / "crm.db").read_bytes() == db_file.read_bytes()


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


def test_one_hooks_invalid_summary_does_not_discard_another_hooks_tags(tmp_path: Path) -> None:
    site = _install_plugin(tmp_path, "a_tagging_plugin", TAGGING_PLUGIN)
    _install_plugin(tmp_path, "b_bad_summary_plugin", BAD_SUMMARY_PLUGIN)
    export = tmp_path / "export"
    export.mkdir()
    (export / "policy.md").write_text("Travel is reimbursed within 30 days.\n")
    forest = tmp_path / "forest"
    env = {**_env(tmp_path), "PYTHONPATH": str(site),
           "MONKEYLLM_LOAD_PLUGINS": "a_tagging_plugin,b_bad_summary_plugin"}
    run = lambda *args: subprocess.run([*VINE, *map(str, args)], check=False, cwd=tmp_path, env=env,
                                       capture_output=True, text=True, timeout=120)
    assert run("init", "--forest", forest, "--title", "Review").returncode == 0
    proc = run("adopt", export, "--forest", forest, "--json")
    assert "Traceback" not in proc.stderr, proc.stderr
    report = json.loads(proc.stdout)
    assert report["planted"] == ["policy"], report
    node = passport(forest, "policy")
    assert node["summary"] == "Travel is reimbursed within 30 days."
    assert "compliance" in node.get("tags", [])
    assert any("b_bad_summary_plugin" in line and "discarded" in line for line in report["warnings"]), report


def test_single_column_csv_keeps_rows_whose_value_is_empty(tmp_path: Path) -> None:
    import csv
    import sqlite3

    export = tmp_path / "export"
    export.mkdir()
    with (export / "codes.csv").open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([["code"], ["A1"], [""], ["B2"], ["   "], ["C3"]])
    forest, report = adopt(tmp_path, export)
    assert report["planted"] == ["codes"]
    with sqlite3.connect(forest / "codes.db") as db:
        values = [row[0] for row in db.execute("SELECT code FROM codes ORDER BY rowid")]
    assert values == ["A1", None, "B2", None, "C3"]


def test_numbers_longer_than_python_parses_plant_as_exact_text(tmp_path: Path) -> None:
    import sqlite3

    digits = "7" * 5000  # Python's int() refuses more than 4,300 digits
    export = tmp_path / "export"
    export.mkdir()
    (export / "serials.csv").write_text(f"id,serial\n1,{digits}\n2,42\n", encoding="utf-8")
    (export / "serials-json.json").write_text(f'[{{"id": 1, "serial": {digits}}}, {{"id": 2, "serial": 42}}]',
                                              encoding="utf-8")
    forest, report = adopt(tmp_path, export)
    assert sorted(report["planted"]) == ["serials", "serials-json"], report
    for node, table in (("serials", "serials"), ("serials-json", "serials_json")):
        with sqlite3.connect(forest / f"{node}.db") as db:
            values = [row[0] for row in db.execute(f"SELECT serial FROM {table} ORDER BY rowid")]
        assert values == [digits, "42"]


@pytest.mark.parametrize(
    "frontmatter_value",
    ["7" * 5000,  # an integer Python's int() refuses (ValueError, not a YAMLError)
     "[" * 20000 + "]" * 20000],  # nesting deeper than the YAML parser's stack
)
def test_markdown_whose_frontmatter_cannot_be_loaded_plants_with_a_warning(tmp_path: Path,
                                                                          frontmatter_value: str) -> None:
    export = tmp_path / "export"
    export.mkdir()
    (export / "note.md").write_text(f"---\nserial: {frontmatter_value}\n---\nPricing review for May 2026.\n",
                                    encoding="utf-8")
    forest, report = adopt(tmp_path, export)
    assert report["planted"] == ["note"], report
    assert any("frontmatter does not parse" in line for line in report["warnings"])
    body = (forest / "note.md").read_text(encoding="utf-8")
    assert frontmatter_value in body  # kept as text, nothing lost
    assert passport(forest, "note")["summary"] == "Pricing review for May 2026."


@pytest.mark.parametrize("name", ["junk.csv", "junk.json", "junk.md"])
def test_megabytes_of_undecodable_bytes_fail_fast_with_one_line_naming_the_file(tmp_path: Path, name: str) -> None:
    import random

    export = tmp_path / "export"
    export.mkdir()
    (export / name).write_bytes(random.Random(3).randbytes(5_000_000))
    started = time.monotonic()
    forest, report = adopt(tmp_path, export, timeout=60)
    assert time.monotonic() - started < 30
    assert report["planted"] == []
    (line,) = report["errors"]
    assert line.startswith(f"{name}: ") and "re-save it as UTF-8" in line and "\n" not in line


def test_a_one_line_json_of_megabytes_in_cp1251_is_decoded(tmp_path: Path) -> None:
    import sqlite3

    export = tmp_path / "export"
    export.mkdir()
    records = [{"id": n, "city": "Москва" if n % 2 else "Санкт-Петербург"} for n in range(100_000)]
    (export / "cities.json").write_bytes(json.dumps(records, ensure_ascii=False).encode("cp1251"))
    assert (export / "cities.json").stat().st_size > 2_000_000
    forest, report = adopt(tmp_path, export, timeout=120)
    assert report["planted"] == ["cities"], report
    assert any("cities.json" in line and "cp1251" in line for line in report["warnings"]), report
    with sqlite3.connect(forest / "cities.db") as db:
        assert db.execute("SELECT city FROM cities WHERE id IN (0, 1) ORDER BY id").fetchall() == [
            ("Санкт-Петербург",), ("Москва",)]
