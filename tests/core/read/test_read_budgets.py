"""Every response fits its budget, over every node of the test forest (issue 12, Show)."""
from __future__ import annotations

import json

import pytest

from monkeyllm_core import Vine
from monkeyllm_core.read.contract import BUDGETS, tokens_of, wire
from _read_forest import node_ids, private_copy


@pytest.fixture(scope="module")
def warm_reader(read_forest_base, tmp_path_factory):
    """A reader whose session has warmed every node, so heat values are in every response."""
    vine = Vine(private_copy(read_forest_base, tmp_path_factory.mktemp("budgets") / "brain"), writable=False)
    for node in node_ids(vine):
        vine.read_session().deposit_session([node], 0.37)
    yield vine
    vine.close()


def within(call, response):
    assert tokens_of(response) <= BUDGETS[call], (call, tokens_of(response))
    assert json.loads(wire(response)) == response  # what was measured is what is sent


def test_look_fits_for_every_node_whole_and_narrowed(warm_reader):
    for node in node_ids(warm_reader):
        within("look", warm_reader.look(node))
        within("look", warm_reader.look(node, fields=["summary", "edges_in", "children", "notes"]))


def test_move_fits_for_every_node_and_direction(warm_reader):
    for node in node_ids(warm_reader):
        for direction in ("out", "in", "both"):
            within("move", warm_reader.move(node, direction=direction))
        if node.endswith("_index"):
            within("move", warm_reader.move(node, rel="children", direction="both"))


def test_pick_fits_for_every_node(warm_reader):
    for node in node_ids(warm_reader):
        within("pick", warm_reader.pick(node))


def test_scan_fits_for_every_branch_with_every_field(warm_reader):
    from monkeyllm_core.read.scan import FIELDS
    for node in node_ids(warm_reader):
        if node.endswith("_index"):
            for recursive in (False, True):
                within("scan", warm_reader.scan(node, fields=list(FIELDS), recursive=recursive, limit=1000))


def test_locate_fits_for_every_nodes_title_at_the_largest_k(warm_reader):
    for node in node_ids(warm_reader):
        title = warm_reader.catalog.get(node)["title"]
        for scope in ("all", "branches", "bananas"):
            within("locate", warm_reader.locate(title, k=50, scope=scope))
