"""locate: questions people type, in, ranked entry points from curated metadata, out."""
from __future__ import annotations

import pytest

from monkeyllm_core import VineError
from monkeyllm_core.read.contract import tokens_of
from _read_forest import NASTY

RESULT_KEYS = ["id", "kind", "type", "title", "summary", "trail", "score", "heat"]


def ids(response):
    return [r["id"] for r in response["results"]]


def test_a_question_lands_on_the_node_whose_title_and_summary_carry_its_words(shared_reader):
    response = shared_reader.locate("which region closed the most orders in 2026?")
    assert ids(response)[0] == "sales/orders-2026"
    assert response["results"][0]["score"] == 1.0  # strength is normalised to (0, 1], no heat yet


def test_results_carry_the_fields_of_primitives_md(shared_reader):
    response = shared_reader.locate("sales exchange policy", k=5)
    by_id = {r["id"]: r for r in response["results"]}
    assert list(by_id["sales/exchange-policy"]) == RESULT_KEYS
    assert by_id["sales/exchange-policy"]["trail"] == ["_index", "sales/_index"]
    branch = by_id["sales/_index"]
    assert list(branch) == RESULT_KEYS + ["coverage"]
    assert branch["kind"] == "branch" and branch["coverage"] == "6 bananas, 1 sub-branches"
    assert set(response) == {"results", "truncated"}


@pytest.mark.parametrize("query", NASTY + ["NF-4412 AND (x", 'say "hi', "e-mail", "100%", "a\tb\nc"])
def test_no_typed_query_raises(shared_reader, query):
    response = shared_reader.locate(query)
    assert isinstance(response["results"], list)


@pytest.mark.parametrize("query, expected", [
    ("exchange policies", "sales/exchange-policy"),
    ("PRICES", "sales/price-list"),
    ("relatorio exportacoes", "relatorios/exportacoes-2026"),
    ("Relatório de exportações?", "relatorios/exportacoes-2026"),
    ("exportação", "relatorios/exportacoes-2026"),
    ("社員名簿", "relatorios/社員名簿"),
    ("returns policy", "sales/exchange-policy"),          # an alias
    ("the master-agreement's payment terms", "contracts/master-agreement"),
])
def test_plurals_accents_hyphens_and_aliases_find_their_node(shared_reader, query, expected):
    assert ids(shared_reader.locate(query))[0] == expected


def test_all_the_words_rank_above_some_of_them(shared_reader):
    assert ids(shared_reader.locate("exchange policy 2027"))[:2] == ["sales/exchange-policy-2027", "sales/exchange-policy"]


def test_a_word_nothing_carries_does_not_empty_the_answer(shared_reader):
    response = shared_reader.locate("exchange zebra")
    assert "sales/exchange-policy" in ids(response)


def test_bodies_are_never_searched(shared_reader):
    assert "sales/exchange-policy" not in ids(shared_reader.locate("NF-4412"))  # only in its body: sniff's job


def test_scope_keeps_branches_or_bananas(shared_reader):
    branches = shared_reader.locate("sales policy", scope="branches")["results"]
    assert branches and all(r["kind"] == "branch" for r in branches)
    bananas = shared_reader.locate("sales policy", scope="bananas")["results"]
    assert bananas and all(r["kind"] == "banana" for r in bananas)


def test_type_filter_keeps_one_type_or_several(shared_reader):
    assert {r["type"] for r in shared_reader.locate("2026", k=10, type_filter="dataset")["results"]} == {"dataset"}
    both = shared_reader.locate("2026", k=20, type_filter=["dataset", "document"])["results"]
    assert {r["type"] for r in both} == {"dataset", "document"}


@pytest.mark.parametrize("kwargs, needle", [
    ({"scope": "leaves"}, "scope"), ({"k": 0}, "k must"), ({"k": "3"}, "k must"), ({"k": 51}, "k must"),
    ({"type_filter": "spreadsheet"}, "unknown type"), ({"type_filter": []}, "unknown type"),
])
def test_bad_arguments_are_e_schema(shared_reader, kwargs, needle):
    with pytest.raises(VineError) as err:
        shared_reader.locate("orders", **kwargs)
    assert err.value.code == "E_SCHEMA" and needle in err.value.message


def test_truncated_means_more_than_k_matched(shared_reader):
    assert shared_reader.locate("widget sold in boxes", k=3)["truncated"] is True
    assert shared_reader.locate("社員名簿", k=3)["truncated"] is False


def test_the_budget_drops_whole_results_from_the_tail(shared_reader):
    response = shared_reader.locate("product widget catalog 2026", k=50)
    assert tokens_of(response) <= 800
    assert response["truncated"] is True and len(response["results"]) < 50 and "hint" in response


def test_heat_lifts_a_node_among_equals_and_alpha_zero_turns_it_off(reader):
    query = "widget sold in boxes priced per box"
    assert ids(reader.locate(query))[0] != "catalog/item-42"
    reader.close_session(True, ["catalog/item-42"])  # persistent heat, +0.1 on the winning trail
    warm = reader.locate(query)
    assert ids(warm)[0] == "catalog/item-42"
    top = warm["results"][0]
    assert top["heat"] == pytest.approx(0.1, abs=1e-3)
    assert top["score"] == pytest.approx(1.0 * (1 + 0.3 * top["heat"]), abs=1e-3)
    reader.alpha = 0
    cold = reader.locate(query)
    assert ids(cold)[0] != "catalog/item-42"
    assert all(r["score"] <= 1.0 for r in cold["results"])
