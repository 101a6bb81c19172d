"""What a Troop's hunt returns: ``TroopResult``, and its JSON shape (``to_dict``).

    {"troop": "<heat scope id>", "question": ..., "answer": ..., "answered": true,
     "evidence": [ids the judge cited, each one some forager was shown], "sources": [passports],
     "winner": 2, "stop": {"policy": "first", "reason": "forager 2 answered with evidence"},
     "frontier": [the entry points, forager i starts from the i-th],
     "foragers": [{"n", "entry", "session", "status", "answer", "evidence", "turns",
                   "trail": [{"n", "tool", "id", "ok", "cached", "ms"}], "usage", "model_ms", "forest_ms",
                   "error" (failed only)}],
     "judge": {"ok", "model", "ms", "usage", "reads_sent", "reads_left_out"} | {"ok": false, "error"} | null,
     "heat": the winner's close_session outcome (metrics, suggest_shortcuts) | null,
     "totals": {"model_calls", "prompt_tokens", "completion_tokens", "forest_calls", "cache_hits",
                "forest_ms", "wall_ms"}}

``answered`` is true when the answer is not empty and cites evidence: that is
exit 0 for ``vine troop``, else 1. ``forest_calls`` counts the reads that
reached the forest (the frontier's locate included); ``cache_hits`` the reads
the visited cache served instead. ``forest_ms`` sums the forest calls alone;
``model_ms`` and ``usage`` are each model's own meter.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .forager import Forager
from .judge import Verdict


@dataclass
class TroopResult:
    troop: str
    question: str
    answer: str
    answered: bool
    evidence: list[str]
    sources: list[dict[str, Any]]
    winner: int | None
    stop: dict[str, str]
    frontier: list[str]
    foragers: list[Forager]
    verdict: Verdict | None
    judge_error: dict[str, Any] | None
    heat: dict[str, Any] | None
    cache_hits: int
    forest_calls: int
    frontier_ms: float
    wall_ms: float

    def to_dict(self) -> dict[str, Any]:
        foragers = [_forager(f) for f in self.foragers]
        meters = [f.meter for f in self.foragers] + ([self.verdict.meter] if self.verdict else [])
        totals = {"model_calls": sum(m.calls for m in meters), "prompt_tokens": sum(m.prompt for m in meters),
                  "completion_tokens": sum(m.completion for m in meters), "forest_calls": self.forest_calls,
                  "cache_hits": self.cache_hits,
                  "forest_ms": round(self.frontier_ms + sum(f["forest_ms"] for f in foragers), 1),
                  "wall_ms": round(self.wall_ms, 1)}
        return {"troop": self.troop, "question": self.question, "answer": self.answer, "answered": self.answered,
                "evidence": self.evidence, "sources": self.sources, "winner": self.winner, "stop": self.stop,
                "frontier": self.frontier, "foragers": foragers, "judge": self._judge(), "heat": self.heat,
                "totals": totals}

    def _judge(self) -> dict[str, Any] | None:
        if self.judge_error is not None:
            return {"ok": False, "error": self.judge_error}
        if self.verdict is None:
            return None
        v = self.verdict
        return {"ok": True, "model": v.model, "ms": v.ms, "usage": v.meter.usage(), "reads_sent": v.reads_sent,
                "reads_left_out": v.reads_left_out}


def _forager(forager: Forager) -> dict[str, Any]:
    out: dict[str, Any] = {
        "n": forager.n, "entry": forager.entry["id"] if forager.entry else None, "session": forager.session,
        "status": forager.status, "answer": forager.hunt.answer, "evidence": forager.hunt.evidence,
        "turns": forager.hunt.turns, "trail": forager.trail(), "usage": forager.meter.usage(),
        "model_ms": round(forager.meter.ms, 1),
        "forest_ms": round(sum(hop["ms"] for hop in forager.hunt.hops if not hop.get("cached")), 1)}
    if forager.error is not None:
        out["error"] = forager.error
    return out
