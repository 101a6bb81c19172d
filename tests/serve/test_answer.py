"""`answer`: harvest plus the forest's model, against the scripted OpenAI-compatible
server (real HTTP on 127.0.0.1) and the test forest (real git, real SQLite)."""
from __future__ import annotations

import asyncio
import json
import subprocess
import time

import pytest
from endpoints import dead_endpoint

from monkeyllm_core import Vine, VineError
from monkeyllm_core.read.contract import wire
from monkeyllm_gardener.curator.settings import CuratorSettings
from monkeyllm_gardener.curator.testing_server import (
    ScriptedOpenAIServer,
    ScriptedReply,
    chat_completion,
    error_body,
    message_text,
    tool_calls_completion,
)
from monkeyllm_gardener.kit.model import ModelClient, ModelConfigError
from monkeyllm_gardener.navigator import DEADLINE_TURN, HOP_TOOLS
from monkeyllm_gardener.serve.answer import answer, answer_call
from monkeyllm_gardener.serve.answer_cache import AnswerCache
from monkeyllm_gardener.serve.answer_model import AnswerModel, Prices, model_for_answer
from monkeyllm_gardener.serve.forests import Forests
from monkeyllm_gardener.serve.tools import TOOLS

EXCHANGE_QUESTION = "what is the deadline to exchange a retail order?"
EXCHANGE_ANSWER = "Retail returns close 30 days after the invoice date."
EXCHANGE_SUMMARY = "Return and exchange windows per channel, with invoice rules."


def reply(answer_text: str, evidence: list[str], **meter) -> dict:
    return chat_completion(json.dumps({"answer": answer_text, "evidence": evidence}), **meter)


def ask(service, server_or_url, args, **model_options) -> dict:
    """One ``answer`` call with a model bound to the scripted server (or a URL)."""
    model = model_of(server_or_url, **model_options)
    try:
        return answer(service, args, model=model)
    finally:
        model.close()


def model_of(server_or_url, *, model: str = "scripted-model", prices: Prices | None = None,
             deadline_seconds: float = 30.0, **settings) -> AnswerModel:
    endpoint = server_or_url if isinstance(server_or_url, str) else server_or_url.base_url
    values = dict(endpoint=endpoint, model=model, timeout_seconds=10.0, retries=1, backoff_seconds=0.01,
                  backoff_cap_seconds=0.05)
    values.update(settings)
    return AnswerModel(ModelClient(CuratorSettings(**values)), prices=prices, deadline_seconds=deadline_seconds)


@pytest.fixture
def service(served_forest):
    forests = Forests(forest=served_forest)
    yield forests.service("acme")
    forests.close()


def error_of(call) -> dict:
    with pytest.raises(VineError) as caught:
        call()
    return caught.value.envelope()["error"]


def head(root) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                          check=True).stdout.strip()


# -- the sweep --------------------------------------------------------------------------------


