"""The navigator: a model driving the read primitives itself until it can answer.

One loop for every caller that lets a model hunt: ``answer`` with ``hops``
(``serve.answer_hops``) and each forager of a Troop (``troop``). The model is
offered the seven reads (``HOP_TOOLS``) as OpenAI function tools and calls them
until it can answer. The loop never reaches a forest itself: it is handed
``read(tool, args)``, an async callable that runs one read and returns the
response and whether a cache served it (no forest work). ``answer`` runs it on
the forest's thread in the caller's client session; a Troop puts its shared
visited cache in front. A write is never run, whatever the model asks: the
model is told E_READONLY. Every error goes back to the model as the error
envelope, so it may correct itself.

Every call the model makes counts against ``hops``, a refused or failing one
too, so a model that keeps calling cannot loop: there are at most ``hops`` turns
with tool calls, then one deadline turn. The deadline turn comes when the hops
are spent, when two thirds of the hunt's time is gone (the rest is left for
that turn), or when the model replies with nothing: the tools are taken away
and the model is told to answer from what it read. A model that still does not
answer leaves the answer empty and ``exhausted: true``, never an invented one.

The caller may hand in the ``Hunt`` to fill, so what a hunt did survives it
being cancelled (a Troop's stop) or its model failing (``VineError``).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Sequence

from monkeyllm_core import VineError
from monkeyllm_core.read.contract import tokens_of, wire

from .serve.answer_model import REPLY_FORMAT, AnswerModel, Meter, read_reply
from .serve.tools import TOOLS

HOP_TOOLS = ("locate", "sniff", "look", "move", "pick", "scan", "query")
HOP_SHARE_OF_DEADLINE = 2 / 3  # past it no new tool turn starts: the rest is the deadline turn's
DEADLINE_TURN = ("No more tool calls: answer now from what you have read. If it does not answer the question, "
                 "say so in the answer. " + REPLY_FORMAT)

# one read: (tool, arguments) -> (the response, served from a cache); an expected failure raises VineError
ReadCall = Callable[[str, dict[str, Any]], Awaitable["tuple[dict[str, Any], bool]"]]


def system_prompt(hops: int) -> str:
    return ("You answer questions about a knowledge forest (markdown nodes in branches, and datasets you can query "
            f"with SQL) by calling its read tools, at most {hops} calls in all. Start with locate (or sniff for an "
            "exact string), look at a node before you pick or query it, and stop as soon as you can answer. Answer "
            "only from what the tools returned; never invent a fact, a figure or an id. When you can answer, reply "
            "without a tool call. " + REPLY_FORMAT)


def tool_specs() -> list[dict[str, Any]]:
    """The read tools as OpenAI function tools, with the schemas MCP shows."""
    return [{"type": "function", "function": {"name": name, "description": TOOLS[name].description,
                                              "parameters": TOOLS[name].input_schema()}}
            for name in HOP_TOOLS]


@dataclass
class Hunt:
    """What a hop loop did: the answer (or none), every hop, what each returned."""
    answer: str = ""
    evidence: list[str] = field(default_factory=list)
    exhausted: bool = False
    deadline_turn: bool = False
    turns: int = 0
    model: str | None = None  # the model the provider says answered last
    hops: list[dict[str, Any]] = field(default_factory=list)
    read: list[dict[str, Any]] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)  # the trace: model turns and hops, in order
    seen: dict[str, None] = field(default_factory=dict)  # every id the model was shown, in order

    @property
    def forest_ms(self) -> float:
        return sum(hop["ms"] for hop in self.hops)


async def navigate(read: ReadCall, model: AnswerModel, meter: Meter, *, name: str, question: str, hops: int,
                   reply_tokens: int, started: float, deadline: float, briefing: str = "",
                   shown: Sequence[str] = (), into: Hunt | None = None) -> Hunt:
    """Run the loop (module doc). ``started`` and ``deadline`` are ``time.monotonic()``
    instants; ``briefing`` follows the question in the first message (a forager's
    entry point), and ``shown`` are the ids it names, which the answer may cite. A
    model that fails raises ``VineError`` (``answer_model.model_error``)."""
    result = into if into is not None else Hunt()
    result.seen.update(dict.fromkeys(shown))
    opening = f"Question: {question}" + (f"\n\n{briefing}" if briefing else "")
    messages: list[dict[str, Any]] = [{"role": "system", "content": system_prompt(hops)},
                                      {"role": "user", "content": opening}]
    last_tool_turn = started + (deadline - started) * HOP_SHARE_OF_DEADLINE
    specs = tool_specs()
    while len(result.hops) < hops and time.monotonic() < last_tool_turn:
        reply, model_ms = await _turn(model, meter, result, name=name, messages=messages, reply_tokens=reply_tokens,
                                      deadline=deadline, tools=specs)
        if not reply.tool_calls:
            if reply.content.strip():
                result.answer, result.evidence = read_reply(reply.content, list(result.seen))
                return result
            break  # it said nothing: the deadline turn asks it to answer
        messages.append({"role": "assistant", "content": reply.content or None, "tool_calls": [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
            for call in reply.tool_calls]})
        for call in reply.tool_calls:
            spent = len(result.hops) >= hops
            out = await _hop(read, result, call.name, call.arguments, model_ms, spent=spent)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": wire(out)})
    messages.append({"role": "user", "content": DEADLINE_TURN})
    reply, _ = await _turn(model, meter, result, name=name, messages=messages, reply_tokens=reply_tokens,
                           deadline=deadline, tools=None)
    result.deadline_turn = True
    if reply.tool_calls or not reply.content.strip():
        result.exhausted = True  # nothing to answer from: say so, never invent
        return result
    result.answer, result.evidence = read_reply(reply.content, list(result.seen))
    return result


async def _turn(model: AnswerModel, meter: Meter, result: Hunt, *, name: str, messages: list[dict[str, Any]],
                reply_tokens: int, deadline: float, tools: list[dict[str, Any]] | None) -> Any:
    reply, ms = await model.ask(meter, model=name, messages=messages, max_tokens=reply_tokens, deadline=deadline,
                                tools=tools)
    result.turns += 1
    result.model = reply.model or result.model
    result.steps.append({"step": "model", "turn": result.turns, "ms": round(ms, 1),
                         "tokens": reply.completion_tokens, "detail": reply.model or name})
    return reply, ms


async def _hop(read: ReadCall, result: Hunt, tool: str, arguments: str, model_ms: float, *,
               spent: bool) -> dict[str, Any]:
    """Run one tool call the model made (or refuse it), record it, and return what
    goes back to the model: the response, or the error envelope. A hop a cache
    served says ``cached: true`` (in ``hops`` and ``steps``)."""
    started = time.perf_counter()
    args: Any = {}
    cached = False
    try:
        if spent:
            raise VineError("E_UNSUPPORTED", f"{tool} was not run: every hop of this answer is spent",
                            "Answer now from what you have read.")
        args = _arguments(tool, arguments)
        out, cached = await read(tool, args)
        ok = True
    except VineError as exc:
        out, ok = exc.envelope(), False
    ms = (time.perf_counter() - started) * 1000
    focus_key = focus_key_of(args)
    focus = args[focus_key] if focus_key else None
    n = len(result.hops) + 1
    hop = {"n": n, "tool": tool, "id": focus, "ms": round(ms, 2), "model_ms": round(model_ms, 1), "ok": ok,
           "args": {k: v for k, v in args.items() if k != focus_key}, "out": summary_of(out)}
    step = {"step": tool, "id": focus, "ms": round(ms, 2), "tokens": tokens_of(out), "ok": ok}
    if cached:
        hop["cached"] = step["cached"] = True
    result.hops.append(hop)
    result.read.append({"n": n, "tool": tool, "id": focus, "out": out})
    result.steps.append(step)
    if ok:
        result.seen.update(dict.fromkeys([*([focus] if focus else []), *ids_in(out)]))
    return out


def focus_key_of(args: dict[str, Any]) -> str | None:
    """The argument naming the node a read is about (the trace's ``focus``), if any."""
    return next((key for key in ("id", "parent_id", "scope") if isinstance(args.get(key), str)), None)


def _arguments(tool: str, arguments: str) -> dict[str, Any]:
    """The model's arguments for a read it may make (VineError, for the model, otherwise)."""
    if tool not in HOP_TOOLS:
        if tool in TOOLS and TOOLS[tool].writes:
            raise VineError("E_READONLY", f"answer only reads: {tool} is not offered to it",
                            "Answer from what you read; writes are plant, graft and tend, called deliberately.")
        raise VineError("E_NOT_FOUND", f"no read tool named {tool!r}", f"Tools: {', '.join(HOP_TOOLS)}.")
    try:
        args = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        raise VineError("E_SCHEMA", f"{tool}: the arguments are not JSON: {arguments!r:.80}",
                        "Send the arguments as one JSON object.") from None
    if not isinstance(args, dict):
        raise VineError("E_SCHEMA", f"{tool}: the arguments must be a JSON object", "e.g. {\"id\": \"...\"}")
    return args


def ids_in(response: Any) -> list[str]:
    """Every node id a response shows (any ``id`` field, at any depth)."""
    found: list[str] = []
    stack = [response]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if isinstance(value.get("id"), str):
                found.append(value["id"])
            stack.extend(reversed(list(value.values())))
        elif isinstance(value, list):
            stack.extend(reversed(value))
    return found


def summary_of(out: dict[str, Any]) -> str:
    """A hop's result in a few words, for the ``hops`` list (``read`` has it whole)."""
    if "error" in out:
        return f"{out['error']['code']}: {out['error']['message']}"[:160]
    if "rows" in out and "row_count" in out:
        return f"{out['row_count']} row(s)" + (", limited" if out.get("limited") else "")
    listed = next((key for key in ("results", "nodes", "neighbors") if isinstance(out.get(key), list)), None)
    if listed is not None:
        return f"{len(out[listed])} {listed}" + (", truncated" if out.get("truncated") else "")
    if "outline" in out and "body" not in out:
        return "outline" if "query_manual" not in out and "edges_out" not in out else f"{out.get('type')} digest"
    if "body" in out:
        return f"section {out['section']!r}" if out.get("section") else "body"
    if "edges_out" in out or "summary" in out:
        return f"{out.get('type', 'node')} digest"
    return f"{tokens_of(out)} tokens"
