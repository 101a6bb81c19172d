"""Issue 10: what a kill -9 may not take away.

Planted means committed (a write outside a bulk session is on the branch when
it returns; in a bulk session within about a second), a kill during a payload
copy leaves no temporary file, and a user's ``git gc --prune=now`` between two
checkpoints loses nothing. Every writer here is a real process killed with
SIGKILL, or a real ``Vine`` with real git.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from monkeyllm_core import Vine
from monkeyllm_core.store.history import Committer
from monkeyllm_core.store.packfile import KEEP_MARK, keep_content

DATASET = {"schema": {"t": {"columns": {"n": "INTEGER"}}}, "rows": {"t": [[1], [2]]}}


def start_writer(tmp_path: Path, code: str, *args: str) -> subprocess.Popen[str]:
    script = tmp_path / "writer.py"
    script.write_text(textwrap.dedent(code))
    return subprocess.Popen([sys.executable, str(script), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def read_until(proc: subprocess.Popen[str], wanted: str) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip() == wanted:
            return
    raise AssertionError(f"the writer ended before {wanted!r}: {proc.stderr.read() if proc.stderr else ''}")


def kill(proc: subprocess.Popen[str]) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def on_branch(brain, rel: str) -> bool:
    return subprocess.run(["git", "cat-file", "-e", f"HEAD:{rel}"], cwd=brain.root,
                          capture_output=True).returncode == 0


def test_every_write_outside_a_bulk_session_survives_a_kill_right_after_it_returns(brain, tmp_path):
    writer = start_writer(tmp_path, """
        import sys, time
        from monkeyllm_core import Vine
        vine = Vine(sys.argv[1])
        vine.plant({"id": "fact", "type": "note", "title": "Fact", "summary": "A planted fact."})
        vine.plant({"id": "ledger", "type": "dataset", "title": "Ledger", "summary": "Two rows.",
                    "schema": {"t": {"columns": {"n": "INTEGER"}}}, "rows": {"t": [[1], [2]]}})
        vine.graft("fact", {"set_frontmatter": {"summary": "A grafted fact."}})
        vine.tend("ledger", "INSERT INTO t VALUES (3)")
        vine.replace("fact", {"title": "Replaced fact"})
        print("acknowledged", flush=True)
        time.sleep(60)
    """, str(brain.root))
    try:
        read_until(writer, "acknowledged")
    finally:
        kill(writer)
    # before any recovery: git itself already has all five writes
    assert brain.subjects()[:5] == ["gardener(sync): fact", "tend(ledger): INSERT 1 row(s)",
                                     "graft(fact): set summary", "plant(ledger): Ledger [source=agent]",
                                     "plant(fact): Fact [source=agent]"]
    assert brain.status() == ""
    with brain.open() as vine:  # a recovery finds nothing to undo
        fm = vine.read("fact").frontmatter
        assert (fm["title"], fm["summary"]) == ("Replaced fact", "A grafted fact.")
        assert vine.query("ledger", "SELECT COUNT(*) FROM t")["rows"] == [[3]]
    brain.assert_clean()


def test_in_a_bulk_session_a_planted_node_reaches_the_branch_while_the_writer_keeps_writing(brain, tmp_path):
    writer = start_writer(tmp_path, """
        import itertools, sys
        from monkeyllm_core import Vine
        vine = Vine(sys.argv[1])
        with vine.bulk():
            vine.plant({"id": "first", "type": "note", "title": "First", "summary": "Planted first."})
            vine.plant({"id": "counter", "type": "note", "title": "Counter", "summary": "Counted 0 times."})
            print("planted", flush=True)
            for i in itertools.count(1):  # busy: the session never ends by itself
                vine.graft("counter", {"set_frontmatter": {"summary": f"Counted {i} times."}})
    """, str(brain.root))
    try:
        read_until(writer, "planted")
        deadline = time.monotonic() + 30  # the promise is one second; the margin is for a loaded machine
        while not on_branch(brain, "first.md") and time.monotonic() < deadline:
            time.sleep(0.05)
        reached = on_branch(brain, "first.md")
    finally:
        kill(writer)
    assert reached, "the first plant never reached the branch while the session went on"
    with brain.open() as vine:  # the kill rolls back only what came after the last checkpoint
        assert vine.exists("first")
    assert "first.md" in brain.tracked()
    brain.assert_clean()


def test_a_kill_during_a_payload_copy_leaves_no_temporary_file(brain, tmp_path):
    """The payload comes through a FIFO the test keeps open: the copy is certainly
    half done (its temporary file exists and has grown) when the kill lands."""
    fifo = tmp_path / "source.db"
    os.mkfifo(fifo)
    writer = start_writer(tmp_path, """
        import sys
        from monkeyllm_core import NodeWrite, PayloadSpec, Vine
        vine = Vine(sys.argv[1])
        vine.plant(NodeWrite(passport={"id": "big", "type": "dataset", "title": "Big",
                                       "summary": "A big database adopted whole.", "payload": "big.db",
                                       "payload_type": "sqlite"},
                             payload=PayloadSpec(source=sys.argv[2])))
    """, str(brain.root), str(fifo))
    feeder = open(fifo, "wb")  # blocks until the writer opens the FIFO to copy it
    try:
        feeder.write(os.urandom(1 << 20))
        feeder.flush()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            copies = list(brain.root.glob(".big.db.*.tmp"))
            if copies and copies[0].stat().st_size > 0:
                break
            time.sleep(0.01)
        assert copies, "the writer never started copying"
        kill(writer)
    finally:
        feeder.close()
    assert brain.status() != ""  # what a kill during the copy leaves: the half copy
    with brain.open() as vine:  # recovery
        assert not vine.exists("big")
    assert not list(brain.root.glob(".big.db.*")) and not (brain.root / "big.db").exists()
    brain.assert_clean()


def git_gc_prune_now(root: Path) -> None:
    """What a user might run in another terminal while vine writes."""
    gc = subprocess.run(["git", "gc", "--prune=now", "--quiet"], cwd=root, capture_output=True, text=True)
    assert gc.returncode == 0, gc.stderr


def test_git_gc_prune_now_between_two_checkpoints_loses_nothing(brain, make_note):
    vine = brain.open()
    with vine.bulk(seconds=3600):  # checkpoints only when asked
        vine.plant(make_note("checkpointed"))
        vine.flush()
        vine.plant(make_note("pending"))  # in the open pack, reachable from no ref yet
        vine.plant({"id": "ledger", "type": "dataset", "title": "Ledger", "summary": "Two rows.", **DATASET})
        git_gc_prune_now(brain.root)
        vine.plant(make_note("after-gc"))
    vine.close()
    assert brain.subjects()[:4] == ["plant(after-gc): after gc [source=agent]",
                                     "plant(ledger): Ledger [source=agent]",
                                     "plant(pending): pending [source=agent]",
                                     "plant(checkpointed): checkpointed [source=agent]"]
    fsck = subprocess.run(["git", "fsck", "--full", "--strict"], cwd=brain.root, capture_output=True, text=True)
    assert fsck.returncode == 0 and "missing" not in fsck.stdout + fsck.stderr, fsck.stdout + fsck.stderr
    for rel in ("checkpointed.md", "pending.md", "ledger.md", "after-gc.md"):
        assert brain.at_head(rel) == brain.text(rel)
    brain.assert_clean()


def test_git_gc_prune_now_just_before_the_ref_moves_loses_nothing(brain, make_note):
    """The finished pack is visible to git a moment before any ref reaches it: its
    .keep stops gc from pruning it, and goes once the ref moved."""
    committer = Committer(brain.root)
    sha = committer.commit("plant(kept): kept", {"kept.md": b"---\nid: kept\n---\n"})
    kept_while_gc_ran = []

    def gc_before_the_ref_moves(_: str) -> None:
        kept_while_gc_ran.extend(p.read_bytes() for p in (brain.root / ".git/objects/pack").glob("*.keep"))
        git_gc_prune_now(brain.root)

    committer.checkpoint(before_ref_moves=gc_before_the_ref_moves)
    committer.close()
    assert kept_while_gc_ran == [keep_content(os.getpid())]
    assert brain.head() == sha
    assert brain.at_head("kept.md") == "---\nid: kept\n---\n"
    assert not list((brain.root / ".git/objects/pack").glob("*.keep"))  # released with the ref move
    fsck = subprocess.run(["git", "fsck", "--full", "--strict"], cwd=brain.root, capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr


def test_a_keep_left_by_a_killed_writer_is_swept_and_a_persons_keep_stays(brain, make_note):
    pack_dir = brain.root / ".git/objects/pack"
    (pack_dir / "pack-0123.keep").write_bytes(KEEP_MARK)  # what a kill between finish and ref move leaves
    (pack_dir / "pack-4567.keep").write_bytes(b"kept by a person\n")
    with Vine(brain.root) as vine:
        vine.plant(make_note("after"))
    assert sorted(p.name for p in pack_dir.glob("*.keep")) == ["pack-4567.keep"]
    brain.assert_clean()


KILLED_IN_THE_REINDEX = """
    import os, sys
    from monkeyllm_core import Vine
    armed = []

    def kill_in_the_reindex(event, args):
        # the catalog opens once the files are restored; its rebuild then walks the forest
        if event == "sqlite3.connect":
            armed.append(True)
        elif event == "os.scandir" and armed:
            os._exit(9)  # as a kill -9 would, in the middle of the recovery's reindex

    sys.addaudithook(kill_in_the_reindex)
    Vine(sys.argv[1])
"""


def test_a_kill_during_the_recovery_reindex_is_finished_by_the_next_open(brain, tmp_path):
    """Found by the kill harness: a recovering sync killed while it rebuilt the catalog
    left a catalog row for a node whose file the recovery had removed, for good."""
    planter = start_writer(tmp_path, """
        import os, sys
        from monkeyllm_core import Vine
        vine = Vine(sys.argv[1])
        with vine.bulk(seconds=3600):
            vine.plant({"id": "ghost", "type": "note", "title": "Ghost", "summary": "Never checkpointed."})
            os._exit(9)
    """, str(brain.root))
    assert planter.wait(timeout=60) == 9
    recovering = start_writer(tmp_path, KILLED_IN_THE_REINDEX, str(brain.root))
    assert recovering.wait(timeout=60) == 9, recovering.stderr.read() if recovering.stderr else ""
    assert not (brain.root / "ghost.md").exists()  # the files were put back before the kill
    with brain.open() as vine:
        assert vine.catalog.get("ghost") is None
        assert not [hit for hit in vine.search("Ghost") if hit["id"] == "ghost"]
    brain.assert_clean()
