"""Reads work on any forest, as it is now: a stale catalog is brought up to date (commits
made under a live reader by a writer, `git checkout`, files edited by hand and not
committed), no lock is taken, nothing is committed."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time

import pytest

from monkeyllm_core import Vine, VineError, parse_node, render_node
from monkeyllm_core.forest.catalog import CATALOG_PATH


def git(root, *args):
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def test_a_commit_made_outside_the_engine_is_read_after_it(read_forest):
    with Vine(read_forest, writable=False) as reader:
        assert reader.look("sales/price-list")["title"] == "Price list"
    path = read_forest / "sales" / "price-list.md"
    node = parse_node(path.read_text())
    node.frontmatter["title"] = "Tabela de preços"
    path.write_text(render_node(node.frontmatter, node.body))
    git(read_forest, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "hand edit")
    with Vine(read_forest, writable=False) as reader:
        assert reader.look("sales/price-list")["title"] == "Tabela de preços"
        assert reader.locate("tabela de preços")["results"][0]["id"] == "sales/price-list"


def test_a_catalog_of_another_layout_is_rebuilt_for_reads(read_forest):
    with sqlite3.connect(read_forest / CATALOG_PATH) as db:
        db.execute("UPDATE meta SET value = 'old' WHERE key = 'schema_version'")
        db.execute("DELETE FROM nodes WHERE id = 'sales/orders-2026'")
    with Vine(read_forest, writable=False) as reader:
        assert reader.look("sales/orders-2026")["type"] == "dataset"


def test_a_missing_catalog_is_built_for_reads(read_forest):
    for suffix in ("", "-wal", "-shm"):
        (read_forest / f"{CATALOG_PATH}{suffix}").unlink(missing_ok=True)
    with Vine(read_forest, writable=False) as reader:
        assert reader.scan("catalog", fields=["id"], limit=100)["truncated"] is False


def test_reads_run_beside_a_writer_and_leave_its_catalog_alone(read_forest):
    with Vine(read_forest) as writer, writer.bulk():
        writer.plant({"id": "sales/new-note", "type": "note", "title": "New note", "summary": "Planted mid-session."})
        with Vine(read_forest, writable=False) as reader:  # no E_LOCKED: readers never take the lock
            assert reader.look("sales/new-note")["title"] == "New note"  # the writer's rows, not rebuilt away


def test_reads_never_commit_and_leave_git_clean(read_forest):
    head = git(read_forest, "rev-parse", "HEAD")
    with Vine(read_forest, writable=False) as reader:
        reader.locate("orders")
        reader.look("sales/_index")
        reader.move("sales/exchange-policy", direction="both")
        reader.scan("_index", recursive=True)
        reader.pick("sales/exchange-policy")
        reader.close_session(True, ["sales/exchange-policy"])
    assert git(read_forest, "rev-parse", "HEAD") == head
    assert git(read_forest, "status", "--porcelain", "--untracked-files=all") == ""
    assert not (read_forest / ".vine.lock").exists() or (read_forest / ".vine.lock").read_text() == ""


def test_a_closed_vine_answers_with_an_error_not_a_crash(read_forest):
    vine = Vine(read_forest, writable=False)
    vine.close()
    with pytest.raises(VineError) as err:
        vine.look("sales/price-list")
    assert err.value.code == "E_READONLY"


def edit_title(root, rel, old, new):
    path = root / rel
    path.write_text(path.read_text(encoding="utf-8").replace(f"title: {old}", f"title: {new}", 1), encoding="utf-8")


def top_ids(response):
    return [r["id"] for r in response["results"]]


@pytest.fixture
def every_call_checks(monkeypatch):
    """The working tree is looked at on every read call, not every few seconds."""
    monkeypatch.setattr("monkeyllm_core.read.freshness.STATUS_SECONDS", 0.0)
    monkeypatch.setattr("monkeyllm_core.read.freshness.STATUS_SHARE", 0)


def test_a_passport_edited_by_hand_is_what_the_next_reader_finds(read_forest):
    edit_title(read_forest, "sales/price-list.md", "Price list", "Tariff sheet zebra")
    with Vine(read_forest, writable=False) as reader:
        assert top_ids(reader.locate("tariff zebra"))[0] == "sales/price-list"
        assert reader.look("sales/price-list")["title"] == "Tariff sheet zebra"
        assert {"id": "sales/price-list", "title": "Tariff sheet zebra"} in \
            reader.scan("sales/_index", filter={"type": "note"}, fields=["id", "title"])["nodes"]


def test_a_live_reader_sees_a_hand_edit_and_its_revert(read_forest, every_call_checks):
    with Vine(read_forest, writable=False) as reader:
        assert reader.locate("zebra")["results"] == []
        edit_title(read_forest, "sales/price-list.md", "Price list", "Tariff sheet zebra")
        assert top_ids(reader.locate("zebra")) == ["sales/price-list"]
        git(read_forest, "checkout", "--", "sales/price-list.md")
        assert reader.locate("zebra")["results"] == []
        assert reader.look("sales/price-list")["title"] == "Price list"


def test_a_file_added_or_deleted_by_hand_enters_or_leaves_the_catalog(read_forest, every_call_checks):
    note = read_forest / "sales" / "handwritten.md"
    with Vine(read_forest, writable=False) as reader:
        reader.locate("quokka")
        note.write_text("---\nid: sales/handwritten\ntype: note\ntitle: Quokka census\n"
                        "summary: Counted by hand on the island.\n---\n\n# Quokka census\n", encoding="utf-8")
        assert top_ids(reader.locate("quokka census")) == ["sales/handwritten"]
        note.unlink()
        assert reader.locate("quokka census")["results"] == []


def test_a_commit_made_while_the_reader_lives_is_read_and_only_its_files_are_opened(read_forest):
    opened: list[str] = []
    watching: list[bool] = []

    def audit(event, args):
        if watching and event == "open" and str(args[0]).endswith(".md"):
            opened.append(str(args[0]))

    sys.addaudithook(audit)  # hooks cannot be removed: this one only records while `watching`
    with Vine(read_forest, writable=False) as reader:
        assert reader.locate("tariff zebra")["results"] == []
        edit_title(read_forest, "sales/price-list.md", "Price list", "Tariff sheet zebra")
        git(read_forest, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "retitled by hand")
        watching.append(True)
        assert top_ids(reader.locate("tariff zebra")) == ["sales/price-list"]
        watching.clear()
    assert [p.split("brain/")[-1] for p in opened] == ["sales/price-list.md"]  # not the rest of the forest


def test_a_node_planted_by_a_writer_is_read_by_a_reader_opened_before(read_forest):
    with Vine(read_forest, writable=False) as reader:
        assert reader.locate("okapi")["results"] == []
        with Vine(read_forest) as writer:
            writer.plant({"id": "people/okapi-keeper", "type": "entity", "title": "Okapi keeper",
                          "summary": "Looks after the okapi."})
        assert top_ids(reader.locate("okapi keeper")) == ["people/okapi-keeper"]


def test_a_checkout_of_an_older_commit_takes_the_later_nodes_away(read_forest):
    before = git(read_forest, "rev-parse", "HEAD").strip()
    with Vine(read_forest) as writer:
        writer.plant({"id": "people/okapi-keeper", "type": "entity", "title": "Okapi keeper",
                      "summary": "Looks after the okapi."})
    with Vine(read_forest, writable=False) as reader:
        assert top_ids(reader.locate("okapi keeper")) == ["people/okapi-keeper"]
        git(read_forest, "checkout", "-q", before)
        assert reader.locate("okapi keeper")["results"] == []
        assert [c["id"] for c in reader.move("people/_index", rel="children")["neighbors"]] == ["people/ana-ribeiro"]


def test_a_dialect_edited_by_hand_renames_the_inverse_edges(read_forest, every_call_checks):
    schema = read_forest / "_meta" / "schema.md"
    with Vine(read_forest, writable=False) as reader:
        before = reader.look("sales/price-list")["edges_in"]
        assert {"rel": "related-to", "source": "sales/exchange-policy"} in before
        text = schema.read_text(encoding="utf-8")
        assert "| `succeeds` | `precedes` |" in text
        schema.write_text(text.replace("| `succeeds` | `precedes` |", "| `succeeds` | `came-before` |"),
                          encoding="utf-8")
        assert {"rel": "came-before", "source": "sales/exchange-policy-2027"} in \
            reader.look("sales/exchange-policy")["edges_in"]


def test_a_forest_never_committed_is_indexed_once_not_again_by_its_first_reader(read_forest):
    for n in range(3):
        (read_forest / "people" / f"walrus-{n}.md").write_text(
            f"---\nid: people/walrus-{n}\ntype: entity\ntitle: Walrus {n}\nsummary: A walrus copied in.\n---\n\n"
            f"# Walrus {n}\n", encoding="utf-8")
        past = time.time() - 60  # copied in a minute ago (a file as new as the rebuild is read again)
        os.utime(read_forest / "people" / f"walrus-{n}.md", (past, past))
    for suffix in ("", "-wal", "-shm"):
        (read_forest / f"{CATALOG_PATH}{suffix}").unlink(missing_ok=True)
    opened: list[str] = []
    watching: list[bool] = []

    def audit(event, args):
        if watching and event == "open" and str(args[0]).endswith(".md"):
            opened.append(str(args[0]))

    sys.addaudithook(audit)  # hooks cannot be removed: this one only records while `watching`
    with Vine(read_forest, writable=False) as reader:  # builds the catalog from the files as they are
        watching.append(True)
        found = top_ids(reader.locate("walrus", k=5))
        watching.clear()
    assert sorted(found) == ["people/walrus-0", "people/walrus-1", "people/walrus-2"] and opened == []
