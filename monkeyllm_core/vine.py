"""``Vine``: the one object that touches a forest.

Every write is one transaction: node file, parent index (and the grandparent's
entry line when a coverage changes), catalog rows and one git commit, or
nothing at all. On any failure every touched file is restored, a newborn payload
is deleted and a replaced payload put back.

A write returns on the branch (durable, in git's sense) unless it is made in a
bulk session (``with vine.bulk():``), where the branch catches up at least once
a second and at the session's end; gitstore's docstring states the policy. After
a kill, the next writable open puts back whatever the journal names since the
last checkpoint, including the half-copied payloads (``.<name>.<hex>.tmp``) and the work folders
of WAL snapshots (``.<name>.snapshot-*``) a kill during a copy leaves.
"""
from __future__ import annotations

import itertools
import os
import re
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from .forest import branches as br
from .store import repo as gitrepo, history as gitstore
from .store.messages import one_line
from .writing.atomic import remove_spare, write_atomically
from .forest.catalog import CATALOG_PATH, Catalog
from .forest.dialect import SCHEMA_PATH, Dialect, load_dialect
from .errors import VineError, estimate_tokens
from .writing.journal import Journal
from .writing.lock import ForestLock
from .forest.passport import Node, parse_node, render_node
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
from .data.sqlite_copy import remove_snapshot_work
from .forest.upkeep import BranchUpkeep, checked_branch_body
from .read.facade import ReadFacade

# the temporary name ``hashing.copy_file_with_hash`` copies a payload under
_PAYLOAD_COPY = re.compile(r"\.(?P<name>.+)\.[0-9a-f]{32}\.tmp")


def is_forest(root: Path) -> bool:
    return (Path(root) / SCHEMA_PATH).is_file()


def payload_file(node_id: str, payload: str) -> str:
    """The payload's path relative to the forest root (payload is relative to the node's folder)."""
    folder = node_id.rsplit("/", 1)[0] if "/" in node_id else ""
    rel = f"{folder}/{payload}" if folder else payload
    parts = rel.split("/")
    if payload.startswith("/") or ".." in parts or "" in parts:
        raise VineError("E_FRONTMATTER", f"{node_id}: payload {payload!r} points outside the node's folder",
                        "A payload is a file name (or _assets/name) beside the passport.")
    return rel


@dataclass
class _Txn:
    """The files, payloads and catalog rows of one write, applied or undone together."""

    vine: "Vine"
    files: dict[str, str] = field(default_factory=dict)  # rel path -> new text
    nodes: list[tuple[dict[str, Any], int, set[str] | None]] = field(default_factory=list)  # passport, tokens, repeats
    new_payloads: list[Path] = field(default_factory=list)
    replaced_payloads: list[tuple[Path, Path]] = field(default_factory=list)  # (payload, backup)
    journal_at: int | None = None  # offset of this write's first journal line

    def claim_payload(self, new: Path | None = None, replaced: tuple[Path, Path] | None = None) -> None:
        """Journal a payload before it is created or moved aside, so a kill -9
        mid-birth leaves no orphan .db (the next open deletes or restores it)."""
        root = self.vine.root
        entry = {"files": [], "new_payloads": [], "replaced_payloads": []}
        if new is not None:
            self.new_payloads.append(new)
            entry["new_payloads"].append(str(new.relative_to(root)))
        if replaced is not None:
            self.replaced_payloads.append(replaced)
            entry["replaced_payloads"].append([str(p.relative_to(root)) for p in replaced])
        at = self.vine._journal.append(entry)
        if self.journal_at is None:
            self.journal_at = at

    def abandon(self) -> None:
        """Undo this write's payload work and forget its journal lines."""
        self.vine._undo_payloads(self.new_payloads, self.replaced_payloads)
        if self.journal_at is not None:
            self.vine._journal.truncate(self.journal_at)

    def read(self, rel: str) -> str | None:
        if rel in self.files:
            return self.files[rel]
        return self.vine._read_text(rel)

    def put_node(self, fm: dict[str, Any], body: str) -> None:
        rel = node_path(fm["id"])
        repeats = None
        if is_branch_id(fm["id"]):
            text, repeats = self.vine._upkeep.render(fm, body)
        else:
            text = render_node(fm, body)
        self.files[rel] = text
        self.nodes = [n for n in self.nodes if n[0]["id"] != fm["id"]]
        self.nodes.append((fm, estimate_tokens(body), repeats))


