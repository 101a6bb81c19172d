"""Hybrid locate and the Gauntlet (issue 15): the read calls over a real canopy.

The canopy is built by ``vine.canopy_build`` against the scripted OpenAI-compatible
server on 127.0.0.1, whose ``/embeddings`` is the deterministic ``hashed_embedding``
(texts sharing words and stems are close). Expected orders are computed here from
what can be observed on its own: locate with no embedder (the BM25 ranks), and the
cosines of ``hashed_embedding`` over the catalog's titles and summaries (the vector
ranks).
"""
from __future__ import annotations

import math
import sqlite3
import threading

import pytest

from endpoints import EMBED_MODEL, dead_endpoint, embedder
from monkeyllm_core import Vine
from monkeyllm_core.read.contract import tokens_of
from monkeyllm_gardener.curator.testing_server import hashed_embedding

MODEL = EMBED_MODEL
RRF_K = 60


@pytest.fixture
def canopied(read_forest, embed_server):
    """The read forest's copy with a canopy built, and a reader embedding queries with the same model."""
    vine = Vine(read_forest, writable=False)
    vine.alpha = 0  # the orders below are the rankings themselves, heat aside
    vine.embedder = embedder(embed_server)
    report = vine.canopy_build()
    assert report["embedded"] == report["count"] > 70
    yield vine
    vine.close()


def bm25_only(root, query, k=50, **kwargs):
    with Vine(root, writable=False) as plain:
        plain.alpha = 0
        return plain.locate(query, k=k, **kwargs)


def cosine(a, b):
    return sum(x * y for x, y in zip(a, b)) / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def catalog_rows(root):
    db = sqlite3.connect(root / "_derived" / "catalog.db")
    try:
        return db.execute("SELECT id, kind, type, title, summary FROM nodes").fetchall()
    finally:
        db.close()


def vector_ranks(root, query, limit, kind=None):
    """The nearest ``limit`` nodes to the query by the cosine of title and summary."""
    wanted = hashed_embedding(query)
    scored = [(cosine(wanted, hashed_embedding(f"{title}\n\n{summary}")), node)
              for node, node_kind, _type, title, summary in catalog_rows(root) if kind in (None, node_kind)]
    return [node for _score, node in sorted(scored, key=lambda s: (-s[0], s[1]))[:limit]]


def rrf(*rankings):
    fused = {}
    for ranking in rankings:
        for rank, node in enumerate(ranking, start=1):
            fused[node] = fused.get(node, 0.0) + 1.0 / (RRF_K + rank)
    top = max(fused.values())
    return sorted(((node, value / top) for node, value in fused.items()), key=lambda f: (-f[1], f[0]))


# -- hybrid locate ------------------------------------------------------------------------
@pytest.mark.parametrize("query", ["superseded windows", "who owns returning rules", "Relatorio exportacoes"])
def test_hybrid_strength_is_the_rrf_of_the_bm25_ranks_and_the_vector_ranks(canopied, read_forest, query):
    lexical = [r["id"] for r in bm25_only(read_forest, query)["results"]]
    assert 0 < len(lexical) < 15  # every lexical candidate is in the fused pool
    expected = rrf(lexical, vector_ranks(read_forest, query, 15))[:5]
    response = canopied.locate(query, k=5)
    assert [(r["id"], r["score"]) for r in response["results"]] == [(node, round(value, 4)) for node, value in expected]
    assert response["dense"] == {"used": True, "model": MODEL, "stale": 0}
    assert response["truncated"] is True


def test_a_node_only_the_vectors_find_enters_the_results(canopied, read_forest):
    lexical = [r["id"] for r in bm25_only(read_forest, "superseded windows")["results"]]
    found = [r["id"] for r in canopied.locate("superseded windows", k=5)["results"]]
    assert found[:2] == lexical == ["sales/exchange-policy-2027", "sales/exchange-policy"]
    assert set(found[2:]) <= set(vector_ranks(read_forest, "superseded windows", 15)) - set(lexical)
    assert len(found) == 5


def test_the_vector_half_keeps_to_scope_and_type(canopied, read_forest):
    response = canopied.locate("superseded windows", k=5, scope="branches")
    assert response["results"] and all(r["kind"] == "branch" for r in response["results"])
    datasets = canopied.locate("superseded windows", k=5, type_filter="dataset")["results"]
    assert datasets and all(r["type"] == "dataset" for r in datasets)