def test_the_sweep_answers_in_the_seeds_shape_from_what_the_model_was_sent(service):
    scripted = reply(EXCHANGE_ANSWER, ["sales/exchange-policy"], prompt_tokens=2914, completion_tokens=118)
    with ScriptedOpenAIServer(default_reply=scripted, models=["qwen3:14b"]) as server:
        # model "local": the first of /models, as the Curator does
        out = ask(service, server, {"question": EXCHANGE_QUESTION}, model="local")
        sent = server.requests
    assert list(out) == ["answer", "model", "model_ms", "usage", "evidence", "sources", "harvest", "cached",
                         "trace", "cost"]
    assert out["answer"] == EXCHANGE_ANSWER and out["model"] == "scripted-model"  # the provider's word
    assert out["usage"] == {"prompt": 2914, "completion": 118, "calls": 1}
    assert out["evidence"] == ["sales/exchange-policy"]
    assert out["sources"] == [{"id": "sales/exchange-policy", "title": "Exchange policy",
                               "summary": EXCHANGE_SUMMARY, "type": "note"}]
    assert out["harvest"]["query"] == EXCHANGE_QUESTION and len(out["harvest"]["results"]) == 3  # k=3
    assert out["cached"] is False
    assert out["cost"] == {"prompt_tokens": 2914, "completion_tokens": 118, "calls": 1, "priced": False}
    steps = out["trace"]["steps"]
    assert [s["step"] for s in steps] == ["harvest", "model"]
    assert steps[0]["tokens"] == -(-len(wire(out["harvest"])) // 4) and steps[1]["tokens"] == 118
    assert out["trace"]["retrieval_ms"] == round(steps[0]["ms"], 1) and out["model_ms"] == steps[1]["ms"]
    assert out["trace"]["total_ms"] >= out["model_ms"] + out["trace"]["retrieval_ms"] - 0.2
    # one model request, carrying the question and the very bundle the response returns
    assert len(sent) == 1 and sent[0]["model"] == "qwen3:14b" and sent[0]["max_tokens"] == 300
    assert "tools" not in sent[0]
    text = message_text(sent[0])
    assert EXCHANGE_QUESTION in text and wire(out["harvest"]) in text


def test_evidence_keeps_only_ids_of_the_bundle(service):
    cited = ["contracts/nonexistent", "sales/exchange-policy", "people/ana-ribeiro", "sales/exchange-policy"]
    with ScriptedOpenAIServer(default_reply=reply(EXCHANGE_ANSWER, cited)) as server:
        out = ask(service, server, {"question": EXCHANGE_QUESTION, "k": 2})
    bundle_ids = [r["id"] for r in out["harvest"]["results"]]
    assert "people/ana-ribeiro" not in bundle_ids  # a real node, but not one the model was shown
    assert out["evidence"] == ["sales/exchange-policy"]
    assert [s["id"] for s in out["sources"]] == ["sales/exchange-policy"]


def test_a_prose_reply_is_the_answer_and_cites_the_bundle_ids_it_names(service):
    prose = "Per sales/exchange-policy (and sales/made-up), retail returns close after 30 days."
    with ScriptedOpenAIServer(default_reply=chat_completion(prose)) as server:
        out = ask(service, server, {"question": EXCHANGE_QUESTION})
    assert out["answer"] == prose and out["evidence"] == ["sales/exchange-policy"]


def test_reply_tokens_is_the_models_max_tokens_and_known_rates_price_the_answer(service):
    scripted = reply(EXCHANGE_ANSWER, ["sales/exchange-policy"], prompt_tokens=2000, completion_tokens=100)
    with ScriptedOpenAIServer(default_reply=scripted) as server:
        out = ask(service, server, {"question": EXCHANGE_QUESTION, "reply_tokens": 64},
                  prices=Prices(prompt=0.5, completion=1.5))
        assert server.requests[0]["max_tokens"] == 64
    assert out["cost"] == {"prompt_tokens": 2000, "completion_tokens": 100, "calls": 1, "priced": True,
                           "usd": 0.00115, "usd_per_million": {"prompt": 0.5, "completion": 1.5}}


@pytest.mark.parametrize("args, message", [
    ({"question": "x", "reply_tokens": 100000}, "answer: reply_tokens must be between 16 and 4000, not 100000"),
    ({"question": "x", "hops": 0}, "answer: hops must be between 1 and 12, not 0"),
    ({"question": "x", "k": 11}, "answer: k must be between 1 and 10, not 11"),
    ({"question": "  "}, "answer: question is empty"),
    ({"question": "x", "forest_id": "acme"}, "answer: unknown argument 'forest_id'"),
    ({"k": 3}, "answer: missing argument 'question'"),
])
def test_a_wrong_argument_is_e_schema_before_the_model_is_asked(service, args, message):
    with ScriptedOpenAIServer(default_reply=reply("x", [])) as server:
        error = error_of(lambda: ask(service, server, args))
        assert server.requests == []
    assert error["code"] == "E_SCHEMA" and error["message"] == message


def test_the_answer_tool_is_declared_for_the_transports_to_show():
    tool = TOOLS["answer"]
    assert tool.run is None and not tool.writes and tool.required == ("question",)
    assert list(tool.properties) == ["question", "k", "cache", "reply_tokens", "hops"]
    assert "harvest" in tool.description and "query" in tool.description and "plant" in tool.description


# -- the cache --------------------------------------------------------------------------------


def test_a_repeated_question_is_answered_from_the_cache_until_the_next_commit(service, served_forest):
    with ScriptedOpenAIServer(default_reply=reply(EXCHANGE_ANSWER, ["sales/exchange-policy"],
                                                  prompt_tokens=900, completion_tokens=40)) as server:
        model = model_of(server, prices=Prices(prompt=1.0, completion=2.0))
        try:
            first = answer(service, {"question": EXCHANGE_QUESTION, "cache": True}, model=model)
            again = answer(service, {"question": "  What is the deadline to EXCHANGE a retail order? ",
                                     "cache": True}, model=model)
            assert len(server.requests) == 1  # the repeat asked no model
            other_k = answer(service, {"question": EXCHANGE_QUESTION, "cache": True, "k": 2}, model=model)
            uncached = answer(service, {"question": EXCHANGE_QUESTION}, model=model)
            assert len(server.requests) == 3  # another k is another question; cache=false never reads it
            with Vine(served_forest) as writer:
                writer.graft("sales/exchange-policy", {"append_section": {"header": "Note", "body": "Kept."}})
            after_commit = answer(service, {"question": EXCHANGE_QUESTION, "cache": True}, model=model)
            assert len(server.requests) == 4  # a new commit is a miss
        finally:
            model.close()
    assert first["cached"] is False and other_k["cached"] is False and uncached["cached"] is False
    assert again["cached"] is True and after_commit["cached"] is False
    for field in ("answer", "model", "evidence", "sources", "harvest"):
        assert again[field] == first[field]
    assert again["usage"] == {"prompt": 0, "completion": 0, "calls": 0} and again["model_ms"] == 0.0
    assert again["cost"] == {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0, "priced": True, "usd": 0.0,
                             "usd_per_million": {"prompt": 1.0, "completion": 2.0}}
    assert again["cached_from"]["usage"] == first["usage"] and again["cached_from"]["model_ms"] == first["model_ms"]
    assert [s["step"] for s in again["trace"]["steps"]] == ["cache"]
    cache_file = served_forest / "_derived" / "answer-cache.db"
    assert cache_file.is_file()
    status = subprocess.run(["git", "status", "--porcelain", "--ignored=no"], cwd=served_forest,
                            capture_output=True, text=True, check=True).stdout
    assert "answer-cache" not in status  # derived: never a change git would commit


# -- hops -------------------------------------------------------------------------------------

ORDERS_SQL = "SELECT region, COUNT(*) AS n FROM orders GROUP BY region ORDER BY n DESC, region"


def test_hops_the_model_looks_then_queries_then_answers(service):
    script = [
        tool_calls_completion(("look", {"id": "sales/orders-2026"}), prompt_tokens=500, completion_tokens=20),
        tool_calls_completion(("query", {"id": "sales/orders-2026", "sql": ORDERS_SQL}), prompt_tokens=900,
                              completion_tokens=30),
        reply("Southeast closed the most orders in 2026 (2 of 4).", ["sales/orders-2026", "sales/invented"],
              prompt_tokens=1200, completion_tokens=25),
    ]
    with ScriptedOpenAIServer(replies=script) as server:
        out = ask(service, server, {"question": "which region closed the most orders in 2026?", "hops": 6})
        sent = server.requests
    assert out["answer"] == "Southeast closed the most orders in 2026 (2 of 4)."
    assert out["turns"] == 3 and out["exhausted"] is False and out["deadline_turn"] is False
    assert out["usage"] == {"prompt": 2600, "completion": 75, "calls": 3}
    assert out["evidence"] == ["sales/orders-2026"]
    assert out["sources"] == [{"id": "sales/orders-2026", "title": "Orders 2026", "type": "dataset",
                               "summary": "Every closed order of 2026, one row per order, with region and value."}]
    look, query = out["hops"]
    assert (look["n"], look["tool"], look["id"], look["args"], look["ok"], look["out"]) == \
        (1, "look", "sales/orders-2026", {}, True, "dataset digest")
    assert (query["n"], query["tool"], query["id"], query["args"], query["ok"], query["out"]) == \
        (2, "query", "sales/orders-2026", {"sql": ORDERS_SQL}, True, "3 row(s)")
    assert look["model_ms"] > 0 and query["ms"] > 0
    assert out["read"][1]["out"]["rows"][0] == ["Southeast", 2]
    assert out["read"][0]["out"]["query_manual"]["tables"]["orders"][2] == "region"
    assert [s["step"] for s in out["trace"]["steps"]] == ["model", "look", "model", "query", "model"]
    assert out["model_ms"] == pytest.approx(sum(s["ms"] for s in out["trace"]["steps"] if s["step"] == "model"),
                                            abs=0.5)
    # the model held the seven reads, and heard back exactly what each read returned
    assert all(sorted(t["function"]["name"] for t in body["tools"]) == sorted(HOP_TOOLS) for body in sent)
    assert "which region closed the most orders in 2026?" in message_text(sent[0])
    tool_messages = [m for m in sent[2]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == [wire(out["read"][0]["out"]), wire(out["read"][1]["out"])]


def test_a_model_calling_a_write_is_refused_and_nothing_is_written(service, served_forest):
    before = head(served_forest)
    script = [
        tool_calls_completion(("plant", {"node": {"id": "sales/hijack", "type": "note", "title": "Hijack",
                                                  "summary": "Planted by a model."}}),
                              ("graft", {"id": "sales/exchange-policy", "patch": {"body": "Gone."}}),
                              ("tend", {"id": "sales/orders-2026", "sql": "DELETE FROM orders"})),
        reply("I only read, so nothing was changed.", []),
    ]
    with ScriptedOpenAIServer(replies=script) as server:
        out = ask(service, server, {"question": "plant a node called hijack", "hops": 4})
        sent = server.requests
    assert [(h["tool"], h["ok"]) for h in out["hops"]] == [("plant", False), ("graft", False), ("tend", False)]
    assert all(h["out"].startswith("E_READONLY: answer only reads") for h in out["hops"])
    assert all(json.loads(m["content"])["error"]["code"] == "E_READONLY"
               for m in sent[1]["messages"] if m["role"] == "tool")
    assert head(served_forest) == before
    assert not (served_forest / "sales" / "hijack.md").exists()
    assert "Retail returns close 30 days" in (served_forest / "sales" / "exchange-policy.md").read_text()
    assert service.call("query", {"id": "sales/orders-2026", "sql": "SELECT COUNT(*) FROM orders"})["rows"] == [[4]]


def test_a_tool_error_goes_back_to_the_model_which_may_correct_itself(service):
    script = [
        tool_calls_completion(("query", {"id": "sales/orders-2026", "sql": "SELECT total_value FROM orders"}),
                              ("look", "{not json")),
        tool_calls_completion(("query", {"id": "sales/orders-2026", "sql": "SELECT COUNT(*) FROM orders"})),
        reply("There are 4 orders.", ["sales/orders-2026"]),
    ]
    with ScriptedOpenAIServer(replies=script) as server:
        out = ask(service, server, {"question": "how many orders?", "hops": 5})
        sent = server.requests
    assert [(h["tool"], h["ok"]) for h in out["hops"]] == [("query", False), ("look", False), ("query", True)]
    errors = [json.loads(m["content"])["error"] for m in sent[1]["messages"] if m["role"] == "tool"]
    assert [e["code"] for e in errors] == ["E_QUERY_INVALID", "E_SCHEMA"]
    assert "total_invoice" in errors[0]["hint"]  # the real columns: enough to correct itself
    assert out["answer"] == "There are 4 orders." and out["evidence"] == ["sales/orders-2026"]


def test_a_model_that_never_stops_calling_tools_is_exhausted_with_an_empty_answer(service):
    forever = tool_calls_completion(("locate", {"query": "orders"}), ("sniff", {"terms": ["Southeast"]}),
                                    content="Southeast, probably.")
    with ScriptedOpenAIServer(default_reply=forever) as server:
        out = ask(service, server, {"question": "which region closed the most orders?", "hops": 3})
        sent = server.requests
    assert out["exhausted"] is True and out["answer"] == "" and out["evidence"] == [] and out["sources"] == []
    assert out["deadline_turn"] is True
    # two tool turns spend the three hops (the fourth call is not run), then one deadline turn
    assert len(sent) == 3 and out["turns"] == 3 and out["usage"]["calls"] == 3
    assert [(h["tool"], h["ok"]) for h in out["hops"]] == [("locate", True), ("sniff", True), ("locate", True),
                                                           ("sniff", False)]
    assert out["hops"][3]["out"].startswith("E_UNSUPPORTED: sniff was not run")
    assert "tools" not in sent[-1]  # the deadline turn takes the tools away
    assert sent[-1]["messages"][-1] == {"role": "user", "content": DEADLINE_TURN}


def test_the_deadline_turn_forces_an_answer_from_what_was_read(service):
    script = [tool_calls_completion(("pick", {"id": "sales/exchange-policy", "section": "Deadlines"})),
              tool_calls_completion(("pick", {"id": "sales/exchange-policy"})),
              reply(EXCHANGE_ANSWER, ["sales/exchange-policy"])]
    with ScriptedOpenAIServer(replies=script) as server:
        out = ask(service, server, {"question": EXCHANGE_QUESTION, "hops": 2})
        assert "tools" not in server.requests[-1]
    assert out["answer"] == EXCHANGE_ANSWER and out["exhausted"] is False and out["deadline_turn"] is True
    assert [h["out"] for h in out["hops"]] == ["section 'Deadlines'", "body"]
    assert out["evidence"] == ["sales/exchange-policy"] and out["sources"][0]["title"] == "Exchange policy"


def test_past_two_thirds_of_the_deadline_no_new_tool_turn_starts(service):
    slow_look = ScriptedReply(body=tool_calls_completion(("look", {"id": "sales/orders-2026"})), delay=2.1)
    with ScriptedOpenAIServer(replies=[slow_look, slow_look, reply("Four orders.", ["sales/orders-2026"])]) as server:
        out = ask(service, server, {"question": "how many orders?", "hops": 12}, deadline_seconds=6.0)
        sent = server.requests
    # two slow turns take 4.2 s, past 4 s of the 6: the third request is the deadline turn
    assert len(sent) == 3 and "tools" not in sent[2] and len(out["hops"]) == 2
    assert out["deadline_turn"] is True and out["answer"] == "Four orders." and out["exhausted"] is False


# -- a dead model -----------------------------------------------------------------------------


def test_a_dead_model_answers_e_timeout_at_once(service):
    started = time.monotonic()
    error = error_of(lambda: ask(service, dead_endpoint(), {"question": EXCHANGE_QUESTION},
                                 retries=2))
    assert time.monotonic() - started < 15  # refused at once, three times: never a hang
    assert error["code"] == "E_TIMEOUT"
    assert "could not connect" in error["message"] and "(3 attempt(s))" in error["message"]
    assert "call harvest" in error["hint"]


def test_a_model_answering_500_is_retried_then_e_timeout(service):
    with ScriptedOpenAIServer(default_reply=(500, error_body("model crashed"))) as server:
        error = error_of(lambda: ask(service, server, {"question": EXCHANGE_QUESTION, "hops": 3}, retries=2))
        assert len(server.requests) == 3
    assert error["code"] == "E_TIMEOUT" and "HTTP 500 (3 attempt(s))" in error["message"]


def test_a_model_refusing_the_request_is_e_unsupported_without_retries(service):
    with ScriptedOpenAIServer(default_reply=(401, error_body("bad key", kind="invalid_api_key"))) as server:
        error = error_of(lambda: ask(service, server, {"question": EXCHANGE_QUESTION}, retries=3))
        assert len(server.requests) == 1
    assert error["code"] == "E_UNSUPPORTED" and "HTTP 401" in error["message"] and "MONKEYLLM_LLM_" in error["hint"]


def test_a_model_slower_than_the_deadline_is_e_timeout_within_it(service):
    slow = ScriptedReply(body=reply(EXCHANGE_ANSWER, []), delay=20.0)
    with ScriptedOpenAIServer(default_reply=slow) as server:
        started = time.monotonic()
        error = error_of(lambda: ask(service, server, {"question": EXCHANGE_QUESTION}, timeout_seconds=60.0,
                                     retries=3, deadline_seconds=1.0))
        elapsed = time.monotonic() - started
    assert error["code"] == "E_TIMEOUT" and "timed out" in error["message"]
    assert elapsed < 8  # the 1 s deadline, not 4 x 60 s of per-request timeouts


def test_the_forest_keeps_answering_while_the_model_thinks(service):
    slow = ScriptedReply(body=reply(EXCHANGE_ANSWER, ["sales/exchange-policy"]), delay=2.0)

    async def scenario(server, model):
        pending = asyncio.create_task(answer_call(service, {"question": EXCHANGE_QUESTION}, "agent-a", model))
        while not server.requests:  # the harvest is done and the model is thinking
            assert not pending.done()
            await asyncio.sleep(0.01)
        looked = await service.acall("look", {"id": "sales/price-list"}, "agent-b")
        thinking = not pending.done()
        return looked, thinking, await pending

    with ScriptedOpenAIServer(default_reply=slow) as server:
        model = model_of(server)
        try:
            looked, thinking, out = asyncio.run(scenario(server, model))
        finally:
            model.close()
    assert looked["id"] == "sales/price-list" and thinking
    assert out["answer"] == EXCHANGE_ANSWER


# -- the binding ------------------------------------------------------------------------------


def test_answer_is_bound_through_the_curators_settings_plus_its_rates():
    assert model_for_answer({}) is None
    model = model_for_answer({"MONKEYLLM_LLM_ENDPOINT": "http://127.0.0.1:9/v1", "MONKEYLLM_LLM_MODEL": "qwen3:14b",
                              "MONKEYLLM_LLM_TIMEOUT": "7", "MONKEYLLM_LLM_PRICE_PROMPT": "0.15",
                              "MONKEYLLM_LLM_PRICE_COMPLETION": "0.6", "MONKEYLLM_ANSWER_DEADLINE": "45"})
    try:
        assert (model.client.settings.model, model.client.settings.timeout_seconds) == ("qwen3:14b", 7.0)
        assert model.prices == Prices(prompt=0.15, completion=0.6) and model.deadline_seconds == 45.0
    finally:
        model.close()


@pytest.mark.parametrize("extra, message", [
    ({"MONKEYLLM_LLM_PRICE_PROMPT": "cheap", "MONKEYLLM_LLM_PRICE_COMPLETION": "1"},
     "MONKEYLLM_LLM_PRICE_PROMPT must be a price in USD per million tokens (>= 0), got 'cheap'"),
    ({"MONKEYLLM_LLM_PRICE_PROMPT": "1"},
     "MONKEYLLM_LLM_PRICE_COMPLETION is not set but MONKEYLLM_LLM_PRICE_PROMPT is: set both rates "
     "(USD per million tokens), or neither"),
    ({"MONKEYLLM_ANSWER_DEADLINE": "0"}, "MONKEYLLM_ANSWER_DEADLINE must be a number of seconds > 0, got '0'"),
])
def test_an_unusable_answer_setting_is_one_line_naming_it(extra, message):
    with pytest.raises(ModelConfigError) as caught:
        model_for_answer({"MONKEYLLM_LLM_ENDPOINT": "http://127.0.0.1:9/v1", **extra})
    assert str(caught.value) == message


def test_the_cache_stays_within_its_bounds_and_drops_an_older_heads_answers(tmp_path):
    cache = AnswerCache(tmp_path, max_entries=3, max_bytes=1550)
    for n in range(5):
        assert cache.put(f"key-{n}", "head-1", {"answer": f"answer {n}"})
    assert [n for n in range(5) if cache.get(f"key-{n}")] == [2, 3, 4]  # the least recently used went
    assert cache.get("key-2")[0] == {"answer": "answer 2"}  # now the most recently used
    assert cache.put("big", "head-1", {"answer": "x" * 1500})
    assert [key for key in ("key-2", "key-3", "key-4", "big") if cache.get(key)] == ["key-2", "big"]
    assert not cache.put("huge", "head-1", {"answer": "x" * 3000}) and cache.get("huge") is None
    assert cache.put("after-commit", "head-2", {"answer": "new"})
    assert cache.get("big") is None and cache.get("key-2") is None and cache.get("after-commit")
