"""Vine writes its own git packs: git must find the history exactly as if it had
written it, one commit per write, touching exactly that write's files."""
from __future__ import annotations

import hashlib
import multiprocessing
import subprocess
import sys
import threading

from monkeyllm_core.store.history import head_commit
from monkeyllm_core.store.packfile import TEMP_PREFIX


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def changed_files(brain, commit: str) -> list[str]:
    return sorted(brain.git("diff-tree", "--no-commit-id", "--name-only", "-r", commit).split())


def test_a_session_of_writes_is_a_history_git_fsck_accepts(brain, make_note):
    vine = brain.open()
    vine.plant({"id": "notes/_index", "title": "Notes", "summary": "Every note of the test."})
    for i in range(40):
        vine.plant(make_note(f"notes/n{i:02d}"))
        if i == 19:
            vine.flush()  # a checkpoint in the middle: the second pack builds on the first
    vine.graft("notes/n03", {"set_frontmatter": {"summary": "A changed summary for note three."}})
    vine.plant({"id": "ledger", "type": "dataset", "title": "Ledger", "summary": "Orders.",
                "schema": {"orders": {"columns": {"id": "INTEGER"}}}, "rows": {"orders": [[1]]}})
    vine.tend("ledger", "INSERT INTO orders VALUES (2)")
    vine.close()

    fsck = subprocess.run(["git", "fsck", "--full", "--strict", "--no-dangling"], cwd=brain.root,
                          capture_output=True, text=True)
    assert fsck.returncode == 0 and fsck.stdout == "", fsck.stdout + fsck.stderr
    # every tracked file is byte for byte what is on disk, and every node is tracked
    for line in brain.git("ls-tree", "-r", "HEAD").splitlines():
        meta, path = line.split("\t")
        mode, kind, sha = meta.split()
        assert (mode, kind) == ("100644", "blob")
        assert sha == blob_id((brain.root / path).read_bytes()), path
    on_disk = sorted(str(p.relative_to(brain.root)) for p in brain.root.rglob("*.md")
                     if not p.name.startswith("."))
    assert sorted(brain.tracked()) == sorted(on_disk + [".gitignore"])
    assert not list((brain.root / ".git" / "objects" / "pack").glob("tmp_*"))

    subjects = brain.subjects()
    assert len(subjects) == 1 + 1 + 40 + 3  # init, branch, notes, graft, dataset, tend
    assert subjects[0] == "tend(ledger): INSERT 1 row(s)"
    commits = brain.git("rev-list", "HEAD").split()
    assert commits[0] == head_commit(brain.root)
    # a note's plant touches the note, its parent index and the master (coverage line)
    assert changed_files(brain, commits[-3]) == ["_index.md", "notes/_index.md", "notes/n00.md"]
    assert changed_files(brain, commits[0]) == ["ledger.md"]  # the payload itself is never committed
    assert brain.status() == ""


def test_commits_carry_the_identity_and_message_of_the_write(brain, make_note):
    with brain.open() as vine:
        vine.plant(make_note("first"))
    fields = brain.git("log", "-1", "--format=%an|%ae|%cn|%ce|%B").rstrip("\n")
    assert fields == "vine|vine@monkeyllm.local|vine|vine@monkeyllm.local|plant(first): first [source=agent]"
    brain.git("config", "user.name", "Ada Lovelace")
    brain.git("config", "user.email", "ada@example.org")
    with brain.open() as vine:
        vine.plant(make_note("second"))
    assert brain.git("log", "-1", "--format=%an <%ae>").strip() == "Ada Lovelace <ada@example.org>"
    # the reflog says who moved the branch
    assert "vine: checkpoint" in brain.git("reflog", "-1", "--format=%gs")


