"""The Curator against a real HTTP server on 127.0.0.1 (ScriptedOpenAIServer)."""
from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from monkeyllm_gardener.curator import (
    STAT_KEYS,
    BranchRequest,
    Candidate,
    CurationRequest,
    Curator,
    CuratorConfigError,
    CuratorSettings,
    check_summary,
)
from monkeyllm_gardener.curator.testing_server import (
    ScriptedOpenAIServer,
    ScriptedReply,
    chat_completion,
    error_body,
    json_reply,
    message_text,
)

GOOD = "Expense policy for travel and meals. Receipts are required above 50 USD."
DERIVED = "Expense policy. Travel and meals are reimbursed."
POLICY_TEXT = (
    "Travel and meals are reimbursed for all staff. Receipts are required above 50 USD "
    "and the approvals go through the team lead."
)
CANDIDATES = [
    Candidate("finance/contractors", "Contractors", "How contractor invoices are paid."),
    Candidate("finance/budget", "Budget", "The yearly budget by team."),
]


def settings_for(server: ScriptedOpenAIServer, **overrides) -> CuratorSettings:
    values = dict(endpoint=server.base_url, backoff_seconds=0.01, backoff_cap_seconds=0.05, timeout_seconds=5.0)
    values.update(overrides)
    return CuratorSettings(**values)


def request(node_id: str = "finance/policy", text: str = POLICY_TEXT, **overrides) -> CurationRequest:
    values = dict(
        node_id=node_id,
        node_type="document",
        title="Expense policy",
        text=text,
        derived_summary=DERIVED,
        tags=[],
        candidates=CANDIDATES,
    )
    values.update(overrides)
    return CurationRequest(**values)


def curate_all(server, requests, *, directives=None, default_tags=(), **overrides):
    with Curator(settings_for(server, **overrides), directives=directives, default_tags=default_tags) as curator:
        outcomes = list(curator.curate_many(requests))
        return outcomes, curator.stats(), curator


# -- prompts as sent -----------------------------------------------------------------


def test_prompt_carries_character_limit_directives_and_closed_candidate_list():
    candidates = [
        *CANDIDATES,
        Candidate("finance/policy", "Itself", "The node itself."),
        Candidate("finance/_index", "Parent", "A branch."),
        Candidate("_meta/schema", "Dialect", "The schema."),
    ]
    with ScriptedOpenAIServer(default_reply=json_reply(GOOD)) as server:
        curate_all(server, [request(candidates=candidates)], directives="Flag anything mentioning PII.")
        sent = server.requests[0]
    system, user = sent["messages"][0]["content"], sent["messages"][1]["content"]
    assert "240 characters" in system
    assert "Flag anything mentioning PII." in system
    assert "- finance/contractors — Contractors: How contractor invoices are paid." in user
    assert "finance/budget" in user
    assert "finance/_index" not in user and "_meta/schema" not in user and "Itself" not in user
    assert POLICY_TEXT in user
    assert sent["response_format"] == {"type": "json_object"}
    assert sent["max_tokens"] == 300


def test_long_body_is_capped_and_the_cut_is_stated_in_the_prompt():
    body = "Policy rule number one applies to everyone. " * 100
    with ScriptedOpenAIServer(default_reply=json_reply(GOOD)) as server:
        curate_all(server, [request(text=body)], max_content_chars=500)
        user = server.requests[0]["messages"][1]["content"]
    assert f"(first 500 of {len(body)} characters)" in user
    assert body[:500] in user and body[:501] not in user


# -- the contract enforced -------------------------------------------------------------


def test_failing_summary_is_retried_with_the_reason_handed_back():
    dated = "Board meeting held on 2026-03-14. The board approved the Falcon rollout for all the teams."
    first = "Board minutes approving the Falcon rollout."
    second = "Board minutes from March 2026 approving the Falcon rollout."
    with ScriptedOpenAIServer(replies=[json_reply(first), json_reply(second)]) as server:
        outcomes, stats, _ = curate_all(server, [request(text=dated)])
        retry = server.requests[1]
    assert outcomes[0].summary == second and outcomes[0].summary_source == "llm"
    assert stats["retries"] == 1 and stats["llm_summaries"] == 1 and stats["fallbacks"] == 0
    reason = check_summary(first, dated)[0]
    assert retry["messages"][-1]["role"] == "user" and reason in retry["messages"][-1]["content"]
    assert first in retry["messages"][-2]["content"]  # the rejected answer, as the assistant said it


