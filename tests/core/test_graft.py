"""graft: every patch kind, fortification, and summaries that propagate to the
indexes that repeat them in the same commit."""
from __future__ import annotations

import pytest

from monkeyllm_core import VineError, parse_node
from monkeyllm_core.forest.sections import get_section


@pytest.fixture
def grove(vine, brain, make_note):
    """sales/_index with two notes, the repo flushed: a small forest to edit."""
    vine.plant({"id": "sales/_index", "title": "Sales", "summary": "Commercial policy and ledgers."})
    vine.plant(make_note("sales/policy", "Return windows per channel.",
                         body="# Policy\n\n## Deadlines\n\nThirty days.\n\n## Channels\n\nRetail, web.\n"))
    vine.plant(make_note("sales/policy-2025", "The 2025 return windows."))
    vine.flush()
    return vine


def last_commit(brain):
    return brain.subjects()[0], brain.files_in_last_commit()


def test_set_frontmatter_summary_reaches_the_parent_entry_in_the_same_commit(grove, brain):
    result = grove.graft("sales/policy", {"set_frontmatter": {"summary": "Return windows, superseded for 2027."}})
    grove.flush()
    assert result["commit"] == brain.head() and result["fortified"] == []
    assert result["trail"] == ["_index", "sales/_index"]
    assert last_commit(brain) == ("graft(sales/policy): set summary", ["sales/_index.md", "sales/policy.md"])
    assert "- [[sales/policy]] \u2014 Return windows, superseded for 2027." in brain.text("sales/_index.md")
    assert grove.catalog.get("sales/policy")["summary"] == "Return windows, superseded for 2027."
    brain.assert_clean()


def test_a_branch_summary_change_updates_blockquote_and_grandparent_entry(grove, brain):
    grove.graft("sales/_index", {"set_frontmatter": {"summary": "Sales policy, price lists, 2026 ledger."}})
    grove.flush()
    assert last_commit(brain) == ("graft(sales/_index): set summary", ["_index.md", "sales/_index.md"])
    branch = parse_node(brain.text("sales/_index.md"))
    assert "> Sales policy, price lists, 2026 ledger." in branch.body.splitlines()
    assert branch.frontmatter["coverage"] == "2 bananas, 0 sub-branches"
    assert ("- [[sales/_index]] \u2014 Sales policy, price lists, 2026 ledger. 2 bananas, 0 sub-branches."
            in brain.text("_index.md").splitlines())
    brain.assert_clean()


def test_coverage_cannot_be_set_by_hand(grove, brain):
    grove.graft("sales/_index", {"set_frontmatter": {"coverage": "99 bananas, 0 sub-branches", "tags": ["s"]}})
    grove.flush()
    assert parse_node(brain.text("sales/_index.md")).frontmatter["coverage"] == "2 bananas, 0 sub-branches"
    brain.assert_clean()


def test_add_links_then_the_same_link_again_is_fortified_without_a_commit(grove, brain):
    first = grove.graft("sales/policy", {"add_links": [{"rel": "succeeds", "target": "sales/policy-2025"}]})
    grove.flush()
    assert first["commit"] and first["fortified"] == []
    assert last_commit(brain) == ("graft(sales/policy): +1 links", ["sales/policy.md"])
    head, count = brain.head(), len(brain.subjects())
    again = grove.graft("sales/policy", {"add_links": [{"rel": "succeeds", "target": "sales/policy-2025"}]})
    grove.flush()
    assert again["commit"] is None
    assert again["fortified"] == [{"rel": "succeeds", "target": "sales/policy-2025"}]
    assert brain.head() == head and len(brain.subjects()) == count
    links = parse_node(brain.text("sales/policy.md")).frontmatter["links"]
    assert links == [{"rel": "succeeds", "target": "sales/policy-2025"}]
    brain.assert_clean()


def test_remove_links(grove, brain):
    grove.graft("sales/policy", {"add_links": [{"rel": "succeeds", "target": "sales/policy-2025"},
                                               {"rel": "related-to", "target": "sales/policy-2025"}]})
    grove.graft("sales/policy", {"remove_links": [{"rel": "related-to", "target": "sales/policy-2025"}]})
    grove.flush()
    assert brain.subjects()[0] == "graft(sales/policy): -1 links"
    assert parse_node(brain.text("sales/policy.md")).frontmatter["links"] == [
        {"rel": "succeeds", "target": "sales/policy-2025"}]
    assert grove.catalog.edges_of("sales/policy-2025") == [("sales/policy-2025", "precedes", "sales/policy", 1.0)]
    grove.graft("sales/policy", {"remove_links": [{"target": "sales/policy-2025"}]})
    assert "links" not in parse_node(brain.text("sales/policy.md")).frontmatter
    grove.flush()
    brain.assert_clean()


