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
