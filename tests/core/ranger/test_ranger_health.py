"""The Ranger's health report, on a forest adopted by the real `vine adopt` and
then damaged the ways forests are: sources gone, payloads gone or changed, a
branch grown too big, a hub, a hand edit validate refuses."""
from __future__ import annotations

import sqlite3

from monkeyllm_core import Vine, render_node
from monkeyllm_core.ranger import PayloadHashes, run_cycle

from _ranger_forest import hunt, link, opens_of


def test_health_names_what_a_person_should_look_at_and_deletes_nothing(brain, tmp_path):
    export = tmp_path / "export"
    export.mkdir()
    (export / "plans.md").write_text("# Plans\n\nThe plan for 2026.\n")
    (export / "prices.csv").write_text("item,price\npen,2\n")
    (export / "stock.csv").write_text("item,count\npen,40\n")
    adopted = brain.cli("adopt", str(export))
    assert adopted.returncode == 0, adopted.stderr
    with brain.open() as vine, vine.bulk():
        vine.plant({"id": "big/_index", "type": "branch", "title": "big", "summary": "A big region."})
        for n in range(151):
            links = [link(f"big/n{t:03d}", (0.5, 0.6, 0.8, None)[t % 4]) for t in range(1, 51)] if n == 0 else []
            vine.plant({"id": f"big/n{n:03d}", "type": "note", "title": f"n{n}", "summary": f"Node {n}.",
                        "links": links + ([link("big/n000")] if n == 51 else [])})
    (brain.root / "big" / "stray.md").write_text(render_node(
        {"id": "big/stray", "type": "note", "title": "stray", "summary": "Written by hand.", "created": "2026-01-01",
         "updated": "2026-01-01"}, "# stray\n"))
    brain.commit_all("a node written by hand")
    (export / "plans.md").unlink()
    (brain.root / "stock.db").unlink()
    with sqlite3.connect(brain.root / "prices.db") as db:
        db.execute("INSERT INTO prices VALUES ('ink', 9)")
    hunt(brain.root, ["big/n001", "big/n002"], times=4)
    hunt(brain.root, ["big/n003"], times=9)

    files = set(brain.tracked())
    health = run_cycle(brain.root).health
    assert set(brain.tracked()) == files  # reported, never deleted

    assert [b["id"] for b in health["needs_split"]] == ["big/_index"]
    assert health["over_connected"] == [{"id": "big/n000", "degree": 51}]
    # validate's own wording of an absent payload is validate's business (issue 14 item 3): only ours is pinned
    assert "error E_BRANCH big/_index: child big/stray has no entry line" in health["validate"]["errors"]
    assert health["sources_missing"] == [{"id": "plans", "source": str((export / "plans.md").resolve()),
                                          "marked_stale": False}]
    # the hub's links 1..50 by t % 4: 0.5 x12, 0.6 x13, 0.8 x13, 1.0 x12 (not uncertain); none prunable
    assert health["uncertain_links"] == {"total": 38, "bands": {"0-0.3": 0, "0.3-0.5": 0, "0.5-0.8": 25,
                                                                "0.8-1": 13}}
    assert health["payloads"] == {"checked": 2, "missing": ["stock"], "drifted": ["prices"]}
    heat = health["heat"]
    assert heat["rows"] == 3 and heat["bands"]["0.2-0.5"] == 2 and heat["bands"]["0.8-1"] == 1
    assert heat["max"] == 0.9 and heat["sessions"] == 0 and heat["bytes"] > 0
    with Vine(brain.root, writable=False) as vine:
        assert vine.exists("plans") and vine.exists("stock")


def test_a_vanished_source_marked_stale_by_sync_is_reported_too(brain, tmp_path):
    export = tmp_path / "export"
    export.mkdir()
    (export / "plans.md").write_text("# Plans\n\nThe plan for 2026.\n")
    assert brain.cli("adopt", str(export)).returncode == 0
    (export / "plans.md").unlink()
    assert brain.cli("sync").returncode == 0
    health = run_cycle(brain.root).health
    assert health["sources_missing"] == [{"id": "plans", "source": str((export / "plans.md").resolve()),
                                          "marked_stale": True}]


def test_a_cycle_reads_each_payload_once_and_a_service_rereads_only_a_changed_one(brain, tmp_path):
    export = tmp_path / "export"
    export.mkdir()
    (export / "prices.csv").write_text("item,price\npen,2\n")
    assert brain.cli("adopt", str(export)).returncode == 0
    payload = brain.root / "prices.db"
    hashes = PayloadHashes()  # what `vine ranger --every` keeps from one cycle to the next
    with opens_of(payload) as first:
        health = run_cycle(brain.root, payload_hashes=hashes).health
    # validate's drift check and the health report's share one hash of the file
    assert len(first) == 1 and health["payloads"] == {"checked": 1, "missing": [], "drifted": []}
    with opens_of(payload) as second:
        health = run_cycle(brain.root, payload_hashes=hashes).health
    assert second == [] and health["payloads"]["drifted"] == [] and health["validate"]["warnings"] == 0
    with sqlite3.connect(payload) as db:
        db.execute("INSERT INTO prices VALUES ('ink', 9)")
    db.close()
    with opens_of(payload) as third:
        health = run_cycle(brain.root, payload_hashes=hashes).health
    # a new size and mtime: hashed again, once, and both validate and the report see the drift
    assert len(third) == 1 and health["payloads"]["drifted"] == ["prices"] and health["validate"]["warnings"] == 1