def test_append_and_replace_section(grove, brain):
    grove.graft("sales/policy", {"append_section": {"header": "Notes", "body": "Superseded in 2027."}})
    grove.flush()
    assert brain.subjects()[0] == "graft(sales/policy): append 'Notes'"
    grove.graft("sales/policy", {"replace_section": {"header": "Deadlines", "body": "Sixty days."}})
    grove.flush()
    assert brain.subjects()[0] == "graft(sales/policy): replace 'Deadlines'"
    body = parse_node(brain.text("sales/policy.md")).body
    assert body == ("# Policy\n\n## Deadlines\n\nSixty days.\n\n## Channels\n\nRetail, web.\n\n"
                    "## Notes\n\nSuperseded in 2027.\n")
    assert get_section(body, "Channels") == "## Channels\n\nRetail, web.\n\n"
    brain.assert_clean()


def test_replace_body(grove, brain):
    grove.graft("sales/policy", {"body": "# Policy\n\nRewritten.\n"})
    grove.flush()
    assert brain.subjects()[0] == "graft(sales/policy): set body"
    assert parse_node(brain.text("sales/policy.md")).body == "# Policy\n\nRewritten.\n"
    brain.assert_clean()


def test_one_graft_with_several_changes_is_one_commit(grove, brain):
    count = len(brain.subjects())
    grove.graft("sales/policy", {
        "set_frontmatter": {"summary": "Return windows, superseded for 2027.", "tags": ["sales"]},
        "add_links": [{"rel": "succeeds", "target": "sales/policy-2025"}],
        "append_section": {"header": "Notes", "body": "See the 2027 policy."}})
    grove.flush()
    assert len(brain.subjects()) == count + 1
    assert brain.subjects()[0] == "graft(sales/policy): set summary, set tags, +1 links, append 'Notes'"
    brain.assert_clean()


@pytest.mark.parametrize("patch, code", [
    ({"set_frontmatter": {"id": "sales/other"}}, "E_FRONTMATTER"),
    ({"set_frontmatter": {"type": "concept", "created": "2020-01-01"}}, "E_FRONTMATTER"),
    ({"set_frontmatter": {"summary": "This document describes a policy."}}, "E_FRONTMATTER"),
    ({"set_frontmatter": {"summary": "y" * 300}}, "E_FRONTMATTER"),
    ({"add_links": [{"rel": "loves", "target": "sales/policy-2025"}]}, "E_SCHEMA"),
    ({"add_links": [{"rel": "related-to", "target": "sales/ghost"}]}, "E_NOT_FOUND"),
    ({"replace_section": {"header": "Nope", "body": "x"}}, "E_NOT_FOUND"),
    ({"rename": "x"}, "E_FRONTMATTER"),
])
def test_refused_grafts_change_nothing(grove, brain, patch, code):
    before, head = brain.snapshot(), brain.head()
    with pytest.raises(VineError) as info:
        grove.graft("sales/policy", patch)
    assert info.value.code == code
    grove.flush()
    assert brain.snapshot() == before and brain.head() == head
    brain.assert_clean()


def test_graft_on_a_missing_node_is_not_found(grove):
    with pytest.raises(VineError) as info:
        grove.graft("sales/ghost", {"body": "x"})
    assert info.value.code == "E_NOT_FOUND"


def test_a_patch_that_changes_nothing_makes_no_commit(grove, brain):
    head = brain.head()
    result = grove.graft("sales/policy", {"set_frontmatter": {"summary": "Return windows per channel."}})
    grove.flush()
    assert result["commit"] is None and brain.head() == head


@pytest.mark.parametrize("patch", [
    {"set_frontmatter": ["summary", "x"]},
    {"add_links": "notes/b"},
    {"add_links": ["notes/b"]},
    {"append_section": {"body": "no header"}},
    {"append_section": {"header": "Two\nlines", "body": "x"}},
    {"replace_section": "Notes"},
    {"body": 42},
])
def test_a_malformed_patch_is_an_expected_error_and_changes_nothing(vine, brain, patch):
    vine.plant({"id": "solo", "type": "note", "title": "Solo", "summary": "A lone note."})
    vine.flush()
    before = brain.text("solo.md")
    with pytest.raises(VineError) as caught:
        vine.graft("solo", patch)
    assert caught.value.code == "E_FRONTMATTER" and "graft:" in caught.value.message
    assert brain.text("solo.md") == before


