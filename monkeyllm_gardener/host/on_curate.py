"""``on_curate``: every hook in turn on the draft, each on its own copy.

The calling is the generic one (``calls.HookCaller.call_each``): discovery order,
one isolated call per implementation. What is particular to ``on_curate`` is the
chaining (each hook sees the draft the hooks before it left); what a hook may
return, which keys it may not change and when its edits are discarded is the
policy's, ``monkeyllm_gardener.on_curate_policy``. One hook's bad result costs
only its own edits.
"""
from __future__ import annotations

import copy
from typing import Any

from monkeyllm_gardener import on_curate_policy
from monkeyllm_gardener.host.calls import HookCaller


def run_on_curate(calls: HookCaller, draft: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Run every on_curate hook in discovery order, each on its own deep copy.

    A hook that raises, or returns something other than a dict or None, has all
    its edits discarded; what a returned draft may change and how it is judged is
    ``on_curate_policy``'s. Every such event is a problem line.
    """
    current = copy.deepcopy(draft)
    problems: list[str] = []
    node_id = draft.get("id", "?")
    # The copy is made when each hook's turn comes (call_each is lazy), so it holds
    # what the hooks before it left in ``current``.
    outcomes = calls.call_each("on_curate", lambda _plugin: {"draft": copy.deepcopy(current)},
                               accept=lambda result, arguments: on_curate_policy.returned_draft(
                                   arguments["draft"], result))
    for outcome in outcomes:
        plugin = outcome.plugin
        if outcome.wrapper:
            problems.append(f"on_curate {plugin} is a hook wrapper, which is not supported; skipped")
            continue
        if outcome.error is not None:
            problems.append(f"on_curate {plugin} failed on {node_id}: {outcome.error}; its edits were discarded")
            continue
        current, found = on_curate_policy.judge_hook_draft(current, outcome.value, plugin=plugin,
                                                           node_id=node_id)
        problems += found
    return current, problems