def test_a_summary_with_a_bidi_override_is_retried_not_planted():
    # The core would refuse it at plant time; the Curator asks again instead.
    first = "Expense policy for travel \u202eand meals. Receipts are required above 50 USD."
    with ScriptedOpenAIServer(replies=[json_reply(first), json_reply(GOOD)]) as server:
        outcomes, stats, _ = curate_all(server, [request()])
        retry = server.requests[1]
    assert outcomes[0].summary == GOOD and stats["retries"] == 1
    assert "control, escape or bidi" in retry["messages"][-1]["content"]


def test_summary_failing_only_on_length_is_trimmed_and_counted_repaired():
    long_summary = "Expense policy for travel and meals. " + "Receipts are required above 50 USD for every claim. " * 6
    with ScriptedOpenAIServer(default_reply=json_reply(long_summary)) as server:
        outcomes, stats, _ = curate_all(server, [request()])
        sent = len(server.requests)
    outcome = outcomes[0]
    assert sent == 1  # trimmed, not asked again
    assert outcome.summary_source == "llm" and len(outcome.summary) <= 240
    assert outcome.summary.startswith("Expense policy for travel and meals.")
    assert check_summary(outcome.summary, POLICY_TEXT) == []
    assert stats["repaired"] == 1 and stats["llm_summaries"] == 1 and stats["retries"] == 0
    assert any("trimmed" in problem for problem in outcome.problems)


@pytest.mark.parametrize(
    "bad_summary",
    ["This document describes the expense policy.", "File containing the expense policy.", "", "   "],
)
def test_boilerplate_or_empty_summary_falls_back_to_the_derived_one(bad_summary):
    with ScriptedOpenAIServer(default_reply=json_reply(bad_summary, tags=["finance"])) as server:
        outcomes, stats, _ = curate_all(server, [request()])
        attempts = len(server.requests)
    outcome = outcomes[0]
    assert outcome.summary == DERIVED and outcome.summary_source == "fallback"
    assert attempts == 3 and stats["retries"] == 2
    assert stats["fallbacks"] == 1 and stats["rejected"] == 1 and stats["llm_summaries"] == 0
    assert any("rejected after 3 attempt(s)" in problem for problem in outcome.problems)
    assert outcome.tags == ["finance"]  # the model's tags are still validated and kept


def test_reply_in_a_fenced_code_block_is_accepted():
    fenced = "Sure!\n```json\n" + json.dumps({"summary": GOOD, "tags": ["Finance"], "links": []}) + "\n```"
    with ScriptedOpenAIServer(default_reply=chat_completion(fenced)) as server:
        outcomes, stats, _ = curate_all(server, [request()])
    assert outcomes[0].summary == GOOD and outcomes[0].tags == ["finance"]


def test_reply_that_is_not_json_is_retried_then_falls_back():
    with ScriptedOpenAIServer(default_reply=chat_completion("I cannot help with that.")) as server:
        outcomes, stats, _ = curate_all(server, [request()])
        second = server.requests[1]
    assert outcomes[0].summary == DERIVED
    assert "not a JSON object" in second["messages"][-1]["content"]
    assert stats["fallbacks"] == 1 and stats["retries"] == 2


def test_tags_are_folded_merged_with_defaults_and_capped():
    reply = json_reply(GOOD, tags=["Café", "Finance", "travel", "meals", "receipts", "extra"])
    with ScriptedOpenAIServer(default_reply=reply) as server:
        outcomes, _, _ = curate_all(server, [request(tags=["Policy"])], default_tags=["internal"])
    assert outcomes[0].tags == ["policy", "internal", "cafe", "finance", "travel"]
    assert any("dropped meals, receipts, extra" in problem for problem in outcomes[0].problems)


