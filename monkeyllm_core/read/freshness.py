"""Reads answer from a catalog that matches the forest, whoever wrote the forest.

A writable Vine keeps its catalog true itself (it rebuilds a stale one when it
opens, and every write updates it). A read-only Vine must notice on its own what
changed under it, and it may live for hours (``vine serve``): a ``git pull``, a
``git checkout``, another engine's commit, a ``vine sync`` that ended, a node a
person edited by hand and did not commit. So before each read call it asks
``CatalogFreshness.plan`` what to re-index, and re-indexes only that:

- the catalog's layout version differs, or the commit it was built from is gone
  from the history: rebuild it all;
- HEAD moved: the node files ``git diff`` names between the two commits (the
  dialect among them: rebuild it all, since it decides every inverse edge);
- the working tree: the node files ``git status`` calls changed, added or deleted,
  compared by size and mtime with what was indexed when they were last seen
  dirty (kept in the catalog's ``meta``, so the next process does not index them
  again), and the ones no longer dirty (reverted or committed) indexed once more.

The cost per call is what keeps this affordable: HEAD is compared by a stat of
git's ref files (a ``git rev-parse`` only when one moved), and ``git status``
(tens of milliseconds on a 10,000-node forest, and up to a second on a 100,000-node
one whose files were never committed) runs on the first call and then at most once
every ``STATUS_SECONDS``, or every ``STATUS_SHARE``-th of the time spent, when the
check itself is slow: a long-lived reader never spends more than about 5% of its
time looking for hand edits, and sees one within that interval.

All of it is done without the writer lock (the catalog is disposable, and a
reader taking the lock would make a writer starting then fail with E_LOCKED).
A writer at work (its lock card names a live process) is left alone: its catalog
rows run ahead of HEAD until its next checkpoint by design, and it keeps them true.
"""
from __future__ import annotations

import json
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..forest.catalog import SCHEMA_VERSION
from ..forest.dialect import SCHEMA_PATH
from ..store.history import head_commit, run_git
from ..writing.writer_probe import probe

STATUS_SECONDS = 2.0
STATUS_SHARE = 20  # at least this many times the last check's own duration between two checks
WORKTREE_KEY = "worktree"  # meta row: {path: [mtime_ns, size] | None} of the dirty node files indexed
REBUILT_KEY = "rebuilt_ns"  # meta row: when the catalog was last rebuilt from the files
RACY_NS = 1_000_000_000  # a file written within a second of the rebuild may have changed unseen: read it again


@dataclass
class RefreshPlan:
    """What a read-only reader re-indexes before it reads."""
    full: bool = False
    node_ids: set[str] = field(default_factory=set)
    head: str | None = None
    worktree: dict[str, list[int] | None] | None = None  # None: leave the recorded one as it is


def node_id_for_path(rel: str) -> str | None:
    """The node a forest-relative file path holds, or None for any other file
    (the rules of ``Vine.node_files``: hidden files and folders, ``_derived``,
    ``_assets`` and the top-level ``_meta`` hold no nodes)."""
    if not rel.endswith(".md"):
        return None
    parts = rel.split("/")
    if any(p.startswith(".") or p in ("_derived", "_assets") for p in parts) or parts[0] == "_meta":
        return None
    return rel[:-3]


