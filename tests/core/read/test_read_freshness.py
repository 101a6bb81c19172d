"""Reads work on any forest: a stale catalog is rebuilt, no lock is taken, nothing is committed."""
from __future__ import annotations

import sqlite3
import subprocess

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
