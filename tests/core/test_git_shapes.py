"""Issue 10 item 5: every repository shape git supports, or a one-line refusal.

Each shape is made for real under tmp_path (SHA-256 repositories, `git worktree
add` checkouts, submodules, a forest inside a bigger repository, a broken `.git`
file) and driven through the real `vine` CLI and the library; `git fsck --full
--strict` and `git status` judge the result.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from monkeyllm_core import Vine, VineError, init_forest

from _git_runs import git, plain_note  # tests/core is on sys.path
from cli_helpers import Result, VineRunner


def assert_fsck_clean(cwd: Path) -> None:
    fsck = subprocess.run(["git", "fsck", "--full", "--strict"], cwd=cwd, capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr


def assert_one_line_refusal(proc: Result, *words: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("error E_UNSUPPORTED: ") and proc.stderr.count("\n") == 1, proc.stderr
    for word in words:
        assert word in proc.stderr


def tree_state(root: Path) -> dict[str, bytes]:
    """Every file under root, .git included: a refusal must change none of them."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def plant_and_check(vine_cli: VineRunner, root: Path, node_id: str = "fact") -> None:
    with Vine(root) as vine:
        vine.plant(plain_note(node_id))
    assert_fsck_clean(root)
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    result = vine_cli("validate", "--forest", root)
    assert result.returncode == 0 and " 0 error(s), 0 warning(s)" in result.stdout, result.stdout + result.stderr
    assert git(root, "log", "-1", "--format=%s").strip() == f"plant({node_id}): {node_id} [source=agent]"


# -- (a) SHA-256 by default: the new forest is SHA-1 all the same ---------------------------------
def test_init_under_git_default_hash_sha256_makes_a_sha1_forest(vine_cli, tmp_path):
    result = vine_cli("init", "--forest", tmp_path / "brain", "--title", "T", env={"GIT_DEFAULT_HASH": "sha256"})
    assert result.returncode == 0, result.stderr
    root = tmp_path / "brain"
    assert git(root, "rev-parse", "--show-object-format").strip() == "sha1"
    assert_fsck_clean(root)
    plant_and_check(vine_cli, root)


# -- (b) an existing SHA-256 repository: refused in one line, nothing touched -----------------------
def test_init_in_an_existing_sha256_repository_is_refused_untouched(vine_cli, tmp_path):
    root = tmp_path / "brain"
    root.mkdir()
    git(root, "init", "-q", "--object-format=sha256")
    (root / "README").write_text("the user's notes\n")
    before = tree_state(root)
    result = vine_cli("init", "--forest", root, "--title", "T")
    assert_one_line_refusal(result, "SHA-256", "vine writes SHA-1")
    assert tree_state(root) == before


def sha256_forest(tmp_path: Path) -> Path:
    """A forest committed into a SHA-256 repository by git itself (as another tool would)."""
    made = init_forest(tmp_path / "made", "T")
    root = tmp_path / "brain"
    shutil.copytree(made, root, ignore=shutil.ignore_patterns(".git", "_derived"))
    git(root, "init", "-q", "--object-format=sha256")
    git(root, "add", "-A")
    git(root, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "-m", "forest")
    return root


def test_writing_to_a_sha256_forest_is_refused_untouched_and_reading_works(vine_cli, tmp_path):
    root = sha256_forest(tmp_path)
    source = tmp_path / "export" / "notes"
    source.mkdir(parents=True)
    (source / "a.md").write_text("# A\n\nThe plan for March 2026.\n")
    before = tree_state(root)
    result = vine_cli("adopt", tmp_path / "export", "--forest", root)
    assert_one_line_refusal(result, "SHA-256")
    assert tree_state(root) == before  # no lock file, no journal, no pack, no node
    with pytest.raises(VineError) as info:
        Vine(root)
    assert info.value.code == "E_UNSUPPORTED"
    assert tree_state(root) == before
    result = vine_cli("validate", "--forest", root)  # readers need no writer
    assert result.returncode == 0 and " 0 error(s), 0 warning(s)" in result.stdout, result.stdout + result.stderr


# -- (c) .git is a file: a worktree, a submodule ----------------------------------------------------
def test_a_worktree_of_a_forest_is_a_forest_git_accepts(vine_cli, tmp_path):
    main = init_forest(tmp_path / "brain", "T")
    worktree = tmp_path / "brain-side"
    git(main, "worktree", "add", "-q", "-b", "side", str(worktree))
    assert (worktree / ".git").is_file()
    plant_and_check(vine_cli, worktree)
    # HEAD and the index are the worktree's, the objects the repository's
    assert git(main, "log", "--format=%s", "side").splitlines()[0] == "plant(fact): fact [source=agent]"
    assert git(main, "log", "--format=%s").splitlines() == ["init: forest 'T'"]
    assert git(main, "status", "--porcelain", "--untracked-files=all") == ""
    assert not (main / "fact.md").exists()
    assert_fsck_clean(main)
    # the journal lives in the worktree's own git dir, so the main checkout never recovers its paths
    assert (main / ".git" / "worktrees" / "brain-side" / "vine-journal").exists()


