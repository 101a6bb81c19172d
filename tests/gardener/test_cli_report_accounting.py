"""The report accounts for every file, in the right list (issue 9, item 7), through
the real `vine` CLI with third-party converters installed for real on PYTHONPATH."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

STRICT_CSV = """
from monkeyllm_gardener.conversion import ConversionError

class StrictCsv:
    name = "strict-csv"
    priority = -1.0  # tried before the built-in csv converter
    def convert(self, path):
        raise ConversionError(f"{path.name}: not in the strict dialect")
"""

CHATTY = """
import os, sys, warnings
from monkeyllm_gardener.conversion import Conversion

class Chatty:
    name = "chatty"
    def convert(self, path):
        print("DEBUG: opening workbook stream")          # sys.stdout
        sys.stderr.write("note: 3 styles ignored\\n")     # sys.stderr
        warnings.warn("Data Validation extension is not supported", UserWarning)
        os.write(1, b"raw fd-level chatter\\n")           # bypasses sys.stdout entirely
        return Conversion(kind="markdown", title=path.stem, markdown="# Chat\\n\\nA chatty record.\\n")
"""

# Counts its calls in the file named by $FLAKY_CALLS, so a test can see whether it ran.
ALWAYS_FAILS = """
import os
from monkeyllm_gardener.conversion import ConversionError

class Broken:
    name = "broken-reader"
    def convert(self, path):
        with open(os.environ["FLAKY_CALLS"], "a") as calls:
            calls.write(path.name + "\\n")
        raise ConversionError(f"{path.name}: the record is truncated; re-export it")
"""

DISTS = {
    "rpt-strict-csv": ("rpt_strict_csv", STRICT_CSV, "[monkeyllm.converters]\ncsv = rpt_strict_csv:StrictCsv\n"),
    "rpt-chatty": ("rpt_chatty", CHATTY, "[monkeyllm.converters]\nchat = rpt_chatty:Chatty\n"),
    "rpt-broken": ("rpt_broken", ALWAYS_FAILS, "[monkeyllm.converters]\nbad = rpt_broken:Broken\n"),
}


@pytest.fixture
def site(tmp_path: Path, cli: Any) -> dict[str, str]:
    folder = cli.install_dists(tmp_path / "site", DISTS)
    return {"PYTHONPATH": str(folder), "FLAKY_CALLS": str(tmp_path / "calls.txt")}


def run_json(vine_cli: Any, *args: Any, env: dict[str, str], expect: int) -> dict[str, Any]:
    result = vine_cli(*args, "--json", env=env)
    assert result.returncode == expect, result.describe()
    return json.loads(result.stdout)  # stdout is one JSON document, nothing else


def test_a_converter_that_failed_before_a_fallback_is_an_error_naming_who_failed(
        vine_cli: Any, cli: Any, forest: Path, tmp_path: Path, site: dict[str, str]) -> None:
    source = tmp_path / "export"
    cli.write(source / "invoices.csv", "id,total\nA-1,12.5\n")
    report = run_json(vine_cli, "adopt", source, "--forest", forest, env=site, expect=0)
    assert report["planted"] == ["invoices"]  # the built-in csv converter took it
    assert report["errors"] == ["invoices.csv: strict-csv failed: not in the strict dialect; "
                                "converted by csv instead"]
    assert not any("strict-csv" in w for w in report["warnings"])
    vine_cli.assert_consistent(forest)


def test_library_chatter_becomes_that_files_warnings_and_stdout_stays_json(
        vine_cli: Any, cli: Any, forest: Path, tmp_path: Path, site: dict[str, str]) -> None:
    source = tmp_path / "export"
    cli.write(source / "record.chat", "hello\n")
    result = vine_cli("adopt", source, "--forest", forest, "--json", env=site)
    assert result.returncode == 0, result.describe()
    report = json.loads(result.stdout)
    assert report["planted"] == ["record"]
    said = [w for w in report["warnings"] if w.startswith("record.chat: ")]
    assert "record.chat: chatty reported: UserWarning: Data Validation extension is not supported" in said
    assert "record.chat: chatty reported: DEBUG: opening workbook stream" in said
    assert "record.chat: chatty reported: note: 3 styles ignored" in said
    # output written past sys.stdout, straight to the file descriptor, lands on stderr
    assert "raw fd-level chatter" in result.stderr and "raw fd-level chatter" not in result.stdout


def test_a_failed_file_that_has_not_changed_is_listed_but_not_converted_again(
        vine_cli: Any, cli: Any, forest: Path, tmp_path: Path, site: dict[str, str]) -> None:
    source = tmp_path / "export"
    bad = cli.write(source / "ledger.bad", "partial")
    cli.write(source / "plan.md", "# Plan\n\nThe plan.\n")
    calls = Path(site["FLAKY_CALLS"])
    first = run_json(vine_cli, "adopt", source, "--forest", forest, env=site, expect=1)
    assert first["errors"] == ["ledger.bad: broken-reader failed: the record is truncated; re-export it"]
    assert calls.read_text().splitlines() == ["ledger.bad"]

    again = run_json(vine_cli, "sync", "--forest", forest, env=site, expect=1)  # still failing: still exit 1
    assert len(again["errors"]) == 1 and again["errors"][0].startswith(first["errors"][0])
    assert "not converted again until the file changes" in again["errors"][0]
    assert calls.read_text().splitlines() == ["ledger.bad"]  # the converter was not run

    os.utime(bad, (bad.stat().st_atime, bad.stat().st_mtime + 10))  # the file changed: retried
    run_json(vine_cli, "sync", "--forest", forest, env=site, expect=1)
    assert calls.read_text().splitlines() == ["ledger.bad", "ledger.bad"]

    memory = forest / "_derived/gardener-failures.json"
    assert "ledger.bad" in memory.read_text(encoding="utf-8")
    bad.unlink()  # gone from the source: nothing left to remember
    run_json(vine_cli, "sync", "--forest", forest, env=site, expect=0)
    assert "ledger.bad" not in memory.read_text(encoding="utf-8")


GOOD_BAD_READER = """
from monkeyllm_gardener.conversion import Conversion

