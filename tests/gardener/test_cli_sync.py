"""`vine sync` end to end: edits, deletions, additions, hand-written notes, --path,
--dry-run and a `kill -9` in the middle of an adopt."""
from __future__ import annotations

import hashlib
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
import sqlite3
import subprocess
import yaml


@pytest.fixture
def adopted_rich_export(vine_cli: Any, cli: Any, forest: Path, rich_export: Path) -> tuple[Path, Path]:
    (rich_export / "misc/broken.json").unlink()  # a clean adopt: exit 0 below
    vine_cli.adopt(rich_export, forest)
    return forest, rich_export


def hand_commit(cli: Any, forest: Path, message: str) -> None:
    cli.git(forest, "add", "-A")
    cli.git(forest, "-c", "user.name=Ann", "-c", "user.email=ann@example.com", "commit", "-q", "-m", message)


def test_an_edited_note_is_updated_in_one_sync_commit(vine_cli: Any, cli: Any,
                                                      adopted_rich_export: tuple[Path, Path]) -> None:
    forest, export = adopted_rich_export
    before = cli.commit_count(forest)
    note = export / "notes/archive/old plan.md"
    note.write_text("# Old plan\n\nRevised in May 2026: the warehouse moves to Faro instead.\n", encoding="utf-8")
    cli.bump_mtime(note)
    report = vine_cli.sync(forest).json()
    assert report["updated"] == ["notes/archive/old-plan"]
    assert report["planted"] == [] and report["stale"] == []
    assert cli.commit_count(forest) == before + 1
    assert cli.commit_messages(forest)[0] == "gardener(sync): notes/archive/old-plan"
    fm = cli.node(forest, "notes/archive/old-plan")
    assert "Faro" in fm["summary"]
    assert fm["source_hash"] == hashlib.sha256(note.read_bytes()).hexdigest()
    assert "[[notes/archive/old-plan]] — " + fm["summary"] in cli.body(forest, "notes/archive/_index")
    vine_cli.assert_consistent(forest)


def test_a_deleted_file_makes_its_passport_stale_and_keeps_it(vine_cli: Any, cli: Any,
                                                             adopted_rich_export: tuple[Path, Path]) -> None:
    forest, export = adopted_rich_export
    (export / "media/beep.wav").unlink()
    report = vine_cli.sync(forest).json()
    assert report["stale"] == ["media/beep"]
    fm = cli.node(forest, "media/beep")
    assert fm["stale"] is True
    assert (forest / "media" / fm["payload"]).is_file()
    text = vine_cli("sync", "--forest", forest)
    assert "stale (1):" in text.stdout.splitlines() and "  media/beep" in text.stdout.splitlines()
    vine_cli.assert_consistent(forest)


def test_a_new_file_is_planted(vine_cli: Any, cli: Any, adopted_rich_export: tuple[Path, Path]) -> None:
    forest, export = adopted_rich_export
    cli.write(export / "notes/New Idea.md", "# New idea\n\nShip the Falcon beta to Brazil in July 2026.\n")
    cli.write(export / "fresh/deep/plan.md", "# Deep plan\n\nA plan in a new folder.\n")
    report = vine_cli.sync(forest).json()
    assert set(report["planted"]) == {"notes/new-idea", "fresh/deep/plan"}
    assert set(report["branches"]) == {"fresh/_index", "fresh/deep/_index"}
    assert len(report["unchanged"]) == 7
    vine_cli.assert_consistent(forest)


def test_touching_a_file_without_changing_it_changes_nothing(vine_cli: Any, cli: Any,
                                                             adopted_rich_export: tuple[Path, Path]) -> None:
    forest, export = adopted_rich_export
    before_commits, before_files = cli.commit_count(forest), cli.snapshot(forest)
    cli.bump_mtime(export / "data/invoices.csv")
    cli.bump_mtime(export / "notes/Board Meeting 2026-03.md")
    for _ in range(2):  # the second run takes the size+mtime fast path again
        report = vine_cli.sync(forest).json()
        assert report["updated"] == [] and report["planted"] == []
        assert len(report["unchanged"]) == 7
    assert cli.commit_count(forest) == before_commits
    assert cli.snapshot(forest) == before_files
    vine_cli.assert_consistent(forest)