# -- edge proposals ---------------------------------------------------------------------


def test_invented_link_ids_are_dropped_and_counted():
    reply = json_reply(GOOD, links=["finance/contractors", "finance/ghost", "finance/policy"])
    with ScriptedOpenAIServer(default_reply=reply) as server:
        outcomes, stats, _ = curate_all(server, [request()])
    assert outcomes[0].links == [{"rel": "related-to", "target": "finance/contractors", "confidence": 0.3}]
    assert stats["links_proposed"] == 1
    assert stats["proposal_fallbacks"] == 2 and stats["rejected"] == 2
    assert sum("not in the candidate list" in problem for problem in outcomes[0].problems) == 2


def test_picking_no_link_is_a_valid_answer():
    with ScriptedOpenAIServer(default_reply=json_reply(GOOD, links=[])) as server:
        outcomes, stats, _ = curate_all(server, [request()])
    assert outcomes[0].links == [] and outcomes[0].problems == []
    assert stats["links_proposed"] == 0 and stats["proposal_fallbacks"] == 0 and stats["rejected"] == 0


def test_at_most_three_links_are_kept():
    candidates = [Candidate(f"n/{i}", f"N{i}", "x") for i in range(5)]
    reply = json_reply(GOOD, links=[{"target": f"n/{i}"} for i in range(5)])
    with ScriptedOpenAIServer(default_reply=reply) as server:
        outcomes, stats, _ = curate_all(server, [request(candidates=candidates)])
    assert [link["target"] for link in outcomes[0].links] == ["n/0", "n/1", "n/2"]
    assert stats["links_proposed"] == 3


def test_no_candidates_means_the_prompt_asks_for_no_links():
    with ScriptedOpenAIServer(default_reply=json_reply(GOOD, links=["finance/x"])) as server:
        outcomes, stats, _ = curate_all(server, [request(candidates=[])])
        user = server.requests[0]["messages"][1]["content"]
    assert "Candidate ids for links: none" in user
    assert outcomes[0].links == [] and stats["proposal_fallbacks"] == 1


# -- transport -----------------------------------------------------------------------------


def test_server_errors_are_counted_and_every_node_still_gets_an_outcome():
    with ScriptedOpenAIServer(default_reply=(500, error_body("boom"))) as server:
        nodes = [request(node_id=f"n{i}") for i in range(4)]
        outcomes, stats, _ = curate_all(server, nodes, retries=1, degrade_after_failures=100)
    assert [o.node_id for o in outcomes] == ["n0", "n1", "n2", "n3"]
    assert all(o.summary == DERIVED and o.summary_source == "fallback" for o in outcomes)
    assert all(any("HTTP 500" in p for p in o.problems) for o in outcomes)
    assert stats["transport_errors"] == 8  # 4 nodes x (1 try + 1 retry)
    assert stats["fallbacks"] == 4 and stats["rejected"] == 0


def test_timeouts_are_counted_as_transport_errors():
    with ScriptedOpenAIServer(default_reply=ScriptedReply(body=json_reply(GOOD), delay=2.0)) as server:
        started = time.monotonic()
        outcomes, stats, _ = curate_all(server, [request()], timeout_seconds=0.2, retries=1)
        elapsed = time.monotonic() - started
    assert outcomes[0].summary == DERIVED
    assert any("timed out" in p for p in outcomes[0].problems)
    assert stats["transport_errors"] == 2 and stats["fallbacks"] == 1
    assert elapsed < 1.5