def test_a_writer_killed_before_its_checkpoint_leaves_no_temporary_pack_behind(brain, make_note, tmp_path):
    script = tmp_path / "child.py"
    script.write_text(
        "import os, sys\n"
        "from monkeyllm_core import Vine\n"
        "vine = Vine(sys.argv[1])\n"
        "with vine.bulk():  # a bulk session: the plant waits for a checkpoint that never comes\n"
        "    vine.plant({'id': 'doomed', 'type': 'note', 'title': 'Doomed', 'summary': 'Never checkpointed.'})\n"
        "    os._exit(9)\n")
    subprocess.run([sys.executable, str(script), str(brain.root)], check=False)
    packs = brain.root / ".git" / "objects" / "pack"
    assert list(packs.glob(f"{TEMP_PREFIX}*.pack"))  # what the killed writer left
    with brain.open() as vine:  # the next writer recovers and sweeps it
        vine.plant(make_note("after"))
    assert not list(packs.glob(f"{TEMP_PREFIX}*"))
    assert not (brain.root / "doomed.md").exists()
    assert brain.subjects()[0] == "plant(after): after [source=agent]"
    brain.assert_clean()


def test_packs_from_many_sessions_are_repacked_when_git_says_so(brain, make_note):
    brain.git("config", "gc.autoPackLimit", "4")
    packs = brain.root / ".git" / "objects" / "pack"
    for i in range(8):
        with brain.open() as vine:
            vine.plant(make_note(f"n{i}"))
    assert len(list(packs.glob("*.pack"))) <= 4
    fsck = subprocess.run(["git", "fsck", "--full", "--strict"], cwd=brain.root, capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    assert len(brain.subjects()) == 9
    brain.assert_clean()


def test_a_checkpoint_does_not_wait_for_a_worker_forked_mid_session(brain, make_note):
    """`vine adopt --jobs N` forks converter workers while the writer's git reader is
    running; a checkpoint must not hang on them."""
    ctx = multiprocessing.get_context("fork")
    vine = brain.open()
    try:
        with vine.bulk():  # the checkpoint happens while the worker lives
            vine.plant(make_note("first"))  # the writer now reads trees through a git process
            release = ctx.Event()
            worker = ctx.Process(target=release.wait, args=(60,))
            worker.start()
            flushed = threading.Event()
            flusher = threading.Thread(target=lambda: (vine.flush(), flushed.set()))
            try:
                flusher.start()
                flusher.join(10)
                assert flushed.is_set(), "flush() hung while a forked worker was alive"
                vine.plant(make_note("second"))
            finally:
                release.set()
                worker.join()
                flusher.join()
    finally:
        vine.close()
    assert brain.subjects()[:2] == ["plant(second): second [source=agent]", "plant(first): first [source=agent]"]
    brain.assert_clean()



def test_in_a_bulk_session_a_checkpoint_updates_the_index_and_its_stat_data_comes_at_the_end(brain, make_note):
    """Each checkpoint of a bulk session brings git's index to the branch (so what a
    person commits meanwhile keeps vine's nodes); the entries' stat data, a git
    process that stats every tracked file, is recorded once, when the session ends."""
    vine = brain.open()
    try:
        with vine.bulk(seconds=3600):
            vine.plant({"id": "notes/_index", "title": "Notes", "summary": "Every note of the test."})
            vine.plant(make_note("notes/a"))
            vine.flush()
            assert brain.git("diff", "--cached", "--name-only") == ""  # the index is the branch
            assert "notes/a.md" in brain.git("diff-files", "--name-only").split()  # stat data owed
            vine.plant(make_note("notes/b"))
        assert brain.git("diff-files", "--name-only") == ""
    finally:
        vine.close()
    brain.assert_clean()


def test_a_commit_made_by_hand_after_a_checkpoint_keeps_the_nodes_and_payloads_vine_committed(brain):
    vine = brain.open()
    try:
        with vine.bulk(seconds=3600):
            vine.plant({"id": "ledger", "type": "dataset", "title": "Ledger", "summary": "Two rows.",
                        "schema": {"t": {"columns": {"n": "INTEGER"}}}, "rows": {"t": [[1], [2]]}})
            vine.flush()
            brain.git("-c", "user.name=Ada", "-c", "user.email=ada@example.org", "commit", "-q", "--allow-empty",
                      "-m", "a person's commit")
    finally:
        vine.close()
    assert "ledger.md" in brain.git("ls-tree", "-r", "--name-only", "HEAD").split()
    assert (brain.root / "ledger.db").is_file()
    with brain.open() as again:
        assert again.query("ledger", "SELECT COUNT(*) FROM t")["rows"] == [[2]]
    brain.assert_clean()
