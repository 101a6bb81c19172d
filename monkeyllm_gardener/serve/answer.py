"""``answer``: harvest plus the forest's model (primitives.md, answer).

The transports route an ``answer`` call here (``answer_call``, or ``answer`` from
synchronous code) once they have picked the forest and checked the caller; it
is offered only when a model is bound (``model_for_answer``; see
``answer_model`` for the settings and what a dead model answers).

The sweep: a harvest on the forest's thread, in the caller's client session
(traced and heated as the caller's own), then one model request on the model's
threads, so the forest keeps answering while the model thinks. The model is
asked to cite the ids it used; only ids of the bundle are kept as evidence.
With ``hops`` the model drives the reads itself instead (``answer_hops``).

``cache: true`` answers a repeated question from ``answer_cache`` without asking
the model; a new commit is a miss. A hit says ``cached: true`` and bills this
call nothing (``usage`` and ``cost`` are this call's); what the answer first cost
is in ``cached_from``. A response is cached only when it holds an answer.

Expected failures raise ``VineError`` (E_SCHEMA for a bad argument, the model's
codes, a harvest's own); the transports send its envelope.
"""
from __future__ import annotations

import asyncio
import sqlite3
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from monkeyllm_core import VineError
from monkeyllm_core.read.contract import tokens_of, wire
from monkeyllm_core.store.history import head_commit

from .answer_cache import AnswerCache, cache_key
from .answer_hops import hunt
from .answer_model import REPLY_FORMAT, AnswerModel, Meter, Prices, model_for_answer, read_reply
from .forest_service import DEFAULT_CLIENT, ForestService
from .tools import TOOLS, check_args

__all__ = ["AnswerModel", "answer", "answer_call", "model_for_answer"]

SWEEP_SYSTEM = ("You answer questions about a knowledge forest from the evidence you are given, and from nothing "
                "else. The evidence is a harvest: JSON results, each with an id, a title, a summary, matching lines "
                "and content. If the evidence does not answer the question, say so plainly; never invent a fact, a "
                "figure or an id. " + REPLY_FORMAT)


@dataclass(frozen=True)
class AnswerRequest:
    question: str
    k: int
    cache: bool
    reply_tokens: int
    hops: int | None

    @classmethod
    def of(cls, args: Any) -> AnswerRequest:
        """The arguments, checked against the ``answer`` schema, bounds included (E_SCHEMA)."""
        tool = TOOLS["answer"]
        values = {name: schema.get("default") for name, schema in tool.properties.items()}
        values.update(check_args(tool, args))
        if not values["question"].strip():
            raise VineError("E_SCHEMA", "answer: question is empty",
                            'Ask in words, e.g. question="what is the exchange deadline?"')
        for name in ("k", "reply_tokens", "hops"):
            _check_bounds(name, values[name], tool.properties[name])
        return cls(**values)


def _check_bounds(name: str, value: int | None, schema: dict[str, Any]) -> None:
    if value is None:
        return
    bounded = next(option for option in schema.get("anyOf", [schema]) if option.get("type") == "integer")
    low, high = bounded["minimum"], bounded["maximum"]
    if not low <= value <= high:
        raise VineError("E_SCHEMA", f"answer: {name} must be between {low} and {high}, not {value}",
                        f"e.g. {name}={bounded.get('default', low)}.")


async def answer_call(service: ForestService, args: Any, client: str, model: AnswerModel) -> dict[str, Any]:
    """Answer one ``answer`` call on ``service``'s forest for ``client`` (module doc)."""
    request = AnswerRequest.of(args)
    started, clock = time.perf_counter(), time.monotonic()
    deadline = clock + model.deadline_seconds
    name = await model.name(deadline)
    cache = AnswerCache(service.root) if request.cache else None
    key = head = None
    if cache is not None:
        def lookup(_reader: Any) -> tuple[str | None, str, Any]:
            commit = head_commit(service.root)
            found = cache_key(question=request.question, k=request.k, reply_tokens=request.reply_tokens,
                              hops=request.hops, model=name, head=commit)
            try:
                return commit, found, cache.get(found)
            except (OSError, sqlite3.Error):
                return commit, found, None  # a broken cache is a miss; storing then says why in the trace
        head, key, hit = await service.arun_on_thread(lookup)
        if hit is not None:
            return _from_cache(*hit, started=started, prices=model.prices)
    meter = Meter()
    if request.hops is None:
        response, steps, retrieval_ms = await _sweep(service, client, model, meter, name=name, request=request,
                                                     deadline=deadline)
    else:
        response, steps, retrieval_ms = await _hops(service, client, model, meter, name=name, request=request,
                                                    started=clock, deadline=deadline)
    response["cached"] = False
    if cache is not None and response["answer"]:
        not_stored = await _store(service, cache, key, head, response)
        if not_stored is not None:
            steps.append(not_stored)
    response["trace"] = {"steps": steps, "retrieval_ms": round(retrieval_ms, 1), "total_ms": _ms_since(started)}
    response["cost"] = meter.cost(model.prices)
    return response


