"""The forest as its last commit has it, read through git, never from the work tree.

While a writer runs, the files are mid-write: a node is on disk a moment before its
parent's index lists it, and a reader walking the folders sees one without the
other. Every commit holds whole writes, so a reader that must not see half a write
(``vine validate`` while a writer is active) reads HEAD's tree instead: one commit,
resolved once, its blobs read by id, so the writer moving HEAD meanwhile changes
nothing for this reader. Payloads are not in git; whoever reads this way says so.
"""
from __future__ import annotations

from pathlib import Path

from ..forest.dialect import SCHEMA_PATH, Dialect, parse_dialect
from ..errors import VineError
from .history import GitError, read_blobs, run_git
from ..forest.passport import Node, parse_node

_PRUNED_FOLDERS = ("_derived", "_assets")


def is_node_file(rel: str) -> bool:
    """The files ``Vine.node_files`` lists, as a rule on one path: markdown not hidden,
    outside hidden folders, ``_derived/``, ``_assets/`` and the top-level ``_meta/``."""
    *folders, name = rel.split("/")
    if not name.endswith(".md") or name.startswith("."):
        return False
    if folders and folders[0] == "_meta":
        return False
    return not any(folder.startswith(".") or folder in _PRUNED_FOLDERS for folder in folders)


class CommittedForest:
    """HEAD's markdown: ``node_files()``, ``read(node_id)`` and the ``dialect``, as
    a ``Vine`` offers them for the work tree. ``revision`` picks another commit
    than HEAD (a snapshot reads the commit its bundle holds)."""

    def __init__(self, root: Path, revision: str = "HEAD") -> None:
        self.root = root
        self.commit = run_git(root, "rev-parse", "--verify", "-q", f"{revision}^{{commit}}", check=False).strip()
        if not self.commit:
            raise GitError(f"the forest at {root} has no commit {revision} to read")
        listing = run_git(root, "ls-tree", "-r", "-z", "--full-tree", self.commit)
        blobs: dict[str, str] = {}
        for entry in listing.split("\0"):
            if not entry:
                continue
            meta, path = entry.split("\t", 1)
            _mode, kind, sha = meta.split()
            if kind == "blob" and path.endswith(".md"):
                blobs[path] = sha
        self._texts = dict(zip(blobs, read_blobs(root, list(blobs.values()))))
        self._ids = sorted(rel[:-3] for rel in self._texts if is_node_file(rel))
        schema = self._texts.get(SCHEMA_PATH)
        if schema is None:
            raise GitError(f"{SCHEMA_PATH} is not in the forest's last commit {self.commit[:12]}")
        self.dialect: Dialect = parse_dialect(schema.decode("utf-8", "replace"))

    def node_files(self) -> list[str]:
        return list(self._ids)

    def read(self, node_id: str) -> Node:
        rel = f"{node_id}.md"
        data = self._texts.get(rel)
        if data is None:
            raise VineError("E_NOT_FOUND", f"no node {node_id!r} in commit {self.commit[:12]}",
                            "Ids are paths without .md.")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise VineError("E_FRONTMATTER", f"{rel}: not UTF-8 text (byte {exc.start})",
                            "Re-save the file as UTF-8.") from None
        return parse_node(text, where=rel)

