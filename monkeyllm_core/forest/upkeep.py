"""Keeping branch indexes true while a writer changes the forest.

A node's parent lists it with its summary (and, for a branch, its coverage); the
parent's coverage counts its entries, and a coverage change reaches the
grandparent's entry line; a summary is repeated verbatim by the master's
Landmarks and by Cross trails in any branch. ``BranchUpkeep`` makes every one of
those edits inside the writer's transaction, so they land in the same commit.

A branch can list thousands of children. The upkeep remembers, for the branches
written last (``RECENT_BRANCHES``), the parsed index and what its body lists
(``branches.Listing``), each keyed by the identity of the exact string it
describes: a hit is always exact, and planting one more child never scans the
index.
"""
from __future__ import annotations

import copy
from typing import Any, Callable, Mapping, Protocol

from . import branches as br
from ..errors import VineError
from .passport import Node, parse_node, render_node_parsed
from ..read.headings import outline
from .rules import is_branch_id, node_path, parent_of, today, trail_of
from ..store.messages import one_line


class Transaction(Protocol):
    """What the upkeep needs of a write in progress (``writing.transaction.WriteTransaction``)."""

    def read(self, rel: str) -> str | None: ...

    def put_node(self, fm: dict[str, Any], body: str) -> None: ...


class BranchUpkeep:
    def __init__(self, repeated_by: Callable[[str], list[str]]) -> None:
        """``repeated_by(id)``: the branches whose cross trails name id (the catalog)."""
        self._repeated_by = repeated_by
        # each kept for the RECENT_BRANCHES written last: every branch of a 50,000-file
        # adopt, parsed, made the writer grow by the forest's indexes
        self._parsed: _Recent[str, tuple[str, Node]] = _Recent()  # rel -> (text, what parse_node gives for it)
        self._listings: _Recent[str, br.Listing] = _Recent()  # rel -> what the branch's latest body lists
        self._format_checked: set[str] = set()  # branches whose formatting this session repaired
        # rel -> (a body, its outline): a new entry line changes no heading, so the
        # outline of a branch's next body is known without reading its lines again
        self._outlines: _Recent[str, tuple[str, list[str]]] = _Recent()

    # -- rendering a branch for a transaction ------------------------------------------
    def render(self, fm: dict[str, Any], body: str) -> tuple[str, set[str], list[str]]:
        """A branch's text, the ids it names outside its listings (for the catalog's
        ``repeats``) and its outline. The next write beneath it finds it parsed already."""
        rel = node_path(fm["id"])
        text, parsed = render_node_parsed(fm, body, where=rel)
        self._parsed[rel] = (text, parsed)
        known = self._listings.get(rel)
        listing = known if known is not None and known.body is parsed.body else br.survey(parsed.body)
        carried = self._outlines.get(rel)
        if carried is not None and carried[0] is parsed.body:
            sections = carried[1]
        else:
            sections = outline(parsed.body)
            self._outlines[rel] = (parsed.body, sections)
        return text, br.repeated_ids(listing), sections

    def branch(self, txn: Transaction, branch_id: str) -> Node:
        rel = node_path(branch_id)
        text = txn.read(rel)
        if text is None:
            raise VineError("E_NOT_FOUND", f"parent branch {branch_id!r} does not exist",
                            "Plant the parent branch first (folders before files).")
        known = self._parsed.get(rel)
        if known is not None and known[0] is text:  # the very text this writer rendered
            return Node(frontmatter=_copied(known[1].frontmatter), body=known[1].body)
        node = parse_node(text, where=rel)
        self._parsed[rel] = (text, Node(frontmatter=_copied(node.frontmatter), body=node.body))
        return node

    # -- entry lines and coverage ------------------------------------------------------
    @staticmethod
    def entry_for(fm: Mapping[str, Any]) -> str:
        if is_branch_id(fm["id"]):
            return br.entry_line(fm["id"], fm["summary"], str(fm.get("coverage") or br.coverage_text(0, 0)))
        return br.entry_line(fm["id"], fm["summary"])

    def list_in_parent(self, txn: Transaction, fm: Mapping[str, Any], *, new: bool,
                       old: Mapping[str, Any] | None = None) -> None:
        """Insert or refresh fm's entry line in its parent, and keep coverage true upward.
        ``old`` (the passport before this write) lets the index lines that repeat the
        old entry verbatim follow it."""
        parent_id = parent_of(fm["id"])
        if parent_id is None or fm["id"].startswith("_meta/"):
            return  # the dialect (and anything in _meta) is listed by no branch
        if old is not None:
            self._refresh_repeats(txn, old, fm, parent_id)
        parent = self.branch(txn, parent_id)
        section_name = br.SUB_BRANCHES if is_branch_id(fm["id"]) else br.DIRECT_BANANAS
        parent_rel = node_path(parent_id)
        known = self._listings.get(parent_rel)
        # list_child splices one entry line into a section it knows is there (else it
        # adds the section's heading first): then no heading moves in or out
        splice_only = (known is not None and known.body is parent.body and parent.body.endswith("\n")
                       and known.bounds.get(section_name) is not None)
        body, counts, self._listings[parent_rel] = br.list_child(
            parent.body, section_name, fm["id"], self.entry_for(fm), known)
        if body is None:
            return
        if parent_rel not in self._format_checked:
            self._format_checked.add(parent_rel)
            repaired = self._repair_format(txn, body, parent.frontmatter)
            if repaired is not body:
                body = repaired
                splice_only = False
                self._listings.pop(parent_rel, None)  # it described the body before the repair
        carried = self._outlines.get(parent_rel)
        if splice_only and carried is not None and carried[0] is parent.body:
            self._outlines[parent_rel] = (body, carried[1])
        if counts is None and new:  # a stale line for this id was replaced: recount
            counts = (br.count_entries(body, br.DIRECT_BANANAS), br.count_entries(body, br.SUB_BRANCHES))
        pfm = dict(parent.frontmatter)
        if counts is not None:
            pfm["coverage"] = br.coverage_text(*counts)
        pfm["updated"] = today()
        txn.put_node(pfm, body)
        if pfm.get("coverage") != parent.frontmatter.get("coverage"):
            # the grandparent's entry line for this branch carries its coverage
            self.list_in_parent(txn, pfm, new=False, old=parent.frontmatter)

    def _repair_format(self, txn: Transaction, body: str, fm: Mapping[str, Any]) -> str:
        """What another engine writes differently, made ours when we write the branch
        anyway (once per branch and session): a sub-branch entry line that repeats the
        summary but leaves out the coverage gets it, and a ``>`` blockquote worded
        apart from the summary repeats it. Both are what ``vine validate`` warns of.
        Anything else on a line (a different summary) is left for validate to report."""
        repaired = body
        for line in br.section_lines(body, br.SUB_BRANCHES):
            if "]]" not in line:
                continue
            kid = line[4:line.index("]]")]
            text = txn.read(node_path(kid)) if is_branch_id(kid) else None
            if text is None:
                continue
            try:
                kfm = parse_node(text, where=node_path(kid)).frontmatter
            except VineError:  # a child a person broke: validate names it, the write goes on
                continue
            if kfm.get("summary") and line == br.entry_line(kid, kfm["summary"]):
                repaired = br.refresh_repeats(repaired, (line,), self.entry_for(kfm), (br.SUB_BRANCHES,))
        summary = str(fm.get("summary") or "")
        quote = br.blockquote(repaired)
        if summary and quote is not None and quote != one_line(summary):
            repaired = br.set_blockquote(repaired, summary)
        return repaired if repaired != body else body

    def _refresh_repeats(self, txn: Transaction, old: Mapping[str, Any], fm: Mapping[str, Any],
                         parent_id: str) -> None:
        """A summary is repeated by the master's Landmarks and by Cross trails: every
        index line that repeats the old entry verbatim, in an ancestor or in any branch
        whose cross trails name the node, takes the new one."""
        if not old.get("summary") or not fm.get("summary"):
            return
        pairs = [(self.entry_for(old), self.entry_for(fm))]
        if is_branch_id(fm["id"]):  # a repeat may leave the coverage out
            pairs.append((br.entry_line(old["id"], old["summary"]), br.entry_line(fm["id"], fm["summary"])))
        if all(o == n for o, n in pairs):
            return
        needle = f"- [[{fm['id']}]]"
        for branch_id in dict.fromkeys(trail_of(fm["id"]) + self._repeated_by(fm["id"])):
            text = txn.read(node_path(branch_id))
            # the parent lists the child once itself: only a second mention is a repeat
            if text is None or text.count(needle) < (2 if branch_id == parent_id else 1):
                continue
            node = parse_node(text, where=node_path(branch_id))
            body = node.body
            for old_line, new_line in pairs:
                body = br.refresh_repeats(body, (old_line,), new_line)
            if body != node.body:
                afm = dict(node.frontmatter)
                afm["updated"] = today()
                txn.put_node(afm, body)