def test_hand_written_notes_survive_a_sync_after_the_source_changed(vine_cli: Any, cli: Any,
                                                                    adopted_rich_export: tuple[Path, Path]) -> None:
    forest, export = adopted_rich_export
    notes = {
        "notes/archive/old-plan": "## Notes\n\nAsk Maria whether Porto was final.\n",
        "data/invoices": "## Notes\n\ntotal_usd is in USD; status F = paid, A = open.\n",
    }
    for node_id, section in notes.items():
        path = forest / f"{node_id}.md"
        path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + "\n\n" + section, encoding="utf-8")
    hand_commit(cli, forest, "notes by hand")
    vine_cli.assert_consistent(forest)

    note = export / "notes/archive/old plan.md"
    note.write_text("# Old plan\n\nRevised: the warehouse moves to Faro.\n", encoding="utf-8")
    cli.bump_mtime(note)
    csv = export / "data/invoices.csv"
    csv.write_text(cli.INVOICES_CSV + "INV-4,Initech,99.5,F\n", encoding="utf-8")
    cli.bump_mtime(csv)
    report = vine_cli.sync(forest).json()
    assert sorted(report["updated"]) == ["data/invoices", "notes/archive/old-plan"]
    for node_id, section in notes.items():
        assert section.strip() in cli.body(forest, node_id), node_id
    assert "Faro" in cli.body(forest, "notes/archive/old-plan")
    vine_cli.assert_consistent(forest)


def test_a_changed_csv_gets_a_new_payload_and_a_regenerated_map(vine_cli: Any, cli: Any,
                                                                adopted_rich_export: tuple[Path, Path]) -> None:
    forest, export = adopted_rich_export
    old = cli.node(forest, "data/invoices")
    csv = export / "data/invoices.csv"
    csv.write_text("invoice_id,customer,total_usd,status,region\n"
                   "INV-1,Northwind,1240.0,F,EU\nINV-2,Contoso,880.5,A,US\n"
                   "INV-3,Fabrikam,15300.0,F,EU\nINV-4,Initech,99.5,F,BR\n", encoding="utf-8")
    cli.bump_mtime(csv)
    before = cli.commit_count(forest)
    report = vine_cli.sync(forest).json()
    assert report["updated"] == ["data/invoices"]
    assert cli.commit_count(forest) == before + 1
    fm = cli.node(forest, "data/invoices")
    db = forest / "data" / fm["payload"]
    assert fm["payload_hash"] != old["payload_hash"]
    assert fm["payload_hash"] == hashlib.sha256(db.read_bytes()).hexdigest()
    text = cli.body(forest, "data/invoices")
    assert "region TEXT" in text.split("## Query manual", 1)[1].split("## Sample rows", 1)[0]
    assert "### invoices — 4 rows" in text
    assert "| INV-1 | Northwind | 1240.0 | F | EU |" in text
    assert text.count("## Query manual") == 1 and text.count("## Sample rows") == 1
    result = vine_cli("query", "data/invoices", "SELECT region, COUNT(*) FROM invoices GROUP BY region ORDER BY region",
                  "--forest", forest)
    assert result.json()["rows"] == [["BR", 1], ["EU", 2], ["US", 1]]
    assert not list(forest.rglob("*.vine-old")) and not list(forest.rglob("*.vine-new"))
    vine_cli.assert_consistent(forest)


def test_sync_path_limits_the_sync_to_one_folder(vine_cli: Any, cli: Any, adopted_rich_export: tuple[Path, Path]) -> None:
    forest, export = adopted_rich_export
    note, csv = export / "notes/archive/old plan.md", export / "data/invoices.csv"
    note.write_text("# Old plan\n\nChanged plan.\n", encoding="utf-8")
    csv.write_text(cli.INVOICES_CSV + "INV-9,Umbrella,1.0,A\n", encoding="utf-8")
    cli.bump_mtime(note)
    cli.bump_mtime(csv)
    (export / "media/beep.wav").unlink()
    report = vine_cli.sync(forest, "--path", "notes").json()
    assert report["updated"] == ["notes/archive/old-plan"]
    assert report["stale"] == []
    assert cli.commit_messages(forest)[0] == "gardener(sync): notes/archive/old-plan"
    vine_cli.assert_consistent(forest)
    rest = vine_cli.sync(forest).json()
    assert rest["updated"] == ["data/invoices"] and rest["stale"] == ["media/beep"]
    vine_cli.assert_consistent(forest)