def test_vine_init_in_a_worktree_of_another_project_commits_on_its_branch(vine_cli, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    (project / "README").write_text("a project\n")
    git(project, "add", "README")
    git(project, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "-m", "start")
    worktree = tmp_path / "project-brain"
    git(project, "worktree", "add", "-q", "-b", "brain", str(worktree))
    result = vine_cli("init", "--forest", worktree, "--title", "Brain")
    assert result.returncode == 0, result.stderr
    assert git(worktree, "log", "--format=%s").splitlines() == ["init: forest 'Brain'", "start"]
    assert not (worktree / ".git").is_dir()  # no repository of its own was made inside the worktree
    plant_and_check(vine_cli, worktree)
    assert git(project, "log", "--format=%s").splitlines() == ["start"]


def test_two_worktrees_of_one_repository_are_written_at_once(tmp_path):
    """They share one pack folder: one writer opening must not sweep the other's
    unfinished pack as if a killed writer had left it."""
    main = init_forest(tmp_path / "brain", "T")
    worktree = tmp_path / "brain-side"
    git(main, "worktree", "add", "-q", "-b", "side", str(worktree))
    first = Vine(main)
    with first.bulk(seconds=3600):  # outside a bulk session every plant is checkpointed at once
        first.plant(plain_note("on-main"))
        assert list((main / ".git/objects/pack").glob("vine_tmp_*.pack"))  # its pack is still a temporary file
        with Vine(worktree) as second:
            second.plant(plain_note("on-side"))
        first.plant(plain_note("on-main-2"))
    first.close()
    assert_fsck_clean(main)
    assert git(main, "log", "--format=%s", "-2").splitlines() == [
        "plant(on-main-2): on-main-2 [source=agent]", "plant(on-main): on-main [source=agent]"]
    assert git(main, "log", "--format=%s", "-1", "side").strip() == "plant(on-side): on-side [source=agent]"
    for root in (main, worktree):
        assert git(root, "status", "--porcelain", "--untracked-files=all") == ""


def test_a_forest_that_is_a_submodule_is_written_in_its_own_repository(vine_cli, tmp_path):
    upstream = init_forest(tmp_path / "upstream", "T")
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(upstream), "brain")
    git(project, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "-m", "add brain")
    root = project / "brain"
    assert (root / ".git").is_file()
    plant_and_check(vine_cli, root)
    assert_fsck_clean(project)
    assert git(project, "log", "--format=%s").splitlines() == ["add brain"]
    assert git(project, "status", "--porcelain").strip() == "M brain"  # the submodule moved on, as git shows it


def test_a_broken_git_file_is_refused_in_one_line(vine_cli, tmp_path):
    root = init_forest(tmp_path / "brain", "T")
    shutil.rmtree(root / ".git")
    (root / ".git").write_text(f"gitdir: {tmp_path / 'gone'}\n")
    before = tree_state(root)
    result = vine_cli("reindex", "--forest", root)  # a writer
    assert_one_line_refusal(result, "git cannot open the repository", "not a git repository")
    with pytest.raises(VineError) as info:
        Vine(root)
    assert info.value.code == "E_UNSUPPORTED" and "git cannot open the repository" in info.value.message
    assert tree_state(root) == before


# -- (d) a forest inside a bigger repository -----------------------------------------------------------
def test_a_forest_that_is_a_sub_folder_of_a_bigger_repository_refuses_to_write(vine_cli, tmp_path):
    """init gives a forest inside a project its own repository (test_init.py); one that
    lost it is refused, never committed into the project's history at the wrong paths."""
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    root = init_forest(project / "docs" / "brain", "T")
    shutil.rmtree(root / ".git")
    before = tree_state(root)
    source = tmp_path / "export"
    source.mkdir()
    (source / "a.md").write_text("# A\n\nThe plan for March 2026.\n")
    result = vine_cli("adopt", source, "--forest", root)
    assert_one_line_refusal(result, "not its top level", str(project))
    assert tree_state(root) == before
    assert git(project, "log", "--oneline", check=False) == ""


def test_a_forest_in_no_repository_refuses_to_write(tmp_path):
    root = init_forest(tmp_path / "brain", "T")
    shutil.rmtree(root / ".git")
    before = tree_state(root)
    with pytest.raises(VineError) as info:
        Vine(root)
    assert info.value.code == "E_UNSUPPORTED" and "not in a git repository" in info.value.message
    assert tree_state(root) == before


# -- discovery is asked once per open --------------------------------------------------------------
def test_the_repository_is_discovered_once_per_open_not_per_write(tmp_path, monkeypatch):
    root = init_forest(tmp_path / "brain", "T")
    real_git = shutil.which("git")
    shim = tmp_path / "bin"
    shim.mkdir()
    log = tmp_path / "git-calls"
    (shim / "git").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {real_git} "$@"\n')
    (shim / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    with Vine(root) as vine:
        for i in range(5):
            vine.plant(plain_note(f"n{i}"))
    discoveries = [line for line in log.read_text().splitlines() if "--show-toplevel" in line]
    assert len(discoveries) == 1


def test_init_in_a_repository_with_a_detached_head_is_refused_untouched(vine_cli, tmp_path):
    root = tmp_path / "brain"
    root.mkdir()
    git(root, "init", "-q")
    (root / "README").write_text("notes\n")
    git(root, "add", "README")
    git(root, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "-m", "start")
    git(root, "checkout", "-q", "--detach")
    before = tree_state(root)
    result = vine_cli("init", "--forest", root, "--title", "T")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "detached" in result.stderr
    assert tree_state(root) == before
