"""``vine.sniff`` and ``vine.harvest``: the Vine's own calls, traced in its session,
the same answers as the primitives run on the Vine's catalog, and harvest warming
what it returns the way a pick does."""
from __future__ import annotations

import json

import pytest

from monkeyllm_core import Vine, VineError
from monkeyllm_core.forest.rules import trail_of
from monkeyllm_core.read.body_index import BodyIndex
from monkeyllm_core.read.contract import BUDGETS, tokens_of
from monkeyllm_core.read.sniff import sniff


def test_vine_sniff_is_the_primitive_over_the_vines_catalog(reader):
    got = reader.sniff(["NF-4412", "exchange"], scope="sales", k=5)
    with BodyIndex(reader.root, reader.catalog) as index:
        assert got == sniff(index, ["NF-4412", "exchange"], scope="sales", k=5, types=reader.dialect.types)
    assert got["results"][0]["id"] == "sales/exchange-policy"
    assert tokens_of(got) <= BUDGETS["sniff"]


def test_vine_harvest_finds_the_node_and_warms_its_trail_in_the_session(reader):
    response = reader.harvest("exchange deadlines for invoice NF-4412", k=2)
    ids = [r["id"] for r in response["results"]]
    assert "sales/exchange-policy" in ids
    assert tokens_of(response) <= BUDGETS["harvest"]
    heat = reader.read_session().heat_of(["sales/exchange-policy", *trail_of("sales/exchange-policy")])
    assert all(value > 0 for value in heat.values()), heat


def test_both_calls_are_traced_in_the_session(reader):
    reader.sniff("NF-4412")
    reader.harvest("exchange deadlines")
    with pytest.raises(VineError):
        reader.sniff("x")  # one character: E_SCHEMA, traced as an error
    traces = sorted((reader.root / "_derived" / "traces").glob("*"))
    lines = [json.loads(line) for path in traces for line in path.read_text().splitlines() if line.strip()]
    calls = [line.get("call") for line in lines]
    assert calls.count("sniff") == 2 and calls.count("harvest") == 1, calls
    assert "locate" not in calls  # harvest's inner hops are part of its one call


def test_a_writable_vine_sniffs_what_it_just_planted(tmp_path):
    from monkeyllm_core import init_forest
    root = init_forest(tmp_path / "brain", "Fresh")
    with Vine(root) as vine:
        assert vine.sniff("ZX-9001")["results"] == []
        vine.plant({"id": "ticket", "type": "note", "title": "Ticket", "summary": "A support ticket, 2026-11.",
                    "body": "# Ticket\n\nThe customer quoted order ZX-9001 twice.\n"})
        [hit] = vine.sniff("zx-9001")["results"]
        assert hit["id"] == "ticket" and hit["matches"][0]["line"] == 3
