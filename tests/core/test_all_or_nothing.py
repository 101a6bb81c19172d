"""A write is all or nothing: files, payloads, catalog and git. After a kill -9
the next writable open rolls the journal back and the forest is whole again."""
from __future__ import annotations

import hashlib
import json
import os
import resource
import signal
import subprocess
import sys
import textwrap
import time
from contextlib import contextmanager

import pytest

from monkeyllm_core import Vine, parse_node
from monkeyllm_core.store.history import GitError
from monkeyllm_core.store.packfile import TEMP_PREFIX


def state(brain):
    return brain.snapshot(), brain.head(), brain.status()


@pytest.fixture
def sales(vine, brain, make_note):
    vine.plant({"id": "sales/_index", "title": "Sales", "summary": "Commercial policy and ledgers."})
    vine.plant(make_note("sales/policy"))
    vine.flush()
    return vine


def test_a_dataset_whose_rows_raise_after_1000_rows_leaves_nothing(sales, brain):
    before = state(brain)

    def rows():
        for i in range(1000):
            yield [i, f"name {i}"]
        raise RuntimeError("the source spreadsheet went away")

    with pytest.raises(RuntimeError, match="went away"):
        sales.plant({"id": "sales/ledger", "type": "dataset", "title": "Ledger", "summary": "Orders.",
                     "schema": {"orders": {"columns": {"id": "INTEGER", "name": "TEXT"}}},
                     "rows": {"orders": rows()}})
    sales.flush()
    assert state(brain) == before
    assert not list(brain.root.glob("sales/ledger.db*"))
    assert sales.catalog.get("sales/ledger") is None
    # the forest still takes the same write afterwards
    sales.plant({"id": "sales/ledger", "type": "dataset", "title": "Ledger", "summary": "Orders.",
                 "schema": {"orders": {"columns": {"id": "INTEGER", "name": "TEXT"}}},
                 "rows": {"orders": [[1, "a"]]}})
    sales.flush()
    brain.assert_clean()


def test_a_parent_index_that_cannot_be_written_rolls_back_the_node_file(sales, brain, make_note):
    before = state(brain)
    # the node file is written first, then the parent index: block the parent's
    # temp file with a directory so the second write fails half-way
    blocker = brain.root / "sales" / "._index.md.vine-tmp"
    blocker.mkdir()
    with pytest.raises(OSError):
        sales.plant(make_note("sales/new-fact"))
    blocker.rmdir()
    sales.flush()
    assert state(brain) == before
    assert not (brain.root / "sales" / "new-fact.md").exists()
    assert sales.catalog.get("sales/new-fact") is None
    brain.assert_clean()


def test_a_grandparent_that_cannot_be_written_rolls_back_node_and_parent(sales, brain, make_note):
    before = state(brain)
    blocker = brain.root / "._index.md.vine-tmp"
    blocker.mkdir()
    with pytest.raises(OSError):
        sales.plant(make_note("sales/new-fact"))
    blocker.rmdir()
    sales.flush()
    assert state(brain) == before
    brain.assert_clean()


def break_git(brain):
    pack = brain.root / ".git" / "objects" / "pack"
    os.rename(pack, pack.with_name("pack.aside"))
    pack.write_text("not a directory")


def mend_git(brain):
    pack = brain.root / ".git" / "objects" / "pack"
    pack.unlink()
    os.rename(pack.with_name("pack.aside"), pack)


@contextmanager
def file_size_limit(limit: int):
    """A real write failure (EFBIG, as on a full disk) for files growing past ``limit``."""
    old = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # else the kernel kills the process
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, old[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old)
        signal.signal(signal.SIGXFSZ, handler)


def open_pack_size(brain) -> int:
    """Bytes in the writer's unfinished pack (commits not yet checkpointed)."""
    (pack,) = (brain.root / ".git" / "objects" / "pack").glob(f"{TEMP_PREFIX}*.pack")
    return pack.stat().st_size


def big_note(node_id: str, kib: int) -> dict:
    body = "# Scan\n\n" + os.urandom(kib * 512).hex() + "\n"  # incompressible: the pack grows by ~kib/2
    return {"id": node_id, "type": "note", "title": node_id, "summary": f"A {kib} KiB note.", "body": body}