# the branches whose parsed index, listing and outline the upkeep keeps: an adopt and a
# sync write folder by folder, so the ones written now (a folder's branch and those
# above it) are the ones written next. At 64 a 50,000-file adopt's writer kept 7 MB
# of large folders' indexes; 16 cost no CPU there (a 5,000-file adopt: 17.6 s of CPU
# with 64 and a text cache of 8 Mi characters, 17.8 s with 16 and 2 Mi)
RECENT_BRANCHES = 16


class _Recent(dict):  # type: ignore[type-arg]
    """A dict that keeps the ``RECENT_BRANCHES`` keys set most recently (a key set
    again is the most recent); an entry it dropped is made again from the file."""

    def __setitem__(self, key: Any, value: Any) -> None:
        self.pop(key, None)
        super().__setitem__(key, value)
        if len(self) > RECENT_BRANCHES:
            del self[next(iter(self))]


_IMMUTABLE = (str, int, float, bool, type(None))


def _copied(frontmatter: dict[str, Any]) -> dict[str, Any]:
    """A copy the caller may change without touching the remembered one: a branch
    passport is all strings and numbers (a shallow copy, 20x cheaper than deepcopy),
    unless a person gave it a list or a mapping."""
    if all(type(value) in _IMMUTABLE for value in frontmatter.values()):
        return dict(frontmatter)
    return copy.deepcopy(frontmatter)