class Vine(ReadFacade):  # the read calls: read/facade.py
    """A forest opened for reading, or for writing (``writable=True`` takes the lock)."""

    def __init__(self, root: str | os.PathLike[str], writable: bool = True) -> None:
        self.root = Path(root).resolve()
        if not is_forest(self.root):
            raise VineError("E_NOT_A_FOREST", f"{self.root} is not a forest (no {SCHEMA_PATH})",
                            "Run `vine init --forest DIR --title TITLE` to create one.")
        self.writable = writable
        self.dialect: Dialect = load_dialect(self.root)
        self._text_cache: dict[str, tuple[int, int, str]] = {}
        self._upkeep = BranchUpkeep(lambda child: self.catalog.repeated_by(child))
        self._lock: ForestLock | None = None
        self._committer: gitstore.Committer | None = None
        self._backups_to_drop: list[Path] = []
        self._backup_numbers = itertools.count(1)
        # one `git rev-parse` per open; a repository the writer cannot write is refused here, untouched
        self._repo = gitrepo.writable_repo(self.root) if writable else None
        self._journal = Journal(self.root, self._repo.git_dir if self._repo else None)
        self._spares: set[str] = set()  # files whose hidden spare copy goes at the next checkpoint
        self._bulk_seconds: float | None = None  # None: outside a bulk session, every write checkpointed
        self._closed = False
        self._owner = os.getpid()  # lineage.py: a forked child must not write, checkpoint or close
        if writable:
            self._lock = ForestLock(self.root)
            self._lock.acquire()
            try:
                self._committer = gitstore.Committer(self.root, self._repo)
                recovered = self._recover()
                self.catalog = Catalog(self.root)
                if recovered or self._catalog_is_stale():
                    self.reindex()
                if recovered:
                    self._journal.truncate(0)  # only now: see _recover
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
        if self._committer.pending:
            self._committer.checkpoint(before_ref_moves=lambda sha: self._journal.append({"checkpoint": sha}))
            self.catalog.db.execute("INSERT OR REPLACE INTO meta VALUES ('head', ?)", (self._committer.head,))
        for backup in self._backups_to_drop:
            backup.unlink(missing_ok=True)
        self._backups_to_drop.clear()
        # spares live no longer than the journal that names their files, so a crash
        # never leaves one the next recovery would not clean up
        for rel in self._spares:
            remove_spare(self.root / rel)
        self._spares.clear()
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
                        if self._recover():
                            self.reindex()
                            self._journal.truncate(0)
                    except Exception:
                        pass  # the journal stays; the next writable open retries
                    raise
                finally:  # a failed flush must not leave a temporary pack behind
                    self._committer.close()
        finally:
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
    def _read_text(self, rel: str) -> str | None:
        path = self.root / rel
        try:
            st = path.stat()
        except FileNotFoundError:
            return None
        cached = self._text_cache.get(rel)
        if cached and cached[0] == st.st_mtime_ns and cached[1] == st.st_size:
            return cached[2]
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise VineError("E_FRONTMATTER", f"{rel}: not UTF-8 text (byte {exc.start})",
                            "Re-save the file as UTF-8.") from None
        self._text_cache[rel] = (st.st_mtime_ns, st.st_size, text)
        return text

    def exists(self, node_id: str) -> bool:
        try:
            check_id(node_id)  # an id that is not one (``../x``) names no node
        except VineError:
            return False
        return (self.root / node_path(node_id)).is_file()

    def read(self, node_id: str) -> Node:
        check_id(node_id)
        text = self._read_text(node_path(node_id))
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
            raise VineError("E_NOT_FOUND", f"{node_id}: payload {fm['payload']} is missing",
                            "Restore the .db beside the passport, or re-adopt its source.")
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

    def _apply(self, txn: _Txn, message: str) -> str:
        """Write, catalog and commit txn, or undo every part of it."""
        assert self._committer is not None
        binaries = [rel for rel in txn.files if not rel.endswith(".md")]
        if binaries:
            # payloads live beside their passports, referenced by hash, never in git
            raise VineError("E_FRONTMATTER", f"refusing to commit non-markdown file(s): {', '.join(binaries)}",
                            "Only markdown nodes are committed; payloads stay out of git.")
        journal_at = self._journal.append({
            "files": sorted(txn.files),
            "new_payloads": [str(p.relative_to(self.root)) for p in txn.new_payloads],
            "replaced_payloads": [[str(p.relative_to(self.root)), str(b.relative_to(self.root))]
                                  for p, b in txn.replaced_payloads],
        })
        originals: dict[str, str | None] = {}
        encoded = {rel: text.encode("utf-8") for rel, text in txn.files.items()}
        try:
            for rel, text in txn.files.items():
                originals[rel] = self._read_text(rel)
                self._write_file(rel, text, encoded[rel])
            self.catalog.begin()
            for fm, body_tokens, repeats in txn.nodes:
                self.catalog.upsert_node(fm, self.dialect, body_tokens=body_tokens)
                if repeats is not None:
                    self.catalog.set_repeats(fm["id"], repeats)
            sha = self._committer.commit(message, encoded)
            self.catalog.commit()
        except BaseException:
            self.catalog.rollback()
            for rel, text in originals.items():
                if text is None:
                    (self.root / rel).unlink(missing_ok=True)
                    _prune_empty_dirs((self.root / rel).parent, self.root)
                else:
                    self._write_file(rel, text)
                self._text_cache.pop(rel, None)
            self._undo_payloads(txn.new_payloads, txn.replaced_payloads)
            self._journal.truncate(journal_at if txn.journal_at is None else txn.journal_at)
            raise
        self._backups_to_drop += [backup for _, backup in txn.replaced_payloads]
        if SCHEMA_PATH in txn.files:  # a graft declared (or dropped) types or rels
            self.dialect = load_dialect(self.root)
        return sha

    def _write_file(self, rel: str, text: str, data: bytes | None = None) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, text.encode("utf-8") if data is None else data)
        self._spares.add(rel)
        st = path.stat()
        self._text_cache[rel] = (st.st_mtime_ns, st.st_size, text)

    def _undo_payloads(self, new: Iterable[Path], replaced: Iterable[tuple[Path, Path]]) -> None:
        for path in new:
            for suffix in ("", "-journal", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        for payload, backup in replaced:
            if backup.exists():
                os.replace(backup, payload)

    def _backup_path(self, payload: Path) -> Path:
        """Where a replaced payload waits until the checkpoint: one name per
        replacement, so a payload replaced twice can still be put back to HEAD's."""
        return payload.with_name(f".{payload.name}.{next(self._backup_numbers)}.vine-old")

    def _recover(self) -> bool:
        """After a crash: put every path touched since the last checkpoint back to HEAD.

        A checkpoint journals the commit it is about to move the ref to; when HEAD is
        that commit, the crash came after the move and the writes journalled before it
        are committed: their payloads stay, only git's index is brought up to date.

        The journal stays until the caller has rebuilt the catalog from the restored
        files: a kill during that rebuild must find it again, or the catalog would
        keep the rows of writes that no longer exist (every step here can be redone)."""
        entries = self._journal.entries()
        if not entries:
            return False
        head = gitstore.head_commit(self.root)
        landed = max((i for i, entry in enumerate(entries) if entry.get("checkpoint") == head), default=-1)
        committed, pending = entries[:landed + 1], entries[landed + 1:]
        touched = sorted({rel for entry in pending for rel in entry.get("files", [])})
        at_head = gitstore.read_head_files(self.root, touched)  # raises if git cannot answer
        for rel in touched:
            target = self.root / rel
            remove_spare(target)
            data = at_head[rel]
            if data is None:
                target.unlink(missing_ok=True)
                _prune_empty_dirs(target.parent, self.root)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            self._text_cache.pop(rel, None)
        for entry in reversed(pending):  # a payload replaced twice gets its first version back
            self._undo_payloads([self.root / p for p in entry.get("new_payloads", [])],
                                [(self.root / p, self.root / b) for p, b in entry.get("replaced_payloads", [])])
            for payload in _journalled_payloads(entry):
                _remove_payload_copies(self.root / payload)
                remove_snapshot_work(self.root / payload)
        settled = sorted({rel for entry in committed for rel in entry.get("files", [])})
        for entry in committed:  # committed: the replaced payloads' backups are garbage now
            for _, backup in entry.get("replaced_payloads", []):
                (self.root / backup).unlink(missing_ok=True)
        for rel in settled:
            remove_spare(self.root / rel)
        # a crash between a checkpoint's ref move and its index update leaves the index
        # behind HEAD for these paths; then the restored files' stat data is refreshed
        paths = sorted(set(touched) | set(settled))
        if paths:  # (no pathspec at all would reset the whole index)
            gitstore.run_git_on_index(self.root, "reset", "-q", "--pathspec-from-file=-", "--pathspec-file-nul",
                                      input="".join(f"{rel}\0" for rel in paths).encode())
        gitstore.run_git(self.root, "update-index", "-q", "--refresh", check=False)
        return True

    def _catalog_is_stale(self) -> bool:
        row = self.catalog.db.execute("SELECT value FROM meta WHERE key = 'head'").fetchone()
        return row is None or row[0] != gitstore.head_commit(self.root)

    # -- plant ----------------------------------------------------------------------
    def plant(self, node: Mapping[str, Any]) -> dict[str, Any]:
        """Create a node (or a branch). See primitives.md for the node dict."""
        self._begin_write()
        fields = dict(node)
        body = str(fields.pop("body", "") or "")
        parent = fields.pop("parent", None)
        schema = fields.pop("schema", None)
        rows = fields.pop("rows", None)
        manual_notes = list(fields.pop("manual_notes", []) or [])
        payload_source = fields.pop("payload_source", None)
        payload_move = bool(fields.pop("payload_move", False))
        row_counts = fields.pop("row_counts", None)  # the caller counted while loading a payload
        node_id = fields.get("id")
        check_new_id(node_id)
        expected_parent = parent_of(node_id)
        if parent is not None and parent != expected_parent:
            raise VineError("E_FRONTMATTER", f"{node_id}: parent {parent!r} breaks the parent rule",
                            f"{node_id} lives under {expected_parent}.")
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

        txn = _Txn(self)
        try:
            if schema is not None:
                body = self._birth_dataset(txn, fields, body, schema, rows, manual_notes)
            elif payload_source is not None:
                body = self._install_payload(txn, fields, body, Path(payload_source), manual_notes,
                                             move=payload_move, row_counts=row_counts)
            txn.put_node(fields, body)
            self._upkeep.list_in_parent(txn, fields, new=True)
            sha = self._apply(txn, f"plant({node_id}): {one_line(fields['title'])} [source={fields['source']}]")
        except BaseException:
            txn.abandon()
            raise
        self.checkpoint_if_due()
        return {"id": node_id, "commit": sha, "trail": trail_of(node_id)}

    def _birth_dataset(self, txn: _Txn, fm: dict[str, Any], body: str, schema: Mapping[str, Any],
                       rows: Mapping[str, Iterable[Any]] | None, notes: list[str]) -> str:
        from .data.dataset import create_dataset, validate_schema
        from .hashing import sha256_file
        validate_schema(schema)
        fm["type"] = fm.get("type") or "dataset"
        name = fm.get("payload") or f"{fm['id'].rsplit('/', 1)[-1]}.db"
        db = self.root / payload_file(fm["id"], name)
        if db.exists():
            raise VineError("E_SCHEMA", f"{fm['id']}: payload {name} already exists",
                            "A newborn dataset never overwrites a payload; remove it or pick another id.")
        db.parent.mkdir(parents=True, exist_ok=True)
        txn.claim_payload(new=db)
        counts = create_dataset(db, schema, rows)
        fm.update(payload=name, payload_type="sqlite", payload_hash=sha256_file(db))
        if not body.strip():
            body = f"# {fm['title']}\n"  # FOREST-FORMAT: a dataset body opens with its title
        return self._with_map(body, db, notes, with_samples=rows is not None, row_counts=counts)

    def _install_payload(self, txn: _Txn, fm: dict[str, Any], body: str, source: Path,
                         notes: list[str], *, move: bool = False,
                         row_counts: Mapping[str, int] | None = None) -> str:
        """Copy a file in place as the node's payload (a SQLite db, an image, ...).

        ``move`` renames instead (for a payload the caller built on the forest's
        filesystem, e.g. a dataset loaded into ``_derived/tmp``): no second copy."""
        from .hashing import copy_file_with_hash, sha256_file
        from .data.sqlite_copy import needs_snapshot, snapshot_database
        name = fm.get("payload")
        if not name:
            raise VineError("E_FRONTMATTER", f"{fm['id']}: payload_source needs a payload name",
                            "Set payload to the file name beside the passport.")
        dest = self.root / payload_file(fm["id"], str(name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.exists():
            backup = self._backup_path(dest)
            txn.claim_payload(replaced=(dest, backup))
            os.replace(dest, backup)
        else:
            txn.claim_payload(new=dest)
        if move:
            os.replace(source, dest)
            fm["payload_hash"] = sha256_file(dest)
        elif fm.get("payload_type") == "sqlite" and needs_snapshot(source):
            # a WAL database: its -wal data checkpointed into a rollback-journal copy,
            # so a query on the forest never needs a -wal/-shm beside the payload
            snapshot_database(source, dest)
            fm["payload_hash"] = sha256_file(dest)
        else:
            fm["payload_hash"] = copy_file_with_hash(source, dest)
        if fm.get("payload_type") == "sqlite":
            fm["type"] = "dataset"
            body = self._with_map(body, dest, notes, with_samples=True, row_counts=row_counts)
        return body

    def _with_map(self, body: str, db: Path, notes: list[str], *, with_samples: bool,
                  row_counts: Mapping[str, int] | None = None) -> str:
        """Append the generated map, or regenerate its two sections in place."""
        from .data.sample_map import render_query_manual, render_sample_rows
        manual = render_query_manual(db, notes)
        if section_span(body, "Query manual") is not None and section_span(body, "Sample rows") is None and not with_samples:
            return body  # a hand-written manual: the engine leaves it alone
        body = replace_section(body, "Query manual", manual)
        if with_samples:
            body = replace_section(body, "Sample rows", render_sample_rows(db, row_counts))
        return body

    # -- replace (the Gardener's sync refresh) ----------------------------------------
    def replace(self, node_id: str, frontmatter: Mapping[str, Any], body: str | None = None, *,
                message: str | None = None, payload_source: str | os.PathLike[str] | None = None,
                schema: Mapping[str, Any] | None = None, rows: Mapping[str, Iterable[Any]] | None = None,
                manual_notes: Iterable[str] = (), payload_move: bool = False,
                row_counts: Mapping[str, int] | None = None) -> dict[str, Any]:
        """Replace a node's passport, body and payload in one commit.

        ``frontmatter`` keys are set (None removes a key); ``id``, ``type`` and
        ``created`` are kept. A new payload (a file or a rebuilt dataset) replaces
        the old one only if the commit lands. For a dataset only the generated
        ``## Query manual`` / ``## Sample rows`` sections of the body are rewritten.
        """
        self._begin_write()
        current = self.read(node_id)
        old = current.frontmatter
        fm = dict(old)
        for key, value in frontmatter.items():
            if key in ("id", "type", "created"):
                continue
            if value is None:
                fm.pop(key, None)
            else:
                fm[key] = value
        new_body = current.body if body is None else body
        txn = _Txn(self)
        try:
            if schema is not None:
                new_body = self._rebuild_dataset(txn, fm, current.body if body is None else new_body,
                                                 schema, rows, list(manual_notes))
            elif payload_source is not None:
                if old.get("payload"):
                    fm["payload"] = old["payload"]
                new_body = self._install_payload(txn, fm, new_body, Path(payload_source), list(manual_notes),
                                                 move=payload_move, row_counts=row_counts)
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

    def _rebuild_dataset(self, txn: _Txn, fm: dict[str, Any], body: str, schema: Mapping[str, Any],
                         rows: Mapping[str, Iterable[Any]] | None, notes: list[str]) -> str:
        from .data.dataset import create_dataset, validate_schema
        from .hashing import sha256_file
        validate_schema(schema)
        name = fm.get("payload") or f"{fm['id'].rsplit('/', 1)[-1]}.db"
        db = self.root / payload_file(fm["id"], str(name))
        fresh = db.with_name(f".{db.name}.vine-new")
        for suffix in ("", "-journal"):
            Path(f"{fresh}{suffix}").unlink(missing_ok=True)
        txn.claim_payload(new=fresh)
        counts = create_dataset(fresh, schema, rows)
        if db.exists():
            backup = self._backup_path(db)
            txn.claim_payload(replaced=(db, backup))
            os.replace(db, backup)
        else:
            txn.claim_payload(new=db)
        os.replace(fresh, db)
        txn.new_payloads.remove(fresh)
        fm.update(payload=name, payload_type="sqlite", payload_hash=sha256_file(db))
        return self._with_map(body, db, notes, with_samples=True, row_counts=counts)

    def _put_with_propagation(self, txn: _Txn, old: Mapping[str, Any], fm: dict[str, Any], body: str) -> None:
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
        txn = _Txn(self)
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
        txn = _Txn(self)
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

    def reindex(self) -> int:
        """Rebuild the catalog from the files. Returns the number of nodes indexed."""
        db = self.catalog
        db.begin()
        try:
            db.delete_all()
            count = 0
            for node_id in self.node_files():
                try:
                    node = self.read(node_id)
                except VineError:
                    continue  # validate reports it; the catalog only holds readable nodes
                if node.frontmatter.get("id") != node_id:
                    continue
                db.upsert_node(node.frontmatter, self.dialect, body_tokens=estimate_tokens(node.body))
                if is_branch_id(node_id):
                    db.set_repeats(node_id, br.repeated_ids(br.survey(node.body)))
                count += 1
            head = gitstore.head_commit(self.root)
            db.db.execute("INSERT OR REPLACE INTO meta VALUES ('head', ?)", (head,))
            db.commit()
        except BaseException:
            db.rollback()
            raise
        return count


def _journalled_payloads(entry: Mapping[str, Any]) -> list[str]:
    """The payload paths a journal entry claimed (new or replaced)."""
    return [*entry.get("new_payloads", []), *(p for p, _ in entry.get("replaced_payloads", []))]


def _remove_payload_copies(payload: Path) -> None:
    """Delete the half-made copies of ``payload`` a kill during a copy left beside it.
    The payload was journalled before its copy began, so recovery knows where to look."""
    try:
        siblings = list(payload.parent.glob(f".{payload.name}.*.tmp"))
    except OSError:
        return
    for path in siblings:
        match = _PAYLOAD_COPY.fullmatch(path.name)
        if match and match["name"] == payload.name:
            path.unlink(missing_ok=True)


def _prune_empty_dirs(folder: Path, root: Path) -> None:
    """Remove folders a rolled-back write created, up to (not including) the root."""
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:  # not empty (or gone): stop climbing
            return
        folder = folder.parent
