"""``vine validate``: every rule a forest keeps, checked from the files.

One finding per problem. Errors break the format (another engine would refuse
the node or mislead an agent); warnings are drift a write will repair
(payload hash drift, a branch that needs splitting, a dangling wikilink, and the
formatting other engines write differently: a sub-branch entry line without its
coverage, a ``>`` blockquote worded apart from the summary), and payloads that
are not here: payloads never enter git, so a ``git clone`` has none, and every
absent one is counted in a single line with the way to restore them.

A writer's files are mid-write between its steps (a node is on disk before its
parent's index lists it), so ``check_forest``, what ``vine validate`` runs, reads
the files only while no writer is at work (``writer_probe.py``: the lock card,
probed before and after the read) and otherwise checks the last committed state,
HEAD's tree read through git (``committed.py``), and says so: a writer is active,
its writes since its last checkpoint and the payload files were not checked.
``validate_forest`` checks the files as they are, for a caller that knows no
writer runs.
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Literal, Protocol

from . import branches as br
from .dialect import SCHEMA_PATH, Dialect
from ..errors import VineError, estimate_tokens
from .passport import Node
from .rules import is_branch_id, parent_of, validate_passport
from ..snapshot.absent import absent_payloads_message
from ..store.messages import one_line
from ..vine import Vine
from ..writing.payloads import payload_file
from ..writing.writer_probe import LockState, probe

FILE_READ_ATTEMPTS = 3  # reads of the files before a stream of writers sends validate to HEAD

SPLIT_ENTRIES = 150
SPLIT_TOKENS = 3000
_WIKILINK = re.compile(r"\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]")


DIALECT_ID = SCHEMA_PATH[:-len(".md")]  # a wikilink to the dialect is a link to a real page


@dataclass(frozen=True)
class Finding:
    level: Literal["error", "warning"]
    code: str
    node: str  # empty for a finding about the forest as a whole
    message: str

    def line(self) -> str:
        where = f" {self.node}" if self.node else ""
        return f"{self.level} {self.code}{where}: {self.message}"


class _Nodes(Protocol):
    """What validation reads: a ``Vine`` (the files) or a ``CommittedForest`` (HEAD)."""

    dialect: Dialect

    def node_files(self) -> list[str]: ...

    def read(self, node_id: str) -> Node: ...


@dataclass(frozen=True)
class Validation:
    findings: list[Finding]
    nodes: int
    note: str | None = None  # set when a writer was at work: what was checked instead, what was not


def check_forest(vine: Vine, *, hash_of: Callable[[Path], str] | None = None) -> Validation:
    """The files, when no writer comes or goes while they are read; else the last
    committed state, with a note naming the writer and what was not checked.
    ``hash_of``: as for ``validate_forest``."""
    state = probe(vine.root)
    for _ in range(FILE_READ_ATTEMPTS):
        if state.active:
            break
        findings = validate_forest(vine, hash_of=hash_of)
        count = len(vine.node_files())
        after = probe(vine.root)
        if after == state:
            return Validation(findings, count)
        state = after  # a writer came or went meanwhile: what was read may be half a write
    return _check_committed(vine.root, state)


def _check_committed(root: Path, state: LockState) -> Validation:
    from ..store.committed import CommittedForest
    committed = CommittedForest(root)
    who = f"a writer is active ({state.writer})" if state.active else "writers kept starting and stopping"
    note = (f"{who}: checked the last committed state, commit {committed.commit[:12]}; "
            "not checked: its writes since its last checkpoint and the payload files")
    return Validation(_findings(committed, payload_root=None), len(committed.node_files()), note)


def validate_forest(vine: Vine, *, hash_of: Callable[[Path], str] | None = None) -> list[Finding]:
    """Every finding in the forest's files as they are now. ``hash_of`` gives a
    payload file's sha256 (default: read the file); the Ranger passes the cache
    its health report hashes through, so a cycle reads each payload once."""
    return _findings(vine, payload_root=vine.root, hash_of=hash_of)


def _findings(forest: _Nodes, *, payload_root: Path | None,
              hash_of: Callable[[Path], str] | None = None) -> list[Finding]:
    """``payload_root`` None: payloads are not checked (committed passports describe
    the payloads of their commit, not the ones on disk now)."""
    if hash_of is None:
        from ..hashing import sha256_file
        hash_of = sha256_file
    findings: list[Finding] = []

    def add(level: Literal["error", "warning"], code: str, node: str, message: str) -> None:
        findings.append(Finding(level, code, node, message))

    nodes: dict[str, dict] = {}
    bodies: dict[str, str] = {}
    absent: list[str] = []  # passports whose payload file is not on disk
    for node_id in forest.node_files():
        try:
            node = forest.read(node_id)
        except VineError as exc:
            add("error", exc.code, node_id, exc.message)
            continue
        fm = node.frontmatter
        if fm.get("id") != node_id:
            add("error", "E_FRONTMATTER", node_id, f"id {fm.get('id')!r} does not match its path")
            continue
        nodes[node_id] = fm
        bodies[node_id] = node.body
        try:
            validate_passport(fm, forest.dialect)
        except VineError as exc:
            add("error", exc.code, node_id, exc.message.split(": ", 1)[-1])

    children: dict[str, list[str]] = defaultdict(list)
    for node_id in nodes:
        if node_id.startswith("_meta/"):
            continue
        parent = parent_of(node_id)
        if parent is None:
            continue
        if parent not in nodes:
            add("error", "E_NOT_FOUND", node_id, f"parent branch {parent} is missing")
        children[parent].append(node_id)

    for node_id, fm in nodes.items():
        links = fm.get("links")
        for link in links if isinstance(links, list) else []:  # another shape: validate_passport said so
            if isinstance(link, dict) and link.get("target") not in nodes:
                add("error", "E_NOT_FOUND", node_id, f"link {link.get('rel')} -> {link.get('target')} is broken")
        for target in _WIKILINK.findall(_strip_code(bodies[node_id])):
            target = target.strip()
            if target not in nodes and target != DIALECT_ID and not is_branch_id(node_id):
                add("warning", "W_WIKILINK", node_id, f"wikilink [[{target}]] points to no node")
        if fm.get("payload"):
            try:
                rel = payload_file(node_id, str(fm["payload"]))
            except VineError as exc:
                add("error", exc.code, node_id, exc.message.split(": ", 1)[-1])
                continue
            if payload_root is None:
                continue
            path = payload_root / rel
            if not path.is_file():
                absent.append(node_id)
            elif fm.get("payload_hash") and hash_of(path) != fm["payload_hash"]:
                add("warning", "W_PAYLOAD_DRIFT", node_id,
                    f"payload {fm['payload']} does not match payload_hash (changed outside tend)")

    if absent:
        # payloads never enter git: a clone has none of them, which is one state, not a fault per node
        add("warning", "W_PAYLOADS_ABSENT", "", absent_payloads_message(absent))

    for branch_id, fm in nodes.items():
        if not is_branch_id(branch_id):
            continue
        _check_branch(branch_id, fm, bodies[branch_id], children.get(branch_id, []), nodes, add)
    return findings


def _check_branch(branch_id, fm, body, kids, nodes, add) -> None:
    listed_subs = br.section_entries(body, br.SUB_BRANCHES)
    listed_leaves = br.section_entries(body, br.DIRECT_BANANAS)
    listed = set(listed_subs) | set(listed_leaves)
    for kid in kids:
        if kid not in listed:
            add("error", "E_BRANCH", branch_id, f"child {kid} has no entry line")
    for entry in listed_subs + listed_leaves:
        if entry not in nodes:
            add("error", "E_BRANCH", branch_id, f"entry [[{entry}]] points to no node")
    for line in br.section_lines(body, br.SUB_BRANCHES) + br.section_lines(body, br.DIRECT_BANANAS):
        if "]]" not in line:  # a hand-edited line: say so instead of failing on it
            add("error", "E_BRANCH", branch_id, f"entry line {line[:60]!r} is not closed with ']]'")
            continue
        kid = line[4:line.index("]]")]
        kfm = nodes.get(kid)
        if kfm is None or not kfm.get("summary"):
            continue
        coverage = str(kfm.get("coverage") or br.coverage_text(0, 0)) if is_branch_id(kid) else None
        if line == br.entry_line(kid, kfm["summary"], coverage):
            continue
        if coverage is not None and line == br.entry_line(kid, kfm["summary"]):
            # other engines write sub-branch lines without the coverage: nothing in it
            # misleads a reader, and the next write to this branch adds it
            add("warning", "W_BRANCH_FORMAT", branch_id, f"entry line for {kid} leaves out its coverage"
                " (the next write to this branch adds it)")
        else:
            add("error", "E_BRANCH", branch_id, f"entry line for {kid} does not repeat its summary"
                + (" and coverage" if coverage else ""))
    expected = br.coverage_text(len(listed_leaves), len(listed_subs))
    if br.parse_coverage(fm.get("coverage")) != br.parse_coverage(expected):
        add("error", "E_BRANCH", branch_id, f"coverage says {fm.get('coverage')!r}, entries count {expected!r}")
    quote = br.blockquote(body)
    if quote is not None and fm.get("summary") and quote != one_line(fm["summary"]):
        # the summary (what entry lines and locate show) is the branch's word; a
        # blockquote worded apart from it is prose for a person, repaired on write
        add("warning", "W_BRANCH_FORMAT", branch_id, "the > blockquote is worded apart from the frontmatter"
            " summary (the next write to this branch makes it repeat the summary)")
    if len(listed) > SPLIT_ENTRIES or estimate_tokens(body) > SPLIT_TOKENS:
        add("warning", "needs_split", branch_id,
            f"{len(listed)} entries, {estimate_tokens(body)} tokens: over {SPLIT_ENTRIES} entries or {SPLIT_TOKENS} tokens")


def _strip_code(body: str) -> str:
    out, in_fence = [], False
    for line in body.splitlines():
        if line.strip().startswith("```"):
            in_fence = not in_fence
            continue
        if not in_fence:
            out.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(out)
