"""A Troop's hunt from the first locate to the judge and the heat (``troop_call``).

1. **Frontier.** One ``locate`` of the question with k = N gives each forager a
   distinct entry point, named in its first message. When locate returns fewer
   than N, fewer foragers are launched (one per entry point): foragers without
   an entry of their own would walk the same trail and buy nothing. When it
   returns none, one forager hunts from the question alone. The locate is the
   troop's own call, traced in a session of its own (``troop-<scope>``) in the
   same heat scope, and it goes through the visited cache too.
2. **Foragers** run concurrently (asyncio), each a navigator with its own model
   turns; every forest call runs on the forest's one thread (``ForestService``).
   Each has its own client session (its own trace) in one shared heat scope,
   and every read goes through the shared visited cache (``cache``).
3. **Stop** (``stop``): the policy, or every forager finished; the ones still
   hunting are cancelled. A forager whose model fails is reported failed and
   the rest go on; when every forager failed, the hunt is one ``VineError``.
4. **Judge** (``judge``): one model call writes the answer from the foragers'
   answers and reads. It is skipped when nobody answered or read anything.
   Should it fail, the first forager to answer stands, and the judge's error
   is reported.
5. **Winner and heat.** The winner is the forager whose harvest (the nodes its
   picks and harvests returned, and its own evidence) holds the most of the
   judge's evidence; ties go to the node ids it was merely shown, then to the
   forager that answered first, then to the lower number. It is chosen in code,
   not named by the judge, so a model cannot pick a forager that never saw the
   evidence. Only its session closes with success, on the evidence it saw
   itself, read from its calls (cache hits included): its winning trail
   becomes persistent heat. Every other forager's session closes with failure,
   and the scope's session heat evaporates with them.

The hunt's deadline is ``answer``'s (``MONKEYLLM_ANSWER_DEADLINE``, the model's
``deadline_seconds``): the foragers have the first ``FORAGE_SHARE`` of it, the
judge the rest. ``hops`` bounds each forager's reads.
"""
from __future__ import annotations

import asyncio
import math
import time
from typing import Any, Sequence

from monkeyllm_core import VineError
from monkeyllm_core.read.sessions import new_session_id

from monkeyllm_gardener.serve.answer import sources_of
from monkeyllm_gardener.serve.answer_model import AnswerModel
from monkeyllm_gardener.serve.forest_service import ForestService

from .cache import VisitedCache
from .forager import Forager, forage
from .judge import Testimony, Verdict, has_material, judge
from .result import TroopResult
from .stop import POLICIES, StopPolicy, stop_policy

FORAGE_SHARE = 0.75  # of the deadline; the judge has the rest
MAX_FORAGERS = 10
MAX_HOPS = 12  # answer's own bound on hops
DEFAULT_HOPS = 6