def test_a_canopy_of_another_model_is_treated_as_absent_and_the_response_says_so(canopied, read_forest, embed_server):
    canopied.embedder = embedder(embed_server, model="other-embedder")
    response = canopied.locate("superseded windows", k=5)
    expected = bm25_only(read_forest, "superseded windows", k=5)
    assert response["results"] == expected["results"] and response["truncated"] == expected["truncated"]
    assert response["dense"]["used"] is False
    assert "'hash-256'" in response["dense"]["reason"] and "'other-embedder'" in response["dense"]["reason"]
    assert "BM25 alone" in response["dense"]["reason"]


def test_with_an_embedder_but_no_canopy_the_response_is_the_bm25_one(read_forest, embed_server):
    with Vine(read_forest, writable=False) as vine:
        vine.alpha = 0
        vine.embedder = embedder(embed_server)
        response = vine.locate("superseded windows", k=5)
    assert response == bm25_only(read_forest, "superseded windows", k=5)
    assert embed_server.embedding_requests == []  # nothing to compare a query with: not embedded


def test_a_half_built_canopy_is_never_read(read_forest, embed_server):
    """A build that died leaves only its staged file: locate does not read it."""
    def fail_after_two(_body, seen=[]):  # noqa: B006 - the count of this one server
        seen.append(1)
        return (500, {"error": {"message": "down"}}) if len(seen) > 2 else None

    embed_server.embeddings_responder = fail_after_two
    with Vine(read_forest, writable=False) as vine:
        vine.alpha = 0
        vine.embedder = embedder(embed_server, retries=0)
        with pytest.raises(Exception) as failed:
            vine.canopy_build(batch=8, workers=1)
        assert getattr(failed.value, "code", None) == "E_TIMEOUT"
        assert (read_forest / "_derived" / "canopy.building.db").exists()
        assert not (read_forest / "_derived" / "canopy.db").exists()
        embed_server.embeddings_responder = None
        response = vine.locate("superseded windows", k=5)
    assert response == bm25_only(read_forest, "superseded windows", k=5)


def test_an_embedder_failing_at_query_time_answers_from_bm25_and_says_so(canopied, read_forest):
    dead = dead_endpoint()
    canopied.embedder = embedder(dead, retries=0)
    response = canopied.locate("superseded windows", k=5)
    assert response["results"] == bm25_only(read_forest, "superseded windows", k=5)["results"]
    assert response["dense"]["used"] is False
    assert dead in response["dense"]["reason"] and "BM25 alone" in response["dense"]["reason"]


def test_a_hanging_query_embedder_is_waited_on_once_then_let_rest(canopied, read_forest, embed_server):
    canopied.locate("superseded windows")  # embedded while the server answers: cached from here on
    release = threading.Event()

    def hang(_body):
        release.wait(5)  # longer than the embedder's timeout below
        return None

    embed_server.embeddings_responder = hang
    canopied.embedder = embedder(embed_server, timeout_seconds=0.3, retries=0)
    try:
        sent = len(embed_server.embedding_requests)
        first = canopied.locate("price list owner", k=5)
        second = canopied.locate("exchange policy deadlines", k=5)
        again = canopied.locate("superseded windows", k=5)
    finally:
        release.set()
    assert len(embed_server.embedding_requests) == sent + 1  # the second locate did not wait on it again
    assert first["dense"]["used"] is False and "timed out" in first["dense"]["reason"]
    assert second["dense"]["used"] is False and "not asked again" in second["dense"]["reason"]
    assert second["results"] == bm25_only(read_forest, "exchange policy deadlines", k=5)["results"]
    assert again["dense"]["used"] is True  # a query already embedded needs no embedder


def test_the_environment_configures_the_query_embedder(read_forest, embed_server, monkeypatch):
    monkeypatch.setenv("MONKEYLLM_EMBED_ENDPOINT", embed_server.base_url)
    monkeypatch.setenv("MONKEYLLM_EMBED_MODEL", MODEL)
    with Vine(read_forest, writable=False) as vine:
        vine.canopy_build()
        assert vine.locate("superseded windows")["dense"]["used"] is True
    monkeypatch.setenv("MONKEYLLM_EMBED_MODEL", "")
    with Vine(read_forest, writable=False) as vine:
        dense = vine.locate("superseded windows")["dense"]
    assert dense["used"] is False and "MONKEYLLM_EMBED_MODEL" in dense["reason"]


