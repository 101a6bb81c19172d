"""Where a forest's git repository lives and what it holds, asked of git itself.

``.git`` is not always a directory: in a ``git worktree add`` checkout or in a
submodule's working directory it is a file naming the real git dir, and a
repository may use SHA-256 object ids, which the pack writer (``packfile.py``,
SHA-1 only) cannot write. So the core never builds a path from ``root / ".git"``:
one ``git rev-parse`` per open (``find_repo``) names

- the top level of the work tree: the forest owns its repository only there;
- the git dir, one per worktree: HEAD, the index and vine's journal;
- the common dir, shared by every worktree of the repository: objects (the
  writer's packs) and refs;
- the object format.

A shape the writer cannot write (SHA-256 objects, a forest that is a sub-folder
of a bigger repository or in none, a bare or broken repository) is refused with
one line (``E_UNSUPPORTED``) before anything is touched. A new forest gets
``git init --object-format=sha1`` explicitly, so ``GIT_DEFAULT_HASH=sha256`` or an
``init.defaultObjectFormat`` setting cannot hand the SHA-1 writer a SHA-256 repo.

Every git the core runs gets ``git_env()``: the environment without the variables
that pick another repository, index or object store than the one found from the
forest's folder. git sets ``GIT_DIR`` for its hooks, so a vine run from another
project's hook would otherwise write the forest into that project.
"""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import VineError

# what makes git use another repository than the one the working directory is in
_REPOSITORY_VARIABLES = frozenset({"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
                                   "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
                                   "GIT_QUARANTINE_PATH", "GIT_NAMESPACE", "GIT_PREFIX"})
WRITABLE_FORMAT = "sha1"  # what packfile.py writes: object ids, pack and idx checksums
_FORMAT_NAMES = {"sha1": "SHA-1", "sha256": "SHA-256"}


@dataclass(frozen=True, kw_only=True)
class GitRepo:
    top_level: Path   # the work tree's top level
    git_dir: Path     # per worktree: HEAD, index, vine-journal
    common_dir: Path  # shared by the worktrees: objects, refs
    object_format: str

    @property
    def pack_dir(self) -> Path:
        return self.common_dir / "objects" / "pack"


def git_env(**extra: str) -> dict[str, str]:
    """The environment for a git the core runs on a forest: the caller's, without the
    variables that would point git at another repository (module docstring)."""
    env = {name: value for name, value in os.environ.items() if name not in _REPOSITORY_VARIABLES}
    env.update(extra)
    return env


def find_repo(path: Path) -> GitRepo | None:
    """The repository ``path`` is in (maybe a bigger one it is a sub-folder of);
    None when it is in none. A repository git cannot open (a ``.git`` file naming
    a missing dir, a bare repository, one git calls unsafe) is refused in one line."""
    # git's own words are matched below: in the C locale, not the user's (LANGUAGE=de
    # would say "Kein Git-Repository" and a new forest could never be made)
    proc = subprocess.run(["git", "rev-parse", "--show-toplevel", "--git-dir", "--git-common-dir",
                           "--show-object-format"], cwd=path, capture_output=True,
                          env=git_env(LC_ALL="C", LANGUAGE="C"))
    said = proc.stderr.decode("utf-8", "replace").strip()
    if proc.returncode != 0:
        if "not a git repository" in said and not (path / ".git").exists():
            return None
        # the first line is the problem (git's advice, e.g. for safe.directory, follows it)
        problem = said.splitlines()[0].removeprefix("fatal: ") if said else f"git rev-parse exited {proc.returncode}"
        raise VineError("E_UNSUPPORTED", f"git cannot open the repository at {path}: {problem}",
                        "Repair it (git status shows what is wrong), or remove its .git and run vine init.")
    lines = os.fsdecode(proc.stdout).splitlines()
    if len(lines) != 4:
        raise VineError("E_UNSUPPORTED", f"git rev-parse gave an unexpected answer in {path}: {lines!r}",
                        "Update git to 2.25 or later.")
    top, git_dir, common_dir, object_format = lines
    if object_format.startswith("--"):
        object_format = "sha1"  # a git too old to be asked predates SHA-256 repositories
    # relative paths are relative to where git ran; resolve() also matches the
    # caller's resolved root when a folder on the way is a symlink
    return GitRepo(top_level=Path(top).resolve(), git_dir=(path / git_dir).resolve(),
                   common_dir=(path / common_dir).resolve(), object_format=object_format)


def writable_repo(root: Path) -> GitRepo:
    """The repository of the forest at ``root``, refused unless vine can write it."""
    repo = find_repo(root)
    if repo is None:
        raise VineError("E_UNSUPPORTED", f"{root} is not in a git repository",
                        "A forest owns its repository: run `git init` in it and commit its markdown, "
                        "or create the forest with `vine init`.")
    return require_writable(repo, root)


def require_writable(repo: GitRepo, root: Path) -> GitRepo:
    if repo.top_level != root.resolve():
        # the writer commits the forest's paths from the root of the tree: inside a
        # bigger repository they would land at the wrong place in someone's project
        raise VineError("E_UNSUPPORTED", f"{root} is inside the git repository at {repo.top_level}, "
                        "not its top level",
                        "A forest owns its repository: run `git init` in the forest's folder, "
                        "or create it with `vine init`, which does.")
    if repo.object_format != WRITABLE_FORMAT:
        name = _FORMAT_NAMES.get(repo.object_format, repr(repo.object_format))
        raise VineError("E_UNSUPPORTED", f"the git repository at {root} uses {name} object ids; "
                        "vine writes SHA-1 repositories only",
                        "Create the forest in a new folder (vine init makes a SHA-1 repository), "
                        "or in one made with `git init --object-format=sha1`.")
    return repo


def init_repo(root: Path) -> GitRepo:
    """The forest's own repository: the existing one when ``root`` is its top level
    (refused if vine cannot write it), else a new SHA-1 repository."""
    repo = find_repo(root)
    if repo is not None and repo.top_level == root.resolve():
        return require_writable(repo, root)
    proc = subprocess.run(["git", "init", "-q", f"--object-format={WRITABLE_FORMAT}"], cwd=root,
                          capture_output=True, env=git_env())
    if proc.returncode != 0 and b"object-format" in proc.stderr:
        # git older than 2.29 has no --object-format and writes SHA-1 only
        proc = subprocess.run(["git", "init", "-q"], cwd=root, capture_output=True, env=git_env())
    if proc.returncode != 0:
        raise VineError("E_UNSUPPORTED", f"git init failed in {root}: "
                        f"{proc.stderr.decode('utf-8', 'replace').strip()}",
                        "Check that the folder is writable and git is installed.")
    made = find_repo(root)
    assert made is not None
    return require_writable(made, root)


def branch_ref(repo: GitRepo) -> str | None:
    """The ref HEAD points at (``refs/heads/main``), None when HEAD is detached.

    Asked of git rather than read from ``HEAD``: the file is in the per-worktree
    git dir, and in a reftable repository it is a placeholder."""
    proc = subprocess.run(["git", "symbolic-ref", "-q", "HEAD"], cwd=repo.top_level, capture_output=True,
                          env=git_env())
    ref = os.fsdecode(proc.stdout).strip()
    return ref if proc.returncode == 0 and ref else None
