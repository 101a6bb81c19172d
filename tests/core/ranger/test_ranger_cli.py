"""`vine ranger` for real: the command in a subprocess, a concurrent `vine sync`,
another writer holding the lock, SIGTERM."""
from __future__ import annotations

import json
import queue
import signal
import subprocess
import threading

from monkeyllm_core import Vine

from _ranger_forest import hunt, link, plant_notes

LINKS = {"notes/a": [link("notes/b", 0.3)], "notes/c": [link("notes/d", 0.3)]}


def lines_of(stream) -> "queue.Queue[str]":
    """Each line a running command prints, as it prints it."""
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in stream], daemon=True).start()
    return lines


def stop(proc: subprocess.Popen) -> int:
    proc.send_signal(signal.SIGTERM)
    return proc.wait(timeout=60)


def test_one_cycle_prints_a_readable_report_and_exact_json(brain, vine_cli):
    plant_notes(brain.root, LINKS)
    hunt(brain.root, ["notes/a", "notes/b"], times=3)
    dry = vine_cli("ranger", "--forest", brain.root, "--dry-run", "--json")
    assert dry.returncode == 0 and dry.stderr == ""
    planned = json.loads(dry.stdout)
    assert planned["dry_run"] is True and planned["commits"] == []
    assert planned["links"] == {
        "promoted": [{"node": "notes/a", "rel": "related-to", "target": "notes/b", "confidence": 0.3, "to": 0.8}],
        "pruned": [{"node": "notes/c", "rel": "related-to", "target": "notes/d", "confidence": 0.3}]}
    text = vine_cli("ranger", "--forest", brain.root)
    assert text.returncode == 0, text.describe()
    out = text.stdout.splitlines()
    assert "promoted: 1 link(s) raised to 0.8" in out and "  notes/a: related-to -> notes/b (0.3)" in out
    assert "pruned: 1 link(s) removed" in out and "  notes/c: related-to -> notes/d (0.3)" in out
    assert "landmarks: rewritten, 2 node(s): notes/a (1), notes/b (1)" in out
    assert "  validate: 0 error(s), 0 warning(s)" in out
    assert out[-1].startswith("ranger: 3 commit(s) in ")
    again = vine_cli("ranger", "--forest", brain.root, "--json")
    report = json.loads(again.stdout)  # stdout is the JSON document and nothing else
    assert report["commits"] == [] and report["landmarks"]["changed"] is False
    assert report["links"] == {"promoted": [], "pruned": []}
    brain.assert_clean()


def test_a_bad_ranger_yaml_is_one_line_naming_the_key(brain, vine_cli):
    (brain.root / "_meta" / "ranger.yaml").write_text("promote_floor: lots\n")
    head = brain.head()
    result = vine_cli("ranger", "--forest", brain.root)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("error E_SCHEMA: _meta/ranger.yaml: promote_floor must be a number in (0, 1]")
    assert brain.head() == head


def test_every_releases_the_lock_between_cycles_so_sync_runs_and_sigterm_exits_0(vine_cli, tmp_path, cli):
    export = tmp_path / "export"
    export.mkdir()
    (export / "plans.md").write_text("# Plans\n\nThe plan for 2026.\n")
    forest = vine_cli.init(tmp_path / "forest")
    vine_cli.adopt(export, forest)
    ranger = vine_cli.popen("ranger", "--forest", forest, "--every", "4", "--json")
    try:
        reports = lines_of(ranger.stdout)
        first = json.loads(reports.get(timeout=60))
        assert first["failed"] == []
        (export / "plans.md").write_text("# Plans\n\nThe plan for 2027, revised.\n")
        synced = vine_cli.sync(forest)  # between two cycles: the lock is free
        assert synced.json()["updated"] == ["plans"]
        second = json.loads(reports.get(timeout=60))  # the service is still there
        assert second["dry_run"] is False
    finally:
        code = stop(ranger)
    assert code == 0, ranger.stderr.read()
    assert cli.commit_messages(forest)[0] == "gardener(sync): plans"
    vine_cli.assert_consistent(forest)


def test_a_cycle_meeting_a_held_lock_waits_for_the_next_turn(brain, vine_cli):
    plant_notes(brain.root, LINKS)
    holder = Vine(brain.root)  # another writer, as a long `vine sync` would be
    ranger = vine_cli.popen("ranger", "--forest", brain.root, "--every", "0.5", "--json")
    try:
        notes = lines_of(ranger.stderr)
        note = notes.get(timeout=60)
        assert note.startswith("note: cycle skipped, error E_LOCKED: ") and note.endswith("next turn in 0.5 s\n")
        assert ranger.poll() is None  # it did not die
        holder.close()
        report = json.loads(lines_of(ranger.stdout).get(timeout=60))
        assert [c["message"] for c in report["commits"]] == ["ranger(prune): notes/a", "ranger(prune): notes/c"]
    finally:
        holder.close()
        code = stop(ranger)
    assert code == 0
    with Vine(brain.root):  # the lock is free again
        pass
    brain.assert_clean()
