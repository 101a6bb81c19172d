"""Crash recovery: the next writable open puts back whatever a kill left uncommitted.

The journal names every file and payload a write touched since the last
checkpoint. A checkpoint journals the commit it is about to move the ref to; when
HEAD is that commit, the crash came after the move and the writes journalled
before it are committed: their payloads stay, only git's index is brought up to
date. Everything journalled after it goes back to HEAD: files are rewritten from
git, newborn payloads deleted, replaced ones put back (a payload replaced twice
gets its first version back), and the leftovers of a kill during a copy removed:
half-copied payloads (``.<name>.<hex>.tmp``) and the work folders of WAL
snapshots (``.<name>.snapshot-*``).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from ..data.sqlite_copy import remove_snapshot_work
from ..store import history as gitstore
from .atomic import remove_spare
from .payloads import undo_payloads
from .transaction import prune_empty_dirs

if TYPE_CHECKING:
    from ..forest.catalog import Catalog
    from .files import TextFiles
    from .journal import Journal

# the temporary name ``hashing.copy_file_with_hash`` copies a payload under
_PAYLOAD_COPY = re.compile(r"\.(?P<name>.+)\.[0-9a-f]{32}\.tmp")


def recover(journal: Journal, files: TextFiles) -> bool:
    """After a crash: put every path touched since the last checkpoint back to HEAD.
    False when the journal is empty (nothing to recover).

    The journal stays until the caller has rebuilt the catalog from the restored
    files: a kill during that rebuild must find it again, or the catalog would
    keep the rows of writes that no longer exist (every step here can be redone)."""
    root = files.root
    entries = journal.entries()
    if not entries:
        return False
    head = gitstore.head_commit(root)
    landed = max((i for i, entry in enumerate(entries) if entry.get("checkpoint") == head), default=-1)
    committed, pending = entries[:landed + 1], entries[landed + 1:]
    touched = sorted({rel for entry in pending for rel in entry.get("files", [])})
    at_head = gitstore.read_head_files(root, touched)  # raises if git cannot answer
    for rel in touched:
        target = root / rel
        remove_spare(target)
        data = at_head[rel]
        if data is None:
            target.unlink(missing_ok=True)
            prune_empty_dirs(target.parent, root)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        files.forget(rel)
    for entry in reversed(pending):  # a payload replaced twice gets its first version back
        undo_payloads([root / p for p in entry.get("new_payloads", [])],
                      [(root / p, root / b) for p, b in entry.get("replaced_payloads", [])])
        for payload in _journalled_payloads(entry):
            _remove_payload_copies(root / payload)
            remove_snapshot_work(root / payload)
    settled = sorted({rel for entry in committed for rel in entry.get("files", [])})
    for entry in committed:  # committed: the replaced payloads' backups are garbage now
        for _, backup in entry.get("replaced_payloads", []):
            (root / backup).unlink(missing_ok=True)
    for rel in settled:
        remove_spare(root / rel)
    # a crash between a checkpoint's ref move and its index update leaves the index
    # behind HEAD for these paths; then the restored files' stat data is refreshed
    paths = sorted(set(touched) | set(settled))
    if paths:  # (no pathspec at all would reset the whole index)
        gitstore.run_git_on_index(root, "reset", "-q", "--pathspec-from-file=-", "--pathspec-file-nul",
                                  input="".join(f"{rel}\0" for rel in paths).encode())
    gitstore.run_git(root, "update-index", "-q", "--refresh", check=False)
    return True


def catalog_is_stale(catalog: Catalog, head: str | None) -> bool:
    """Whether the catalog was built for another commit than ``head`` (HEAD, as the
    writer found it: a reset, a pull, a commit made by hand moved it): then the
    writer rebuilds it from the files."""
    row = catalog.db.execute("SELECT value FROM meta WHERE key = 'head'").fetchone()
    return row is None or row[0] != head


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
