"""One forager of a Troop: a navigator (``navigator.navigate``) with its own session.

Its reads go through the troop's visited cache to the forest, in its own client
session, which shares the troop's heat scope: what any forager picks warms
every forager's rankings, while each keeps its own trace. Beside the
navigator's record it keeps ``calls``, its reads in the trace's shape (call,
focus, returned, tokens) whether the forest or the cache served them: that is
the hunt ``close_session_with`` reads if it wins.

Its status ends as ``answered`` (an answer, possibly without evidence),
``exhausted`` (none), ``failed`` (its model failed: ``error`` holds the code and
message; the other foragers go on) or ``cancelled`` (the stop discipline ended
the hunt first). Whatever it read before it ended is kept.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from monkeyllm_core import VineError
from monkeyllm_core.read.contract import tokens_of
from monkeyllm_core.read.facade import returned_ids
from monkeyllm_core.read.outcome import HARVESTING_CALLS

from monkeyllm_gardener.navigator import Hunt, focus_key_of, navigate
from monkeyllm_gardener.serve.answer_model import AnswerModel, Meter

from .cache import VisitedCache
from .stop import StopPolicy

ForestCall = Callable[[str, dict[str, Any], str], Awaitable[dict[str, Any]]]  # (tool, args, client) -> response


@dataclass
class Forager:
    n: int
    of: int  # how many foragers the troop launched
    client: str  # its client session on the forest
    session: str  # that session's id: its trace is _derived/traces/<session>.jsonl
    entry: dict[str, Any] | None  # the locate result it starts from (None: the question alone)
    hunt: Hunt = field(default_factory=Hunt)
    meter: Meter = field(default_factory=Meter)
    status: str = "hunting"
    error: dict[str, Any] | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    harvested: dict[str, None] = field(default_factory=dict)  # nodes its harvests returned, in order
    finished_at: float | None = None  # time.monotonic() when it answered

    # what the stop policies read (stop.Answered)
    @property
    def answer(self) -> str:
        return self.hunt.answer

    @property
    def evidence(self) -> list[str]:
        return self.hunt.evidence

    @property
    def forced(self) -> bool:
        return self.hunt.deadline_turn

    def briefing(self) -> str:
        """What its first message says after the question: where it starts."""
        who = f"You are forager {self.n} of {self.of}, hunting this question at the same time as the others"
        if self.entry is None:
            return (f"{who}. locate found no entry point for the question: search with other words (locate, "
                    "sniff), or walk the branches from _index.")
        entry = self.entry
        return (f"{who}, each from its own entry point. Yours is {entry['id']} ({entry.get('kind', 'node')}, "
                f"{entry.get('type', '')}): {entry.get('title', '')}: {entry.get('summary', '')} "
                "Start from it (look at it, move from it, pick it); you may still call any tool.")

    def trail(self) -> list[dict[str, Any]]:
        """Its calls as the report shows them."""
        return [{"n": hop["n"], "tool": hop["tool"], "id": hop["id"], "ok": hop["ok"],
                 "cached": hop.get("cached", False), "ms": hop["ms"]} for hop in self.hunt.hops]


async def forage(forager: Forager, *, forest: ForestCall, cache: VisitedCache, policy: StopPolicy,
                 model: AnswerModel, name: str, question: str, hops: int, reply_tokens: int, started: float,
                 deadline: float) -> None:
    """Run one forager to its end (module doc); never raises but CancelledError."""
    async def read(tool: str, args: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        focus_key = focus_key_of(args)
        record: dict[str, Any] = {"call": tool, "focus": args[focus_key] if focus_key else None}
        try:
            out, cached = await cache.read(tool, args, lambda: forest(tool, args, forager.client))
        except VineError as exc:
            forager.calls.append({**record, "returned": [], "tokens": tokens_of(exc.envelope()), "error": exc.code})
            raise
        returned = returned_ids(out)
        forager.calls.append({**record, "returned": returned, "tokens": tokens_of(out)})
        if tool in HARVESTING_CALLS and returned:
            forager.harvested.update(dict.fromkeys(returned))
            policy.harvested(returned)
        return out, cached

    shown = [forager.entry["id"]] if forager.entry else []
    try:
        await navigate(read, model, forager.meter, name=name, question=question, hops=hops,
                       reply_tokens=reply_tokens, started=started, deadline=deadline, briefing=forager.briefing(),
                       shown=shown, into=forager.hunt)
    except VineError as exc:
        forager.status, forager.error = "failed", exc.envelope()["error"]
        return
    except asyncio.CancelledError:
        forager.status = "cancelled"
        raise
    forager.status = "answered" if forager.hunt.answer else "exhausted"
    if forager.hunt.answer:
        forager.finished_at = time.monotonic()
        policy.answered(forager)
