"""The Troop (concepts.md, The Troop): scripted chat models driving the read tools on
the read engine's test forest (real git, real SQLite, real HTTP on 127.0.0.1)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from monkeyllm_core import Vine, VineError
from monkeyllm_core.read.contract import wire
from monkeyllm_core.read.heat import HeatStore
from monkeyllm_core.read.ranger_settings import HeatSettings
from monkeyllm_gardener.curator.testing_server import ScriptedOpenAIServer, error_body
from monkeyllm_gardener.troop import troop

from _scripted_troop import ENTRIES, QUESTION, TroopScript, answer_reply, calls, run_troop, slow

EXCHANGE = "sales/exchange-policy"
RETAIL = "Retail returns close 30 days after the invoice date."


def traces(acme_forest: Path) -> dict[str, list[dict]]:
    """Every trace file of the forest: session id -> its records."""
    folder = acme_forest / "_derived" / "traces"
    return {path.stem: [json.loads(line) for line in path.read_text().splitlines()]
            for path in sorted(folder.glob("*.jsonl"))}


def read_calls(records: list[dict]) -> list[tuple[str, str | None]]:
    return [(r["call"], r["focus"]) for r in records if "call" in r]


def persistent_heat(acme_forest: Path, ids: list[str]) -> dict[str, float]:
    """Persistent heat as a later hunt reads it, from _derived/trails.db."""
    store = HeatStore(acme_forest, HeatSettings.load(acme_forest))
    try:
        warm = store.persistent(ids)
    finally:
        store.close()
    return {node: round(warm.get(node, 0.0), 4) for node in ids}


def hunt(acme_forest, script, **options):
    with ScriptedOpenAIServer(responder=script) as server:
        return run_troop(troop, server, acme_forest, **options)


# -- the frontier ---------------------------------------------------------------------------


def test_each_forager_starts_from_its_own_entry_point_of_one_locate(acme_forest):
    script = TroopScript(
        {n: [calls(("look", {"id": entry})), answer_reply(f"Forager {n} read {entry}.", [entry])]
         for n, entry in enumerate(ENTRIES, start=1)},
        judge=answer_reply(RETAIL, [EXCHANGE]))
    out = hunt(acme_forest, script, n=3, stop="quorum").to_dict()
    recorded = traces(acme_forest)
    with Vine(acme_forest, writable=False) as vine:
        assert out["frontier"] == [r["id"] for r in vine.locate(QUESTION, k=3)["results"]] == ENTRIES
    assert [(f["n"], f["entry"]) for f in out["foragers"]] == list(enumerate(ENTRIES, start=1))
    for n, entry in enumerate(ENTRIES, start=1):
        first = script.first_message(n)
        assert first.startswith(f"Question: {QUESTION}") and f"You are forager {n} of 3" in first
        assert f"Yours is {entry} (banana" in first
        assert all(f"Yours is {other} " not in first for other in ENTRIES if other != entry)
    # each forager walked from its entry, in its own session with its own trace
    sessions = [f["session"] for f in out["foragers"]]
    assert len(set(sessions)) == 3
    for forager, entry in zip(out["foragers"], ENTRIES):
        assert read_calls(recorded[forager["session"]]) == [("look", entry)]
    assert [f["status"] for f in out["foragers"]] == ["answered"] * 3
    # the frontier's one locate is the troop's own call, in its own trace
    (frontier,) = [records for session, records in recorded.items() if session not in sessions]
    assert read_calls(frontier) == [("locate", None)] and frontier[0]["args"]["k"] == 3
    assert frontier[-1]["outcome"] == {"success": False, "answer_nodes": []}  # closed with the hunt


def test_with_fewer_entry_points_than_foragers_fewer_foragers_hunt(acme_forest):
    script = TroopScript({1: [answer_reply("I found nothing about it.", [])]}, judge=answer_reply("No answer.", []))
    with Vine(acme_forest, writable=False) as vine:  # a Vine stands for its forest
        result = hunt(vine, script, question="zzqx wholly unknown words", n=3, stop="first")
    out = result.to_dict()
    assert out["frontier"] == [] and len(out["foragers"]) == 1 and out["foragers"][0]["entry"] is None
    assert "locate found no entry point" in script.first_message(1)
    assert out["answered"] is False and out["winner"] is None and out["heat"] is None
    assert out["stop"] == {"policy": "first", "reason": "every forager finished"}  # no evidence: not confident


# -- the visited cache and the shared heat scope ------------------------------------------------


def test_an_identical_call_is_served_from_the_cache_with_no_trace_and_no_forest_call(acme_forest):
    pick = ("pick", {"id": EXCHANGE})
    script = TroopScript({
        # forager 2 picks its entry at once; forager 1 looks at the sales branch first, then the same pick
        2: [calls(pick), answer_reply(RETAIL, [EXCHANGE])],
        1: [calls(("look", {"id": "sales/_index"})), calls(("pick", {"id": EXCHANGE, "section": None}), delay=0.8),
            answer_reply(RETAIL, [EXCHANGE, "sales/_index"])],
    }, judge=answer_reply(RETAIL, [EXCHANGE, "sales/_index"]))
    result = hunt(acme_forest, script, n=2, stop="quorum")
    out = result.to_dict()
    one, two = out["foragers"]
    assert [(c["tool"], c["id"], c["ok"], c["cached"]) for c in one["trail"]] == [
        ("look", "sales/_index", True, False), ("pick", EXCHANGE, True, True)]
    assert [(c["tool"], c["id"], c["ok"], c["cached"]) for c in two["trail"]] == [("pick", EXCHANGE, True, False)]
    # the second pick (its omitted section is the same call) is in no trace: the forest ran it once
    recorded = traces(acme_forest)
    assert read_calls(recorded[one["session"]]) == [("look", "sales/_index")]
    assert read_calls(recorded[two["session"]]) == [("pick", EXCHANGE)]
    assert sum(read_calls(records).count(("pick", EXCHANGE)) for records in recorded.values()) == 1
    assert out["totals"]["cache_hits"] == 1 and out["totals"]["forest_calls"] == 3  # frontier, look, one pick
    # the cache hit cost it nothing: its forest time is its one forest call's (rounded to 0.1 ms as forest_ms is)
    assert one["forest_ms"] == round(one["trail"][0]["ms"], 1)
    # the cached forager was handed exactly what the forest answered the other
    first, served = result.foragers[1].hunt.read[0]["out"], result.foragers[0].hunt.read[1]["out"]
    assert served == first and "Retail returns close 30 days" in served["body"]
    tool_messages = [m for m in script.requests[1][-1]["messages"] if m["role"] == "tool"]
    assert tool_messages[-1]["content"] == wire(first)
    # forager 1 won (its harvest holds both cited ids): its close counts the cached pick on its trail
    assert out["winner"] == 1 and out["heat"]["session"] == one["session"]
    assert out["heat"]["metrics"]["calls"] == 2 and out["heat"]["metrics"]["hops_to_banana"] == 2


def test_what_one_forager_picks_warms_the_others_rankings_for_the_hunt_only(acme_forest):
    script = TroopScript({
        1: [calls(("pick", {"id": "sales/price-list"})), answer_reply("Prices are per product.", ["sales/price-list"])],
        2: [calls(("locate", {"query": "price list discounts", "k": 3}), delay=0.8),
            answer_reply("See the price list.", ["sales/price-list"])],
    }, judge=answer_reply("Prices are per product, with volume discounts.", ["sales/price-list"]))
    result = hunt(acme_forest, script, n=2, stop="quorum")
    located = {r["id"]: r["heat"] for r in result.foragers[1].hunt.read[0]["out"]["results"]}
    assert located["sales/price-list"] == pytest.approx(0.1)  # forager 1's pick, in forager 2's locate
    with Vine(acme_forest, writable=False) as later:
        fresh = later.locate("price list discounts", k=3)["results"]
    # after the hunt only the winner's trail is warm, as persistent heat
    assert {r["id"]: r["heat"] for r in fresh}["sales/price-list"] == pytest.approx(0.1)
    assert result.to_dict()["winner"] == 1


def test_only_the_winners_trail_becomes_persistent_heat(acme_forest):
    question = "who owns the exchange policy?"
    owner = "people/ana-ribeiro"
    detour = ["sales/price-list", "catalog/item-40"]
    script = TroopScript({
        1: [calls(("look", {"id": owner})), calls(("pick", {"id": owner})),
            answer_reply("Ana Ribeiro owns the exchange policy.", [owner])],
        2: [calls(("pick", {"id": detour[0]})), calls(("look", {"id": detour[1]})),
            answer_reply("I could not tell who owns it.", [])],
    }, judge=answer_reply("Ana Ribeiro, the Southeast sales lead, owns it.", [owner]))
    out = hunt(acme_forest, script, question=question, n=2, stop="quorum").to_dict()
    assert out["frontier"] == [owner, EXCHANGE] and out["winner"] == 1
    assert [f["status"] for f in out["foragers"]] == ["answered", "answered"]
    assert out["heat"]["outcome"] == {"success": True, "answer_nodes": [owner]}
    assert persistent_heat(acme_forest, [owner, *detour, EXCHANGE]) == {owner: 0.1, detour[0]: 0.0, detour[1]: 0.0,
                                                                    EXCHANGE: 0.0}
    with Vine(acme_forest, writable=False) as later:  # a later hunt ranks with the winner's trail alone
        assert later.read_session().heat_of([owner, detour[0]]) == {owner: pytest.approx(0.1), detour[0]: 0.0}
    # the loser's pick warmed the scope while the hunt ran; its session heat evaporated with the troop
    with HeatStore(acme_forest, HeatSettings.load(acme_forest))._connection() as db:
        assert db.execute("SELECT COUNT(*) FROM session_heat").fetchone() == (0,)
    losing = traces(acme_forest)[out["foragers"][1]["session"]]
    assert losing[-1]["outcome"] == {"success": False, "answer_nodes": []}


# -- the stop discipline ------------------------------------------------------------------------

SLOW = 6.0  # a forager this slow is still thinking when the hunt stops


def test_stop_first_ends_at_the_first_answer_citing_evidence_and_cancels_the_rest(acme_forest):
    script = TroopScript({
        1: [answer_reply("Probably 30 days.", [])],  # an answer without evidence does not stop the troop
        2: [calls(("pick", {"id": EXCHANGE, "section": "Deadlines"}), delay=0.3), answer_reply(RETAIL, [EXCHANGE])],
        3: [slow(calls(("look", {"id": ENTRIES[2]})), SLOW)],
    }, judge=answer_reply(RETAIL, [EXCHANGE]))
    out = hunt(acme_forest, script, n=3, stop="first").to_dict()
    assert out["stop"] == {"policy": "first", "reason": "forager 2 answered with evidence"}
    assert [f["status"] for f in out["foragers"]] == ["answered", "answered", "cancelled"]
    assert out["foragers"][2]["trail"] == [] and out["winner"] == 2 and out["answer"] == RETAIL
    judged = script.requests["judge"]
    assert len(judged) == 1 and '"forager":3,"answer":null,"status":"cancelled"' in judged[0]["messages"][1]["content"]


def test_stop_quorum_waits_for_a_majority_citing_one_node(acme_forest):
    script = TroopScript({
        2: [answer_reply(RETAIL, [EXCHANGE])],  # the first answer alone is no quorum
        1: [calls(("pick", {"id": EXCHANGE, "section": "Deadlines"})),
            slow(answer_reply(RETAIL, [EXCHANGE]), 0.8)],
        3: [slow(calls(("look", {"id": ENTRIES[2]})), SLOW)],
    }, judge=answer_reply(RETAIL, [EXCHANGE]))
    out = hunt(acme_forest, script, n=3, stop="quorum").to_dict()
    assert out["stop"] == {"policy": "quorum", "reason": f"foragers 2, 1 of 3 agree on {EXCHANGE}"}
    assert [f["status"] for f in out["foragers"]] == ["answered", "answered", "cancelled"]
    assert out["answered"] is True and out["evidence"] == [EXCHANGE]


def test_stop_patience_ends_after_two_harvests_that_add_no_new_node(acme_forest):
    pick = calls(("pick", {"id": EXCHANGE}))
    script = TroopScript({
        1: [pick, slow(answer_reply(RETAIL, [EXCHANGE]), SLOW)],       # new
        2: [slow(pick, 0.6), slow(answer_reply(RETAIL, [EXCHANGE]), SLOW)],  # the same node again
        3: [slow(pick, 1.2), slow(answer_reply(RETAIL, [EXCHANGE]), SLOW)],  # and again: stop
    }, judge=answer_reply(RETAIL, [EXCHANGE]))
    out = hunt(acme_forest, script, n=3, stop="patience").to_dict()
    assert out["stop"] == {"policy": "patience", "reason": "2 harvests in a row added no new node"}
    assert [f["status"] for f in out["foragers"]] == ["cancelled"] * 3
    assert [[c["cached"] for c in f["trail"]] for f in out["foragers"]] == [[False], [True], [True]]
    # nobody answered: the judge wrote the answer from what they read, the body sent once
    assert out["answer"] == RETAIL and out["answered"] is True and out["winner"] == 1
    sent = script.requests["judge"][0]["messages"][1]["content"]
    assert "What they read (1 read(s)):" in sent and sent.count("Retail returns close 30 days") == 1


def test_patience_counts_barren_harvests_in_a_row_only():
    from monkeyllm_gardener.troop.stop import stop_policy
    policy = stop_policy("patience", 3)
    for nodes in (["a"], ["a"], ["b"], ["a", "b"]):  # new, barren, new (the count starts again), barren
        policy.harvested(nodes)
        assert not policy.stopped.is_set()
    policy.harvested(["b"])
    assert policy.stopped.is_set() and policy.reason == "2 harvests in a row added no new node"


# -- the judge ------------------------------------------------------------------------------------


def test_the_judge_merges_complementary_answers_from_what_the_foragers_read(acme_forest):
    merged = "Retail returns close 30 days after the invoice date; online returns 14 days after delivery."
    script = TroopScript({
        1: [calls(("pick", {"id": EXCHANGE, "section": "Deadlines"}), prompt_tokens=400, completion_tokens=10),
            answer_reply(RETAIL, [EXCHANGE], prompt_tokens=900, completion_tokens=20)],
        2: [calls(("pick", {"id": EXCHANGE, "section": "Online"}), prompt_tokens=400, completion_tokens=10),
            answer_reply("Online returns close 14 days after delivery.", [EXCHANGE], prompt_tokens=800,
                         completion_tokens=15)],
    }, judge=answer_reply(merged, [EXCHANGE, "sales/invented", "people/ana-ribeiro"], prompt_tokens=1500,
                          completion_tokens=40))
    out = hunt(acme_forest, script, n=2, stop="quorum").to_dict()
    assert out["answer"] == merged and out["answered"] is True
    # only ids a forager was shown: an invented id and a real node nobody saw are both dropped
    assert out["evidence"] == [EXCHANGE]
    assert out["sources"] == [{"id": EXCHANGE, "title": "Exchange policy", "type": "note",
                               "summary": "Return and exchange windows per channel, with invoice rules."}]
    (request,) = script.requests["judge"]
    assert "tools" not in request and request["messages"][0]["content"].startswith("You are the judge")
    sent = request["messages"][1]["content"]
    assert sent.startswith(f"Question: {QUESTION}")
    for text in (RETAIL, "Online returns close 14 days after delivery.", "Retail returns close 30 days",
                 "Online returns close 14 days"):
        assert text in sent
    judge = out["judge"]
    assert judge["ok"] is True and judge["model"] == "scripted-model" and judge["ms"] > 0
    assert judge["usage"] == {"prompt": 1500, "completion": 40, "calls": 1} and judge["reads_sent"] == 2
    assert [f["usage"] for f in out["foragers"]] == [{"prompt": 1300, "completion": 30, "calls": 2},
                                                     {"prompt": 1200, "completion": 25, "calls": 2}]
    totals = out["totals"]
    assert (totals["model_calls"], totals["prompt_tokens"], totals["completion_tokens"]) == (5, 4000, 95)
    assert totals["wall_ms"] >= totals["forest_ms"] > 0


# -- failures -------------------------------------------------------------------------------------


def test_a_model_dying_mid_hunt_fails_that_forager_and_the_others_go_on(acme_forest):
    script = TroopScript({
        1: [calls(("look", {"id": ENTRIES[0]})), answer_reply("The ledger has no deadline.", [ENTRIES[0]])],
        2: [calls(("look", {"id": EXCHANGE})), (500, error_body("model crashed"))],
        3: [calls(("look", {"id": ENTRIES[2]})), answer_reply("2027 supersedes it.", [ENTRIES[2]])],
    }, judge=answer_reply(RETAIL, [EXCHANGE, ENTRIES[2]]))
    out = hunt(acme_forest, script, n=3, stop="quorum").to_dict()
    one, two, three = out["foragers"]
    assert (one["status"], two["status"], three["status"]) == ("answered", "failed", "answered")
    assert two["error"]["code"] == "E_TIMEOUT" and "HTTP 500" in two["error"]["message"]
    assert [(c["tool"], c["id"], c["ok"]) for c in two["trail"]] == [("look", EXCHANGE, True)]  # kept
    assert out["answered"] is True and out["answer"] == RETAIL
    assert out["winner"] == 3  # the dead forager's look still counts as seen, but forager 3 holds its answer


def test_every_model_dead_is_one_error(acme_forest):
    dead = [(500, error_body("model crashed"))]
    script = TroopScript({1: dead, 2: dead, 3: dead})
    with pytest.raises(VineError) as caught:
        hunt(acme_forest, script, n=3)
    error = caught.value
    assert error.code == "E_TIMEOUT" and error.message.startswith("troop: the model failed for every forager (3): ")
    assert "\n" not in error.one_line() and "judge" not in script.requests


@pytest.mark.parametrize("options, message", [
    ({"n": 0}, "troop: n must be a whole number between 1 and 10, not 0"),
    ({"hops": 13}, "troop: hops must be a whole number between 1 and 12, not 13"),
    ({"stop": "last"}, "troop: stop must be one of first, quorum, patience, not 'last'"),
    ({"question": "  "}, "troop: the question is empty"),
])
def test_a_bad_request_is_e_schema_before_any_model_is_asked(acme_forest, options, message):
    script = TroopScript({1: [answer_reply("x", [])]})
    with ScriptedOpenAIServer(responder=script) as server:
        with pytest.raises(VineError) as caught:
            run_troop(troop, server, acme_forest, **options)
        assert server.requests == []
    assert caught.value.code == "E_SCHEMA" and caught.value.message == message


def test_each_forager_has_its_hop_budget_then_a_deadline_turn(acme_forest):
    script = TroopScript({1: [calls(("look", {"id": ENTRIES[0]}), ("look", {"id": EXCHANGE})),
                              answer_reply(RETAIL, [ENTRIES[0]])]}, judge=answer_reply(RETAIL, [ENTRIES[0]]))
    out = hunt(acme_forest, script, n=1, hops=1).to_dict()
    (forager,) = out["foragers"]
    assert [(c["tool"], c["ok"]) for c in forager["trail"]] == [("look", True), ("look", False)]  # the 2nd not run
    assert "tools" not in script.requests[1][-1] and forager["turns"] == 2
    # an answer the deadline turn forced is an answer, but not a confident one: the troop ran to its end
    assert forager["status"] == "answered" and out["stop"]["reason"] == "every forager finished"


def test_the_hunt_keeps_answers_deadline(acme_forest):
    looks = [slow(calls(("look", {"id": node})), 1.2) for node in (ENTRIES[0], EXCHANGE)]
    script = TroopScript({1: [*looks, answer_reply(RETAIL, [EXCHANGE])]}, judge=answer_reply(RETAIL, [EXCHANGE]))
    # 4 s: the foragers have 3 of them, and no tool turn starts past 2 s
    out = hunt(acme_forest, script, n=1, deadline_seconds=4.0).to_dict()
    (forager,) = out["foragers"]
    assert len(forager["trail"]) == 2 and forager["turns"] == 3 and forager["status"] == "answered"
    assert "tools" not in script.requests[1][-1]  # the third turn was the deadline turn
    assert out["answered"] is True and out["judge"]["ok"] is True


def test_with_a_canopy_every_forager_ranks_toward_the_troops_question(acme_forest, embed_server, monkeypatch):
    """The Gauntlet in a Troop: the frontier locate's one embedding is every forager's
    goal, so a forager's first move is ordered toward the question without a locate
    of its own."""
    from endpoints import EMBED_MODEL, embedder

    with Vine(acme_forest) as vine:
        vine.embedder = embedder(embed_server)
        vine.canopy_build()
    monkeypatch.setenv("MONKEYLLM_EMBED_ENDPOINT", embed_server.base_url)
    monkeypatch.setenv("MONKEYLLM_EMBED_MODEL", EMBED_MODEL)
    script = TroopScript({n: [calls(("move", {"id": "sales/_index", "rel": "children"})),
                              answer_reply("Read the sales branch.", [EXCHANGE])] for n in (1, 2)},
                         judge=answer_reply(RETAIL, [EXCHANGE]))
    result = hunt(acme_forest, script, n=2, stop="quorum")
    embedded = [body["input"] for body in embed_server.embedding_requests if body["input"] == [QUESTION]]
    assert len(embedded) == 1  # the troop's locate: one embedding for the whole hunt
    for forager in result.foragers:
        (moved,) = [read["out"] for read in forager.hunt.read if read["tool"] == "move"]
        assert moved["frontier"] == {"ranked": True, "toward": QUESTION}
