"""Defects found in review: hand-edited forests, odd ids, indexes that repeat a
summary, the dialect node and an existing repository. Each test drives the real
engine (real git, real SQLite) or the real `vine` CLI."""
from __future__ import annotations

import shutil
import subprocess
import sys
from typing import Any

import pytest

from monkeyllm_core import Vine, VineError, init_forest


def git(root, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "monkeyllm_gardener.cli", *args], capture_output=True,
                          text=True, timeout=120, check=False)

PASSPORT = ("---\nid: n\ntype: note\ntitle: n\nsummary: A note with one fact.\n"
            "created: '2026-01-01'\nupdated: '2026-01-01'\n{extra}---\n\nbody\n")


def _commit_all(forest: Any, message: str) -> None:
    forest.git("add", "-A")
    forest.git("-c", "user.name=me", "-c", "user.email=me@example.com", "commit", "-qm", message)


@pytest.mark.parametrize("extra", [
    "links: 5\n",
    "links: [5, x]\n",
    "tags: 5\n",
    "aliases: {a: 1}\n",
    "coverage: [1]\n",
    "created: 2026-13-45\n",
])
def test_hand_edited_passport_of_odd_shape_is_reported_not_a_traceback(forest: Any, extra: str) -> None:
    (forest.root / "n.md").write_text(PASSPORT.format(extra=extra), encoding="utf-8")
    shutil.rmtree(forest.root / "_derived", ignore_errors=True)
    for verb in ("validate", "reindex"):
        result = forest.cli(verb)
        assert "Traceback" not in result.stderr, result.stderr
        assert result.returncode in (0, 1, 2), result.stderr
    result = forest.cli("validate")
    assert result.returncode == 1
    assert "n:" in result.stdout or "n " in result.stdout


def test_non_utf8_node_is_reported_by_validate_and_reindex(forest: Any) -> None:
    (forest.root / "bad.md").write_bytes(b"---\nid: bad\n---\n\ncaf\xe9\n")
    shutil.rmtree(forest.root / "_derived", ignore_errors=True)
    validate = forest.cli("validate")
    assert "Traceback" not in validate.stderr, validate.stderr
    assert validate.returncode == 1
    assert "bad" in validate.stdout and "UTF-8" in validate.stdout
    reindex = forest.cli("reindex")
    assert reindex.returncode == 0, reindex.stderr
    with forest.open() as vine:  # a writer still opens
        vine.plant({"id": "ok", "type": "note", "title": "ok", "summary": "A fine note."})


def test_validate_reports_an_entry_line_without_closing_brackets(forest: Any) -> None:
    text = forest.text("_index.md").replace("## Direct bananas\n", "## Direct bananas\n- [[broken entry\n")
    (forest.root / "_index.md").write_text(text, encoding="utf-8")
    result = forest.cli("validate")
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode in (0, 1)


@pytest.mark.parametrize("bad_id", [
    ".hidden", "a/.hidden", ".git/_index", "_derived/_index", "_assets/_index", "x/_assets/y",
    "new\nline", "tab\there", "a]]b", "a[[b", "a|b", "a#b",
])
def test_plant_refuses_ids_the_forest_cannot_hold(forest: Any, vine: Vine, bad_id: str) -> None:
    before = forest.head()
    node = {"id": bad_id, "type": "branch" if bad_id.endswith("_index") else "note",
            "title": "t", "summary": "A test node with one fact."}
    with pytest.raises(VineError) as err:
        vine.plant(node)
    assert err.value.code == "E_FRONTMATTER"
    vine.close()
    assert forest.head() == before
    forest.assert_clean()


@pytest.mark.parametrize("good_id", ["sp ace", "ünïcode", "x%y?z", "deep/er"])
def test_plant_still_accepts_ids_with_spaces_unicode_and_url_characters(forest: Any, vine: Vine,
                                                                        good_id: str) -> None:
    if "/" in good_id:
        vine.plant({"id": "deep/_index", "type": "branch", "title": "deep", "summary": "Deep region."})
    vine.plant({"id": good_id, "type": "note", "title": "t", "summary": "A test node with one fact."})
    vine.close()
    forest.assert_clean()


def test_plant_of_a_node_named_in_a_cross_trail_keeps_the_trail_and_lists_the_node(forest: Any) -> None:
    text = forest.text("_index.md").replace("## Cross trails\n", "## Cross trails\n- [[later]] — see the later note.\n")
    (forest.root / "_index.md").write_text(text, encoding="utf-8")
    _commit_all(forest, "hand-written cross trail")
    with forest.open() as vine:
        vine.plant({"id": "later", "type": "note", "title": "later", "summary": "The later note."})
    master = forest.text("_index.md")
    assert "- [[later]] — see the later note." in master
    assert "## Direct bananas\n- [[later]] — The later note.\n" in master
    forest.assert_clean()


