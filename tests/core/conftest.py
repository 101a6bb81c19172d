"""Fixtures for the core engine tests: a fresh forest under tmp_path, real git,
real SQLite, the real ``vine`` CLI in a subprocess.

Git runs with an empty global config (HOME and GIT_CONFIG_GLOBAL point into
tmp_path, the system config is ignored), so every test sees a machine with no
git identity: commits must still work, as vine <vine@monkeyllm.local>.
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from monkeyllm_core import Vine, init_forest
from monkeyllm_core.forest.validate import validate_forest

from _git_runs import git, git_bytes  # tests/core is on sys.path
from cli_helpers import VINE


@pytest.fixture(autouse=True)
def no_git_config(tmp_path_factory, monkeypatch):
    """An empty HOME and global git config: the machine's identity never leaks in."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
                 "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    return home


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real `vine` command in a subprocess, in this process's environment (the one
    no_git_config made; ``vine_cli`` gives a fresh machine's instead)."""
    return subprocess.run([*VINE, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@dataclass
class Forest:
    """A forest made by init_forest under tmp_path, with helpers to inspect it."""

    root: Path

    def open(self, writable: bool = True) -> Vine:
        return Vine(self.root, writable=writable)

    def git(self, *args: str, check: bool = True) -> str:
        return git(self.root, *args, check=check)

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, "--forest", str(self.root))

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()

    def subjects(self) -> list[str]:
        """Commit subjects, newest first."""
        return self.git("log", "--format=%s").splitlines()

    def status(self) -> str:
        return self.git("status", "--porcelain", "--untracked-files=all")

    def tracked(self) -> list[str]:
        return self.git("ls-files").splitlines()

    def text(self, rel: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    def at_head(self, rel: str) -> str:
        return self.git("show", f"HEAD:{rel}")

    def files_in_last_commit(self) -> list[str]:
        return sorted(self.git("show", "--name-only", "--format=", "HEAD").split())

    def commit_all(self, message: str) -> None:
        """Commit every file as a person would after editing the forest by hand."""
        self.git("add", "-A")
        self.git("-c", "user.name=me", "-c", "user.email=me@example.com", "commit", "-qm", message)

    def findings(self) -> list[str]:
        with Vine(self.root, writable=False) as vine:
            return [f.line() for f in validate_forest(vine)]

    def snapshot(self) -> dict[str, bytes]:
        """Every file's bytes, outside .git and the disposable _derived/ layer."""
        out = {}
        for path in sorted(self.root.rglob("*")):
            rel = path.relative_to(self.root).as_posix()
            if rel.startswith((".git/", "_derived/")) or rel in (".git", "_derived") or not path.is_file():
                continue
            if rel == ".vine.lock":
                continue
            out[rel] = path.read_bytes()
        return out

    def assert_clean(self) -> None:
        """What a user checks after any write: git clean, validate clean."""
        assert self.status() == ""
        assert self.findings() == []


@pytest.fixture
def brain(tmp_path) -> Forest:
    """An initialised, empty forest at tmp_path/brain, with the checks a user runs."""
    root = init_forest(tmp_path / "brain", "Test forest")
    return Forest(root)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An empty git repository at tmp_path/repo (not a forest), for the object-store tests."""
    root = tmp_path / "repo"
    root.mkdir()
    git_bytes(root, "init", "-q")
    return root


@pytest.fixture
def vine(brain):
    """A writable Vine on ``brain``, closed after the test."""
    v = brain.open()
    yield v
    v.close()


def note(node_id: str, summary: str | None = None, **extra) -> dict:
    fields = {"id": node_id, "type": "note", "title": node_id.rsplit("/", 1)[-1].replace("-", " "),
              "summary": summary or f"Note {node_id} with one fact.",
              "body": f"# {node_id}\n\nA fact about {node_id}.\n"}
    fields.update(extra)
    return fields


@pytest.fixture
def make_note():
    return note

