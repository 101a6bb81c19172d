"""`vine troop` end to end: the real CLI in a subprocess, models on the scripted
OpenAI-compatible server of this process (real HTTP on 127.0.0.1)."""
from __future__ import annotations

import pytest

from monkeyllm_gardener.curator.testing_server import ScriptedOpenAIServer, error_body

from _scripted_troop import ENTRIES, QUESTION, TroopScript, answer_reply, calls

EXCHANGE = "sales/exchange-policy"
RETAIL = "Retail returns close 30 days after the invoice date."


def model_env(server) -> dict[str, str]:
    return {"MONKEYLLM_LLM_ENDPOINT": server.base_url, "MONKEYLLM_LLM_MODEL": "scripted-model",
            "MONKEYLLM_LLM_RETRIES": "0"}


def answering_script() -> TroopScript:
    return TroopScript({
        1: [calls(("look", {"id": ENTRIES[0]})), answer_reply("The ledger has no deadline.", [ENTRIES[0]])],
        2: [calls(("pick", {"id": EXCHANGE, "section": "Deadlines"})), answer_reply(RETAIL, [EXCHANGE])],
        3: [calls(("pick", {"id": EXCHANGE, "section": "Deadlines"})), answer_reply(RETAIL, [ENTRIES[2]])],
    }, judge=answer_reply(RETAIL, [EXCHANGE]))  # no node cited by two: with --stop quorum, every forager finishes


def test_json_is_the_whole_result_and_exit_0_when_answered(vine_cli, acme_forest):
    with ScriptedOpenAIServer(responder=answering_script()) as server:
        result = vine_cli("troop", QUESTION, "--forest", acme_forest, "--stop", "quorum", "--json",
                          env=model_env(server))
    assert result.returncode == 0, result.describe()
    out = result.json()
    assert list(out) == ["troop", "question", "answer", "answered", "evidence", "sources", "winner", "stop",
                         "frontier", "foragers", "judge", "heat", "totals"]
    assert out["answer"] == RETAIL and out["evidence"] == [EXCHANGE] and out["frontier"] == ENTRIES
    assert out["stop"]["policy"] == "quorum" and out["winner"] in (2, 3)
    assert [sorted(f) for f in out["foragers"]] == [sorted(["n", "entry", "session", "status", "answer", "evidence",
                                                            "turns", "trail", "usage", "model_ms", "forest_ms"])] * 3
    assert sorted(out["foragers"][0]["trail"][0]) == ["cached", "id", "ms", "n", "ok", "tool"]
    # the two identical picks: one ran on the forest, the other was a cache hit
    picks = [c for f in out["foragers"][1:] for c in f["trail"]]
    assert sorted(c["cached"] for c in picks) == [False, True] and out["totals"]["cache_hits"] == 1
    assert out["judge"]["ok"] is True and out["judge"]["model"] == "scripted-model"
    assert sorted(out["totals"]) == ["cache_hits", "completion_tokens", "forest_calls", "forest_ms", "model_calls",
                                     "prompt_tokens", "wall_ms"]
    assert out["totals"]["model_calls"] == 7  # two turns per forager, one judge
    assert result.stderr == ""


def test_the_text_report_reads_as_a_report(vine_cli, acme_forest):
    with ScriptedOpenAIServer(responder=answering_script()) as server:
        result = vine_cli("troop", QUESTION, "--forest", acme_forest, "--n", "2", "--stop", "quorum",
                          env=model_env(server))
    assert result.returncode == 0, result.describe()
    lines = result.stdout.splitlines()
    assert lines[0] == f"answer: {RETAIL}" and lines[1] == f"evidence: {EXCHANGE}"
    assert any(line.startswith(f"forager 1 from {ENTRIES[0]}: answered, 1 call(s), 2 model call(s)")
               for line in lines)
    assert f"  1. pick {EXCHANGE}" in lines and lines[-1].startswith("totals: 5 model call(s), ")
    assert any(line.startswith("judge: scripted-model, ") for line in lines)


def test_exit_1_when_the_troop_finds_no_answer(vine_cli, acme_forest):
    nothing = answer_reply("I could not find it.", [])
    script = TroopScript({1: [nothing], 2: [nothing], 3: [nothing]}, judge=answer_reply("The forest does not say.", []))
    with ScriptedOpenAIServer(responder=script) as server:
        result = vine_cli("troop", QUESTION, "--forest", acme_forest, "--json", env=model_env(server))
    assert result.returncode == 1, result.describe()
    out = result.json()
    assert out["answered"] is False and out["evidence"] == [] and out["winner"] is None and out["heat"] is None


def test_no_model_bound_is_one_line_naming_the_endpoint_variable(vine_cli, acme_forest):
    result = vine_cli("troop", QUESTION, "--forest", acme_forest)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "MONKEYLLM_LLM_ENDPOINT" in result.stderr


@pytest.mark.parametrize("extra, words", [
    (["--n", "0"], "error E_SCHEMA: troop: n must be a whole number between 1 and 10, not 0"),
    (["--hops", "40"], "error E_SCHEMA: troop: hops must be a whole number between 1 and 12, not 40"),
])
def test_a_bad_option_is_one_line_and_exit_2(vine_cli, acme_forest, extra, words):
    result = vine_cli("troop", QUESTION, "--forest", acme_forest, *extra)
    assert result.returncode == 2 and result.stderr.startswith(words) and result.stderr.count("\n") == 1


def test_every_model_dead_is_one_line_and_exit_2(vine_cli, acme_forest):
    dead = [(500, error_body("model crashed"))]
    with ScriptedOpenAIServer(responder=TroopScript({1: dead, 2: dead, 3: dead})) as server:
        result = vine_cli("troop", QUESTION, "--forest", acme_forest, "--json", env=model_env(server))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("error E_TIMEOUT: troop: the model failed for every forager (3): ")
    assert result.stderr.count("\n") == 1