class CatalogFreshness:
    def __init__(self, root: Path, *, status_seconds: float | None = None) -> None:
        self.root = Path(root)
        self.status_seconds = STATUS_SECONDS if status_seconds is None else status_seconds
        self._ref_stamp: tuple | None = None
        self._status_at: float | None = None
        self._status_cost = 0.0  # seconds the last working-tree check took
        git = self.root / ".git"
        self._git_dir = git if git.is_dir() else None  # a worktree's .git is a file: no stamp, rev-parse each time

    def plan(self, db: sqlite3.Connection) -> RefreshPlan | None:
        """What to re-index now, or None when the catalog is true to the forest."""
        stamp = self._stamp()
        status_due = self._status_at is None or \
            time.monotonic() - self._status_at >= max(self.status_seconds, STATUS_SHARE * self._status_cost)
        if stamp is not None and stamp == self._ref_stamp and not status_due:
            return None
        if probe(self.root).active:
            return None  # the writer keeps the catalog true; look again on the next call
        meta = _meta(db)
        head = head_commit(self.root)
        plan = RefreshPlan(head=head)
        if meta is None or meta.get("schema_version") != SCHEMA_VERSION or not meta.get("head"):
            plan.full = True
        elif meta["head"] != head:
            changed = self._changed_between(meta["head"], head)
            if changed is None or SCHEMA_PATH in changed:
                plan.full = True
            else:
                plan.node_ids.update(filter(None, map(node_id_for_path, changed)))
        recorded: dict[str, list[int] | None] = {}
        if status_due:
            started = time.monotonic()
            dirty = self._dirty_node_files()
            recorded = _recorded_worktree(meta, dirty)
            if dirty is not None:
                if dirty.get(SCHEMA_PATH, False) != recorded.get(SCHEMA_PATH, False):
                    plan.full = True  # the dialect edited by hand (or put back): every edge may differ
                plan.node_ids.update(node_id_for_path(p) or "" for p, st in dirty.items() if recorded.get(p, 0) != st)
                plan.node_ids.update(node_id_for_path(p) or "" for p in recorded if p not in dirty)
                plan.node_ids.discard("")
                plan.worktree = dirty
            self._status_at = time.monotonic()
            self._status_cost = self._status_at - started
        self._ref_stamp = stamp
        if not plan.full and not plan.node_ids and meta is not None and meta.get("head") == head \
                and (plan.worktree is None or plan.worktree == recorded):
            return None
        return plan

    def forget(self) -> None:
        """Look again on the next call (a refresh that could not be written)."""
        self._ref_stamp = None
        self._status_at = None

    # -- what git says ------------------------------------------------------------------
    def _stamp(self) -> tuple | None:
        """Size, mtime and inode of the files HEAD is read from: when none moved,
        HEAD did not (every ref update rewrites one of them)."""
        if self._git_dir is None:
            return None
        stamp = []
        head_file = self._git_dir / "HEAD"
        names = [head_file, self._git_dir / "packed-refs"]
        try:
            head_text = head_file.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return None
        if head_text.startswith("ref: "):
            names.append(self._git_dir / head_text[5:])
        for path in names:
            try:
                st = os.stat(path)
                stamp.append((st.st_ino, st.st_size, st.st_mtime_ns))
            except OSError:
                stamp.append(None)
        return (head_text, *stamp)

    def _changed_between(self, old: str, new: str | None) -> set[str] | None:
        """The files that differ between two commits, or None when the old one is
        not in this history any more (a rewritten branch): then rebuild it all."""
        if new is None:
            return None
        try:
            out = run_git(self.root, "diff", "--name-only", "--no-renames", "-z", old, new, "--")
        except Exception:  # noqa: BLE001 -- any failure means "cannot tell": rebuild
            return None
        return {p for p in out.split("\0") if p}

    def _dirty_node_files(self) -> dict[str, list[int] | None] | None:
        """The node files (and the dialect) the working tree changed, added or deleted,
        with their size and mtime (None: deleted); None when git cannot tell."""
        try:
            # no optional locks: a reader never refreshes git's index (a writer may hold index.lock)
            out = run_git(self.root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
                          env={"GIT_OPTIONAL_LOCKS": "0"})
        except Exception:  # noqa: BLE001 -- not a repository any more, or git is missing: skip this check
            return None
        dirty: dict[str, list[int] | None] = {}
        for entry in out.split("\0"):
            if len(entry) < 4:
                continue
            path = entry[3:]
            if path != SCHEMA_PATH and node_id_for_path(path) is None:
                continue
            try:
                st = os.stat(self.root / path)
                dirty[path] = [st.st_mtime_ns, st.st_size]
            except OSError:
                dirty[path] = None
        return dirty


def _meta(db: sqlite3.Connection) -> dict[str, str] | None:
    try:
        return dict(db.execute("SELECT key, value FROM meta WHERE key IN ('schema_version', 'head', ?, ?)",
                               (WORKTREE_KEY, REBUILT_KEY)))
    except sqlite3.Error:
        return None


def _recorded_worktree(meta: dict[str, str] | None,
                       dirty: dict[str, list[int] | None] | None) -> dict[str, list[int] | None]:
    """The dirty files as the catalog last indexed them. A catalog rebuilt from the
    files (``mark_rebuilt``) read every dirty file older than the rebuild as it is:
    those count as seen, so a forest that was never committed (files copied in, a
    generator's output) is not indexed a second time by its first reader."""
    meta = meta or {}
    if WORKTREE_KEY not in meta and REBUILT_KEY in meta:
        try:
            rebuilt_ns = int(meta[REBUILT_KEY])
        except ValueError:
            return {}
        return {path: st for path, st in (dirty or {}).items()
                if st is not None and st[0] < rebuilt_ns - RACY_NS}
    try:
        recorded = json.loads(meta.get(WORKTREE_KEY) or "{}")
    except ValueError:
        return {}
    return recorded if isinstance(recorded, dict) else {}


def mark_rebuilt(db: sqlite3.Connection) -> None:
    """Note that the catalog is being rebuilt from the files as they are now (inside
    the rebuild's transaction): what the working tree held is then its own record."""
    db.execute("DELETE FROM meta WHERE key = ?", (WORKTREE_KEY,))
    db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (REBUILT_KEY, str(time.time_ns())))


def record(db: sqlite3.Connection, plan: RefreshPlan) -> None:
    """Note in the catalog what it now matches (inside the caller's transaction)."""
    db.execute("INSERT OR REPLACE INTO meta VALUES ('head', ?)", (plan.head,))
    if plan.worktree is not None:
        db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (WORKTREE_KEY, json.dumps(plan.worktree)))
