"""The shared contract of every read call: one serializer, token budgets, truncation.

primitives.md, "The shared contract": a response fits its declared budget; when it
does not, whole items are dropped from the tail of its list and ``truncated`` is
set, with a hint saying what to do instead. Nothing is sliced. Tokens are the
spec's deterministic estimate, ceil(characters / 4), taken over exactly the text
the transports send, so what is measured is what goes on the wire: compact JSON,
``ensure_ascii=False`` (an accented letter is one character, not six).
"""
from __future__ import annotations

import json
from typing import Any, MutableMapping, Sequence

from ..errors import estimate_tokens

BUDGETS: dict[str, int] = {
    "locate": 800,
    "look": 500,
    "move": 600,
    "scan": 800,
    "pick": 4000,
    "sniff": 800,
    "query": 2000,
    "harvest": 4000,
}


def wire(response: Any) -> str:
    """The response as every transport sends it."""
    return json.dumps(response, ensure_ascii=False, separators=(",", ":"))


def tokens_of(response: Any) -> int:
    return estimate_tokens(wire(response))


def fits(response: Any, budget: int) -> bool:
    return tokens_of(response) <= budget


def shed_tail(response: MutableMapping[str, Any], key: str, budget: int, *, hint: str | None = None) -> bool:
    """Drop whole items from the tail of ``response[key]`` until the response fits.

    Returns True when something was dropped; then ``truncated`` is True and
    ``hint`` (when given) is set. The list is measured once: compact JSON of a list
    is its items joined by commas inside brackets, so the longest prefix that fits
    is found by summing item lengths, without re-serializing the response per item.
    """
    items = list(response[key])
    limit = budget * 4  # ceil(chars / 4) <= budget  <=>  chars <= 4 * budget
    if len(wire(response)) <= limit:
        return False
    response["truncated"] = True
    if hint is not None:
        response["hint"] = hint
    response[key] = []
    room = limit - len(wire(response))  # what the list's items and commas may take
    kept = 0
    for item in items:
        cost = len(wire(item)) + (1 if kept else 0)
        if cost > room:
            break
        room -= cost
        kept += 1
    response[key] = items[:kept]
    return True


def clip(text: str, tokens: int) -> str:
    """``text`` within ``tokens`` tokens: whole when it fits, else cut at a word
    boundary and ended with an ellipsis. For a neighbour's scent (a summary shown
    beside another node), never for a body: a body is never sliced."""
    limit = tokens * 4
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + "…"


def shed_evenly(response: MutableMapping[str, Any], keys: Sequence[str], budget: int) -> dict[str, int]:
    """Drop items from the tails of several lists until ``response`` fits, always
    from the list that has the most items left, so one long list cannot empty the
    others. Returns how many items each list lost (an empty dict when it fitted).

    Like ``shed_tail``, items are measured once: removing one item of a compact JSON
    list of n items shortens the text by the item and, when n > 1, one comma.
    """
    limit = budget * 4
    over = len(wire(response)) - limit
    if over <= 0:
        return {}
    costs = {key: [len(wire(item)) for item in response[key]] for key in keys if response.get(key)}
    lost: dict[str, int] = {}
    while over > 0 and costs:
        key = max(costs, key=lambda k: (len(costs[k]), -list(keys).index(k)))
        items = costs[key]
        over -= items.pop() + (1 if items else 0)
        lost[key] = lost.get(key, 0) + 1
        if not items:
            del costs[key]
    for key, count in lost.items():
        response[key] = list(response[key])[: len(response[key]) - count]
    return lost
