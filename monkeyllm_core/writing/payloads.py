"""Payloads: the files beside a passport that git never sees (a SQLite dataset, an
image, a document), installed, rebuilt and put back inside a write.

A payload is journalled before it is created or moved aside
(``WriteTransaction.claim_payload``), so a kill mid-birth leaves no orphan and a
kill mid-replacement gets the old file back. A replaced payload is not deleted but
moved to a backup (``.<name>.<n>.vine-old``) that waits for the checkpoint: one name
per replacement, so a payload replaced twice before a crash still comes back as
HEAD's version. A dataset's body gets its generated map (``## Query manual`` and
``## Sample rows``) from the installed file itself.
"""
from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from ..errors import VineError
from ..forest.sections import replace_section, section_span

if TYPE_CHECKING:
    from .request import DatasetSpec, PayloadSpec
    from .transaction import WriteTransaction


def payload_file(node_id: str, payload: str) -> str:
    """The payload's path relative to the forest root (payload is relative to the node's folder)."""
    folder = node_id.rsplit("/", 1)[0] if "/" in node_id else ""
    rel = f"{folder}/{payload}" if folder else payload
    parts = rel.split("/")
    if payload.startswith("/") or ".." in parts or "" in parts:
        raise VineError("E_FRONTMATTER", f"{node_id}: payload {payload!r} points outside the node's folder",
                        "A payload is a file name (or _assets/name) beside the passport.")
    return rel


def undo_payloads(new: Iterable[Path], replaced: Iterable[tuple[Path, Path]]) -> None:
    """Delete the newborn payloads (with SQLite's side files) and put the replaced ones back."""
    for path in new:
        for suffix in ("", "-journal", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    for payload, backup in replaced:
        if backup.exists():
            os.replace(backup, payload)


class PayloadInstaller:
    """One writer's payload work, each step claimed in the write's transaction."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._backup_numbers = itertools.count(1)

    def backup_path(self, payload: Path) -> Path:
        """Where a replaced payload waits until the checkpoint: one name per
        replacement, so a payload replaced twice can still be put back to HEAD's."""
        return payload.with_name(f".{payload.name}.{next(self._backup_numbers)}.vine-old")

    def _make_room(self, txn: WriteTransaction, payload: Path) -> None:
        """Claim ``payload``'s place for a new file: a payload already there moves
        aside to its backup (journalled first), else the new file is a newborn."""
        if payload.exists():
            backup = self.backup_path(payload)
            txn.claim_payload(replaced=(payload, backup))
            os.replace(payload, backup)
        else:
            txn.claim_payload(new=payload)

    def birth_dataset(self, txn: WriteTransaction, fm: dict[str, Any], body: str, spec: DatasetSpec) -> str:
        """A newborn dataset from a declarative schema; it never overwrites a payload."""
        from ..data.dataset import create_dataset, validate_schema
        from ..hashing import sha256_file
        validate_schema(spec.schema)
        fm["type"] = fm.get("type") or "dataset"
        name = fm.get("payload") or f"{fm['id'].rsplit('/', 1)[-1]}.db"
        db = self.root / payload_file(fm["id"], name)
        if db.exists():
            raise VineError("E_SCHEMA", f"{fm['id']}: payload {name} already exists",
                            "A newborn dataset never overwrites a payload; remove it or pick another id.")
        db.parent.mkdir(parents=True, exist_ok=True)
        txn.claim_payload(new=db)
        counts = create_dataset(db, spec.schema, spec.rows)
        fm.update(payload=name, payload_type="sqlite", payload_hash=sha256_file(db))
        if not body.strip():
            body = f"# {fm['title']}\n"  # FOREST-FORMAT: a dataset body opens with its title
        return with_map(body, db, spec.manual_notes, with_samples=spec.rows is not None, row_counts=counts)

    def install(self, txn: WriteTransaction, fm: dict[str, Any], body: str, spec: PayloadSpec) -> str:
        """Copy a file in place as the node's payload (a SQLite db, an image, ...).

        ``spec.move`` renames instead (for a payload the caller built on the forest's
        filesystem, e.g. a dataset loaded into ``_derived/tmp``): no second copy."""
        from ..data.sqlite_copy import needs_snapshot, snapshot_database
        from ..hashing import copy_file_with_hash, sha256_file
        name = fm.get("payload")
        if not name:
            raise VineError("E_FRONTMATTER", f"{fm['id']}: a PayloadSpec needs a payload name",
                            "Set payload to the file name beside the passport.")
        dest = self.root / payload_file(fm["id"], str(name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        self._make_room(txn, dest)
        source = spec.source
        if spec.move:
            os.replace(source, dest)  # the same bytes: a hash the caller took of them holds
            fm["payload_hash"] = spec.sha256 or sha256_file(dest)
        elif fm.get("payload_type") == "sqlite" and needs_snapshot(source):
            # a WAL database: its -wal data checkpointed into a rollback-journal copy,
            # so a query on the forest never needs a -wal/-shm beside the payload
            snapshot_database(source, dest)
            fm["payload_hash"] = sha256_file(dest)
        else:
            fm["payload_hash"] = copy_file_with_hash(source, dest)
        if fm.get("payload_type") == "sqlite":
            fm["type"] = "dataset"
            body = with_map(body, dest, spec.manual_notes, with_samples=True, row_counts=spec.row_counts,
                            rendered=spec.sample_map if spec.move else None)
        return body

    def rebuild_dataset(self, txn: WriteTransaction, fm: dict[str, Any], body: str, spec: DatasetSpec) -> str:
        """A dataset born again from its schema beside the old one, which it replaces
        only once it is complete (the old one waits as a backup for the checkpoint)."""
        from ..data.dataset import create_dataset, validate_schema
        from ..hashing import sha256_file
        validate_schema(spec.schema)
        name = fm.get("payload") or f"{fm['id'].rsplit('/', 1)[-1]}.db"
        db = self.root / payload_file(fm["id"], str(name))
        fresh = db.with_name(f".{db.name}.vine-new")
        for suffix in ("", "-journal"):
            Path(f"{fresh}{suffix}").unlink(missing_ok=True)
        txn.claim_payload(new=fresh)
        counts = create_dataset(fresh, spec.schema, spec.rows)
        self._make_room(txn, db)
        os.replace(fresh, db)
        txn.new_payloads.remove(fresh)
        fm.update(payload=name, payload_type="sqlite", payload_hash=sha256_file(db))
        return with_map(body, db, spec.manual_notes, with_samples=True, row_counts=counts)


def with_map(body: str, db: Path, notes: Sequence[str], *, with_samples: bool,
             row_counts: Mapping[str, int] | None = None, rendered: tuple[str, str] | None = None) -> str:
    """Append the generated map, or regenerate its two sections in place
    (``rendered``: the two sections ``render_map`` made from ``db`` already)."""
    from ..data.sample_map import render_map, render_query_manual
    if with_samples:
        manual, samples = rendered or render_map(db, notes, row_counts)
        return replace_section(replace_section(body, "Query manual", manual), "Sample rows", samples)
    manual = render_query_manual(db, notes)
    if section_span(body, "Query manual") is not None and section_span(body, "Sample rows") is None:
        return body  # a hand-written manual: the engine leaves it alone
    return replace_section(body, "Query manual", manual)