class Lenient:
    name = "lenient-bad-reader"
    def convert(self, path):
        return Conversion(kind="markdown", title=path.stem, markdown="# Ledger\\n\\nWhat could be read.\\n")
"""


def test_installing_a_converter_retries_files_that_failed(vine_cli: Any, cli: Any, forest: Path,
                                                          tmp_path: Path, site: dict[str, str]) -> None:
    source = tmp_path / "export"
    cli.write(source / "ledger.bad", "partial")
    run_json(vine_cli, "adopt", source, "--forest", forest, env=site, expect=1)
    cli.install_dists(Path(site["PYTHONPATH"]), {  # a second .bad converter is installed
        "rpt-lenient": ("rpt_lenient", GOOD_BAD_READER, "[monkeyllm.converters]\nbad = rpt_lenient:Lenient\n")})
    report = run_json(vine_cli, "sync", "--forest", forest, env=site, expect=0)
    assert report["planted"] == ["ledger"]
    assert report["errors"] == ["ledger.bad: broken-reader failed: the record is truncated; re-export it; "
                                "converted by lenient-bad-reader instead"]


def test_sync_path_applies_the_walks_rules(vine_cli: Any, cli: Any, forest: Path, tmp_path: Path) -> None:
    source = tmp_path / "export"
    cli.write(source / "plan.md", "# Plan\n\nThe plan.\n")
    cli.write(source / ".hidden.md", "# Hidden\n\nA hidden note.\n")
    cli.write(source / "~$lock.docx", "lock")
    cli.write(source / "videos/intro.mp4", "not really a video")
    report = run_json(vine_cli, "adopt", source, "--forest", forest, env={}, expect=0)
    assert report["planted"] == ["plan"]
    assert report["unsupported"] == ["videos/intro.mp4: no converter for .mp4"]
    assert report["branches"] == []  # videos/ holds nothing a converter takes: no empty branch
    assert any(line.startswith(".hidden.md: hidden file") for line in report["skipped"])
    for named in (".hidden.md", "~$lock.docx", "videos"):
        report = run_json(vine_cli, "sync", "--forest", forest, "--path", named, env={}, expect=0)
        assert report["planted"] == [] and report["branches"] == [], named
    assert sorted(cli.node_ids(forest)) == ["plan"]
    vine_cli.assert_consistent(forest)


def test_a_file_named_like_a_side_file_of_something_that_is_not_a_database_is_reported(
        vine_cli: Any, cli: Any, forest: Path, tmp_path: Path) -> None:
    # "2024-journal" beside the folder "2024", "notes.md-wal" beside a note: not SQLite's
    source = tmp_path / "export"
    cli.write(source / "2024/plan.md", "# Plan\n\nThe plan.\n")
    cli.write(source / "2024-journal", "Day one: nothing happened.\n")
    cli.write(source / "notes.md", "# Notes\n\nSome notes.\n")
    cli.write(source / "notes.md-wal", "kept by an editor\n")
    report = run_json(vine_cli, "adopt", source, "--forest", forest, env={}, expect=0)
    assert len(report["planted"]) == 2 and report["errors"] == []
    assert [line.split(":", 1)[0] for line in report["unsupported"]] == ["2024-journal", "notes.md-wal"]
