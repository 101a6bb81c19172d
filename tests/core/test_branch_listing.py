"""Listing a child in a branch index: the remembered facts about a body (bounds,
counts, listed ids) must always equal what a fresh reading of the new body gives,
and the body must be the same whether or not the facts were remembered."""
from __future__ import annotations

import random

import pytest

from monkeyllm_core.forest import branches as br

TEMPLATES = {
    "fresh": br.branch_body("Notes", "Every note."),
    "master": br.branch_body("Forest", "Everything.", master=True),
    "headings back to back": "# T\n\n> s\n\n## Sub-branches\n## Direct bananas\n## Cross trails\n",
    "no final newline": "# T\n\n## Direct bananas\n\n- [[a]] \u2014 A.\n\n## Sub-branches",
    "hand-written": ("# T\n\n> s\n\nSome prose a person wrote.\n\n## Direct bananas\n\n- [[a]] \u2014 A.\n"
                     "- [[a-longer]] \u2014 Not a.\n\n## Notes\n\n- [[b]] mentioned in notes, not listed\n\n"
                     "## Sub-branches\n\n## Cross trails\n\n- [[c]] \u2014 C, a trail.\n"),
    "missing direct bananas": "# T\n\n## Sub-branches\n\n## Cross trails\n\n- [[x]] \u2014 trail\n",
}


def fresh_facts(body: str) -> tuple:
    listing = br.survey(body)
    return listing.bounds, listing.counts, br.listed_ids(listing)


def random_child(rng: random.Random) -> tuple[str, str]:
    name = rng.choice(["a", "b", "c", "x", "a-longer"] + [f"n{i}" for i in range(12)])
    if rng.random() < 0.3:
        return br.SUB_BRANCHES, f"{name}/_index"
    return br.DIRECT_BANANAS, name


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_remembered_facts_always_match_a_fresh_reading(template: str) -> None:
    rng = random.Random(template)
    body = TEMPLATES[template]
    listing = None
    for step in range(80):
        section, child = random_child(rng)
        summary = rng.choice(["One.", "Two, changed.", "Three with [brackets] and a \u2014 dash."])
        line = br.entry_line(child, summary, "1 bananas, 0 sub-branches" if section == br.SUB_BRANCHES else None)
        expected_body, expected_counts, _ = br.list_child(body, section, child, line)  # no memory
        new_body, counts, listing = br.list_child(body, section, child, line, listing)
        assert (new_body, counts) == (expected_body, expected_counts), f"step {step}"
        if new_body is not None:
            body = new_body
        assert listing.body is body
        bounds, fresh_counts, ids = fresh_facts(body)
        assert listing.bounds == bounds and listing.counts == fresh_counts, f"step {step}"
        if listing.ids is not None:
            assert listing.ids == ids, f"step {step}"
        if counts is not None:
            assert counts == (fresh_counts[br.DIRECT_BANANAS], fresh_counts[br.SUB_BRANCHES])


def test_a_child_is_listed_once_and_its_line_is_replaced_in_place() -> None:
    body = TEMPLATES["hand-written"]
    listing = None
    for summary in ("First.", "Second.", "Second."):
        new_body, _, listing = br.list_child(body, br.DIRECT_BANANAS, "b", br.entry_line("b", summary), listing)
        body = new_body or body
    assert body.count("- [[b]] \u2014") == 1
    assert "- [[b]] \u2014 Second." in body
    assert "- [[b]] mentioned in notes, not listed" in body  # another section's mention stays
    assert br.section_entries(body, br.DIRECT_BANANAS) == ["a", "a-longer", "b"]


def test_facts_about_another_body_are_not_used() -> None:
    body = TEMPLATES["fresh"]
    _, _, listing = br.list_child(body, br.DIRECT_BANANAS, "a", br.entry_line("a", "A."))
    other = TEMPLATES["hand-written"]  # already lists a: facts about the first body would say it does not
    new_body, counts, _ = br.list_child(other, br.DIRECT_BANANAS, "a", br.entry_line("a", "A, again."), listing)
    assert counts is None and new_body.count("- [[a]] ") == 1