def test_a_git_failure_restores_files_payloads_and_catalog(brain, make_note):
    with brain.open() as vine:
        vine.plant({"id": "sales/_index", "title": "Sales", "summary": "Commercial policy and ledgers."})
    before = state(brain)
    vine = brain.open()
    break_git(brain)
    try:
        with pytest.raises(GitError):
            vine.plant({"id": "sales/ledger", "type": "dataset", "title": "Ledger", "summary": "Orders.",
                        "schema": {"orders": {"columns": {"id": "INTEGER"}}}, "rows": {"orders": [[1]]}})
        assert vine.catalog.get("sales/ledger") is None
        # no spare of a restored file is left for a kill to strand: the journal forgot this write
        assert list(brain.root.rglob("*.vine-tmp")) == []
    finally:
        mend_git(brain)
        vine.close()
    assert state(brain) == before
    assert not (brain.root / "sales" / "ledger.db").exists()
    brain.assert_clean()


def test_a_vine_keeps_writing_after_a_git_failure(brain, make_note):
    vine = brain.open()
    vine.plant(make_note("first"))
    vine.flush()
    break_git(brain)
    try:
        with pytest.raises(GitError):
            vine.plant(make_note("second"))
    finally:
        mend_git(brain)
    vine.plant(make_note("third"))
    vine.close()
    assert brain.subjects()[:2] == ["plant(third): third [source=agent]", "plant(first): first [source=agent]"]
    assert not (brain.root / "second.md").exists()
    brain.assert_clean()


def test_a_pack_that_cannot_grow_keeps_the_commits_before_the_failed_one(brain, make_note):
    vine = brain.open()
    with vine.bulk(seconds=3600):  # no checkpoint until the session ends
        vine.plant(big_note("scan", 1024))  # committed, not yet checkpointed
        with file_size_limit(open_pack_size(brain) + 4096):
            with pytest.raises(GitError, match="could not store"):
                vine.plant(big_note("second", 256))
        vine.plant(make_note("third"))
    vine.close()
    assert brain.subjects()[:2] == ["plant(third): third [source=agent]", "plant(scan): scan [source=agent]"]
    assert not (brain.root / "second.md").exists()
    brain.assert_clean()


def test_a_git_failure_does_not_lose_earlier_unflushed_commits(brain, make_note):
    vine = brain.open()
    with vine.bulk(seconds=3600):  # no checkpoint until the session ends
        vine.plant(big_note("scan", 1024))  # committed, not yet checkpointed
        with file_size_limit(open_pack_size(brain) - 1):  # not even the pack's trailer fits
            with pytest.raises(GitError):
                vine.plant(make_note("second"))
    vine.close()
    with brain.open() as again:
        again.plant(make_note("third"))
    assert (brain.root / "scan.md").is_file()
    assert "scan.md" in brain.tracked()
    assert brain.subjects()[:2] == [
        "plant(third): third [source=agent]",
        "vine(recover): re-commit 1 write(s) lost when git could not store them"]
    assert "- [[scan]] \u2014 " in brain.at_head("_index.md")
    assert not list((brain.root / ".git" / "objects" / "pack").glob("tmp_*"))
    brain.assert_clean()


def test_a_failed_tend_commit_restores_the_passport_and_validate_reports_drift(brain):
    with brain.open() as vine:
        vine.plant({"id": "ledger", "type": "dataset", "title": "Ledger", "summary": "Orders.",
                    "schema": {"orders": {"columns": {"id": "INTEGER"}}}, "rows": {"orders": [[1]]}})
    passport = brain.text("ledger.md")
    vine = brain.open()
    break_git(brain)
    try:
        with pytest.raises(GitError):
            vine.tend("ledger", "INSERT INTO orders VALUES (2)")
    finally:
        mend_git(brain)
        vine.close()
    assert brain.text("ledger.md") == passport
    assert brain.status() == ""
    assert [line.split()[1] for line in brain.findings()] == ["W_PAYLOAD_DRIFT"]
    with brain.open() as vine:  # the next successful tend repairs the drift
        vine.tend("ledger", "INSERT INTO orders VALUES (3)")
        assert vine.query("ledger", "SELECT COUNT(*) FROM orders")["rows"] == [[3]]
    brain.assert_clean()


