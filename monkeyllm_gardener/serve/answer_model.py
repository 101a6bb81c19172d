"""The model ``answer`` asks, and how its replies are read and metered.

The binding is the Curator's (``MONKEYLLM_LLM_ENDPOINT``, ``_MODEL``, ``_API_KEY``,
``_TIMEOUT``, ``_RETRIES``, ``_CONCURRENCY``; see the README), plus what only
``answer`` needs:

- ``MONKEYLLM_LLM_PRICE_PROMPT`` / ``MONKEYLLM_LLM_PRICE_COMPLETION``: the
  provider's rates, in USD per million tokens; with both set an answer's ``cost``
  is priced, else it says ``priced: false``;
- ``MONKEYLLM_ANSWER_DEADLINE`` (seconds, default 120): the most one ``answer`` may
  take, every model request, retry and hop included.

Requests run on the model's own threads (at most ``MONKEYLLM_LLM_CONCURRENCY`` in
flight), never on a forest's: the forest keeps answering while the model thinks.

A model that fails answers a ``VineError``: a timeout, a refused or dropped
connection, or 429/5xx after the retries is ``E_TIMEOUT`` (504 over REST: the
gateway's upstream gave no answer in time, and asking again later may work);
any other refusal (a bad key, an unknown model, a request too long for it) is
``E_UNSUPPORTED``, which no retry fixes: the binding has to change.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import time
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from monkeyllm_core import VineError
from monkeyllm_gardener.curator.replies import ReplyFormatError, link_ids, parse_reply_object
from monkeyllm_gardener.curator.settings import CuratorSettings, _positive_float
from monkeyllm_gardener.curator.transport import ChatReply, retriable
from monkeyllm_gardener.kit.model import ModelClient, ModelConfigError, ModelFailure

DEADLINE_ENV = "MONKEYLLM_ANSWER_DEADLINE"
PRICE_ENVS = ("MONKEYLLM_LLM_PRICE_PROMPT", "MONKEYLLM_LLM_PRICE_COMPLETION")
DEFAULT_DEADLINE_SECONDS = 120.0

# What every prompt asks the model to reply with: one shape, read by ``read_reply``.
REPLY_FORMAT = ('Reply with one JSON object and nothing else: {"answer": "<your answer, in the language of the '
                'question>", "evidence": ["<the id of each node your answer stands on>"]}.')


@dataclass(frozen=True)
class Prices:
    prompt: float  # USD per million prompt tokens
    completion: float


class AnswerModel:
    """The model bound for ``answer``: a ``ModelClient``, its prices and the deadline."""

    def __init__(self, client: ModelClient, *, prices: Prices | None = None,
                 deadline_seconds: float = DEFAULT_DEADLINE_SECONDS) -> None:
        self.client = client
        self.prices = prices
        self.deadline_seconds = deadline_seconds
        self._threads = concurrent.futures.ThreadPoolExecutor(
            max_workers=client.settings.concurrency, thread_name_prefix="answer-model")

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> AnswerModel:
        client = ModelClient(CuratorSettings.from_env(environ))
        return cls(client, prices=_prices(environ),
                   deadline_seconds=_positive_float(environ, DEADLINE_ENV, DEFAULT_DEADLINE_SECONDS))

    @property
    def endpoint(self) -> str:
        return self.client.settings.endpoint

    async def name(self, deadline: float) -> str:
        """The model's name (for ``local``, the first of the endpoint's ``/models``)."""
        try:
            return await self._off_loop(lambda: self.client.model_name(deadline=deadline))
        except ModelFailure as failure:
            raise model_error(failure, self.endpoint) from failure
        except ModelConfigError as problem:
            raise VineError("E_UNSUPPORTED", f"answer has no model: {problem}",
                            "Fix the MONKEYLLM_LLM_* settings of the server, or call harvest.") from problem

    async def ask(self, meter: Meter, *, model: str, messages: list[dict[str, Any]], max_tokens: int,
                  deadline: float, tools: list[dict[str, Any]] | None = None) -> tuple[ChatReply, float]:
        """One request, metered; returns the reply and its milliseconds."""
        started = time.perf_counter()
        try:
            reply = await self._off_loop(lambda: self.client.chat(
                model=model, messages=messages, max_tokens=max_tokens, tools=tools, deadline=deadline))
        except ModelFailure as failure:
            raise model_error(failure, self.endpoint) from failure
        ms = (time.perf_counter() - started) * 1000
        meter.add(reply, ms)
        return reply, ms

    async def _off_loop(self, work: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._threads, work)

    def close(self) -> None:
        self.client.close()  # a retry that is waiting gives up at once
        self._threads.shutdown(wait=False, cancel_futures=True)


def model_for_answer(environ: Mapping[str, str]) -> AnswerModel | None:
    """The model ``answer`` asks, or None when none is bound (no
    ``MONKEYLLM_LLM_ENDPOINT``: then ``answer`` is not offered). A binding that
    cannot work raises ``ModelConfigError``, one line naming the variable."""
    if not (environ.get("MONKEYLLM_LLM_ENDPOINT") or "").strip():
        return None
    return AnswerModel.from_env(environ)


def model_error(failure: ModelFailure, endpoint: str) -> VineError:
    """What a failed model request answers (see the module doc for the codes)."""
    if retriable(failure):
        return VineError("E_TIMEOUT", f"the model did not answer: {failure}",
                         f"The model at {endpoint} is down or slow: try again later, or call harvest and "
                         "reason over the material yourself.")
    return VineError("E_UNSUPPORTED", f"the model refused the request: {failure}",
                     "Check the server's MONKEYLLM_LLM_* settings (key, model name), or ask with fewer "
                     "results (k) or reply_tokens.")


class Meter:
    """The provider's own token meter, summed over an answer's model requests."""

    def __init__(self) -> None:
        self.calls = 0
        self.prompt = 0
        self.completion = 0
        self.unmetered = 0  # requests the provider sent no usage for: not guessed
        self.ms = 0.0

    def add(self, reply: ChatReply, ms: float) -> None:
        self.calls += 1
        self.ms += ms
        if reply.prompt_tokens is None and reply.completion_tokens is None:
            self.unmetered += 1
        self.prompt += reply.prompt_tokens or 0
        self.completion += reply.completion_tokens or 0

    def usage(self) -> dict[str, Any]:
        usage: dict[str, Any] = {"prompt": self.prompt, "completion": self.completion, "calls": self.calls}
        if self.unmetered:
            usage["unmetered_calls"] = self.unmetered
        return usage

    def cost(self, prices: Prices | None) -> dict[str, Any]:
        cost: dict[str, Any] = {"prompt_tokens": self.prompt, "completion_tokens": self.completion,
                                "calls": self.calls, "priced": prices is not None and not self.unmetered}
        if cost["priced"]:
            assert prices is not None
            cost["usd"] = round((self.prompt * prices.prompt + self.completion * prices.completion) / 1e6, 6)
            cost["usd_per_million"] = {"prompt": prices.prompt, "completion": prices.completion}
        return cost


def read_reply(text: str, known_ids: Sequence[str]) -> tuple[str, list[str]]:
    """The answer and its evidence from a model's reply: the JSON object asked for
    (``REPLY_FORMAT``), or, from a model that answered in plain prose, the prose
    and the ids it names. Evidence keeps only ``known_ids`` (what the model was
    shown), so an id it invented is never cited."""
    try:
        parsed = parse_reply_object(text)
    except ReplyFormatError:
        parsed = {}
    if isinstance(parsed.get("answer"), str):
        answer, cited = parsed["answer"].strip(), link_ids(parsed.get("evidence"))
    else:
        answer, cited = text.strip(), []
    if not cited:
        cited = [node_id for node_id in known_ids if node_id in answer]
    known = set(known_ids)
    return answer, list(dict.fromkeys(node_id for node_id in cited if node_id in known))


def _prices(environ: Mapping[str, str]) -> Prices | None:
    raw = [(environ.get(name) or "").strip() for name in PRICE_ENVS]
    if not any(raw):
        return None
    values = []
    for name, value in zip(PRICE_ENVS, raw):
        if not value:
            raise ModelConfigError(f"{name} is not set but {' and '.join(n for n in PRICE_ENVS if n != name)} is: "
                                   "set both rates (USD per million tokens), or neither")
        try:
            number = float(value)
        except ValueError:
            number = -1.0
        if not 0 <= number < float("inf"):
            raise ModelConfigError(f"{name} must be a price in USD per million tokens (>= 0), got {value!r:.80}")
        values.append(number)
    return Prices(*values)