def catalog_outlines(brain) -> dict[str, list[str]]:
    import json
    import sqlite3

    db = sqlite3.connect(brain.root / "_derived" / "catalog.db")
    try:
        return {row[0]: json.loads(row[1]) for row in db.execute("SELECT id, outline FROM nodes WHERE kind = 'branch'")}
    finally:
        db.close()


def test_a_branch_outline_in_the_catalog_is_always_its_body_s_outline(vine, brain, make_note) -> None:
    """The writer carries a branch's outline from one plant to the next (a new entry
    line changes no heading): after every plant, each branch row's outline must be
    what reading its file gives, also when a person added sections, a fence, or
    removed a listing's heading mid-session (the writer then puts it back)."""
    from monkeyllm_core.forest.passport import parse_node
    from monkeyllm_core.read.headings import outline

    vine.plant({"id": "ops/_index", "title": "Ops", "summary": "Operations.",
                "body": "# Ops\n\n> Operations.\n\n## Notes\n\n```\n## not a heading\n```\n\n## Direct bananas\n"})
    vine.plant(make_note("ops/first"))  # ops has no Sub-branches heading yet: the next plant adds it
    vine.plant({"id": "ops/deep/_index", "title": "Deep", "summary": "Deeper."})
    assert catalog_outlines(brain)["ops/_index"] == ["Notes", "Direct bananas", "Sub-branches"]
    rng = random.Random(12)
    for step in range(40):
        where = "ops/deep" if step == 16 else rng.choice(["ops", "ops/deep", ""])
        vine.plant(make_note(f"{where}/n{step}".lstrip("/")))
        if step == 15:  # a person deletes the Direct bananas heading of ops/deep mid-session
            path = brain.root / "ops" / "deep" / "_index.md"
            path.write_text(path.read_text(encoding="utf-8").replace("## Direct bananas\n", ""), encoding="utf-8")
        if step == 16 or step % 7 == 0:
            for branch_id, sections in catalog_outlines(brain).items():
                rel = "_index.md" if branch_id == "_index" else f"{branch_id}.md"
                assert sections == outline(parse_node(brain.text(rel)).body), (step, branch_id)
    vine.flush()
    outlines = catalog_outlines(brain)
    assert outlines["ops/_index"][:2] == ["Notes", "Direct bananas"]  # the fenced line is no heading
    assert "Direct bananas" in outlines["ops/deep/_index"]  # put back by the plant after the edit
    for branch_id, sections in outlines.items():
        rel = "_index.md" if branch_id == "_index" else f"{branch_id}.md"
        assert sections == outline(parse_node(brain.text(rel)).body), branch_id


def test_more_branches_than_the_upkeep_keeps_are_listed_as_a_fresh_writer_lists_them(brain, make_note) -> None:
    """The upkeep keeps only the branches written last (RECENT_BRANCHES): writing in
    turn under more branches than that makes it read dropped ones again, and each
    index must come out as it does when every branch is read afresh."""
    from monkeyllm_core import Vine
    from monkeyllm_core.forest.upkeep import RECENT_BRANCHES

    count = RECENT_BRANCHES + 6
    with Vine(brain.root) as vine, vine.bulk():
        for b in range(count):
            vine.plant({"id": f"b{b}/_index", "title": f"B {b}", "summary": f"Branch {b}."})
        for round_ in range(2):  # round-robin: each branch is dropped before it is written again
            for b in range(count):
                vine.plant(make_note(f"b{b}/n{round_}"))
    first = {b: brain.text(f"b{b}/_index.md") for b in range(count)}
    from monkeyllm_core import init_forest
    root = init_forest(brain.root.parent / "again", "Test forest")
    writes = [{"id": f"b{b}/_index", "title": f"B {b}", "summary": f"Branch {b}."} for b in range(count)]
    writes += [make_note(f"b{b}/n{round_}") for round_ in range(2) for b in range(count)]
    for node in writes:  # a writer of its own for each write: every branch read afresh
        with Vine(root) as vine:
            vine.plant(node)
    for b in range(count):
        assert first[b] == (root / f"b{b}" / "_index.md").read_text(encoding="utf-8"), b
        assert "2 bananas" in first[b]
    brain.assert_clean()