def test_rate_limit_is_retried_with_backoff_then_succeeds():
    replies = [ScriptedReply(status=429, body=error_body("slow down", kind="rate_limit")), json_reply(GOOD)]
    with ScriptedOpenAIServer(replies=replies) as server:
        started = time.monotonic()
        outcomes, stats, _ = curate_all(server, [request()], backoff_seconds=0.3, backoff_cap_seconds=1.0)
        elapsed = time.monotonic() - started
        attempts = len(server.requests)
    assert outcomes[0].summary == GOOD and outcomes[0].summary_source == "llm"
    assert attempts == 2 and stats["transport_errors"] == 1 and stats["fallbacks"] == 0
    assert elapsed >= 0.15  # the backoff (0.3 s with jitter down to half) was waited


def test_server_refusing_response_format_is_asked_again_without_it():
    def responder(body):
        if "response_format" in body:
            return (400, error_body("response_format is not supported", kind="invalid_request_error"))
        return json_reply(GOOD)

    with ScriptedOpenAIServer(responder=responder) as server:
        outcomes, stats, curator = curate_all(server, [request(node_id="a"), request(node_id="b")], concurrency=1)
        bodies = server.requests
    assert [o.summary_source for o in outcomes] == ["llm", "llm"]
    assert "response_format" not in bodies[-1]  # the second node no longer sends it
    assert any("response_format" in p for p in curator.problems)


def test_dead_endpoint_never_blocks_the_batch():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead_port = probe.getsockname()[1]
    settings = CuratorSettings(
        endpoint=f"http://127.0.0.1:{dead_port}/v1", model="named-model", retries=1,
        backoff_seconds=0.01, backoff_cap_seconds=0.02, timeout_seconds=1.0, concurrency=2,
    )
    started = time.monotonic()
    with Curator(settings) as curator:
        outcomes = list(curator.curate_many(request(node_id=f"n{i}") for i in range(40)))
        stats = curator.stats()
        degraded = curator.degraded
    assert len(outcomes) == 40 and all(o.summary == DERIVED for o in outcomes)
    assert stats["fallbacks"] == 40 and stats["transport_errors"] >= 3
    assert degraded and "could not connect" in degraded
    assert time.monotonic() - started < 10


def test_local_model_on_a_dead_endpoint_degrades_at_start_instead_of_raising():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead_port = probe.getsockname()[1]
    settings = CuratorSettings(endpoint=f"http://127.0.0.1:{dead_port}/v1", retries=0, timeout_seconds=1.0)
    with Curator(settings) as curator:
        assert curator.degraded and "could not resolve the 'local' model" in curator.degraded
        outcomes = list(curator.curate_many([request()]))
        stats = curator.stats()
    assert outcomes[0].summary == DERIVED and any("degraded" in p for p in outcomes[0].problems)
    assert stats["transport_errors"] == 1 and stats["fallbacks"] == 1


# -- model resolution ----------------------------------------------------------------------------


def test_local_model_is_resolved_from_models_first_entry():
    with ScriptedOpenAIServer(models=["gemma-3-12b", "other"], default_reply=json_reply(GOOD)) as server:
        outcomes, _, curator = curate_all(server, [request()])
        sent_model = server.requests[0]["model"]
        asked = server.model_requests
    assert curator.model == "gemma-3-12b" and sent_model == "gemma-3-12b" and asked == 1


def test_named_model_is_used_without_asking_models():
    with ScriptedOpenAIServer(default_reply=json_reply(GOOD)) as server:
        _, _, curator = curate_all(server, [request()], model="google/gemma-3-12b-it")
        assert server.requests[0]["model"] == "google/gemma-3-12b-it" and server.model_requests == 0
    assert curator.model == "google/gemma-3-12b-it"


@pytest.mark.parametrize(
    ("models_reply", "message"),
    [
        ({"object": "list", "data": []}, "lists no model"),
        ((401, error_body("bad key")), "refused the API key (HTTP 401)"),
        ((404, error_body("no such route")), "answered HTTP 404"),
    ],
)
def test_unusable_local_model_configuration_raises_one_line_error(models_reply, message):
    with ScriptedOpenAIServer(models_reply=models_reply) as server:
        curator = Curator(settings_for(server, retries=0))
        with pytest.raises(CuratorConfigError) as raised:
            curator.start()
        curator.close()
    assert message in str(raised.value) and "MONKEYLLM_LLM_" in str(raised.value)
    assert "\n" not in str(raised.value)


