"""What the writer must not be fooled by: other worktrees sharing its pack folder, a
fork of its process, git's environment variables and translations, a kill in the
middle of a snapshot. Real git, real SQLite, real subprocesses."""
from __future__ import annotations

import subprocess
from pathlib import Path

from monkeyllm_core import Vine, init_forest
from monkeyllm_core.store.history import Committer

from _git_runs import git, plain_note  # tests/core is on sys.path


def test_opening_another_worktree_does_not_sweep_a_live_writers_keep(tmp_path):
    """Worktrees share one pack folder, each is a forest with its own lock: a writer
    opening one must not take the other live writer's .keep for a killed writer's,
    or a `git gc --prune=now` then drops commits no ref reaches yet."""
    main = init_forest(tmp_path / "brain", "T")
    side = tmp_path / "brain-side"
    git(main, "worktree", "add", "-q", "-b", "side", str(side))
    committer = Committer(main)
    sha = committer.commit("plant(kept): kept", {"kept.md": b"---\nid: kept\n---\n"})

    def another_writer_opens_then_gc_runs(_: str) -> None:
        with Vine(side) as other:  # sweeps what killed writers left in the shared pack folder
            other.plant(plain_note("on-side"))
        gc = subprocess.run(["git", "gc", "--prune=now", "--quiet"], cwd=main, capture_output=True, text=True)
        assert gc.returncode == 0, gc.stderr

    committer.checkpoint(before_ref_moves=another_writer_opens_then_gc_runs)
    committer.close()
    assert git(main, "rev-parse", "HEAD").strip() == sha
    assert git(main, "cat-file", "-t", sha).strip() == "commit"
    fsck = subprocess.run(["git", "fsck", "--full", "--strict"], cwd=main, capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr


def test_a_keep_naming_a_dead_writer_is_swept_and_a_live_ones_stays(tmp_path):
    from monkeyllm_core.store.packfile import keep_content
    main = init_forest(tmp_path / "brain", "T")
    pack_dir = main / ".git/objects/pack"
    dead = subprocess.Popen(["true"])
    dead.wait()
    (pack_dir / "pack-0123.keep").write_bytes(keep_content(dead.pid))
    (pack_dir / "pack-4567.keep").write_bytes(keep_content(1))  # pid 1 always runs
    with Vine(main) as vine:
        vine.plant(plain_note("after"))
    assert sorted(p.name for p in pack_dir.glob("*.keep")) == ["pack-4567.keep"]


KILLED_IN_THE_SNAPSHOT = """
    import os, sys
    from monkeyllm_core import NodeWrite, PayloadSpec, Vine

    def kill_in_the_snapshot(event, args):
        if event == "sqlite3.connect" and ".snapshot-" in str(args[0]):
            os._exit(9)  # as a kill -9 would, while the WAL copy is being checkpointed

    vine = Vine(sys.argv[1])
    sys.addaudithook(kill_in_the_snapshot)
    vine.plant(NodeWrite(passport={"id": "wal", "type": "dataset", "title": "Wal",
                                   "summary": "A WAL database adopted whole.", "payload": "wal.db",
                                   "payload_type": "sqlite"},
                         payload=PayloadSpec(source=sys.argv[2])))
"""


def test_a_kill_during_a_wal_snapshot_leaves_no_work_folder(tmp_path):
    import sqlite3
    import sys
    import textwrap
    root = init_forest(tmp_path / "brain", "T")
    source = tmp_path / "source.db"
    db = sqlite3.connect(source)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE t (v TEXT)")
    db.execute("INSERT INTO t VALUES ('x')")
    db.commit()
    db.close()
    script = tmp_path / "writer.py"
    script.write_text(textwrap.dedent(KILLED_IN_THE_SNAPSHOT))
    proc = subprocess.run([sys.executable, str(script), str(root), str(source)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 9, proc.stderr
    assert list(root.glob(".*snapshot-*")), "the kill did not land inside the snapshot"
    with Vine(root) as vine:  # recovery
        assert not vine.exists("wal")
    assert not list(root.glob(".*snapshot-*")) and not (root / "wal.db").exists()
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""


def test_the_kill_harness_counts_rows_of_a_table_whose_name_has_a_quote(tmp_path):
    """BAD-INPUTS: table names contain quotes; the harness compares row counts of
    every SQLite payload, so a quote in a name must not break its SQL."""
    import importlib.util
    import sqlite3
    harness_path = Path(__file__).resolve().parents[2] / "scripts" / "kill_harness.py"
    spec = importlib.util.spec_from_file_location("kill_harness", harness_path)
    assert spec is not None and spec.loader is not None
    harness = importlib.util.module_from_spec(spec)
    import sys
    sys.modules["kill_harness"] = harness  # its dataclasses look their module up there
    try:
        spec.loader.exec_module(harness)
    finally:
        del sys.modules["kill_harness"]
    db_path = tmp_path / "odd.db"
    db = sqlite3.connect(db_path)
    db.execute('CREATE TABLE "say ""hi""" (v)')
    db.execute('INSERT INTO "say ""hi""" VALUES (1), (2)')
    db.commit()
    db.close()
    assert harness.row_counts(db_path) == {'say "hi"': 2}


def _git_speaks_german(cwd: Path) -> bool:
    import os
    proc = subprocess.run(["git", "rev-parse", "--git-dir"], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "LANGUAGE": "de", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"})
    return proc.returncode != 0 and "not a git repository" not in proc.stderr


def test_vine_init_works_when_git_speaks_another_language(vine_cli, tmp_path):
    """gitrepo told "in no repository" from git's English message: a user whose git
    is translated (LANGUAGE=de) could not create a forest at all."""
    import pytest
    outside = tmp_path / "outside"
    outside.mkdir()
    if not _git_speaks_german(outside):
        pytest.skip("git has no German translation here")
    forest = vine_cli.init(tmp_path / "forest", title="T", env={"LANGUAGE": "de"})
    assert git(forest, "log", "--format=%s").splitlines() == ["init: forest 'T'"]


FORKING_WRITER = """
    import os, sys
    from monkeyllm_core import Vine
    with Vine(sys.argv[1]) as vine, vine.bulk(seconds=3600):
        vine.plant({"id": "first", "type": "note", "title": "First", "summary": "Planted before the fork."})
        child = os.fork()
        if child == 0:
            # a plugin's forked helper that ends by an exception: it unwinds through
            # the parent's `with` blocks, which must not checkpoint, close or write
            raise SystemExit(0)
        os.waitpid(child, 0)
        vine.plant({"id": "second", "type": "note", "title": "Second", "summary": "Planted after the fork."})
    print("done", flush=True)
"""


def test_a_forked_child_leaving_the_writers_with_blocks_does_not_checkpoint(tmp_path):
    """lineage.py: a writable Vine belongs to the process that opened it. A child
    unwinding through ``with vine.bulk()`` / ``with Vine(...)`` ran flush and close:
    it finished the parent's open pack and moved the branch under it."""
    import sys
    import textwrap
    root = init_forest(tmp_path / "brain", "T")
    script = tmp_path / "forking.py"
    script.write_text(textwrap.dedent(FORKING_WRITER))
    proc = subprocess.run([sys.executable, str(script), str(root)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.count("done") == 1, proc.stdout + proc.stderr
    assert git(root, "log", "--format=%s").splitlines() == [
        "plant(second): Second [source=agent]", "plant(first): First [source=agent]", "init: forest 'T'"]
    fsck = subprocess.run(["git", "fsck", "--full", "--strict"], cwd=root, capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    with Vine(root) as vine:
        assert vine.exists("first") and vine.exists("second")


def test_a_git_dir_in_the_environment_does_not_redirect_the_forests_writes(tmp_path, monkeypatch):
    """git sets GIT_DIR (and GIT_INDEX_FILE) for its hooks: vine run from a hook of
    another project wrote the forest's commits into that project's branch."""
    other = tmp_path / "project"
    other.mkdir()
    git(other, "init", "-q")
    git(other, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "start")
    root = init_forest(tmp_path / "brain", "T")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    with Vine(root) as vine:
        vine.plant(plain_note("fact"))
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert git(other, "log", "--format=%s").splitlines() == ["start"]
    assert git(root, "log", "--format=%s").splitlines() == ["plant(fact): fact [source=agent]", "init: forest 'T'"]
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
