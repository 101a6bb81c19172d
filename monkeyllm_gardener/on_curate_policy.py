"""The ``on_curate`` policy, whole: what a hook sees, what it may change, how its
result is judged, what is reverted, and how the result joins the node's fields.

The host calls each hook in isolation (``PluginHost.run_on_curate``) and hands
every result to this module; the pipeline builds the draft and merges the outcome
through it. Nothing else decides what a hook may do, so a rule changes here once.

- A hook sees the passport fields a plant writes and a person would curate
  (``HOOK_DRAFT_KEYS``), never engine instructions.
- It may change ``EDITABLE_KEYS``. ``id``, ``type``, ``origin`` and any ``source*``
  or ``payload*`` key are identity and provenance: a change to them is reverted
  and said, the hook's other edits stand.
- Its draft must obey the passport rules for what it edited: the core's summary
  contract, a non-empty title, tags and aliases as lists of strings, links as a
  list of mappings; and it may not drop a title or summary it was given. A draft
  that breaks one is discarded whole, for that hook only: one hook's bad summary
  never costs another hook's tags.
- Links are judged against the forest when the result is merged: a link to an
  unknown rel, a missing node or the node itself is dropped alone, with a warning.
"""
from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Mapping

from monkeyllm_core.forest.summary_contract import summary_error

if TYPE_CHECKING:
    from monkeyllm_core import Vine

HOOK_DRAFT_KEYS = ("id", "type", "title", "summary", "tags", "aliases", "links")
EDITABLE_KEYS = ("title", "summary", "tags", "aliases", "links")
# Passport keys that identify a node (id, type) or record where it came from and what
# payload it holds (origin, source*, payload*): hooks cannot change them. Which file the
# engine installs is not among them: that travels in the write request beside the
# passport (monkeyllm_core.NodeWrite), so a hook never sees it.
PROTECTED_KEYS = frozenset({"id", "type", "origin"})
PROTECTED_PREFIXES = ("source", "payload")
# Required passport fields: a hook may rewrite them, never remove them.
KEPT_KEYS = ("title", "summary")

_MISSING = object()


def draft_for_hooks(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The draft the hooks see: the node's ``HOOK_DRAFT_KEYS`` that are set."""
    return {key: fields[key] for key in HOOK_DRAFT_KEYS if key in fields}


def returned_draft(working: dict[str, Any], returned: Any) -> dict[str, Any]:
    """What a hook handed back, as a draft the host owns: ``returned``, or the
    ``working`` copy it was given when it returned None (its in-place edits count).
    Raises ``TypeError`` for anything that is not a dict with string keys: that
    hook failed, like one that raised."""
    candidate = working if returned is None else returned
    if not isinstance(candidate, dict):
        raise TypeError(f"returned {type(candidate).__name__}, not a dict or None")
    bad_keys = [key for key in candidate if not isinstance(key, str)]
    if bad_keys:
        raise TypeError(f"returned a draft with non-string key {bad_keys[0]!r}")
    # The hook may keep a reference to what it returned: own our copy.
    return copy.deepcopy(candidate)


def is_protected(key: Any) -> bool:
    return isinstance(key, str) and (key in PROTECTED_KEYS or key.startswith(PROTECTED_PREFIXES))


def revert_protected(before: Mapping[str, Any], after: dict[str, Any]) -> list[str]:
    """Put every protected key of ``after`` back as it was in ``before`` (removed
    when it was absent); returns the keys that had to be put back, sorted."""
    reverted = []
    for key in sorted({*before, *after}, key=str):
        if not is_protected(key):
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


def draft_problem(before: Mapping[str, Any], draft: Mapping[str, Any]) -> str | None:
    """Why a hook's ``draft`` (made from ``before``) breaks the passport rules, or
    None. Link targets are judged against the forest in ``merge_hook_result``."""
    dropped = [key for key in KEPT_KEYS if key in before and key not in draft]
    if dropped:
        return f"{' and '.join(dropped)} removed; a node needs them"
    if "summary" in draft:
        error = summary_error(draft["summary"])
        if error is not None:
            return error.message
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


def judge_hook_draft(before: dict[str, Any], candidate: dict[str, Any], *, plugin: str,
                     node_id: str) -> tuple[dict[str, Any], list[str]]:
    """The draft after one hook: ``candidate`` with protected keys reverted, or
    ``before`` unchanged when ``candidate`` breaks a rule; plus one problem line
    for each thing undone."""
    problems = []
    reverted = revert_protected(before, candidate)
    if reverted:
        problems.append(f"on_curate {plugin} tried to change {', '.join(reverted)} on {node_id}; reverted")
    invalid = draft_problem(before, candidate)
    if invalid:
        problems.append(f"on_curate {plugin} returned an invalid draft for {node_id} ({invalid}); "
                        "its edits were discarded")
        return before, problems
    return candidate, problems


def merge_hook_result(vine: Vine, fields: Mapping[str, Any], result: Mapping[str, Any]
                      ) -> tuple[dict[str, Any], list[str]]:
    """``fields`` with the hooks' ``result`` applied to the editable keys (a key the
    hooks removed is removed), links the forest cannot hold dropped one by one, and
    ``summary_source: hook`` when the summary changed. Returns (fields, warnings)."""
    merged = dict(fields)
    warnings = []
    for key in EDITABLE_KEYS:
        if key in result:
            merged[key] = result[key]
        else:
            merged.pop(key, None)
    if "links" in result:
        kept = []
        for link in result["links"]:
            if (isinstance(link, dict) and vine.dialect.knows_rel(str(link.get("rel")))
                    and vine.exists(str(link.get("target"))) and link.get("target") != fields["id"]):
                kept.append(link)
            else:
                warnings.append(f"on_curate link {link!r} dropped: unknown rel or target")
        merged["links"] = kept
    if merged.get("summary") != fields.get("summary"):
        merged["summary_source"] = "hook"
    return merged, warnings
