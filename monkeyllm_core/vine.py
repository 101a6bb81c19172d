"""``Vine``: the one object that touches a forest.

Every write is one transaction: node file, parent index (and the grandparent's
entry line when a coverage changes), catalog rows and one git commit, or
nothing at all. On any failure every touched file is restored, a newborn payload
is deleted and a replaced payload put back.

A write returns on the branch (durable, in git's sense) unless it is made in a
bulk session (``with vine.bulk():``), where the branch catches up at least once
a second and at the session's end; ``store/history.py`` states the policy. After
a kill, the next writable open puts back whatever the journal names since the
last checkpoint.

This module is the facade: the lifecycle (open, bulk sessions, checkpoints,
close) and what each public call checks and decides. The work lives in its own
rooms: ``writing/transaction.py`` applies or undoes one write,
``writing/payloads.py`` installs, rebuilds and puts back payloads,
``writing/recovery.py`` puts back what a kill left, ``writing/files.py`` reads
and writes the text files, ``forest/upkeep.py`` keeps the branch indexes true,
and ``store/`` writes the commits.
"""
from __future__ import annotations

import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from .errors import VineError
from .forest import branches as br
from .forest.catalog import CATALOG_PATH, Catalog
from .forest.catalog_entry import CatalogEntry, entry_of
from .forest.dialect import SCHEMA_PATH, Dialect, load_dialect
from .forest.layout import is_forest
from .forest.parallel_read import read_entries
from .forest.passport import Node, parse_node
from .forest.patches import apply_patch
from .forest.rules import (
    MASTER_ID,
    check_id,
    check_new_id,
    is_branch_id,
    node_path,
    parent_of,
    today,
    trail_of,
    validate_passport,
)
from .forest.sections import replace_section, section_span
from .forest.upkeep import BranchUpkeep, checked_branch_body
from .store import history as gitstore, repo as gitrepo
from .store.messages import one_line
from .writing.files import TextFiles
from .writing.journal import Journal
from .writing.lock import ForestLock
from .writing.payloads import PayloadInstaller, payload_file
from .writing.recovery import catalog_is_stale, recover
from .writing.request import NodeWrite
from .writing.transaction import WriteTransaction
from .read.facade import ReadFacade
from .read.freshness import mark_rebuilt


