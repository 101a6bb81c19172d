"""harvest (primitives.md): locate and sniff fused by RRF, matches refined rarest term
first (never on a branch), content whole, by section or as an outline, a dataset's
notes always, within 4000 tokens.

harvest is handed the Vine's own locate and a sniff over a real body index that
records each call, so the tests see which hops it makes."""
from __future__ import annotations

import pytest

from monkeyllm_core.errors import VineError, estimate_tokens
from monkeyllm_core.read.body_index import BodyIndex
from monkeyllm_core.read.contract import fits
from monkeyllm_core.read.harvest import RRF_K, fuse, harvest, sniff_terms
from monkeyllm_core.read.sniff import sniff

SECTION = "Filler sentence about the master agreement and its many clauses, repeated for length. "

AGREEMENT = ("# Master agreement\n\n## Parties\n\n" + SECTION * 40 + "\n\n## Payment terms\n\n"
             "Invoices are paid within 45 days; late fees accrue monthly.\n" + SECTION * 20
             + "\n\n## Termination\n\n" + SECTION * 10 + "\n\nEither party may end it with notice QZ-881.\n"
             + "\n## Annexes\n\n" + SECTION * 40 + "\n")
COMMON_THEN_RARE = ("# Ticket log\n\n## Log\n\n" + "".join(f"retry {i} of the gateway\n" for i in range(12))
                    + "\n## Root cause\n\nThe certificate CRT-7 expired; gateway retry storm followed.\n")


@pytest.fixture
def world(vine):
    vine.plant({"id": "sales/_index", "type": "branch", "title": "Sales",
                "summary": "Sales policies, agreements and the 2026 orders."})
    vine.plant({"id": "sales/exchange-policy", "type": "note", "title": "Exchange policy",
                "summary": "Return and exchange windows per channel, with invoice rules.",
                "body": "# Exchange policy\n\n## Deadlines\n\nRetail returns close 30 days after invoice NF-4412.\n"})
    vine.plant({"id": "sales/master-agreement", "type": "note", "title": "Master agreement",
                "summary": "The master agreement with Acme: parties, payment terms, termination.", "body": AGREEMENT})
    vine.plant({"id": "sales/orders-2026", "type": "dataset", "title": "Orders 2026",
                "summary": "Every closed order of 2026, one row per order, with region and value.",
                "schema": {"orders": {"columns": {"id": "INTEGER", "region": "TEXT", "total_invoice": "TEXT"}}},
                "rows": {"orders": [[1, "Southeast", "USD 54.607,56"]]},
                "body": "# Orders 2026\n\n## Notes\n\ntotal_invoice is TEXT holding a formatted amount: cast it.\n"})
    vine.plant({"id": "ops/_index", "type": "branch", "title": "Operations", "summary": "Tickets and incidents."})
    vine.plant({"id": "ops/ticket-log", "type": "note", "title": "Ticket log",
                "summary": "Gateway tickets of March.", "body": COMMON_THEN_RARE})
    index = BodyIndex(vine.root, vine.catalog)
    calls: list[dict] = []

    def sniff_call(terms, scope=None, k=5, type_filter=None):
        calls.append({"terms": list(terms), "scope": scope, "k": k})
        return sniff(index, terms, scope=scope, k=k, type_filter=type_filter)

    def run(query, terms=None, k=3):
        return harvest(query, terms, k, locate=vine.locate, sniff=sniff_call,
                       body_of=lambda node_id: vine.read(node_id).body, catalog=vine.catalog)

    yield run, calls
    index.close()


def by_id(response):
    return {r["id"]: r for r in response["results"]}


def test_the_response_is_the_primitives_shape(world):
    run, _ = world
    got = run("exchange policy deadlines", ["NF-4412"])
    assert list(got) == ["query", "terms", "results", "truncated"]
    assert got["query"] == "exchange policy deadlines" and got["terms"] == ["NF-4412"]
    first = got["results"][0]
    assert list(first) == ["id", "title", "type", "trail", "summary", "score", "found_by", "matches", "content"]
    assert first["id"] == "sales/exchange-policy" and first["found_by"] == ["locate", "sniff"]
    assert first["score"] == round(2 / (RRF_K + 1), 4) and first["trail"] == ["_index", "sales/_index"]
    assert first["matches"] == [{"section": "Deadlines", "line": 5,
                                 "snippet": "Retail returns close 30 days after invoice NF-4412."}]


def test_rankings_fuse_by_reciprocal_rank():
    fused = fuse({"locate": ["a", "b", "c"], "sniff": ["c", "d"]})
    assert [(i, by) for i, _, by in fused] == [("c", ["locate", "sniff"]), ("a", ["locate"]), ("b", ["locate"]),
                                               ("d", ["sniff"])]  # b and d tie: the id decides
    assert fused[0][1] == pytest.approx(1 / 63 + 1 / 61)


def test_both_rankers_run_at_twice_k(world):
    run, calls = world
    run("exchange policy", ["exchange"], k=2)
    assert calls[0] == {"terms": ["exchange"], "scope": None, "k": 4}


