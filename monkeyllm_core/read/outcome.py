"""What a closed hunt says about itself: its winning trail, metrics and shortcuts.

A pure reading of a session's trace (one record per read call, in order; see
``sessions``), so the same trace always gives the same outcome, whichever
process made the calls. The definitions, where concepts.md leaves them open:

- The **banana call** is the first call that harvested an answer node: a ``pick``
  that returned its body (or a section) or a ``harvest`` that returned it. Failing that, the first call that
  touched one (looked at it, or returned it); failing that, the last call.
- ``hops_to_banana`` counts the calls up to and including the banana call,
  ``tokens_to_banana`` what those calls returned, ``calls`` every call traced.
- The **winning trail** is found backwards from the banana call: a node is on it
  when it is an answer node, or the focus of a call (the node a look, move, scan
  or pick was about) that surfaced a node already on it. So
  ``locate -> look(A) -> move(A) -> pick(B)`` has the trail ``[A, B]``, and a
  detour the hunt abandoned is not on it. The trail is in the order it was walked.
- ``suggest_shortcuts`` names the answer nodes of a successful hunt that took 4 or
  more read calls to harvest, when no typed edge already links the trail's entry
  (its first node that is not an answer) to them: that edge is the shortcut the
  next hunt would take. A trail of answer nodes only (found by searching, not by
  walking) has no entry to cover it, so its answers are all suggested.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

HARVESTING_CALLS = frozenset({"pick", "harvest"})
SHORTCUT_AFTER_CALLS = 4


def banana_call(calls: Sequence[Mapping[str, Any]], answers: set[str]) -> int:
    """Index of the call that harvested the answer (see the module doc); -1 for no calls."""
    for i, call in enumerate(calls):
        # a pick that answered with the outline (body over budget) returned no banana
        if call.get("call") in HARVESTING_CALLS and answers & set(call.get("returned", ())):
            return i
    for i, call in enumerate(calls):
        if call.get("focus") in answers or answers & set(call.get("returned", ())):
            return i
    return len(calls) - 1


def winning_trail(calls: Sequence[Mapping[str, Any]], answers: Sequence[str], upto: int) -> list[str]:
    on_trail = set(answers)
    for call in reversed(calls[: upto + 1]):
        focus = call.get("focus")
        if focus and focus not in on_trail and on_trail & set(call.get("returned", ())):
            on_trail.add(focus)
    walked: list[str] = []
    for call in calls[: upto + 1]:
        focus = call.get("focus")
        if focus in on_trail and focus not in walked and focus not in answers:
            walked.append(focus)
    return walked + list(dict.fromkeys(answers))


def hunt_outcome(calls: Sequence[Mapping[str, Any]], success: bool, answer_nodes: Sequence[str],
                 linked: Callable[[str, str], bool]) -> tuple[dict[str, Any], list[str], list[str]]:
    """(metrics, winning trail, suggest_shortcuts) of a hunt whose calls are ``calls``."""
    answers = list(dict.fromkeys(answer_nodes))
    upto = banana_call(calls, set(answers))
    trail = winning_trail(calls, answers, upto) if answers else []
    metrics = {
        "hops_to_banana": upto + 1,
        "trail_len": len(trail),
        "tokens_to_banana": sum(int(call.get("tokens", 0)) for call in calls[: upto + 1]),
        "calls": len(calls),
        "answer_nodes": answers,
    }
    suggest: list[str] = []
    if success and answers and upto + 1 >= SHORTCUT_AFTER_CALLS:
        walked = [node for node in trail if node not in answers]
        # with no node walked before the answer, nothing can cover it yet
        suggest = [a for a in answers if not walked or not linked(walked[0], a)]
    return metrics, trail, suggest