def answer(service: ForestService, args: Any, client: str = DEFAULT_CLIENT, *, model: AnswerModel) -> dict[str, Any]:
    """``answer_call`` for synchronous code (not from inside a running event loop)."""
    return asyncio.run(answer_call(service, args, client, model))


async def _sweep(service: ForestService, client: str, model: AnswerModel, meter: Meter, *, name: str,
                 request: AnswerRequest, deadline: float) -> tuple[dict[str, Any], list[dict[str, Any]], float]:
    started = time.perf_counter()
    bundle = await service.acall("harvest", {"query": request.question, "k": request.k}, client)
    # rounded once: the step and retrieval_ms are then one figure (round(round(x, 2), 1) is not round(x, 1))
    harvest_ms = round((time.perf_counter() - started) * 1000, 2)
    messages = [{"role": "system", "content": SWEEP_SYSTEM},
                {"role": "user", "content": f"Question: {request.question}\n\nEvidence (harvest):\n{wire(bundle)}"}]
    reply, model_ms = await model.ask(meter, model=name, messages=messages, max_tokens=request.reply_tokens,
                                      deadline=deadline)
    results = {result["id"]: result for result in bundle["results"]}
    text, evidence = read_reply(reply.content, list(results))
    steps = [{"step": "harvest", "ms": harvest_ms, "tokens": tokens_of(bundle),
              "detail": f"{len(results)} result(s)"},
             {"step": "model", "ms": round(model_ms, 1), "tokens": reply.completion_tokens,
              "detail": reply.model or name}]
    response = {"answer": text, "model": reply.model or name, "model_ms": round(model_ms, 1), "usage": meter.usage(),
                "evidence": evidence, "sources": [_source(results[node_id]) for node_id in evidence],
                "harvest": bundle}
    return response, steps, harvest_ms


async def _hops(service: ForestService, client: str, model: AnswerModel, meter: Meter, *, name: str,
                request: AnswerRequest, started: float,
                deadline: float) -> tuple[dict[str, Any], list[dict[str, Any]], float]:
    assert request.hops is not None
    found = await hunt(service, client, model, meter, name=name, question=request.question, hops=request.hops,
                       reply_tokens=request.reply_tokens, started=started, deadline=deadline)
    response = {"answer": found.answer, "model": found.model or name, "model_ms": round(meter.ms, 1),
                "turns": found.turns, "hops": found.hops, "read": found.read, "usage": meter.usage(),
                "evidence": found.evidence, "sources": await sources_of(service, found.evidence),
                "exhausted": found.exhausted, "deadline_turn": found.deadline_turn}
    return response, found.steps, found.forest_ms


def _source(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "title": row["title"], "summary": row["summary"], "type": row["type"]}


async def sources_of(service: ForestService, evidence: list[str]) -> list[dict[str, Any]]:
    """The catalog's passport of each evidence id (one that is gone since is left out)."""
    def rows(reader: Any) -> list[dict[str, Any]]:
        return [_source(row) for row in map(reader.catalog.get, evidence) if row is not None]
    return await service.arun_on_thread(rows) if evidence else []


async def _store(service: ForestService, cache: AnswerCache, key: Any, head: Any,
                 response: dict[str, Any]) -> dict[str, Any] | None:
    """Store the answer. One that cannot be stored costs the next call a model
    request, not this answer: the trace step returned says why."""
    def put(_reader: Any) -> dict[str, Any] | None:
        try:
            if cache.put(key, head, response):
                return None
            problem = "larger than the cache holds"
        except (OSError, sqlite3.Error) as exc:
            problem = f"{type(exc).__name__}: {exc}"
        return {"step": "cache", "ok": False, "detail": f"not cached: {problem}"}
    return await service.arun_on_thread(put)


def _from_cache(stored: dict[str, Any], stored_at: float, *, started: float, prices: Prices | None) -> dict[str, Any]:
    meter = Meter()  # this call asked no model
    response = dict(stored)
    response["cached_from"] = {"at": datetime.fromtimestamp(stored_at, timezone.utc).isoformat(timespec="seconds"),
                               "model_ms": stored["model_ms"], "usage": stored["usage"]}
    response.update(model_ms=0.0, usage=meter.usage(), cached=True)
    total = _ms_since(started)
    response["trace"] = {"steps": [{"step": "cache", "ms": total, "detail": "hit"}], "retrieval_ms": 0.0,
                         "total_ms": total}
    response["cost"] = meter.cost(prices)
    return response


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