def test_a_repeated_query_is_embedded_once(canopied, embed_server):
    before = len(embed_server.embedding_requests)
    first = canopied.locate("who owns returning rules")
    assert canopied.locate("who owns returning rules") == first
    assert len(embed_server.embedding_requests) == before + 1
    assert embed_server.embedding_requests[-1]["input"] == ["who owns returning rules"]


def test_locate_reports_the_stale_count_of_writes_since_the_build(canopied, read_forest):
    with Vine(read_forest) as writer:
        writer.plant({"id": "sales/returns-faq", "type": "note", "parent": "sales/_index", "title": "Returns FAQ",
                      "summary": "Questions customers ask about superseded return windows."})
        writer.replace("sales/price-list", {"summary": "Prices per product for 2027, in USD."})
    response = canopied.locate("superseded windows", k=5)
    assert response["dense"] == {"used": True, "model": MODEL, "stale": 2}
    # the new node has no vector yet: only its words can find it
    assert "sales/returns-faq" in [r["id"] for r in response["results"]]


# -- the Gauntlet -------------------------------------------------------------------------------
GOAL = "Product 33 widget sold in boxes of 34"


def closest_first(root, ids, query):
    texts = {node: f"{title}\n\n{summary}" for node, _k, _t, title, summary in catalog_rows(root)}
    wanted = hashed_embedding(query)
    return sorted(ids, key=lambda node: -cosine(wanted, hashed_embedding(texts[node])))


def test_look_orders_edges_toward_the_goal_before_the_cap(canopied, read_forest):
    before = canopied.look("people/ana-ribeiro", fields=["edges_out", "stats"])  # the cap, not the budget
    cut = [e["target"] for e in before["edges_out"]]
    assert len(cut) == 12 and "catalog/item-33" not in cut and "frontier" not in before
    canopied.locate(GOAL)
    after = canopied.look("people/ana-ribeiro", fields=["edges_out", "stats"])
    every_target = ["sales/exchange-policy", *(f"catalog/item-{n:02d}" for n in range(20, 34))]
    shown = [e["target"] for e in after["edges_out"]]
    # the 12 closest, less what the frontier field's own tokens pushed off the budget's tail
    assert len(shown) >= 10 and shown == closest_first(read_forest, every_target, GOAL)[:len(shown)]
    assert tokens_of(after) <= 500
    assert after["edges_out"][0]["target"] == "catalog/item-33"  # the one the cap used to hide
    assert after["frontier"] == {"ranked": True, "toward": GOAL}
    assert set(after) - {"frontier", "truncated", "hint"} == set(before)
    assert after["stats"] == before["stats"]


def test_move_orders_neighbours_toward_the_goal_before_the_budget(canopied):
    before = canopied.move("catalog/_index", rel="children")
    assert before["truncated"] is True and "catalog/item-59" not in [n["id"] for n in before["neighbors"]]
    canopied.locate("Product 59 widget sold in boxes of 60")
    after = canopied.move("catalog/_index", rel="children")
    assert after["neighbors"][0]["id"] == "catalog/item-59"
    assert after["truncated"] is True and tokens_of(after) <= 600  # the same budget, the frontier field inside it
    assert after["frontier"] == {"ranked": True, "toward": "Product 59 widget sold in boxes of 60"}


def test_scan_orders_matches_toward_the_goal_before_the_limit(canopied, read_forest):
    assert [n["id"] for n in canopied.scan("catalog", fields=["id"], limit=3)["nodes"]] == [
        "catalog/item-00", "catalog/item-01", "catalog/item-02"]
    canopied.locate(GOAL)
    after = canopied.scan("catalog", fields=["id"], limit=3)
    every = [f"catalog/item-{n:02d}" for n in range(60)]
    assert [n["id"] for n in after["nodes"]] == closest_first(read_forest, every, GOAL)[:3]
    assert after["nodes"][0]["id"] == "catalog/item-33"
    assert after["truncated"] is True and after["frontier"] == {"ranked": True, "toward": GOAL}


