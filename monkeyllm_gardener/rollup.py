"""``vine rollup``: branch summaries bottom-up, deepest first.

Each branch's summary is written from the entry lines of its children: by the
Curator when one is bound, else deterministically from the child titles. Only
branches with ``source: ingest`` are touched unless ``--all``. An empty region
keeps its template and counts as skipped. Frontmatter, the ``>`` blockquote and
the parent's entry line change together in one commit (``Vine.graft``).

A branch remembers the hash of the entry lines it was summarised from
(``rollup_hash``), so only branches whose children changed go to the model again.
"""
from __future__ import annotations

import hashlib
from typing import Any

from monkeyllm_core import Vine, VineError
from monkeyllm_core.forest import branches as br
from monkeyllm_core.forest.rules import is_branch_id
from monkeyllm_core.forest.summary_contract import check_summary

from .derive import summary_for_branch


def _lines_hash(lines: list[str]) -> str:
    return hashlib.sha1("\n".join(lines).encode()).hexdigest()[:16]


def rollup_forest(vine: Vine, *, curator: Any = None, only_ingest: bool = True,
                  problems: list[str] | None = None) -> dict[str, int]:
    """Roll every eligible branch; a branch that cannot be read or written is skipped
    and named in ``problems`` (the others still roll)."""
    stats = {"rolled": 0, "fallbacks": 0, "skipped": 0}
    branch_ids = [i for i in vine.node_files() if is_branch_id(i)]
    # deepest first, so a parent reads its children's fresh summaries
    branch_ids.sort(key=lambda i: (-i.count("/"), i))
    for branch_id in branch_ids:
        try:
            _roll_branch(vine, branch_id, curator=curator, only_ingest=only_ingest, stats=stats)
        except VineError as exc:
            stats["skipped"] += 1
            if problems is not None:
                problems.append(f"rollup skipped {branch_id}: {exc.one_line()}")
    return stats


def _roll_branch(vine: Vine, branch_id: str, *, curator: Any, only_ingest: bool,
                 stats: dict[str, int]) -> None:
    node = vine.read(branch_id)
    fm = node.frontmatter
    if only_ingest and fm.get("source") != "ingest":
        stats["skipped"] += 1
        return
    lines = br.section_lines(node.body, br.SUB_BRANCHES) + br.section_lines(node.body, br.DIRECT_BANANAS)
    if not lines:
        stats["skipped"] += 1
        return
    digest = _lines_hash(lines)
    if fm.get("rollup_hash") == digest:
        return  # children unchanged since the last rollup
    kids = br.section_entries(node.body, br.SUB_BRANCHES) + br.section_entries(node.body, br.DIRECT_BANANAS)
    titles = []
    for kid in kids:
        try:
            titles.append(str(vine.read(kid).frontmatter.get("title") or kid))
        except VineError:
            titles.append(kid)
    n_subs = len(br.section_entries(node.body, br.SUB_BRANCHES))
    fallback = summary_for_branch(str(fm.get("title") or branch_id), titles, len(kids) - n_subs, n_subs)
    summary = None
    if curator is not None:
        from .curator import BranchRequest
        vine.flush()  # the model may take a while: the branches rolled so far reach the branch first
        summary = curator.summarize_branch(BranchRequest(
            branch_id=branch_id, title=str(fm.get("title") or branch_id),
            entry_lines=lines, fallback_summary=fallback))
        if summary is not None:
            try:
                check_summary(summary, where=branch_id)
            except VineError:
                summary = None
        if summary is None:
            stats["fallbacks"] += 1
    vine.graft(branch_id, {"set_frontmatter": {"summary": summary or fallback, "rollup_hash": digest}},
               message=f"gardener(rollup): {branch_id}")
    stats["rolled"] += 1