def test_dry_run_prints_the_plan_and_writes_nothing(vine_cli: Any, cli: Any, adopted_rich_export: tuple[Path, Path]) -> None:
    forest, export = adopted_rich_export
    note = export / "notes/archive/old plan.md"
    note.write_text("# Old plan\n\nChanged plan.\n", encoding="utf-8")
    cli.bump_mtime(note)
    cli.write(export / "notes/brand new.md", "# Brand new\n\nNew.\n")
    (export / "media/beep.wav").unlink()
    log, files = cli.commit_messages(forest), cli.snapshot(forest)
    result = vine_cli("sync", "--forest", forest, "--dry-run")
    assert result.returncode == 0, result.describe()
    lines = result.stdout.splitlines()
    assert lines[0].startswith("dry run: nothing written")
    assert "  refresh notes/archive/old-plan <- notes/archive/old plan.md" in lines
    assert "  plant notes/brand-new <- notes/brand new.md" in lines
    assert "  mark stale media/beep" in lines
    plan = vine_cli.sync(forest, "--dry-run").json()
    assert plan["dry_run"] is True and len(plan["plan"]) == 4
    assert "unsupported misc/mystery.qqq: no converter for .qqq" in plan["plan"]
    adopt_plan = vine_cli("adopt", export, "--forest", forest, "--dry-run")
    assert adopt_plan.returncode == 0 and "dry run: nothing written" in adopt_plan.stdout
    assert cli.commit_messages(forest) == log
    assert cli.snapshot(forest) == files
    vine_cli.assert_consistent(forest)


def test_kill_9_mid_adopt_then_sync_finishes_without_duplicates(vine_cli: Any, cli: Any, forest: Path,
                                                                 tmp_path: Path) -> None:
    source = tmp_path / "big"
    expected = set()
    for d in range(8):
        for i in range(60):
            rel = f"folder {d}/note {i}.md"
            cli.write(source / rel, f"# Note {d}-{i}\n\nItem {i} of folder {d}, filed in March 2026.\n")
            expected.add(rel)
    proc = vine_cli.popen("adopt", source, "--forest", forest, "--jobs", "1")
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            planted = sum(1 for p in forest.glob("folder-*/*.md") if p.name != "_index.md")
            if planted >= 60:
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the adopt finished before it could be interrupted"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL

    report = vine_cli.sync(forest).json()  # no SOURCE: the adopt recorded it before the first file
    assert report["errors"] == []
    assert len(report["planted"]) + len(report["unchanged"]) == len(expected)
    passports = [cli.node(forest, i) for i in cli.node_ids(forest) if not i.endswith("_index")]
    sources = [fm["source_path"] for fm in passports]
    assert sorted(sources) == sorted(expected)  # each source file exactly one node
    vine_cli.assert_consistent(forest)
    again = vine_cli.sync(forest).json()
    assert again["planted"] == [] and len(again["unchanged"]) == len(expected)


def test_marking_vanished_files_stale_is_one_bulk_session(vine_cli: Any, cli: Any, forest: Path, tmp_path: Path) -> None:
    source = tmp_path / "export"
    for i in range(6):
        cli.write(source / f"notes/n{i}.md", f"# Note {i}\n\nThe plan of March 2026, part {i}.\n")
    vine_cli.adopt(source, forest)
    for i in range(6):
        (source / f"notes/n{i}.md").unlink()
    packs = lambda: set((forest / ".git/objects/pack").glob("*.pack"))  # noqa: E731
    checkpoints = lambda: _git(forest, "reflog", "--format=%gs").count("vine: checkpoint")  # noqa: E731
    before, checkpoints_before = packs(), checkpoints()
    report = vine_cli("sync", "--forest", forest, "--json").json()
    assert sorted(report["stale"]) == [f"notes/n{i}" for i in range(6)]
    assert checkpoints() - checkpoints_before == 1  # one checkpoint for the six writes, not six
    assert len(packs() - before) == 1  # and a session leaves one pack
    assert cli.git_status(forest) == ""


