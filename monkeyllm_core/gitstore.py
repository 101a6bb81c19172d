"""The forest's git history: one commit per write, markdown only.

Commits stream through one long-lived ``git fast-import`` process per writer
session. A commit then costs about a millisecond and stays flat as the forest
grows: fast-import keeps the trees in memory and never rewrites the whole tree or
the index per commit, which is what makes ``git add`` + ``git commit`` per node
(or GitPython's index commit) grow with the repo.

fast-import moves the branch ref only at a checkpoint. Until then the commits
are safe in its pack but invisible, so the writer keeps a write-ahead journal
(``.git/vine-journal``) of every path it touched since the last checkpoint;
``Vine`` rolls those paths back to HEAD when it opens after a crash. At a
checkpoint the git index is brought up to date for the touched paths only,
so ``git status`` is clean after every command.
"""
from __future__ import annotations

import hashlib
import subprocess
import time
from pathlib import Path

DEFAULT_NAME = "vine"
DEFAULT_EMAIL = "vine@monkeyllm.local"
ZERO_SHA = "0" * 40


class GitError(RuntimeError):
    pass


def run_git(root: Path, *args: str, input: bytes | None = None, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=root, input=input, capture_output=True)
    if check and proc.returncode != 0:
        raise GitError(f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout.decode("utf-8", errors="surrogateescape")


def is_repo_top_level(root: Path) -> bool:
    """The forest owns its repo only when it is the repository's top level."""
    return (root / ".git").exists()


def init_repo(root: Path) -> None:
    if not is_repo_top_level(root):
        run_git(root, "init", "-q")


def blob_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def identity(root: Path) -> tuple[str, str]:
    """The user's git identity when one is configured, else vine's own."""
    name = run_git(root, "config", "--get", "user.name", check=False).strip()
    email = run_git(root, "config", "--get", "user.email", check=False).strip()
    return (name or DEFAULT_NAME, email or DEFAULT_EMAIL)


def head_ref(root: Path) -> str:
    head = (root / ".git" / "HEAD").read_text().strip()
    if head.startswith("ref: "):
        return head[5:]
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
    """Streams commits into the forest's current branch.

    ``commit(message, changes)`` takes ``{path: bytes | None}`` (None deletes) and
    returns the new commit's sha. ``checkpoint()`` makes every commit so far visible
    (branch ref moved, index updated); ``close()`` checkpoints and stops.

    If fast-import dies (killed, disk full) its un-checkpointed commits die with
    it. The committer keeps the latest bytes of every path committed since the
    last checkpoint, so the next commit (or checkpoint) starts a new fast-import
    and first re-commits them in one stated ``vine(recover)`` commit: a write that
    was reported committed is never silently dropped.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.ref = head_ref(root)
        name, email = identity(root)
        self._who = f"{name} <{email}>".encode()
        self._proc: subprocess.Popen[bytes] | None = None
        self._parent: str | None = None  # sha or ":mark" of the last commit
        self._mark = 0
        self._unsaved: dict[str, bytes | None] = {}  # path -> bytes since the last checkpoint (None: deleted)
        self._lost_commits = 0  # commits acknowledged by a fast-import that died before its checkpoint
        self.commits_since_checkpoint = 0

    def _ensure_running(self) -> subprocess.Popen[bytes]:
        if self._proc is None:
            self._parent = head_commit(self.root)
            self._proc = subprocess.Popen(
                ["git", "fast-import", "--quiet", "--done", "--date-format=raw"],
                cwd=self.root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            if self._lost_commits:
                paths = "\n".join(sorted(self._unsaved))
                self._send(f"vine(recover): re-commit {self._lost_commits} write(s) lost when git "
                           f"fast-import stopped\n\n{paths}", dict(self._unsaved))
                self._lost_commits = 0
        return self._proc

    def commit(self, message: str, changes: dict[str, bytes | None], *, wait: bool = True) -> str | None:
        """Stream one commit. ``wait=False`` does not ask for its sha, so Python goes
        on preparing the next write while git writes this one (bulk ingestion);
        a failure then surfaces at the next commit or checkpoint, and the writes
        are re-committed on restart like any lost write."""
        self._ensure_running()
        return self._send(message, changes, wait=wait)

    def _send(self, message: str, changes: dict[str, bytes | None], *, wait: bool = True) -> str | None:
        proc = self._proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        self._mark += 1
        msg = message.encode()
        buf = bytearray()
        buf += b"commit %s\nmark :%d\n" % (self.ref.encode(), self._mark)
        buf += b"committer %s %d %s\n" % (self._who, int(time.time()), _tz_offset().encode())
        buf += b"data %d\n%s\n" % (len(msg), msg)
        if self._parent:
            buf += b"from %s\n" % self._parent.encode()
        for path, data in changes.items():
            quoted = _quote_path(path)
            if data is None:
                buf += b"D %s\n" % quoted
            else:
                buf += b"M 100644 inline %s\ndata %d\n" % (quoted, len(data)) + data + b"\n"
        if wait:
            buf += b"get-mark :%d\n" % self._mark
        try:
            proc.stdin.write(buf)
            proc.stdin.flush()
            sha = proc.stdout.readline().decode().strip() if wait else None
        except (BrokenPipeError, OSError):
            sha = ""
        if sha is not None and len(sha) != 40:
            detail = self._stop_dead()
            raise GitError(f"git fast-import refused the commit: {detail}")
        self._parent = f":{self._mark}"
        self._unsaved.update(changes)
        self.commits_since_checkpoint += 1
        return sha

    def _stop_dead(self) -> str:
        """Stop a failed fast-import; its un-checkpointed commits are redone on restart."""
        detail = self._stderr()
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.wait()
        self._lost_commits += self.commits_since_checkpoint
        self.commits_since_checkpoint = 0
        return detail

    def _stderr(self) -> str:
        if self._proc is None or self._proc.stderr is None:
            return ""
        try:
            self._proc.kill()
            return self._proc.stderr.read().decode(errors="replace").strip()[-500:]
        except OSError:
            return ""

    def checkpoint(self) -> None:
        """Move the branch ref to the last commit and sync the index with it."""
        if self._proc is None and self._lost_commits:
            self._ensure_running()
        if self._proc is None or self.commits_since_checkpoint == 0:
            return
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(b"checkpoint\nprogress checkpointed\n")
            proc.stdin.flush()
            line = proc.stdout.readline().decode().strip()
        except (BrokenPipeError, OSError):
            line = ""
        if line != "progress checkpointed":
            detail = self._stop_dead()
            raise GitError(f"git fast-import checkpoint failed: {detail}")
        self._update_index()
        self.commits_since_checkpoint = 0

    def _update_index(self) -> None:
        if not self._unsaved:
            return
        lines = []
        for path, data in self._unsaved.items():
            if data is None:
                lines.append(f"0 {ZERO_SHA}\t{path}")
            else:
                lines.append(f"100644 {blob_sha(data)}\t{path}")
        run_git(self.root, "update-index", "-z", "--index-info",
                input=("\0".join(lines) + "\0").encode())
        # refresh stat data of what we wrote so `git status` does not re-hash it
        run_git(self.root, "update-index", "-q", "--refresh", check=False)
        self._unsaved.clear()

    def close(self) -> None:
        """Checkpoint and stop (a fast-import that already died is not retried here)."""
        if self._proc is None:
            return
        try:
            self.checkpoint()
        finally:
            proc, self._proc = self._proc, None
            if proc is not None:
                try:
                    assert proc.stdin is not None
                    proc.stdin.write(b"done\n")
                    proc.stdin.close()
                except OSError:
                    pass
                proc.wait()

    def abort(self) -> None:
        """Stop without moving the ref (used when the session is being torn down)."""
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            self._proc = None


def _quote_path(path: str) -> bytes:
    if any(c in path for c in '"\n\\') or path.startswith('"'):
        escaped = path.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        return f'"{escaped}"'.encode()
    return path.encode()


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
        proc = subprocess.run(["git", "cat-file", "--batch"], cwd=root, capture_output=True,
                              input="".join(f"HEAD:{p}\n" for p in present).encode())
        if proc.returncode != 0:
            raise GitError(f"git cat-file failed: {proc.stderr.decode(errors='replace').strip()}")
        data, pos = proc.stdout, 0
        for path in present:
            end = data.index(b"\n", pos)
            header = data[pos:end].split()
            if len(header) != 3 or header[1] != b"blob":
                raise GitError(f"git cannot read {path} at HEAD")
            size = int(header[2])
            out[path] = data[end + 1:end + 1 + size]
            pos = end + 1 + size + 1
    return out