# -- concurrency and order -----------------------------------------------------------------------------


def test_outcomes_come_back_in_input_order_with_requests_in_flight_together():
    in_flight = 0
    peak = 0
    lock = threading.Lock()

    def responder(body):
        nonlocal in_flight, peak
        node_id = message_text(body).split("Node id: ")[1].split("\n")[0]
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(0.05 if int(node_id[1:]) % 2 else 0.01)  # odd nodes answer later
        with lock:
            in_flight -= 1
        return json_reply(f"Expense policy copy {node_id}. Receipts are required above 50 USD.")

    with ScriptedOpenAIServer(responder=responder) as server:
        nodes = [request(node_id=f"n{i}") for i in range(24)]
        outcomes, stats, _ = curate_all(server, nodes, concurrency=4)
    assert [o.node_id for o in outcomes] == [f"n{i}" for i in range(24)]
    assert all(o.summary.startswith(f"Expense policy copy {o.node_id}.") for o in outcomes)
    assert 2 <= peak <= 4
    assert stats["llm_summaries"] == 24


def test_node_with_nothing_to_read_is_skipped_without_a_request():
    with ScriptedOpenAIServer(default_reply=json_reply(GOOD)) as server:
        outcomes, stats, _ = curate_all(server, [request(text="  ", title="")], default_tags=["internal"])
        sent = len(server.requests)
    assert sent == 0 and stats["skipped"] == 1 and stats["fallbacks"] == 0
    assert outcomes[0].summary == DERIVED and outcomes[0].tags == ["internal"]


# -- branches ---------------------------------------------------------------------------------------------

ENTRIES = [
    "- [[finance/crm]] — Customer database with 3 tables of accounts and contacts.",
    "- [[finance/invoices-2026-q1]] — Invoices issued in January 2026 to four customers.",
]


def test_branch_summary_is_written_from_entry_lines():
    summary = "Finance data: the CRM database and the invoices of January 2026."
    with ScriptedOpenAIServer(default_reply=json_reply(summary)) as server:
        with Curator(settings_for(server)) as curator:
            result = curator.summarize_branch(
                BranchRequest(branch_id="finance/_index", title="finance", entry_lines=ENTRIES, fallback_summary="x")
            )
            stats = curator.stats()
        sent = message_text(server.requests[0])
    assert result == summary
    assert ENTRIES[0] in sent and "finance/_index" in sent
    assert stats["branch_rollups"] == 1 and stats["branch_fallbacks"] == 0 and stats["llm_summaries"] == 0


def test_branch_summary_falls_back_when_the_model_keeps_failing():
    with ScriptedOpenAIServer(default_reply=json_reply("This document describes finance.")) as server:
        with Curator(settings_for(server)) as curator:
            branch = BranchRequest(branch_id="finance/_index", title="finance", entry_lines=ENTRIES, fallback_summary="x")
            result = curator.summarize_branch(branch)
            empty = curator.summarize_branch(
                BranchRequest(branch_id="empty/_index", title="empty", entry_lines=[], fallback_summary="x")
            )
            stats = curator.stats()
            problems = curator.problems
    assert result is None and empty is None
    assert stats["branch_fallbacks"] == 1 and stats["branch_rollups"] == 0 and stats["skipped"] == 1
    assert any(p.startswith("branch finance/_index:") for p in problems)


# -- statistics ---------------------------------------------------------------------------------------------


def test_stats_have_exactly_the_report_keys_in_order():
    with ScriptedOpenAIServer(default_reply=json_reply(GOOD)) as server:
        _, stats, _ = curate_all(server, [request()])
    assert list(stats) == [
        "llm_summaries", "fallbacks", "retries", "skipped", "links_proposed", "proposal_fallbacks",
        "branch_rollups", "branch_fallbacks", "transport_errors", "rejected", "repaired",
    ]
    assert list(stats) == list(STAT_KEYS) and all(isinstance(v, int) for v in stats.values())
