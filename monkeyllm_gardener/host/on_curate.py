"""``on_curate``: every hook in turn on the draft, each on its own copy, and the
policy that judges what a hook returned.

The calling is the generic one (``calls.HookCaller.call_each``): discovery order,
one isolated call per implementation. What is particular to ``on_curate`` is the
chaining (each hook sees the draft the hooks before it left) and the policy
below: what a hook may return, which keys it may not change, and when its edits
are discarded. One hook's bad result costs only its own edits.
"""
from __future__ import annotations

import copy
from typing import Any, Mapping

from monkeyllm_gardener.derive import is_valid_summary
from monkeyllm_gardener.host.calls import HookCaller


def run_on_curate(calls: HookCaller, draft: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Run every on_curate hook in discovery order, each on its own deep copy.

    A hook that raises, returns something other than a dict or None, or returns a
    draft breaking the passport contract (``_draft_problem``) has all its edits
    discarded; changes to ``id``, ``type``, ``origin`` or any ``source*``/``payload*``
    key are reverted. Every such event is a problem line.
    """
    current = copy.deepcopy(draft)
    problems: list[str] = []
    node_id = draft.get("id", "?")
    # The copy is made when each hook's turn comes (call_each is lazy), so it holds
    # what the hooks before it left in ``current``.
    outcomes = calls.call_each("on_curate", lambda _plugin: {"draft": copy.deepcopy(current)},
                               accept=_owned_draft)
    for outcome in outcomes:
        plugin = outcome.plugin
        if outcome.wrapper:
            problems.append(f"on_curate {plugin} is a hook wrapper, which is not supported; skipped")
            continue
        if outcome.error is not None:
            problems.append(f"on_curate {plugin} failed on {node_id}: {outcome.error}; its edits were discarded")
            continue
        candidate = outcome.value
        reverted = _revert_protected(current, candidate)
        if reverted:
            problems.append(
                f"on_curate {plugin} tried to change {', '.join(reverted)} on {node_id}; reverted"
            )
        invalid = _draft_problem(candidate)
        if invalid:
            # Judged per hook: one hook's bad summary must not discard another's tags.
            problems.append(f"on_curate {plugin} returned an invalid draft for {node_id} ({invalid}); "
                            "its edits were discarded")
            continue
        current = candidate
    return current, problems


# -- the policy: what a hook may return ----------------------------------------------

# Draft keys that identify a node or record where it came from: hooks cannot change them.
_PROTECTED_KEYS = frozenset({"id", "type", "origin"})
_PROTECTED_PREFIXES = ("source", "payload")
_MISSING = object()


def _owned_draft(result: Any, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The draft a hook leaves: what it returned, or its edited copy when it
    returned None. Raises (the hook's failure) for anything but a str-keyed dict."""
    candidate = arguments["draft"] if result is None else result
    if not isinstance(candidate, dict):
        raise TypeError(f"returned {type(candidate).__name__}, not a dict or None")
    bad_keys = [key for key in candidate if not isinstance(key, str)]
    if bad_keys:
        raise TypeError(f"returned a draft with non-string key {bad_keys[0]!r}")
    # The hook may keep a reference to what it returned: own our copy.
    return copy.deepcopy(candidate)


def _draft_problem(draft: Mapping[str, Any]) -> str | None:
    """Why a hook's draft breaks the passport contract (FOREST-FORMAT.md), or None.
    Link targets are checked against the forest by the pipeline."""
    if "summary" in draft:
        summary = draft["summary"]
        if not isinstance(summary, str) or not is_valid_summary(summary):
            return "summary must be one non-empty line of at most 240 characters without a boilerplate opening"
    if "title" in draft and not (isinstance(draft["title"], str) and draft["title"].strip()):
        return "title must be non-empty text"
    for key in ("tags", "aliases"):
        value = draft.get(key)
        if key in draft and not (isinstance(value, list) and all(isinstance(item, str) for item in value)):
            return f"{key} must be a list of strings"
    links = draft.get("links")
    if "links" in draft and not (isinstance(links, list) and all(isinstance(link, dict) for link in links)):
        return "links must be a list of mappings"
    return None


def _is_protected(key: Any) -> bool:
    return isinstance(key, str) and (key in _PROTECTED_KEYS or key.startswith(_PROTECTED_PREFIXES))


def _revert_protected(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    reverted = []
    for key in sorted({*before, *after}, key=str):
        if not _is_protected(key):
            continue
        old, new = before.get(key, _MISSING), after.get(key, _MISSING)
        if old is _MISSING and new is _MISSING:
            continue
        if old is _MISSING or new is _MISSING or old != new:
            reverted.append(key)
            if old is _MISSING:
                del after[key]
            else:
                after[key] = copy.deepcopy(old)
    return reverted
