"""The forest's git history: one commit per write, markdown only.

Commits are written by the writer itself into one git pack per session
(``packfile.py``), not by ``git add`` + ``git commit`` per node, which re-reads the
index and rewrites the whole tree each time and so grows with the forest. The
trees of the touched folders stay in memory and are edited one entry at a time
(``gittrees.py``), and a branch index that gained one line is stored as a git
delta against its previous version: a commit costs about the same at 100 nodes
as at 10,000, also when they all sit in one folder.

The branch ref moves only at a checkpoint, when the pack is finished and renamed
into place. Until then the commits are invisible, so the writer keeps a
write-ahead journal (``vine-journal`` in the git dir) of every path it touched since the
last checkpoint; ``Vine`` rolls those paths back to HEAD when it opens after a
crash. At a checkpoint the git index is brought up to date for the touched paths
only (so a commit a person makes meanwhile keeps every node vine committed), and
``git status`` is clean after every command: the stat data of those paths is
recorded at every checkpoint outside a bulk session and once at a bulk session's
end, so a mid-session checkpoint runs two git processes, not three.

Where HEAD, the index and the packs live is asked of git (``gitrepo.py``): ``.git``
may be a file (a worktree, a submodule). Every message goes through
``commitmsg.commit_message`` here, so no caller can store a NUL or an escape
sequence in the history.

A checkpoint: the pack and its index are written, fsynced and renamed into place
with a ``.keep`` beside them (so a ``git gc --prune=now`` run meanwhile cannot
drop objects no ref reaches yet), the ref moves from its old value to the last
commit, the ``.keep`` goes, git's index is updated for the touched paths.

When the writer checkpoints (``Vine`` applies this policy; ``checkpoint_due``
answers it):

- outside a bulk session, after every write: a plain ``Vine(...).plant`` (graft,
  tend, replace) is on the branch when the call returns;
- in a bulk session (``with vine.bulk():``, what ``vine adopt`` and ``vine sync``
  use), when ``CHECKPOINT_SECONDS`` have passed since the last checkpoint (checked
  before and after each write), whenever the writer is about to wait (the
  Gardener checkpoints before it blocks on a converter), and when the session
  ends. So a kill loses at most the writes of the last second: an already planted
  node stays planted, as ingestion.md promises. One checkpoint costs a few
  milliseconds (two or three git processes and three fsyncs; ``bench/bench_checkpoint.py``).
"""
from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Callable

from . import repo as gitrepo
from ..writing import lineage
from .messages import commit_message
from .trees import TreeCache
from .packfile import PackWriter, release_keep, remove_stale_keeps, remove_stale_temp_packs
from .packjoin import join_packs

DEFAULT_NAME = "vine"
DEFAULT_EMAIL = "vine@monkeyllm.local"
ZERO_SHA = "0" * 40
CHECKPOINT_SECONDS = 1.0  # in a bulk session: the longest a planted node waits to reach the branch
# a session that left this many packs (one per checkpoint) joins them into one at close
# (``packjoin``); a few are left to ``git gc --auto``, as it leaves a few loose objects
JOIN_FROM_PACKS = 8


class GitError(RuntimeError):
    pass