def test_summary_change_reaches_the_master_landmarks(forest: Any) -> None:
    with forest.open() as vine:
        vine.plant({"id": "a/_index", "type": "branch", "title": "a", "summary": "Region a with notes."})
        vine.plant({"id": "a/x", "type": "note", "title": "x", "summary": "Old summary of x."})
    text = forest.text("_index.md").replace("## Landmarks\n", "## Landmarks\n- [[a/x]] — Old summary of x.\n")
    (forest.root / "_index.md").write_text(text, encoding="utf-8")
    _commit_all(forest, "landmarks")
    with forest.open() as vine:
        result = vine.graft("a/x", {"set_frontmatter": {"summary": "New summary of x."}})
    master = forest.text("_index.md")
    assert "- [[a/x]] — New summary of x." in master
    assert "Old summary of x." not in master
    # the same commit carries the node, its parent and the master
    assert "_index.md" in forest.files_in_last_commit() and forest.head() == result["commit"]
    forest.assert_clean()


def test_graft_of_the_dialect_summary_and_body_works_and_reloads_the_dialect(forest: Any) -> None:
    with forest.open() as vine:
        vine.graft("_meta/schema", {"set_frontmatter": {"summary": "This forest's node types and edge rels."}})
        body = vine.read("_meta/schema").body.replace(
            "## Edge types (rel)", "| `recipe` | A recipe. | pick |\n\n## Edge types (rel)")
        vine.graft("_meta/schema", {"body": body})
        vine.plant({"id": "soup", "type": "recipe", "title": "soup", "summary": "Tomato soup for four."})
    forest.assert_clean()


def test_graft_of_a_branch_body_keeps_coverage_and_entries_true(forest: Any) -> None:
    with forest.open() as vine:
        vine.plant({"id": "a/_index", "type": "branch", "title": "a", "summary": "Region a."})
        vine.plant({"id": "a/x", "type": "note", "title": "x", "summary": "Note x."})
        with pytest.raises(VineError):
            vine.graft("a/_index", {"body": "# a\n\nfree text only\n"})
        vine.graft("a/_index", {"append_section": {"header": "Notes", "body": "Hand-written."}})
    forest.assert_clean()


def test_init_in_an_existing_repository_keeps_its_gitignore(tmp_path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / ".gitignore").write_text("secret.txt\nnode_modules/\n", encoding="utf-8")
    init_forest(root, "T")
    lines = (root / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert lines[:2] == ["secret.txt", "node_modules/"]
    assert "_derived/" in lines and "*.db" in lines
    (root / "secret.txt").write_text("password", encoding="utf-8")
    assert git(root, "status", "--porcelain") == ""


def test_link_target_outside_the_forest_is_refused(forest: Any, tmp_path) -> None:
    (tmp_path / "outside.md").write_text("not a node", encoding="utf-8")
    with forest.open() as vine:
        vine.plant({"id": "n", "type": "note", "title": "n", "summary": "A note."})
        with pytest.raises(VineError):
            vine.graft("n", {"add_links": [{"rel": "related-to", "target": "../outside"}]})
    forest.assert_clean()


def test_validate_cli_on_hand_edited_forest_runs(tmp_path) -> None:
    root = init_forest(tmp_path / "f", "T")
    (root / "x.md").write_text(PASSPORT.format(extra="").replace("id: n", "id: x"), encoding="utf-8")
    result = run_cli("validate", "--forest", str(root))
    assert result.returncode == 1 and "child x has no entry line" in result.stdout


def test_summary_change_reaches_a_cross_trail_in_an_unrelated_branch(forest: Any) -> None:
    with forest.open() as vine:
        vine.plant({"id": "a/_index", "type": "branch", "title": "a", "summary": "Region a with notes."})
        vine.plant({"id": "b/_index", "type": "branch", "title": "b", "summary": "Region b with notes."})
        vine.plant({"id": "a/x", "type": "note", "title": "x", "summary": "Old summary of x."})
        # b's cross trails repeat x's entry verbatim, and name it once more in a person's words
        b = vine.read("b/_index").body
        vine.graft("b/_index", {"body": b.replace(
            "## Cross trails\n",
            "## Cross trails\n\n- [[a/x]] \u2014 Old summary of x.\n- [[a/x]] \u2014 see x for the March plan.\n")})
    with forest.open() as vine:
        result = vine.graft("a/x", {"set_frontmatter": {"summary": "New summary of x."}})
    b_text = forest.text("b/_index.md")
    assert "- [[a/x]] \u2014 New summary of x." in b_text
    assert "Old summary of x." not in b_text
    assert "- [[a/x]] \u2014 see x for the March plan." in b_text  # worded differently: a person's line stays
    assert "b/_index.md" in forest.files_in_last_commit() and forest.head() == result["commit"]
    # the catalog can be rebuilt from the files and still knows who repeats whom
    (forest.root / "_derived" / "catalog.db").unlink()
    with forest.open() as vine:
        vine.graft("a/x", {"set_frontmatter": {"summary": "Newest summary of x."}})
    assert "- [[a/x]] \u2014 Newest summary of x." in forest.text("b/_index.md")
    forest.assert_clean()