def test_a_short_body_comes_whole(world):
    run, _ = world
    content = by_id(run("exchange policy", ["NF-4412"]))["sales/exchange-policy"]["content"]
    body = "# Exchange policy\n\n## Deadlines\n\nRetail returns close 30 days after invoice NF-4412.\n"
    assert content == [{"section": None, "body": body, "body_tokens": estimate_tokens(body)}]


def test_a_long_body_comes_as_its_matched_sections(world):
    run, _ = world
    result = by_id(run("master agreement payment", ["paid within", "QZ-881"]))["sales/master-agreement"]
    assert [c["section"] for c in result["content"]] == ["Payment terms", "Termination"]
    payment = result["content"][0]
    assert payment["body"].startswith("## Payment terms\n\nInvoices are paid within 45 days")
    assert "## Termination" not in payment["body"]  # a section whole, and only it
    assert sum(c["body_tokens"] for c in result["content"]) <= 1200


def test_a_long_body_without_fitting_matches_comes_as_its_outline(world):
    run, _ = world
    result = by_id(run("master agreement", ["nothing-like-this"]))["sales/master-agreement"]
    assert result["matches"] == []
    assert result["content"] == [{"section": None, "outline": ["Parties", "Payment terms", "Termination", "Annexes"],
                                  "body_tokens": result["content"][0]["body_tokens"]}]
    assert result["content"][0]["body_tokens"] > 1200


def test_a_dataset_always_carries_its_notes(world):
    run, _ = world
    result = by_id(run("closed orders 2026 region", ["Southeast"]))["sales/orders-2026"]
    assert result["notes"] == "total_invoice is TEXT holding a formatted amount: cast it."
    assert "notes" not in by_id(run("exchange policy", ["NF-4412"]))["sales/exchange-policy"]


def test_the_rarest_term_is_not_drowned_by_a_common_one(world):
    run, _ = world
    result = by_id(run("gateway tickets", ["retry", "CRT-7"]))["ops/ticket-log"]
    assert result["matches"][0]["section"] == "Root cause"  # CRT-7's one line comes first
    assert len(result["matches"]) == 3


def test_branches_are_never_refined(world):
    run, calls = world
    got = run("sales policies agreements", ["agreement"])
    branch = by_id(got)["sales/_index"]
    assert branch["matches"] == [] and branch["found_by"] == ["locate"]
    assert all(call["scope"] != "sales/_index" for call in calls)
    assert branch["content"][0]["body"].startswith("# Sales")


def test_terms_come_from_the_query_when_not_given(world):
    run, _ = world
    got = run("What is the deadline for invoice NF-4412?")
    assert got["terms"] == ["deadline", "invoice", "NF-4412"]
    assert got["results"][0]["id"] == "sales/exchange-policy"


def test_the_bundle_fits_4000_tokens_dropping_whole_results(vine):
    vine.plant({"id": "big/_index", "type": "branch", "title": "Big", "summary": "Big notes."})
    for i in range(6):
        vine.plant({"id": f"big/n{i}", "type": "note", "title": f"Big note {i}", "summary": f"Big note {i}.",
                    "body": f"# Big {i}\n\n" + ("word " * 900) + "\nmarker ZK-1\n"})
    with BodyIndex(vine.root, vine.catalog) as index:
        got = harvest("big note", ["ZK-1"], 6, locate=vine.locate,
                      sniff=lambda terms, scope=None, k=5, type_filter=None: sniff(index, terms, scope=scope, k=k),
                      body_of=lambda node_id: vine.read(node_id).body, catalog=vine.catalog)
    assert got["truncated"] is True and 0 < len(got["results"]) < 6 and fits(got, 4000)
    assert all(c["body"].endswith("marker ZK-1\n") for r in got["results"] for c in r["content"])
    assert "pick(id, section)" in got["hint"]


def test_a_bad_query_or_k_is_e_schema(world):
    run, _ = world
    for query, k in [("", 3), ("   ", 3), (None, 3), ("fine", 0), ("fine", "3")]:
        with pytest.raises(VineError) as err:
            run(query, k=k)
        assert err.value.code == "E_SCHEMA", (query, k)


def test_bad_terms_are_sniffs_e_schema(world):
    run, _ = world
    with pytest.raises(VineError) as err:
        run("exchange", ["x"])
    assert err.value.code == "E_SCHEMA"


def test_sniff_terms_keep_codes_and_drop_stop_words():
    assert sniff_terms("what is the deadline to exchange a retail order?") == ["deadline", "exchange", "retail",
                                                                               "order"]
    assert sniff_terms("Which regions closed the most orders in 2026?") == ["region", "closed", "order", "2026"]
    assert sniff_terms("Qual é o prazo das exportações para SP?") == ["prazo", "exportaç", "SP"]
    assert sniff_terms('invoice "NF-4412", e-mail?') == ["invoice", "NF-4412", "e-mail"]
    many = sniff_terms("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo 77")
    assert len(many) == 8 and "77" in many