def run_git(root: Path, *args: str, input: bytes | None = None, check: bool = True,
            env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=root, input=input, capture_output=True,
                          env=gitrepo.git_env(**(env or {})))
    if check and proc.returncode != 0:
        raise GitError(f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout.decode("utf-8", errors="surrogateescape")


def run_git_on_index(root: Path, *args: str, input: bytes | None = None, wait: float = 3.0) -> str:
    """``run_git`` for a command that writes git's index: another git process (one a
    killed writer left running, or a person's) may hold ``index.lock`` for a moment,
    so wait for it a little instead of failing at once."""
    deadline = time.monotonic() + wait
    while True:
        try:
            return run_git(root, *args, input=input)
        except GitError as exc:
            if "index.lock" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def identity(root: Path) -> tuple[str, str]:
    """The user's git identity when one is configured, else vine's own."""
    name = run_git(root, "config", "--get", "user.name", check=False).strip()
    email = run_git(root, "config", "--get", "user.email", check=False).strip()
    return (name or DEFAULT_NAME, email or DEFAULT_EMAIL)


def head_ref(repo: gitrepo.GitRepo) -> str:
    ref = gitrepo.branch_ref(repo)
    if ref is not None:
        return ref
    raise GitError("the forest's HEAD is detached: check out a branch before writing")


def head_commit(root: Path) -> str | None:
    out = run_git(root, "rev-parse", "--verify", "-q", "HEAD", check=False).strip()
    return out or None


def _tz_offset() -> str:
    offset = -(time.altzone if time.localtime().tm_isdst > 0 else time.timezone)
    sign = "+" if offset >= 0 else "-"
    offset = abs(offset)
    return f"{sign}{offset // 3600:02d}{(offset % 3600) // 60:02d}"


class Committer:
    """Writes commits onto the forest's current branch, one per write.

    ``commit(message, changes)`` takes ``{path: bytes | None}`` (None deletes) and
    returns the new commit's sha. ``checkpoint()`` makes every commit so far visible
    (pack finished, branch ref moved, index updated); ``close()`` checkpoints and stops.

    If the pack cannot be written (disk full), the failed commit is undone and the
    earlier ones are kept: their pack is finished at once. If even that fails, they
    are lost to git, so the committer keeps the latest bytes of every path committed
    since the last checkpoint and the next commit (or checkpoint) first re-commits
    them in one stated ``vine(recover)`` commit: a write that was reported committed
    is never silently dropped.
    """

    def __init__(self, root: Path, repo: gitrepo.GitRepo | None = None) -> None:
        self.root = root
        self.repo = repo or gitrepo.writable_repo(root)  # .git may be a file: git says where things are
        self.ref = head_ref(self.repo)
        self._who: bytes | None = None  # the author, asked of git at the first commit (a writer may make none)
        self._pack_dir = self.repo.pack_dir
        self._pack: PackWriter | None = None
        self._reader: _ObjectReader | None = None
        self._trees: TreeCache | None = None
        self._ref_at: str | None = head_commit(root)  # where the ref is (moved at checkpoints)
        self._parent = self._ref_at  # the last commit written
        self._unsaved: dict[str, bytes | None] = {}  # path -> bytes since the last checkpoint (None: deleted)
        self._blob_ids: dict[str, str] = {}  # path -> its blob's id, for the index update at the checkpoint
        self._lost_commits = 0  # commits whose pack could not be kept
        self._refresh_owed = False  # index entries updated without their stat data (refresh_index)
        self.commits_since_checkpoint = 0
        self._packs_written = 0
        self._kept: list[str] = []  # finished packs whose .keep goes when the ref reaches them
        self._reached: list[str] = []  # this session's packs the ref reaches: joined at close
        self._last_checkpoint = time.monotonic()
        if self._pack_dir.is_dir():  # left by a killed writer; we hold the lock
            remove_stale_temp_packs(self._pack_dir)
            remove_stale_keeps(self._pack_dir)

    @property
    def pending(self) -> bool:
        """Commits written that the branch does not reach yet."""
        return bool(self.commits_since_checkpoint or self._lost_commits)

    @property
    def head(self) -> str | None:
        """Where the branch ref is, as far as this writer moved it."""
        return self._ref_at

    def checkpoint_due(self, bulk_seconds: float | None) -> bool:
        """The checkpoint policy (module docstring): outside a bulk session
        (``bulk_seconds`` None) every pending commit is due at once; in one, once
        ``bulk_seconds`` have passed since the last checkpoint."""
        if not self.pending:
            return False
        return bulk_seconds is None or time.monotonic() - self._last_checkpoint >= bulk_seconds

    # -- writing ------------------------------------------------------------
    def commit(self, message: str, changes: dict[str, bytes | None]) -> str:
        if self._lost_commits:
            self._recommit_lost()
        return self._commit(message, changes)

    def _commit(self, message: str, changes: dict[str, bytes | None]) -> str:
        if self._who is None:
            name, email = identity(self.root)
            self._who = f"{name} <{email}>".encode()
        blob_ids: dict[str, str] = {}
        try:
            pack = self._open_pack()
            trees = self._tree_cache()
            for path, data in changes.items():
                if data is None:
                    trees.delete_file(path)
                else:
                    # only branch indexes change often enough to be worth a delta base
                    key = path if path.endswith("_index.md") else None
                    blob_ids[path] = pack.add("blob", data, delta_key=key)
                    trees.set_file(path, blob_ids[path])
            tree = trees.store(lambda folder, content: pack.add("tree", content, delta_key=folder))
            stamp = b"%d %s" % (int(time.time()), _tz_offset().encode())
            body = bytearray(b"tree %s\n" % tree.encode())
            if self._parent:
                body += b"parent %s\n" % self._parent.encode()
            body += b"author %s %s\ncommitter %s %s\n\n" % (self._who, stamp, self._who, stamp)
            body += commit_message(message).encode("utf-8") + b"\n"  # no caller bypasses the cleaning
            sha = pack.add("commit", bytes(body))
        except OSError as exc:
            self._after_failure()
            raise GitError(f"git could not store the commit in {self._pack_dir}: {exc}") from exc
        except BaseException:
            self._after_failure()
            raise
        self._parent = sha
        self._unsaved.update(changes)
        self._blob_ids.update(blob_ids)
        self.commits_since_checkpoint += 1
        return sha

    def _open_pack(self) -> PackWriter:
        if self._pack is None:
            self._pack = PackWriter(self._pack_dir)
        return self._pack

    def _tree_cache(self) -> TreeCache:
        if self._trees is None:
            root_tree = self._read_commit_tree(self._parent) if self._parent else None
            self._trees = TreeCache(root_tree, self._read_tree)
        return self._trees

    def _read_commit_tree(self, commit: str) -> str:
        header = self._object_reader().read(commit, "commit").split(b"\n", 1)[0]
        if not header.startswith(b"tree "):
            raise GitError(f"git commit {commit} has no tree")
        return header[5:].decode()

    def _read_tree(self, sha: str) -> bytes:
        return self._object_reader().read(sha, "tree")

    def _object_reader(self) -> "_ObjectReader":
        if self._reader is None:
            self._reader = _ObjectReader(self.root)
        return self._reader

    def _after_failure(self) -> None:
        """A commit failed half-way: forget its in-memory trees and keep the commits
        before it by finishing their pack now; if that fails too, they are lost to git
        and re-committed from ``_unsaved`` by the next commit."""
        self._trees = None
        pack, self._pack = self._pack, None
        if pack is None:
            return
        try:
            if self.commits_since_checkpoint:
                self._finish_pack(pack)
            else:
                pack.abort()
            self._restart_reader()
        except (OSError, GitError):
            pack.abort()
            self._lose_uncheckpointed()

    def _lose_uncheckpointed(self) -> None:
        """Their pack is gone: the commits since the checkpoint are lost to git and
        will be re-committed from ``_unsaved``."""
        self._trees = None
        self._parent = self._ref_at
        self._lost_commits += self.commits_since_checkpoint
        self.commits_since_checkpoint = 0

    def _recommit_lost(self) -> None:
        paths = "\n".join(sorted(self._unsaved))
        self._commit(f"vine(recover): re-commit {self._lost_commits} write(s) lost when git "
                     f"could not store them\n\n{paths}", dict(self._unsaved))
        self._lost_commits = 0

    def _restart_reader(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    # -- making commits visible ------------------------------------------------
    def checkpoint(self, before_ref_moves: Callable[[str], None] | None = None, *, refresh: bool = True) -> None:
        """Finish the pack, move the branch ref to the last commit, sync the index.
        ``before_ref_moves(sha)`` runs just before the ref moves to ``sha``: the writer
        journals it, so a crash right after the move is not taken for one before it.
        Without ``refresh`` the index entries get their stat data later, from
        ``refresh_index`` (a bulk session's end)."""
        if self._lost_commits:
            self._recommit_lost()
        if self.commits_since_checkpoint == 0:
            if refresh:
                self.refresh_index()
            return
        pack, self._pack = self._pack, None
        try:
            if pack is not None:
                self._finish_pack(pack)
        except OSError as exc:
            if pack is not None:
                pack.abort()
            self._lose_uncheckpointed()
            raise GitError(f"git could not store the pack in {self._pack_dir}: {exc}") from exc
        self._restart_reader()
        if self._trees is not None:  # their objects are in finished packs now, where git reads them
            self._trees.forget_untouched()
        if before_ref_moves is not None and self._parent:
            before_ref_moves(self._parent)
        try:
            # the old value makes git refuse if the branch moved under us
            run_git(self.root, "update-ref", "-m", "vine: checkpoint", self.ref, self._parent or "",
                    self._ref_at or ZERO_SHA)
        except GitError as exc:
            if head_commit(self.root) != self._ref_at:
                raise GitError(f"{self.ref} moved while vine was writing (a commit made outside vine?): "
                               "this session's writes are undone; run the command again") from exc
            raise
        self._ref_at = self._parent
        self._reached += self._kept
        self._release_keeps()
        self._update_index()
        self._refresh_owed = True
        if refresh:
            self.refresh_index()
        self.commits_since_checkpoint = 0
        self._last_checkpoint = time.monotonic()

    def _finish_pack(self, pack: PackWriter) -> None:
        """Finish a pack whose commits no ref reaches yet: kept from ``git gc`` until one does."""
        sha = pack.finalize(keep=True)
        if sha is not None:
            self._kept.append(sha)
        self._packs_written += 1

    def _release_keeps(self) -> None:
        for sha in self._kept:
            release_keep(self._pack_dir, sha)
        self._kept.clear()

    def _update_index(self) -> None:
        if not self._unsaved:
            return
        lines = []
        for path, data in self._unsaved.items():
            if data is None:
                lines.append(f"0 {ZERO_SHA}\t{path}")
            else:  # the id the pack writer computed when it stored the blob
                lines.append(f"100644 {self._blob_ids[path]}\t{path}")
        run_git_on_index(self.root, "update-index", "-z", "--index-info",
                         input=("\0".join(lines) + "\0").encode())
        self._unsaved.clear()
        self._blob_ids.clear()

    def refresh_index(self) -> None:
        """Record the stat data of the index entries checkpoints wrote, so ``git
        status`` does not hash those files again (a git process that stats every
        tracked file: once per bulk session, not per checkpoint)."""
        if self._refresh_owed:
            run_git(self.root, "update-index", "-q", "--refresh", check=False)
            self._refresh_owed = False

    def close(self) -> None:
        """Checkpoint and stop. A checkpoint finishes a pack, so the session's packs are
        joined into one (``packjoin``: a copy, where git's repack after a 50,000-file
        adopt was the run's largest process, 489 MiB), and git is asked, as ``git
        commit`` does, whether the packs are now enough to be worth one repack
        (``gc.autoPackLimit``, 50 by default)."""
        try:
            self.checkpoint()
        finally:
            self.abort()
        reached, self._reached = self._reached, []
        if len(reached) >= JOIN_FROM_PACKS:
            try:
                join_packs(self._pack_dir, reached)
            except Exception:  # noqa: BLE001 -- a disk full, a damaged index: the join is only a saving
                pass  # the packs stay as they are: git reads them all the same
        if self._packs_written:
            # in the foreground: no git process left repacking the forest after vine exits
            run_git(self.root, "-c", "gc.autoDetach=false", "gc", "--auto", "--quiet", check=False)
            self._packs_written = 0

    def abort(self) -> None:
        """Stop without moving the ref: commits not yet checkpointed are dropped
        (the caller puts their files back to HEAD)."""
        pack, self._pack = self._pack, None
        if pack is not None:
            pack.abort()
        self._release_keeps()  # their objects are garbage now: git may prune them
        self._restart_reader()
        self._trees = None
        self._parent = self._ref_at
        self._unsaved.clear()
        self._blob_ids.clear()
        self._lost_commits = 0
        self.commits_since_checkpoint = 0


class _ObjectReader:
    """One ``git cat-file --batch`` for the session: the trees a commit edits are read
    from git once each, not by one subprocess per folder."""

    def __init__(self, root: Path) -> None:
        self._proc = subprocess.Popen(["git", "cat-file", "--batch"], cwd=root, env=gitrepo.git_env(),
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        # a converter worker forked later must not hold our end of the pipe: cat-file
        # then sees the end of its input, and exits, as soon as the writer is gone
        self._fds = [pipe.fileno() for pipe in (self._proc.stdin, self._proc.stdout) if pipe is not None]
        for fd in self._fds:
            lineage.guard(fd)

    def read(self, sha: str, kind: str) -> bytes:
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(f"{sha}\n".encode())
            proc.stdin.flush()
            header = proc.stdout.readline().split()
            if len(header) != 3 or header[1] != kind.encode():
                raise GitError(f"git cannot read {kind} {sha}")
            size = int(header[2])
            data = proc.stdout.read(size + 1)[:size]
        except OSError as exc:
            raise GitError(f"git cat-file stopped: {exc}") from exc
        if len(data) != size:
            raise GitError(f"git cannot read {kind} {sha}")
        return data

    def close(self) -> None:
        # killed, not sent EOF: a process forked without lineage's guard (os.fork in a
        # plugin's C code, say) may hold a copy of the write end, so EOF might never come
        self._proc.kill()
        self._proc.wait()
        for fd in self._fds:
            lineage.unguard(fd)
        for pipe in (self._proc.stdin, self._proc.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass


def read_head_files(root: Path, paths: list[str]) -> dict[str, bytes | None]:
    """Each path's bytes at HEAD, None where HEAD has no such file.

    Raises GitError when git cannot answer: "cannot read" must never be taken for
    "not in HEAD", or a recovery would delete files that are committed."""
    if not paths:
        return {}
    listed = run_git(root, "ls-tree", "-r", "-z", "--name-only", "HEAD", "--", *paths)
    present = [p for p in listed.split("\0") if p]
    out: dict[str, bytes | None] = {p: None for p in paths}
    if present:
        for path, data in zip(present, read_blobs(root, [f"HEAD:{p}" for p in present])):
            out[path] = data
    return out


def read_blobs(root: Path, names: list[str]) -> list[bytes]:
    """The bytes of each blob ``names`` names (an id, or ``HEAD:path``), in order, from
    one ``git cat-file --batch``. Raises GitError for one git cannot read as a blob."""
    if not names:
        return []
    proc = subprocess.run(["git", "cat-file", "--batch"], cwd=root, capture_output=True, env=gitrepo.git_env(),
                          input="".join(f"{name}\n" for name in names).encode())
    if proc.returncode != 0:
        raise GitError(f"git cat-file failed: {proc.stderr.decode(errors='replace').strip()}")
    out: list[bytes] = []
    data, pos = proc.stdout, 0
    for name in names:
        end = data.find(b"\n", pos)
        header = data[pos:end].split() if end >= 0 else []
        if len(header) != 3 or header[1] != b"blob":
            raise GitError(f"git cannot read {name}")
        size = int(header[2])
        out.append(data[end + 1:end + 1 + size])
        pos = end + 1 + size + 1
    return out
