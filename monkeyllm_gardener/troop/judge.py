"""The judge: one model call that writes a Troop's answer from its foragers' harvests.

It is sent the question, every forager's answer (with its evidence, or its
status when it has none), and the reads the foragers made, each response once
however many foragers it was served to: the content reads first (pick,
harvest, query, sniff, then look), then the map reads (locate, move, scan), each
kind by forager and in the order it made them, whole items only, within
``EVIDENCE_TOKENS``. What
the budget left out is counted in the message, never cut silently.

It may merge complementary answers. Its evidence keeps only ids some forager
was actually shown (``read_reply``), so an invented id is never cited.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from monkeyllm_core.read.contract import tokens_of, wire

from monkeyllm_gardener.navigator import Hunt
from monkeyllm_gardener.serve.answer_model import REPLY_FORMAT, AnswerModel, Meter, read_reply

EVIDENCE_TOKENS = 6000
READ_ORDER = ("pick", "harvest", "query", "sniff", "look", "locate", "move", "scan")

SYSTEM = ("You are the judge of a troop: several navigators hunted the same question in a knowledge forest at the "
          "same time, each from its own entry point. You get each one's answer and the evidence they read. Write "
          "the final answer from that evidence and nothing else: merge answers that complement each other, and when "
          "they conflict prefer the one the evidence supports. If the evidence does not answer the question, say so "
          "plainly; never invent a fact, a figure or an id. " + REPLY_FORMAT)


@dataclass(frozen=True)
class Testimony:
    """What one forager brings the judge."""
    n: int
    status: str
    hunt: Hunt


@dataclass
class Verdict:
    answer: str
    evidence: list[str]
    model: str
    ms: float
    meter: Meter
    reads_sent: int
    reads_left_out: int
    error: dict[str, Any] | None = field(default=None)


def judge_messages(question: str, testimonies: Sequence[Testimony],
                   budget: int = EVIDENCE_TOKENS) -> tuple[list[dict[str, Any]], int, int]:
    """The judge's messages, and how many reads were sent and left out for the budget."""
    answers = [{"forager": t.n, "answer": t.hunt.answer, "evidence": t.hunt.evidence} if t.hunt.answer
               else {"forager": t.n, "answer": None, "status": t.status} for t in testimonies]
    reads, sent_texts = [], set()
    for t in testimonies:
        for read in t.hunt.read:
            if "error" in read["out"]:
                continue
            text = wire(read["out"])
            if text in sent_texts:
                continue  # a response the visited cache served several foragers: sent once
            sent_texts.add(text)
            reads.append({"forager": t.n, "tool": read["tool"], "id": read["id"], "out": read["out"]})
    reads.sort(key=lambda item: READ_ORDER.index(item["tool"]) if item["tool"] in READ_ORDER else len(READ_ORDER))
    kept, spent = [], 0
    for item in reads:
        cost = tokens_of(item)
        if spent + cost <= budget:
            kept.append(item)
            spent += cost
    left_out = len(reads) - len(kept)
    header = f"What they read ({len(kept)} read(s)" + (f"; {left_out} left out for the budget" if left_out else "")
    user = f"Question: {question}\n\nThe foragers' answers:\n{wire(answers)}\n\n{header}):\n{wire(kept)}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}], len(kept), left_out


def has_material(testimonies: Sequence[Testimony]) -> bool:
    """Whether there is anything to judge: an answer, or a read that returned something."""
    return any(t.hunt.answer or any("error" not in r["out"] for r in t.hunt.read) for t in testimonies)


async def judge(model: AnswerModel, *, name: str, question: str, testimonies: Sequence[Testimony],
                known_ids: Sequence[str], reply_tokens: int, deadline: float) -> Verdict:
    """Ask the judge (a failing model raises ``VineError``, as ``AnswerModel.ask`` does)."""
    meter = Meter()
    messages, sent, left_out = judge_messages(question, testimonies)
    reply, ms = await model.ask(meter, model=name, messages=messages, max_tokens=reply_tokens, deadline=deadline)
    answer, evidence = read_reply(reply.content, known_ids)
    return Verdict(answer=answer, evidence=evidence, model=reply.model or name, ms=round(ms, 1), meter=meter,
                   reads_sent=sent, reads_left_out=left_out)
