"""A troop of scripted chat models: one script per forager and one for the judge,
served by the scripted OpenAI-compatible server (real HTTP on 127.0.0.1).

The responder tells the callers apart by what the Troop sends them: the judge's
system prompt, or the forager's number in its first message ("You are forager
2 of 3"). A forager's reply for its turn t (t model replies already in its
messages) is ``script[t]``; past the end of its script, the last entry again.
"""
from __future__ import annotations

import json
import re
import threading
from typing import Any, Callable, Mapping, Sequence

from monkeyllm_gardener.curator.settings import CuratorSettings
from monkeyllm_gardener.curator.testing_server import ScriptedReply, chat_completion, tool_calls_completion
from monkeyllm_gardener.kit.model import ModelClient
from monkeyllm_gardener.serve.answer_model import AnswerModel

QUESTION = "what is the deadline to exchange a retail order?"
# the frontier of QUESTION with k = 3, in locate's order: forager i starts from the i-th
ENTRIES = ["sales/orders-2026", "sales/exchange-policy", "sales/exchange-policy-2027"]
FORAGER = re.compile(r"You are forager (\d+) of (\d+)")


def answer_reply(text: str, evidence: Sequence[str], **meter: Any) -> dict:
    return chat_completion(json.dumps({"answer": text, "evidence": list(evidence)}), **meter)


def calls(*tool_calls: tuple[str, dict], delay: float = 0.0, **meter: Any) -> Any:
    body = tool_calls_completion(*tool_calls, **meter)
    return ScriptedReply(body=body, delay=delay) if delay else body


def slow(body: Any, seconds: float) -> ScriptedReply:
    return ScriptedReply(body=body, delay=seconds)


def forager_of(request: Mapping[str, Any]) -> int | None:
    """The forager a chat request comes from (None: the judge)."""
    messages = request["messages"]
    if messages[0]["content"].startswith("You are the judge"):
        return None
    found = FORAGER.search(messages[1]["content"])
    assert found, messages[1]["content"]
    return int(found.group(1))


class TroopScript:
    """``responder`` for ``ScriptedOpenAIServer``: each forager's replies, the judge's."""

    def __init__(self, foragers: Mapping[int, Sequence[Any]], judge: Any = None) -> None:
        self.foragers = foragers
        self.judge = judge if judge is not None else answer_reply("No answer.", [])
        self.requests: dict[Any, list[dict]] = {}
        self._lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> Any:
        who = forager_of(request)
        with self._lock:
            self.requests.setdefault(who or "judge", []).append(request)
        if who is None:
            return self.judge(request) if callable(self.judge) else self.judge
        turn = sum(1 for message in request["messages"] if message["role"] == "assistant")
        script = self.foragers[who]
        reply = script[min(turn, len(script) - 1)]
        return reply(request) if callable(reply) else reply

    def first_message(self, forager: int) -> str:
        return self.requests[forager][0]["messages"][1]["content"]


def model_of(server: Any, *, deadline_seconds: float = 30.0, retries: int = 0) -> AnswerModel:
    settings = CuratorSettings(endpoint=server.base_url, model="scripted-model", timeout_seconds=10.0,
                               retries=retries, backoff_seconds=0.01, backoff_cap_seconds=0.05)
    return AnswerModel(ModelClient(settings), deadline_seconds=deadline_seconds)


def run_troop(troop: Callable[..., Any], server: Any, forest: Any, question: str = QUESTION, **options: Any) -> Any:
    model = model_of(server, **{k: options.pop(k) for k in ("deadline_seconds", "retries") if k in options})
    try:
        return troop(forest, question, model=model, **options)
    finally:
        model.close()
