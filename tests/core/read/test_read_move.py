"""move: neighbours along typed edges (inverse names for incoming ones), or a branch's children."""
from __future__ import annotations

import pytest

from monkeyllm_core import VineError
from monkeyllm_core.read.contract import tokens_of


def neighbours(response):
    return [(n["id"], n["rel"], n["direction"]) for n in response["neighbors"]]


def test_out_follows_the_nodes_own_links_with_full_summaries(shared_reader):
    response = shared_reader.move("sales/exchange-policy")
    assert neighbours(response) == [("sales/price-list", "related-to", "out"), ("sales/_index", "part-of", "out")]
    first = response["neighbors"][0]
    assert first == {"id": "sales/price-list", "rel": "related-to", "direction": "out", "type": "note",
                     "summary": "Prices per product for 2026, in USD, with volume discounts.", "heat": 0.0}
    assert response["truncated"] is False


def test_in_reports_each_link_under_its_inverse_name(shared_reader):
    assert neighbours(shared_reader.move("sales/exchange-policy", direction="in")) == [
        ("sales/exchange-policy-2027", "precedes", "in"), ("people/ana-ribeiro", "mentions", "in")]
    # a rel the dialect gives no inverse keeps its own name from the other side
    assert ("sales/exchange-policy-2027", "discovered-shortcut", "in") in neighbours(
        shared_reader.move("sales/price-list", direction="in"))


def test_both_is_out_then_in(shared_reader):
    both = neighbours(shared_reader.move("sales/exchange-policy", direction="both"))
    assert both == neighbours(shared_reader.move("sales/exchange-policy")) + neighbours(
        shared_reader.move("sales/exchange-policy", direction="in"))


def test_rel_keeps_one_relation_as_it_reads_from_this_node(shared_reader):
    assert neighbours(shared_reader.move("sales/exchange-policy", rel="mentions", direction="in")) == [
        ("people/ana-ribeiro", "mentions", "in")]
    assert shared_reader.move("sales/exchange-policy", rel="mentions")["neighbors"] == []


def test_children_are_a_branchs_physical_children_and_in_is_the_way_up(shared_reader):
    response = shared_reader.move("sales/_index", rel="children")
    assert [n["id"] for n in response["neighbors"]][:2] == ["sales/pipeline/_index", "sales/exchange-policy"]
    assert {(n["rel"], n["direction"]) for n in response["neighbors"]} == {("children", "out")}
    assert neighbours(shared_reader.move("sales/price-list", rel="children", direction="in")) == [
        ("sales/_index", "children", "in")]


def test_a_sixty_child_branch_truncates_and_points_at_scan(shared_reader):
    response = shared_reader.move("catalog/_index", rel="children")
    assert tokens_of(response) <= 600 and response["truncated"] is True
    assert 0 < len(response["neighbors"]) < 60
    assert "scan('catalog/_index'" in response["hint"]


def test_neighbours_come_hottest_first(reader):
    reader.close_session(True, ["catalog/item-47"])
    assert reader.move("catalog/_index", rel="children")["neighbors"][0]["id"] == "catalog/item-47"


def test_a_broken_link_is_a_neighbour_without_type(shared_reader):
    (ghost,) = shared_reader.move("sales/price-list")["neighbors"]
    assert ghost["id"] == "sales/retired-list" and ghost["type"] is None and ghost["summary"] is None


@pytest.mark.parametrize("kwargs, code", [
    ({"direction": "up"}, "E_SCHEMA"), ({"rel": "cites"}, "E_SCHEMA"), ({"rel": "children"}, "E_SCHEMA"),
])
def test_bad_arguments_are_e_schema(shared_reader, kwargs, code):
    with pytest.raises(VineError) as err:
        shared_reader.move("sales/price-list", **kwargs)  # a banana has no children
    assert err.value.code == code


def test_no_such_node_is_e_not_found(shared_reader):
    with pytest.raises(VineError) as err:
        shared_reader.move("sales/nope")
    assert err.value.code == "E_NOT_FOUND"