def checked_branch_body(node_id: str, old_body: str, body: str, fm: dict[str, Any],
                        exists: Callable[[str], bool]) -> str:
    """A branch body a person edits stays a true map: every listed child keeps its
    entry line, coverage is recounted and the ``>`` line mirrors the summary."""
    listed = set(br.section_entries(body, br.SUB_BRANCHES) + br.section_entries(body, br.DIRECT_BANANAS))
    dropped = [kid for kid in br.section_entries(old_body, br.SUB_BRANCHES)
               + br.section_entries(old_body, br.DIRECT_BANANAS) if kid not in listed and exists(kid)]
    if dropped:
        raise VineError("E_FRONTMATTER", f"{node_id}: the new body drops the entry line of {', '.join(dropped[:3])}"
                        + (f" and {len(dropped) - 3} more" if len(dropped) > 3 else ""),
                        "A branch lists every child under Sub-branches / Direct bananas; keep those lines.")
    fm["coverage"] = br.coverage_text(br.count_entries(body, br.DIRECT_BANANAS),
                                      br.count_entries(body, br.SUB_BRANCHES))
    quote = br.blockquote(body)
    if quote is not None and quote != one_line(str(fm.get("summary") or "")):
        body = br.set_blockquote(body, str(fm["summary"]))
    return body
