"""The shared read contract: what is measured is what is sent, and shedding keeps whole items."""
from __future__ import annotations

import json

from monkeyllm_core.read.contract import BUDGETS, fits, shed_tail, tokens_of, wire


def test_wire_is_compact_json_with_unicode_kept():
    assert wire({"title": "Relatório de vendas", "n": [1, 2]}) == '{"title":"Relatório de vendas","n":[1,2]}'


def test_tokens_are_ceil_of_characters_over_four():
    response = {"a": "x" * 10}  # {"a":"xxxxxxxxxx"} is 18 characters
    assert len(wire(response)) == 18
    assert tokens_of(response) == 5


def test_budgets_are_the_declared_ones():
    assert BUDGETS == {"locate": 800, "look": 500, "move": 600, "scan": 800, "pick": 4000,
                       "sniff": 800, "query": 2000, "harvest": 4000}


def test_a_fitting_response_is_left_alone():
    response = {"results": [{"id": "a"}], "truncated": False}
    assert shed_tail(response, "results", 800, hint="narrow the query") is False
    assert response == {"results": [{"id": "a"}], "truncated": False}


def test_shedding_keeps_the_longest_whole_prefix_that_fits():
    items = [{"id": f"notes/n{i}", "summary": "Relatório " * (i % 7 + 1)} for i in range(300)]
    response = {"results": list(items), "truncated": False}
    assert shed_tail(response, "results", 800, hint="Narrow the query.") is True
    kept = response["results"]
    assert kept == items[: len(kept)]  # a prefix, every item whole
    assert response["truncated"] is True and response["hint"] == "Narrow the query."
    assert fits(response, 800)
    one_more = dict(response, results=items[: len(kept) + 1])
    assert not fits(one_more, 800)  # the longest prefix, not merely one that fits
    assert json.loads(wire(response)) == response