def test_summary_change_reaches_the_master_landmarks(brain) -> None:
    with brain.open() as vine:
        vine.plant({"id": "a/_index", "type": "branch", "title": "a", "summary": "Region a with notes."})
        vine.plant({"id": "a/x", "type": "note", "title": "x", "summary": "Old summary of x."})
    text = brain.text("_index.md").replace("## Landmarks\n", "## Landmarks\n- [[a/x]] — Old summary of x.\n")
    (brain.root / "_index.md").write_text(text, encoding="utf-8")
    brain.commit_all("landmarks")
    with brain.open() as vine:
        result = vine.graft("a/x", {"set_frontmatter": {"summary": "New summary of x."}})
    master = brain.text("_index.md")
    assert "- [[a/x]] — New summary of x." in master
    assert "Old summary of x." not in master
    # the same commit carries the node, its parent and the master
    assert "_index.md" in brain.files_in_last_commit() and brain.head() == result["commit"]
    brain.assert_clean()


def test_summary_change_reaches_a_cross_trail_in_an_unrelated_branch(brain) -> None:
    with brain.open() as vine:
        vine.plant({"id": "a/_index", "type": "branch", "title": "a", "summary": "Region a with notes."})
        vine.plant({"id": "b/_index", "type": "branch", "title": "b", "summary": "Region b with notes."})
        vine.plant({"id": "a/x", "type": "note", "title": "x", "summary": "Old summary of x."})
        # b's cross trails repeat x's entry verbatim, and name it once more in a person's words
        b = vine.read("b/_index").body
        vine.graft("b/_index", {"body": b.replace(
            "## Cross trails\n",
            "## Cross trails\n\n- [[a/x]] \u2014 Old summary of x.\n- [[a/x]] \u2014 see x for the March plan.\n")})
    with brain.open() as vine:
        result = vine.graft("a/x", {"set_frontmatter": {"summary": "New summary of x."}})
    b_text = brain.text("b/_index.md")
    assert "- [[a/x]] \u2014 New summary of x." in b_text
    assert "Old summary of x." not in b_text
    assert "- [[a/x]] \u2014 see x for the March plan." in b_text  # worded differently: a person's line stays
    assert "b/_index.md" in brain.files_in_last_commit() and brain.head() == result["commit"]
    # the catalog can be rebuilt from the files and still knows who repeats whom
    (brain.root / "_derived" / "catalog.db").unlink()
    with brain.open() as vine:
        vine.graft("a/x", {"set_frontmatter": {"summary": "Newest summary of x."}})
    assert "- [[a/x]] \u2014 Newest summary of x." in brain.text("b/_index.md")
    brain.assert_clean()


def test_graft_of_the_dialect_summary_and_body_works_and_reloads_the_dialect(brain) -> None:
    with brain.open() as vine:
        vine.graft("_meta/schema", {"set_frontmatter": {"summary": "This forest's node types and edge rels."}})
        body = vine.read("_meta/schema").body.replace(
            "## Edge types (rel)", "| `recipe` | A recipe. | pick |\n\n## Edge types (rel)")
        vine.graft("_meta/schema", {"body": body})
        vine.plant({"id": "soup", "type": "recipe", "title": "soup", "summary": "Tomato soup for four."})
    brain.assert_clean()


def test_graft_of_a_branch_body_keeps_coverage_and_entries_true(brain) -> None:
    with brain.open() as vine:
        vine.plant({"id": "a/_index", "type": "branch", "title": "a", "summary": "Region a."})
        vine.plant({"id": "a/x", "type": "note", "title": "x", "summary": "Note x."})
        with pytest.raises(VineError):
            vine.graft("a/_index", {"body": "# a\n\nfree text only\n"})
        vine.graft("a/_index", {"append_section": {"header": "Notes", "body": "Hand-written."}})
    brain.assert_clean()


def test_link_target_outside_the_forest_is_refused(brain, tmp_path) -> None:
    (tmp_path / "outside.md").write_text("not a node", encoding="utf-8")
    with brain.open() as vine:
        vine.plant({"id": "n", "type": "note", "title": "n", "summary": "A note."})
        with pytest.raises(VineError):
            vine.graft("n", {"add_links": [{"rel": "related-to", "target": "../outside"}]})
    brain.assert_clean()