def test_nodes_without_a_vector_come_after_the_ranked_ones_in_their_old_order(canopied, read_forest):
    with Vine(read_forest) as writer:
        for name in ("zz-new", "aa-new"):
            writer.plant({"id": f"catalog/{name}", "type": "note", "parent": "catalog/_index",
                          "title": "Product 33 twin", "summary": GOAL})
    canopied.locate(GOAL)
    ids = [n["id"] for n in canopied.scan("catalog", fields=["id"], limit=100)["nodes"]]
    assert len(ids) == 62 and ids[-2:] == ["catalog/aa-new", "catalog/zz-new"]
    assert ids[0] == "catalog/item-33"


def test_harvest_sets_the_goal_too_and_a_new_hunt_forgets_it(canopied, embed_server):
    canopied.harvest(GOAL, k=2)
    requests = len(embed_server.embedding_requests)
    assert canopied.move("catalog/_index", rel="children")["frontier"]["toward"] == GOAL
    canopied.look("people/ana-ribeiro")
    canopied.scan("catalog")
    assert len(embed_server.embedding_requests) == requests  # one embedding per hunt, none per hop
    canopied.close_session(False, [])
    assert "frontier" not in canopied.move("catalog/_index", rel="children")


def test_harvest_says_whether_its_locate_half_used_the_vectors(canopied, read_forest, embed_server):
    assert canopied.harvest(GOAL, k=2)["dense"] == {"used": True, "model": MODEL, "stale": 0}
    with Vine(read_forest, writable=False) as other:
        other.embedder = embedder(embed_server, model="another-model")
        said = other.harvest(GOAL, k=2)["dense"]
        assert said["used"] is False and "another-model" in said["reason"]
    with Vine(read_forest, writable=False) as plain:
        assert "dense" not in plain.harvest(GOAL, k=2)  # no embedder: the bundle it always was


def test_without_a_goal_or_a_usable_canopy_nothing_changes(canopied, read_forest, embed_server):
    with Vine(read_forest, writable=False) as plain:
        expected = [plain.look("people/ana-ribeiro"), plain.move("catalog/_index", rel="children"),
                    plain.scan("catalog", fields=["id"], limit=3)]
    assert [canopied.look("people/ana-ribeiro"), canopied.move("catalog/_index", rel="children"),
            canopied.scan("catalog", fields=["id"], limit=3)] == expected  # no locate yet: no goal
    canopied.locate(GOAL)
    canopied.embedder = embedder(embed_server, model="other-embedder")
    canopied.locate(GOAL)  # the latest query could not be embedded for this canopy: no goal
    assert canopied.move("catalog/_index", rel="children") == expected[1]


def test_look_with_fields_but_no_list_says_nothing_of_a_frontier(canopied):
    canopied.locate(GOAL)
    assert canopied.look("people/ana-ribeiro", fields=["summary"]) == {
        "id": "people/ana-ribeiro", "summary": "Sales lead for the Southeast region since 2024; owns the exchange policy."}


def test_a_hunt_joined_across_processes_keeps_its_goal(read_forest, embed_server, monkeypatch):
    """MONKEYLLM_SESSION joins one hunt across `vine` commands: the goal set by a
    locate in one Vine orders the next Vine's move, which embeds nothing."""
    monkeypatch.setenv("MONKEYLLM_SESSION", "hunt-across")
    first = Vine(read_forest, writable=False)
    first.embedder = embedder(embed_server)
    first.canopy_build()
    first.locate("Product 59 widget sold in boxes of 60")
    first.close()
    requests = len(embed_server.embedding_requests)
    with Vine(read_forest, writable=False) as later:  # no embedder: ranking needs stored vectors only
        moved = later.move("catalog/_index", rel="children")
        assert moved["frontier"] == {"ranked": True, "toward": "Product 59 widget sold in boxes of 60"}
        assert moved["neighbors"][0]["id"] == "catalog/item-59"
        later.close_session(False, [])
    assert len(embed_server.embedding_requests) == requests
    monkeypatch.delenv("MONKEYLLM_SESSION")
    with Vine(read_forest, writable=False) as fresh:
        assert "frontier" not in fresh.move("catalog/_index", rel="children")
    monkeypatch.setenv("MONKEYLLM_SESSION", "hunt-across")
    with Vine(read_forest, writable=False) as after_close:  # the closed hunt's goal went with it
        assert "frontier" not in after_close.move("catalog/_index", rel="children")