class Vine(ReadFacade):  # the read calls: read/facade.py
    """A forest opened for reading, or for writing (``writable=True`` takes the lock)."""

    def __init__(self, root: str | os.PathLike[str], writable: bool = True) -> None:
        self.root = Path(root).resolve()
        if not is_forest(self.root):
            raise VineError("E_NOT_A_FOREST", f"{self.root} is not a forest (no {SCHEMA_PATH})",
                            "Run `vine init --forest DIR --title TITLE` to create one.")
        self.writable = writable
        self.dialect: Dialect = load_dialect(self.root)
        self._files = TextFiles(self.root)
        self._upkeep = BranchUpkeep(lambda child: self.catalog.repeated_by(child))
        self._payloads = PayloadInstaller(self.root)
        self._lock: ForestLock | None = None
        self._committer: gitstore.Committer | None = None
        self._backups_to_drop: list[Path] = []  # replaced payloads, kept until the checkpoint
        # one `git rev-parse` per open; a repository the writer cannot write is refused here, untouched
        self._repo = gitrepo.writable_repo(self.root) if writable else None
        self._journal = Journal(self.root, self._repo.git_dir if self._repo else None)
        self._bulk_seconds: float | None = None  # None: outside a bulk session, every write checkpointed
        self._closed = False
        self._owner = os.getpid()  # lineage.py: a forked child must not write, checkpoint or close
        if writable:
            self._lock = ForestLock(self.root)
            self._lock.acquire()
            try:
                self._committer = gitstore.Committer(self.root, self._repo)
                recovered = recover(self._journal, self._files)
                self.catalog = Catalog(self.root)
                # HEAD as the committer read it under the lock (recovery moves no ref)
                if recovered or catalog_is_stale(self.catalog, self._committer.head):
                    self.reindex()
                if recovered:
                    self._journal.truncate(0)  # only now: see recovery.recover
            except BaseException:
                self._lock.release()
                raise
        else:
            if not (self.root / CATALOG_PATH).exists():
                # the derived layer is disposable: build it without taking the lock
                Catalog(self.root).close()
                self.catalog = Catalog(self.root)
                self.reindex()
                self.catalog.close()
            self.catalog = Catalog(self.root, readonly=True)

    # -- lifecycle ----------------------------------------------------------
    def __enter__(self) -> "Vine":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def bulk(self, seconds: float = gitstore.CHECKPOINT_SECONDS) -> Iterator["Vine"]:
        """A bulk session: writes reach the branch at most ``seconds`` after they are
        made (checked before and after each write; call ``flush`` before waiting on
        anything) and all of them when the session ends, also by an exception. Outside
        one, every write is checkpointed before it returns. Sessions nest."""
        outer = self._bulk_seconds
        self._bulk_seconds = seconds if outer is None else min(outer, seconds)
        try:
            yield self
        except BaseException:
            self._bulk_seconds = outer
            if outer is None and not self._closed and self._in_owner():
                try:  # what was planted stays planted, whatever stopped the session
                    self.flush()
                except Exception:
                    pass  # close() retries, and puts the files back if it cannot
            raise
        self._bulk_seconds = outer
        if outer is None and not self._closed and self._in_owner():
            self.flush()

    def checkpoint_if_due(self) -> None:
        """Checkpoint when the policy says so (at once outside a bulk session, once
        ``seconds`` have passed in one); cheap otherwise."""
        if self._committer is not None and self._committer.checkpoint_due(self._bulk_seconds):
            self.flush()

    def _in_owner(self) -> bool:
        """Whether this is the process that opened the Vine, not a child forked from it
        (whose copy of the open pack, journal and lock are the parent's)."""
        return os.getpid() == self._owner

    def flush(self) -> None:
        """Make every commit so far visible in git (ref moved, index updated); cheap
        when there is nothing to make visible."""
        if self._committer is None:
            return
        if not self._in_owner():
            raise VineError("E_READONLY", f"this Vine was opened by process {self._owner}, not this forked child",
                            "Open the forest again in the child; the parent's writes are its own.")
        # in a bulk session the index entries' stat data is recorded at its end: one
        # git process fewer per checkpoint
        pending = self._committer.pending
        self._committer.checkpoint(before_ref_moves=lambda sha: self._journal.append({"checkpoint": sha}),
                                   refresh=self._bulk_seconds is None)
        if pending:
            self.catalog.db.execute("INSERT OR REPLACE INTO meta VALUES ('head', ?)", (self._committer.head,))
        for backup in self._backups_to_drop:
            backup.unlink(missing_ok=True)
        self._backups_to_drop.clear()
        # spares live no longer than the journal that names their files (files.py)
        self._files.drop_spares()
        self._journal.truncate(0)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if not self._in_owner():
            return  # a forked child: the pack, the journal, the catalog and the lock are the parent's
        try:
            if self._committer is not None:
                try:
                    self.flush()
                except BaseException:
                    # these commits never reached git: put their files back now rather
                    # than leave the forest dirty until the next writer opens it
                    self._committer.abort()
                    try:
                        if recover(self._journal, self._files):
                            self.reindex()
                            self._journal.truncate(0)
                    except Exception:
                        pass  # the journal stays; the next writable open retries
                    raise
                finally:  # a failed flush must not leave a temporary pack behind
                    self._committer.close()
        finally:
            self._close_reads()
            self.catalog.close()
            self._journal.close()
            if self._lock is not None:
                self._lock.release()

    def __del__(self) -> None:  # a forgotten close() must not leave commits invisible
        try:
            if not self._closed and getattr(self, "catalog", None) is not None:
                self.close()
        except Exception:
            pass

    # -- reading ------------------------------------------------------------
    def exists(self, node_id: str) -> bool:
        try:
            check_id(node_id)  # an id that is not one (``../x``) names no node
        except VineError:
            return False
        return (self.root / node_path(node_id)).is_file()

    def read(self, node_id: str) -> Node:
        check_id(node_id)
        text = self._files.read(node_path(node_id))
        if text is None:
            raise VineError("E_NOT_FOUND", f"no node {node_id!r}",
                            "Ids are paths without .md; search with the catalog or list a branch.")
        return parse_node(text, where=node_path(node_id))

    def trail(self, node_id: str) -> list[str]:
        return trail_of(node_id)

    def payload_path(self, node_id: str) -> Path | None:
        fm = self.read(node_id).frontmatter
        if not fm.get("payload"):
            return None
        return self.root / payload_file(node_id, str(fm["payload"]))

    def query(self, node_id: str, sql: str) -> dict[str, Any]:
        from .data.query import run_query
        return self._read_call("query", {"id": node_id, "sql": sql}, node_id,  # traced like every read
                               lambda _ctx: run_query(self._dataset_db(node_id), sql), catalog=False)

    def search(self, query: str, *, k: int = 8, kind: str | None = None,
               exclude: Iterable[str] = ()) -> list[dict[str, Any]]:
        return self.catalog.search(query, k=k, kind=kind, exclude=exclude)

    def _dataset_db(self, node_id: str) -> Path:
        fm = self.read(node_id).frontmatter
        if fm.get("payload_type") != "sqlite" or not fm.get("payload"):
            raise VineError("E_NOT_FOUND", f"{node_id} has no SQLite payload",
                            "query and tend work on dataset nodes (payload_type: sqlite).")
        db = self.root / payload_file(node_id, str(fm["payload"]))
        if not db.is_file():
            from .snapshot.absent import ABSENT_PAYLOAD_HINT
            raise VineError("E_NOT_FOUND", f"{node_id}: payload {fm['payload']} is not present", ABSENT_PAYLOAD_HINT)
        return db

    # -- the transaction ------------------------------------------------------
    def _begin_write(self) -> None:
        """Every write starts here: refused when read-only, and in a bulk session the
        branch first catches up if it is due (a long write must not hold it back)."""
        self._require_writable()
        self.checkpoint_if_due()

    def _require_writable(self) -> None:
        if not self.writable:
            raise VineError("E_READONLY", "this Vine was opened read-only",
                            "Open it with Vine(root, writable=True) to write.")
        if self._closed:
            raise VineError("E_READONLY", "this Vine is closed", "Open the forest again.")
        if not self._in_owner():
            raise VineError("E_READONLY", f"this Vine was opened by process {self._owner}, not this forked child",
                            "Open the forest again in the child; the parent's writes are its own.")

    def _transaction(self) -> WriteTransaction:
        return WriteTransaction(self._files, self._journal, self._upkeep)

    def _apply(self, txn: WriteTransaction, message: str) -> str:
        """Write, catalog and commit txn, or undo every part of it."""
        assert self._committer is not None
        sha = txn.apply(message, committer=self._committer, catalog=self.catalog, dialect=self.dialect)
        self._backups_to_drop += txn.settled_backups()
        if SCHEMA_PATH in txn.files:  # a graft declared (or dropped) types or rels
            self.dialect = load_dialect(self.root)
        return sha

    # -- plant ----------------------------------------------------------------------
    def plant(self, node: NodeWrite | Mapping[str, Any]) -> dict[str, Any]:
        """Create a node (or a branch): a ``NodeWrite``, or primitives.md's node dict
        (``NodeWrite.from_wire``)."""
        self._begin_write()
        request = node if isinstance(node, NodeWrite) else NodeWrite.from_wire(node)
        fields = dict(request.passport)
        body = request.body or ""
        node_id = fields.get("id")
        check_new_id(node_id)
        expected_parent = parent_of(node_id)
        if self.exists(node_id):
            raise VineError("E_EXISTS", f"{node_id} already exists",
                            "Ids are immutable: graft the existing node, or choose another id.")
        if node_id.startswith("_meta/") or node_id == MASTER_ID:
            raise VineError("E_SCHEMA", f"{node_id} is reserved", "Choose an id outside _meta/ and _index.")
        now = today()
        fields.setdefault("created", now)
        fields.setdefault("updated", now)
        fields.setdefault("source", "agent")
        fields.setdefault("title", node_id.rsplit("/", 1)[-1])
        if fields.get("type") == "branch" or is_branch_id(node_id):
            fields.setdefault("type", "branch")
            fields["coverage"] = br.coverage_text(0, 0)
            if not body:
                body = br.branch_body(fields["title"], str(fields.get("summary") or ""))
        validate_passport(fields, self.dialect)
        if expected_parent is not None and not self.exists(expected_parent):
            raise VineError("E_NOT_FOUND", f"parent branch {expected_parent!r} does not exist",
                            "Plant the parent branch first (folders before files).")

        txn = self._transaction()
        try:
            if request.dataset is not None:
                body = self._payloads.birth_dataset(txn, fields, body, request.dataset)
            elif request.payload is not None:
                body = self._payloads.install(txn, fields, body, request.payload)
            txn.put_node(fields, body)
            self._upkeep.list_in_parent(txn, fields, new=True)
            sha = self._apply(txn, f"plant({node_id}): {one_line(fields['title'])} [source={fields['source']}]")
        except BaseException:
            txn.abandon()
            raise
        self.checkpoint_if_due()
        return {"id": node_id, "commit": sha, "trail": trail_of(node_id)}

    # -- replace (the Gardener's sync refresh) ----------------------------------------
    def replace(self, node_id: str, change: NodeWrite | Mapping[str, Any], *,
                message: str | None = None) -> dict[str, Any]:
        """Replace a node's passport, body and payload in one commit.

        ``change``: a ``NodeWrite``, or a mapping of passport keys alone. Its
        passport keys are set (None removes a key); ``id``, ``type`` and ``created``
        are kept; its body, when given, replaces the body. A new payload (a
        ``PayloadSpec``, or a ``DatasetSpec`` rebuilt) replaces the old one only if
        the commit lands. For a dataset only the generated ``## Query manual`` /
        ``## Sample rows`` sections of the body are rewritten.
        """
        self._begin_write()
        request = change if isinstance(change, NodeWrite) else NodeWrite(passport=change)
        current = self.read(node_id)
        old = current.frontmatter
        fm = dict(old)
        for key, value in request.passport.items():
            if key in ("id", "type", "created"):
                continue
            if value is None:
                fm.pop(key, None)
            else:
                fm[key] = value
        new_body = current.body if request.body is None else request.body
        txn = self._transaction()
        try:
            if request.dataset is not None:
                new_body = self._payloads.rebuild_dataset(txn, fm, new_body, request.dataset)
            elif request.payload is not None:
                if old.get("payload"):
                    fm["payload"] = old["payload"]
                new_body = self._payloads.install(txn, fm, new_body, request.payload)
            if fm == old and new_body == current.body:
                txn.abandon()
                return {"id": node_id, "commit": None, "trail": trail_of(node_id)}
            fm["updated"] = today() if fm.get("updated") == old.get("updated") else fm["updated"]
            validate_passport(fm, self.dialect)
            self._put_with_propagation(txn, old, fm, new_body)
            sha = self._apply(txn, message or f"gardener(sync): {node_id}")
        except BaseException:
            txn.abandon()
            raise
        self.checkpoint_if_due()
        return {"id": node_id, "commit": sha, "trail": trail_of(node_id)}

    def _put_with_propagation(self, txn: WriteTransaction, old: Mapping[str, Any], fm: dict[str, Any], body: str) -> None:
        """Write a changed node; a summary (or coverage) change reaches its parent's entry."""
        if is_branch_id(fm["id"]) and fm.get("summary") != old.get("summary"):
            body = br.set_blockquote(body, fm["summary"])
        txn.put_node(fm, body)
        if fm.get("summary") != old.get("summary") or fm.get("coverage") != old.get("coverage"):
            self._upkeep.list_in_parent(txn, fm, new=False, old=old)

    # -- graft --------------------------------------------------------------------------
    def graft(self, node_id: str, patch: Mapping[str, Any], *, message: str | None = None) -> dict[str, Any]:
        """Edit a node: set_frontmatter, add_links, remove_links, append_section,
        replace_section, body. An existing link is fortified, not duplicated."""
        self._begin_write()
        current = self.read(node_id)
        old = current.frontmatter
        fm, body, what, fortified = apply_patch(node_id, old, current.body, patch, exists=self.exists)
        result = {"id": node_id, "commit": None, "fortified": fortified, "trail": trail_of(node_id)}
        self.heat_fortified(node_id, fortified)  # reinforce before create: both ends warm up
        if not what:
            return result
        if is_branch_id(node_id) and body != current.body:
            body = checked_branch_body(node_id, current.body, body, fm, self.exists)
        fm["updated"] = today()
        validate_passport(fm, self.dialect)
        txn = self._transaction()
        self._put_with_propagation(txn, old, fm, body)
        result["commit"] = self._apply(txn, message or f"graft({node_id}): {', '.join(what)}")
        self.checkpoint_if_due()
        return result

    # -- tend -------------------------------------------------------------------------------
    def tend(self, node_id: str, sql: str) -> dict[str, Any]:
        """Write rows into a dataset, then commit the refreshed passport (markdown only)."""
        from .hashing import sha256_file
        from .data.tend import run_tend
        self._begin_write()
        db = self._dataset_db(node_id)
        started = time.perf_counter()
        verb, count = run_tend(db, sql)
        current = self.read(node_id)
        fm = dict(current.frontmatter)
        fm["payload_hash"] = sha256_file(db)
        fm["updated"] = today()
        body = current.body
        if section_span(body, "Sample rows") is not None and count:
            # the generated map states row counts and samples: keep it true
            from .data.sample_map import render_sample_rows
            body = replace_section(body, "Sample rows", render_sample_rows(db))
        txn = self._transaction()
        txn.put_node(fm, body)
        sha = self._apply(txn, f"tend({node_id}): {verb} {count} row(s)")
        self.checkpoint_if_due()
        return {"id": node_id, "rows_affected": count, "payload_hash": fm["payload_hash"],
                "commit": sha, "elapsed_ms": round((time.perf_counter() - started) * 1000, 2)}

    # -- derived layer --------------------------------------------------------------------
    def node_files(self) -> list[str]:
        """Every node's id, from the files (``_meta`` and the derived layer excluded)."""
        ids = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            rel_dir = os.path.relpath(dirpath, self.root)
            rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/")
            dirnames[:] = sorted(d for d in dirnames if not (d.startswith(".") or d in ("_derived", "_assets")
                                                             or (not rel_dir and d == "_meta")))
            for name in sorted(filenames):
                if name.endswith(".md") and not name.startswith("."):
                    ids.append(f"{rel_dir}/{name[:-3]}" if rel_dir else name[:-3])
        return ids

    def reindex_nodes(self, node_ids: Iterable[str]) -> int:
        """Re-index these nodes from their files, in one catalog transaction: a node
        whose file is gone (or no longer a readable node) leaves the catalog.
        Returns how many are indexed now."""
        db = self.catalog
        db.begin()
        try:
            count = 0
            for node_id in sorted(set(node_ids)):
                self._files.forget(node_path(node_id))
                if self._index_node(node_id):
                    count += 1
                else:
                    db.delete_node(node_id)
            db.commit()
        except BaseException:
            db.rollback()
            raise
        return count

    def _index_node(self, node_id: str) -> bool:
        """Write one node's catalog rows from its file; False when it holds no readable node."""
        rel = node_path(node_id)
        try:
            check_id(node_id)
            text = self._files.read(rel)
        except VineError:
            return False  # validate reports it; the catalog only holds readable nodes
        entry = None if text is None else entry_of(node_id, text)
        if entry is None:
            return False
        self._index_entry(entry, rebuilding=False)
        return True

    def _index_entry(self, entry: CatalogEntry, *, rebuilding: bool) -> None:
        """``rebuilding``: the catalog was emptied for a reindex, so the rows are new."""
        self.catalog.upsert_node(entry.frontmatter, self.dialect, body_tokens=entry.body_tokens,
                                 outline=entry.outline, new=rebuilding)
        if entry.repeats is not None:
            self.catalog.set_repeats(entry.node_id, entry.repeats)

    def reindex(self) -> int:
        """Rebuild the catalog from the files. Returns the number of nodes indexed."""
        db = self.catalog
        db.begin()
        try:
            mark_rebuilt(db.db)  # before the files are read: a file changed during the rebuild is read again
            db.delete_all()
            count = 0
            # parsed on every core past a few thousand files, written here in file order
            for _node_id, entry in read_entries(self.root, self.node_files()):
                if entry is not None:
                    self._index_entry(entry, rebuilding=True)
                    count += 1
            db.optimize_search()
            head = gitstore.head_commit(self.root)
            db.db.execute("INSERT OR REPLACE INTO meta VALUES ('head', ?)", (head,))
            db.commit()
        except BaseException:
            db.rollback()
            raise
        return count

