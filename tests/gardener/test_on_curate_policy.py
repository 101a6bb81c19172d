"""The on_curate policy: what a hook sees, what it may change, how its draft is
judged and how the hooks' result joins the node's fields."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterator

import pytest

from monkeyllm_core import Vine
from monkeyllm_gardener.on_curate_policy import (
    draft_for_hooks,
    judge_hook_draft,
    merge_hook_result,
    returned_draft,
)

FIELDS = {"id": "notes/q1", "type": "note", "title": "Q1", "summary": "Q1 numbers, March 2026.",
          "tags": ["internal"], "source_path": "notes/q1.md", "payload_move": True, "row_counts": {"t": 1}}


def test_a_hook_sees_passport_fields_only() -> None:
    assert draft_for_hooks(FIELDS) == {"id": "notes/q1", "type": "note", "title": "Q1",
                                       "summary": "Q1 numbers, March 2026.", "tags": ["internal"]}


def test_a_returned_draft_is_owned_by_the_host() -> None:
    working = {"id": "n", "tags": ["a"]}
    assert returned_draft(working, None) == working
    kept = {"id": "n", "tags": ["b"]}
    owned = returned_draft(working, kept)
    kept["tags"].append("changed later by the hook")
    assert owned == {"id": "n", "tags": ["b"]}


@pytest.mark.parametrize(("returned", "message"), [
    (["not", "a", "dict"], "returned list, not a dict or None"),
    ({1: "x"}, "returned a draft with non-string key 1"),
])
def test_a_returned_non_draft_fails_the_hook(returned: object, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        returned_draft({}, returned)


@pytest.mark.parametrize(("edit", "words"), [
    ({"summary": "This document describes the Q1 numbers."}, "summary opens with boilerplate 'this document describes'"),
    ({"summary": "Q1\tnumbers."}, "summary holds a control, escape or bidi character"),
    ({"summary": "x" * 241}, "summary is 241 characters, over the 60-token limit"),
    ({"summary": None}, "summary is empty"),
    ({"title": "  "}, "title must be non-empty text"),
    ({"tags": "finance"}, "tags must be a list of strings"),
    ({"aliases": [1]}, "aliases must be a list of strings"),
    ({"links": ["notes/q2"]}, "links must be a list of mappings"),
])
def test_a_draft_breaking_a_passport_rule_is_discarded_whole(edit: dict, words: str) -> None:
    before = draft_for_hooks(FIELDS)
    candidate = {**before, "tags": ["kept-only-if-valid"], **edit}
    after, problems = judge_hook_draft(before, candidate, plugin="p", node_id="notes/q1")
    assert after is before
    assert problems == [f"on_curate p returned an invalid draft for notes/q1 ({words}); its edits were discarded"]


@pytest.mark.parametrize("dropped", ["summary", "title"])
def test_a_hook_may_not_remove_a_required_field(dropped: str) -> None:
    before = draft_for_hooks(FIELDS)
    candidate = {key: value for key, value in before.items() if key != dropped}
    after, problems = judge_hook_draft(before, candidate, plugin="p", node_id="notes/q1")
    assert after is before
    assert f"({dropped} removed; a node needs them)" in problems[0]


def test_a_change_to_identity_is_reverted_and_the_other_edits_stand() -> None:
    before = {**draft_for_hooks(FIELDS), "source_path": "notes/q1.md"}
    candidate = {**before, "id": "elsewhere", "origin": "hook", "source_path": "forged", "tags": ["finance"]}
    after, problems = judge_hook_draft(before, candidate, plugin="p", node_id="notes/q1")
    assert after["id"] == "notes/q1" and after["source_path"] == "notes/q1.md" and "origin" not in after
    assert after["tags"] == ["finance"]
    assert problems == ["on_curate p tried to change id, origin, source_path on notes/q1; reverted"]


@pytest.fixture
def planted(forest: Path) -> Iterator[Vine]:
    vine = Vine(forest)
    vine.plant({"id": "notes/_index", "type": "branch", "title": "Notes", "summary": "Notes of the team."})
    vine.plant({"id": "notes/q2", "type": "note", "parent": "notes/_index", "title": "Q2",
                "summary": "Q2 numbers, June 2026."})
    yield vine
    vine.close()


def test_the_result_replaces_editable_fields_and_keeps_engine_fields(planted: Vine) -> None:
    result = {**draft_for_hooks(FIELDS), "title": "Q1 numbers", "aliases": ["first quarter"]}
    del result["tags"]  # a hook removed them
    merged, warnings = merge_hook_result(planted, FIELDS, result)
    assert merged["title"] == "Q1 numbers" and merged["aliases"] == ["first quarter"]
    assert "tags" not in merged
    assert merged["payload_move"] is True and merged["row_counts"] == {"t": 1}
    assert "summary_source" not in merged and warnings == []


def test_a_new_summary_is_marked_as_the_hooks(planted: Vine) -> None:
    result = {**draft_for_hooks(FIELDS), "summary": "First-quarter numbers, March 2026."}
    merged, _ = merge_hook_result(planted, FIELDS, result)
    assert merged["summary_source"] == "hook"


def test_a_link_the_forest_cannot_hold_is_dropped_alone(planted: Vine) -> None:
    good = {"rel": "related-to", "target": "notes/q2"}
    bad = [{"rel": "loves", "target": "notes/q2"}, {"rel": "related-to", "target": "notes/ghost"},
           {"rel": "related-to", "target": "notes/q1"}]
    merged, warnings = merge_hook_result(planted, FIELDS, {**draft_for_hooks(FIELDS), "links": [good, *bad]})
    assert merged["links"] == [good]
    assert warnings == [f"on_curate link {link!r} dropped: unknown rel or target" for link in bad]


LINKING_PLUGIN = '''
from monkeyllm_gardener.hookspecs import hookimpl

@hookimpl
def on_curate(draft):
    if draft["id"] == "zeta":
        draft["links"] = [{"rel": "related-to", "target": "alpha"}, {"rel": "related-to", "target": "ghost"}]
        draft["summary"] = "Zeta plan, linked to alpha, April 2026."
    return draft
'''


def test_adopt_plants_a_hooks_links_and_summary_through_the_policy(tmp_path: Path, forest: Path, vine_cli: Any,
                                                                     cli: SimpleNamespace) -> None:
    site = tmp_path / "site"
    dist_info = site / "linking_plugin-1.0.dist-info"
    dist_info.mkdir(parents=True)
    (site / "linking_plugin.py").write_text(LINKING_PLUGIN, encoding="utf-8")
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: linking_plugin\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text("[monkeyllm]\nlinking_plugin = linking_plugin\n")
    export = tmp_path / "export"
    export.mkdir()
    (export / "alpha.md").write_text("Alpha plan for the launch.\n")
    (export / "zeta.md").write_text("Zeta plan for the launch.\n")
    result = vine_cli("adopt", export, "--forest", forest, "--json",
                  env={"PYTHONPATH": str(site), "MONKEYLLM_LOAD_PLUGINS": "linking_plugin"})
    assert result.returncode == 0, result.describe()
    zeta = cli.node(forest, "zeta")
    assert zeta["links"] == [{"rel": "related-to", "target": "alpha"}]
    assert zeta["summary"] == "Zeta plan, linked to alpha, April 2026." and zeta["summary_source"] == "hook"
    warnings = result.json()["warnings"]
    assert any(line.startswith("zeta.md: on_curate link") and "ghost" in line for line in warnings), warnings
