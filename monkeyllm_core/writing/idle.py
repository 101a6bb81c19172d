"""Would a writable open have work before its first write? Told from files alone.

Opening the writer takes the lock and runs three git processes; a caller that may
find nothing to write (a sync of an unchanged source) asks ``idle_forest`` first,
reads the catalog read-only, and opens the writer only when there is work.
``idle_forest`` answers None unless all of these hold, and a None sends the caller
to the writer, which does what it always does (recovers, reindexes, sweeps, or
refuses the repository in one line):

- ``.git`` is a folder, and it and the forest belong to this user: the forest's
  own repository as ``vine init`` makes it (a worktree, a submodule, a folder git
  may call unsafe are judged by git itself);
- HEAD names a branch whose commit is a SHA-1 id in its loose ref file or in
  ``packed-refs`` (git's on-disk ref format; not detached, not reftable, not
  unborn);
- the journal is empty: a kill left nothing to put back;
- the lock card names no live writer;
- the pack folder holds no temporary pack and no ``.keep``: nothing to sweep.

The answer carries HEAD's commit, for ``catalog_is_current``, and the lock file's
stamp: ``still_idle`` after the reads tells that no writer came or went meanwhile
(a writer signs the card before it touches a file). Reads this way never block a
writer and never change a file.
"""
from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, NamedTuple

from .journal import JOURNAL
from .writer_probe import probe

if TYPE_CHECKING:
    from pathlib import Path

    from ..forest.catalog import Catalog

_HEX = frozenset("0123456789abcdef")
_PACK_LEFTOVERS = ("vine_tmp_", "tmp_vine_")  # packfile.TEMP_PREFIX and its legacy name


class IdleForest(NamedTuple):
    head: str  # the commit HEAD's branch points at
    lock_stamp: tuple[int, int, int] | None  # writer_probe.LockState.stamp when it was asked


def idle_forest(root: Path) -> IdleForest | None:
    """The forest's HEAD and lock stamp when a writable open would find nothing to
    do before its first write; None when it might (module docstring)."""
    lock = probe(root)
    if lock.active:
        return None
    git_dir = os.path.join(root, ".git")
    try:
        uid = os.geteuid()
        git_stat = os.lstat(git_dir)
        if os.stat(root).st_uid != uid or git_stat.st_uid != uid or not stat.S_ISDIR(git_stat.st_mode):
            return None
    except OSError:
        return None
    if _size(os.path.join(root, JOURNAL)) != 0:
        return None
    head = _branch_commit(git_dir)
    if head is None or _pack_leftovers(os.path.join(git_dir, "objects", "pack")):
        return None
    return IdleForest(head=head, lock_stamp=lock.stamp)


def still_idle(root: Path, idle: IdleForest) -> bool:
    """Whether no writer took or released the lock since ``idle`` was told."""
    now = probe(root)
    return not now.active and now.stamp == idle.lock_stamp


def catalog_is_current(catalog: Catalog, head: str) -> bool:
    """Whether the catalog has this code's layout and was built for commit ``head``
    (otherwise a writable open rebuilds it first)."""
    from ..forest.catalog import SCHEMA_VERSION
    rows = dict(catalog.db.execute("SELECT key, value FROM meta WHERE key IN ('head', 'schema_version')"))
    return rows.get("head") == head and rows.get("schema_version") == SCHEMA_VERSION


def _branch_commit(git_dir: str) -> str | None:
    """The commit of the branch HEAD names, read as git stores it: the loose ref
    file wins over ``packed-refs``; anything else (a detached or unborn HEAD, a
    reftable repository, a SHA-256 id) is None."""
    try:
        with open(os.path.join(git_dir, "HEAD"), "rb") as fh:
            head = fh.read(4096).decode("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    ref = head.removeprefix("ref: ")
    if ref == head or not ref.startswith("refs/heads/") or ".." in ref or os.path.isdir(os.path.join(git_dir, "reftable")):
        return None
    try:
        with open(os.path.join(git_dir, *ref.split("/")), "rb") as fh:
            return _sha1(fh.read(4096).decode("ascii").strip())
    except FileNotFoundError:
        pass
    except (OSError, UnicodeDecodeError):
        return None
    try:
        with open(os.path.join(git_dir, "packed-refs"), encoding="utf-8") as fh:
            for line in fh:
                sha, _, name = line.rstrip("\n").partition(" ")
                if name == ref:
                    return _sha1(sha)
    except (OSError, UnicodeDecodeError):
        return None
    return None


def _size(path: str) -> int | None:
    """The file's size; 0 when there is none (no journal yet), None when it cannot be told."""
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0
    except OSError:
        return None


def _sha1(text: str) -> str | None:
    return text if len(text) == 40 and _HEX.issuperset(text) else None


def _pack_leftovers(pack_dir: str) -> bool:
    """Whether the pack folder holds what a writable open would sweep or judge: a
    temporary pack (``packfile.remove_stale_temp_packs``) or a ``.keep``
    (``packfile.remove_stale_keeps``)."""
    try:
        names = os.listdir(pack_dir)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return any(name.startswith(_PACK_LEFTOVERS) or name.endswith(".keep") for name in names)