CHILD = textwrap.dedent("""
    import sys
    from monkeyllm_core import Vine
    vine = Vine(sys.argv[1])
    vine.plant({"id": "log/_index", "title": "Log", "summary": "Facts planted in a loop."})
    with vine.bulk(seconds=3600):  # a bulk session with no timed checkpoint: only the flush below
        i = 0
        while True:
            if i % 4 == 3:
                vine.plant({"id": f"log/table-{i}", "type": "dataset", "title": f"T{i}", "summary": f"Table {i}.",
                            "schema": {"t": {"columns": {"n": "INTEGER"}}},
                            "rows": {"t": ([k] for k in range(300_000 if i == 7 else 2000))}})
            else:
                vine.plant({"id": f"log/fact-{i}", "type": "note", "title": f"Fact {i}",
                            "summary": f"Fact number {i}.", "body": f"# Fact {i}\\n\\nText.\\n"})
            if i == 9:
                vine.flush()
            print(i, flush=True)
            i += 1
""")


def run_and_kill(brain, tmp_path, after: int) -> int:
    script = tmp_path / "planter.py"
    script.write_text(CHILD)
    proc = subprocess.Popen([sys.executable, str(script), str(brain.root)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    last = -1
    try:
        for line in proc.stdout:
            last = int(line)
            if last >= after:
                break
        if after == 6:  # wait until dataset 7's payload is being born, then kill
            newborn = brain.root / "log" / "table-7.db"
            deadline = time.monotonic() + 10
            while not newborn.exists() and time.monotonic() < deadline:
                time.sleep(0.001)
            assert newborn.exists()
        os.kill(proc.pid, signal.SIGKILL)  # mid-way through the next plant, before close
    finally:
        proc.wait(timeout=30)
    assert last >= after, proc.stderr.read()
    return last


# after 6 the kill lands while dataset 7 is being born (300k rows); after 25, mid-note
@pytest.mark.parametrize("after", [6, 25])
def test_kill_9_mid_session_then_reopen_leaves_a_whole_forest(brain, tmp_path, vine_cli, after):
    run_and_kill(brain, tmp_path, after)
    assert (brain.root / ".git" / "vine-journal").read_text().strip()  # a crash left work to undo
    with brain.open() as vine:
        vine.plant({"id": "after-crash", "type": "note", "title": "After", "summary": "Planted after a crash."})
    assert brain.status() == ""
    result = vine_cli("validate", "--strict", "--forest", str(brain.root))
    assert result.returncode == 0, result.stdout
    assert brain.subjects()[0] == "plant(after-crash): After [source=agent]"

    tracked = set(brain.tracked())
    on_disk = {p.relative_to(brain.root).as_posix() for p in brain.root.rglob("*.md")
               if not p.relative_to(brain.root).as_posix().startswith(("_derived/", ".git/"))}
    assert on_disk == tracked - {".gitignore"}  # no node file that git does not have
    for rel in tracked:
        if rel.endswith(".md"):
            assert (brain.root / rel).read_text() == brain.at_head(rel)  # every file is its commit
    # every payload on disk belongs to a committed passport, with its hash
    for db in brain.root.rglob("*.db"):
        rel = db.relative_to(brain.root).as_posix()
        if rel.startswith("_derived/"):
            continue
        passport = rel[:-3] + ".md"
        assert passport in tracked, f"orphan payload {rel}"
        fm = parse_node(brain.text(passport)).frontmatter
        assert fm["payload_hash"] == hashlib.sha256(db.read_bytes()).hexdigest()
    assert not [p for p in brain.root.rglob("*.vine-*") if ".git" not in p.parts]
    if after >= 10:  # the flush after fact 9 made the first ten plants durable
        for i in range(10):
            kind = "table" if i % 4 == 3 else "fact"
            assert f"log/{kind}-{i}.md" in tracked
    with Vine(brain.root, writable=False) as reader:
        ids = {row[0] for row in reader.catalog.db.execute("SELECT id FROM nodes")}
    assert ids == {rel[:-3] for rel in tracked if rel.endswith(".md") and not rel.startswith("_meta/")}


def test_a_crash_after_the_ref_moved_but_before_the_index_was_updated_is_mended(brain, make_note):
    """The state a kill leaves between a checkpoint's two steps: HEAD has the commit,
    git's index does not, and the journal still names the file."""
    with brain.open() as vine:
        vine.plant(make_note("fact"))
    brain.git("rm", "-q", "--cached", "fact.md", "_index.md")
    (brain.root / ".git" / "vine-journal").write_text(
        '{"files": ["_index.md", "fact.md"], "new_payloads": [], "replaced_payloads": []}\n')
    assert brain.status() != ""
    with brain.open() as vine:  # the next writable open recovers
        vine.plant(make_note("after"))
    assert brain.subjects()[:2] == ["plant(after): after [source=agent]", "plant(fact): fact [source=agent]"]
    brain.assert_clean()


def test_a_commit_made_by_hand_during_a_session_is_kept_and_the_session_says_it_was_undone(brain, make_note):
    vine = brain.open()
    with vine.bulk(seconds=3600):  # no checkpoint until the session ends
        vine.plant(make_note("mine"))  # not yet checkpointed
        (brain.root / "NOTES.txt").write_text("a person's file\n")
        brain.git("add", "NOTES.txt")
        brain.git("-c", "user.name=Ada", "-c", "user.email=ada@example.org", "commit", "-q", "-m", "by hand")
        with pytest.raises(GitError, match="moved while vine was writing"):
            vine.close()
    assert brain.subjects()[0] == "by hand"
    assert not (brain.root / "mine.md").exists()  # undone, as the error says
    brain.assert_clean()
    with brain.open() as again:  # running it again works
        again.plant(make_note("mine"))
    assert brain.subjects()[:2] == ["plant(mine): mine [source=agent]", "by hand"]
    brain.assert_clean()


def test_a_crash_right_after_the_ref_moved_keeps_the_committed_payloads(brain, make_note, tmp_path):
    """The journal names a dataset's new payload and a replaced one; the checkpoint that
    committed them moved the ref, then the process died before emptying the journal.
    Those payloads are committed: recovery must neither delete nor roll them back."""
    with brain.open() as vine:
        vine.plant({"id": "ledger", "type": "dataset", "title": "Ledger", "summary": "Orders.",
                    "schema": {"orders": {"columns": {"id": "INTEGER"}}}, "rows": {"orders": [[1]]}})
        vine.plant(make_note("fact"))
    ledger = (brain.root / "ledger.db").read_bytes()
    old_copy = brain.root / ".ledger.db.1.vine-old"
    old_copy.write_bytes(b"the payload this write replaced")
    brain.git("rm", "-q", "--cached", "fact.md")  # the index update never happened either
    journal = [
        {"files": ["ledger.md", "_index.md"], "new_payloads": [],
         "replaced_payloads": [["ledger.db", ".ledger.db.1.vine-old"]]},
        {"files": [], "new_payloads": ["ledger.db"], "replaced_payloads": []},
        {"files": ["fact.md", "_index.md"], "new_payloads": [], "replaced_payloads": []},
        {"checkpoint": brain.head()},
    ]
    (brain.root / ".git" / "vine-journal").write_text("".join(json.dumps(e) + "\n" for e in journal))
    with brain.open() as vine:
        vine.plant(make_note("after"))
    assert (brain.root / "ledger.db").read_bytes() == ledger
    assert not old_copy.exists()
    brain.assert_clean()


def test_a_crash_before_the_ref_moved_still_undoes_the_uncommitted_payload(brain, make_note):
    with brain.open() as vine:
        vine.plant(make_note("fact"))
    (brain.root / "orphan.db").write_bytes(b"born by a write that never committed")
    journal = [{"files": [], "new_payloads": ["orphan.db"], "replaced_payloads": []},
               {"checkpoint": "0" * 40}]  # the ref never reached this commit
    (brain.root / ".git" / "vine-journal").write_text("".join(json.dumps(e) + "\n" for e in journal))
    with brain.open() as vine:
        vine.plant(make_note("after"))
    assert not (brain.root / "orphan.db").exists()
    brain.assert_clean()


def test_recovery_waits_for_a_git_process_still_holding_the_index(brain, make_note):
    """A killed writer's git child can outlive it for a moment, holding index.lock."""
    with brain.open() as vine:
        vine.plant(make_note("fact"))
    (brain.root / ".git" / "vine-journal").write_text(
        '{"files": ["fact.md"], "new_payloads": [], "replaced_payloads": []}\n')
    lock = brain.root / ".git" / "index.lock"
    lock.write_bytes(b"")
    holder = subprocess.Popen([sys.executable, "-c", f"import os, time; time.sleep(0.5); os.remove({str(lock)!r})"])
    try:
        with brain.open() as vine:
            vine.plant(make_note("after"))
    finally:
        holder.wait()
    brain.assert_clean()