def _git(forest: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=forest, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _passport(forest: Path, node_id: str) -> dict[str, Any]:
    text = (forest / f"{node_id}.md").read_text(encoding="utf-8")
    return yaml.safe_load(text[4:text.index("\n---\n", 4)])


def _notes(source: Path, count: int = 3) -> Path:
    source.mkdir()
    for i in range(1, count + 1):
        (source / f"n{i}.md").write_text(f"# Note {i}\n\nThe fact number {i}.\n", encoding="utf-8")
    return source


@pytest.mark.parametrize("dest", ["../x", "a//b", "_meta", ".git", "_derived/x", "a/_index"])
def test_refused_dest_is_not_recorded_and_sync_and_adopt_still_work(vine_cli: Any, forest: Path, tmp_path: Path,
                                                                     dest: str) -> None:
    source = _notes(tmp_path / "src")
    refused = vine_cli("adopt", source, "--forest", forest, "--dest", dest)
    assert refused.returncode == 2, refused.describe()
    assert refused.stderr.startswith("error"), refused.describe()
    assert not (forest / "_meta" / "gardener.yaml").exists() or "src" not in (
        forest / "_meta" / "gardener.yaml").read_text(encoding="utf-8")
    vine_cli.adopt(source, forest, "--dest", "docs")
    vine_cli.sync(forest)
    vine_cli.assert_consistent(forest)


def test_a_bad_passport_of_a_vanished_file_does_not_abort_the_sync(vine_cli: Any, forest: Path, tmp_path: Path) -> None:
    source = _notes(tmp_path / "src")
    vine_cli.adopt(source, forest)
    path = forest / "n1.md"
    text = path.read_text(encoding="utf-8")
    long_summary = "x" * 300
    lines = [f"summary: {long_summary}" if line.startswith("summary:") else line for line in text.split("\n")]
    path.write_text("\n".join(lines), encoding="utf-8")
    _git(forest, "-c", "user.name=me", "-c", "user.email=me@example.com", "commit", "-qam", "hand edit")
    (source / "n1.md").unlink()
    (source / "n2.md").write_text("# Note 2\n\nA changed fact.\n", encoding="utf-8")
    (source / "n4.md").write_text("# Note 4\n\nA new fact.\n", encoding="utf-8")
    result = vine_cli.sync(forest, expect=1)
    report = result.json()
    assert report["planted"] == ["n4"] and report["updated"] == ["n2"]
    assert any(line.startswith("n1") and "summary" in line for line in report["errors"]), report
    assert _git(forest, "status", "--porcelain") == ""


def test_dataset_source_that_stops_being_a_table_keeps_its_payload_and_says_so(vine_cli: Any, forest: Path,
                                                                               tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "d.json").write_text('[{"a": 1, "b": 2}, {"a": 3, "b": 4}]', encoding="utf-8")
    vine_cli.adopt(source, forest)
    before = _passport(forest, "d")
    db_before = (forest / "d.db").read_bytes()
    (source / "d.json").write_text('{"config": {"x": 1}}', encoding="utf-8")
    result = vine_cli.sync(forest, expect=1)
    report = result.json()
    assert report["updated"] == []
    assert any(line.startswith("d.json:") and "dataset" in line for line in report["errors"]), report
    assert _passport(forest, "d") == before
    assert (forest / "d.db").read_bytes() == db_before
    with sqlite3.connect(forest / "d.db") as db:
        assert db.execute("SELECT COUNT(*) FROM d").fetchone()[0] == 2
    vine_cli.assert_consistent(forest)


def test_note_source_that_becomes_a_table_is_not_silently_retyped(vine_cli: Any, forest: Path, tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "d.json").write_text('{"config": {"x": 1}}', encoding="utf-8")
    vine_cli.adopt(source, forest)
    before = (forest / "d.md").read_bytes()
    (source / "d.json").write_text('[{"a": 1, "b": 2}]', encoding="utf-8")
    report = vine_cli.sync(forest, expect=1).json()
    assert any(line.startswith("d.json:") for line in report["errors"]), report
    assert (forest / "d.md").read_bytes() == before
    assert not (forest / "d.db").exists()
    vine_cli.assert_consistent(forest)