def check_request(question: str, n: int, stop: str, hops: int) -> None:
    """E_SCHEMA for a request the Troop cannot run, before any model is asked."""
    if not isinstance(question, str) or not question.strip():
        raise VineError("E_SCHEMA", "troop: the question is empty", 'Ask in words, e.g. "who owns the price list?"')
    for label, value, high in (("n", n, MAX_FORAGERS), ("hops", hops, MAX_HOPS)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
            raise VineError("E_SCHEMA", f"troop: {label} must be a whole number between 1 and {high}, not {value!r}",
                            f"e.g. {label}={3 if label == 'n' else DEFAULT_HOPS}.")
    if stop not in POLICIES:
        raise VineError("E_SCHEMA", f"troop: stop must be one of {', '.join(POLICIES)}, not {stop!r}",
                        "first ends at the first confident answer; quorum when most agree; patience when "
                        "harvests stop bringing new nodes.")


async def troop_call(service: ForestService, question: str, *, model: AnswerModel, n: int = 3, stop: str = "first",
                     hops: int = DEFAULT_HOPS, reply_tokens: int = 300) -> TroopResult:
    """Hunt ``question`` on ``service``'s forest with ``n`` foragers (module doc)."""
    check_request(question, n, stop, hops)
    wall, clock = time.perf_counter(), time.monotonic()
    deadline = clock + model.deadline_seconds
    forage_deadline = clock + model.deadline_seconds * FORAGE_SHARE
    name = await model.name(deadline)
    scope = new_session_id()
    cache = VisitedCache()
    troop_client = f"troop-{scope}"
    await _join(service, troop_client, scope)
    located = time.perf_counter()
    frontier, _ = await cache.read("locate", {"query": question, "k": n},
                                   lambda: service.acall("locate", {"query": question, "k": n}, troop_client))
    frontier_ms = (time.perf_counter() - located) * 1000
    entries: list[dict[str, Any] | None] = list(frontier["results"][:n]) or [None]
    foragers = [Forager(n=i, of=len(entries), client=f"{troop_client}-{i}", entry=entry,
                        session=await _join(service, f"{troop_client}-{i}", scope, goal_of=troop_client))
                for i, entry in enumerate(entries, start=1)]
    policy = stop_policy(stop, len(foragers))
    tasks = [asyncio.create_task(forage(forager, forest=service.acall, cache=cache, policy=policy, model=model,
                                        name=name, question=question, hops=hops, reply_tokens=reply_tokens,
                                        started=clock, deadline=forage_deadline))
             for forager in foragers]
    await _until_stopped(tasks, policy)
    await cache.settle()
    if all(forager.status == "failed" for forager in foragers):
        await _close_all(service, troop_client, foragers, winner=None, answer_nodes=[])
        first = foragers[0].error or {}
        raise VineError(first.get("code", "E_TIMEOUT"),
                        f"troop: the model failed for every forager ({len(foragers)}): {first.get('message', '')}",
                        first.get("hint", "Check the MONKEYLLM_LLM_* settings and the model's endpoint."))

    testimonies = [Testimony(f.n, f.status, f.hunt) for f in foragers]
    verdict: Verdict | None = None
    judge_error: dict[str, Any] | None = None
    if has_material(testimonies):
        known = list(dict.fromkeys(node for f in foragers for node in f.hunt.seen))
        try:
            verdict = await judge(model, name=name, question=question, testimonies=testimonies, known_ids=known,
                                  reply_tokens=reply_tokens, deadline=deadline)
        except VineError as exc:
            judge_error = exc.envelope()["error"]
    if verdict is not None:
        answer, evidence = verdict.answer, verdict.evidence
        winner = _winner(foragers, evidence)
    else:
        winner = _first_to_answer(foragers)
        answer, evidence = (winner.hunt.answer, winner.hunt.evidence) if winner else ("", [])
    answered = bool(answer and evidence)
    if not answered:
        winner = None
    answer_nodes = [node for node in evidence if winner and node in winner.hunt.seen]
    closed = await _close_all(service, troop_client, foragers, winner=winner, answer_nodes=answer_nodes)
    return TroopResult(
        troop=scope, question=question, answer=answer, answered=answered, evidence=evidence,
        sources=await sources_of(service, evidence), winner=winner.n if winner else None,
        stop={"policy": stop, "reason": policy.reason or "every forager finished"},
        frontier=[entry["id"] for entry in entries if entry], foragers=foragers, verdict=verdict,
        judge_error=judge_error, heat=closed, cache_hits=cache.hits, forest_calls=cache.runs,
        frontier_ms=frontier_ms, wall_ms=(time.perf_counter() - wall) * 1000)


async def _join(service: ForestService, client: str, scope: str, *, goal_of: str | None = None) -> str:
    """Give ``client`` a session in the troop's heat scope; its session id. ``goal_of``:
    the troop's own client, whose frontier locate set the hunt's goal (the Gauntlet,
    when the forest has a canopy): every forager ranks toward it from its first hop,
    one embedding for the whole troop, even when its own locate is a cache hit."""
    def join(reader: Any) -> str:
        goal = None
        if goal_of is not None:
            with reader.client_session(goal_of) as leader:
                goal = leader.goal
        with reader.client_session(client, heat_scope=scope) as session:
            if session.goal is None:
                session.goal = goal
            return session.id
    return await service.arun_on_thread(join)


async def _until_stopped(tasks: Sequence[asyncio.Task], policy: StopPolicy) -> None:
    """Wait until every forager finished or the policy stopped the hunt; then cancel the rest.
    A forager ends on its own (``forage``), so anything it raised is a bug: raised here."""
    stopped = asyncio.ensure_future(policy.stopped.wait())
    pending = set(tasks)
    try:
        while pending and not policy.stopped.is_set():
            done, _ = await asyncio.wait(pending | {stopped}, return_when=asyncio.FIRST_COMPLETED)
            pending -= done
    finally:
        stopped.cancel()
        for task in pending:
            task.cancel()
        ended = await asyncio.gather(*tasks, return_exceptions=True)
    for outcome in ended:
        if isinstance(outcome, Exception):
            raise outcome


def _winner(foragers: Sequence[Forager], evidence: Sequence[str]) -> Forager | None:
    cited = set(evidence)

    def rank(forager: Forager) -> tuple[int, int, float, int]:
        held = cited & (set(forager.harvested) | set(forager.hunt.evidence))
        shown = cited & set(forager.hunt.seen)
        first = forager.finished_at if forager.finished_at is not None else math.inf
        return (-len(held), -len(shown), first, forager.n)

    best = min(foragers, key=rank)
    return best if cited & set(best.hunt.seen) else None


def _first_to_answer(foragers: Sequence[Forager]) -> Forager | None:
    answered = [f for f in foragers if f.finished_at is not None and f.hunt.evidence]
    return min(answered, key=lambda f: (f.finished_at, f.n)) if answered else None


async def _close_all(service: ForestService, troop_client: str, foragers: Sequence[Forager], *,
                     winner: Forager | None, answer_nodes: list[str]) -> dict[str, Any] | None:
    """Close the winner's session with success first, then every other one with
    failure (see the module doc); the winner's outcome, or None."""
    def close(reader: Any, client: str, success: bool, calls: Any = None) -> dict[str, Any]:
        with reader.client_session(client):
            if success:
                return reader.close_session_with(True, answer_nodes, calls=calls)
            return reader.close_session(False, [])

    outcome = None
    if winner is not None:
        outcome = await service.arun_on_thread(lambda reader: close(reader, winner.client, True, winner.calls))
    for forager in foragers:
        if forager is not winner:
            await service.arun_on_thread(lambda reader, f=forager: close(reader, f.client, False))
    # the troop's own session (its frontier locate) ends too: its trace says the hunt is over
    await service.arun_on_thread(lambda reader: close(reader, troop_client, False))
    return outcome
