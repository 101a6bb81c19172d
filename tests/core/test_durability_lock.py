"""Issue 10, item 1: a kill never leaves the forest locked.

A process forked by the writer never holds the lock or the writer's git pipe, so
a ``kill -9`` of the writer alone frees the forest at once; a lock still held by
such a process (one an older vine left) is judged by its real holder and named.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from monkeyllm_core import Vine, VineError

from processes import alive, wait_gone


def run_script(tmp_path: Path, code: str, *args: str) -> subprocess.Popen[str]:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code))
    return subprocess.Popen([sys.executable, str(script), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def first_line(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    assert line, proc.stderr.read() if proc.stderr else ""
    return line


def end(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_child_forked_by_a_killed_writer_does_not_keep_the_forest_locked(brain, tmp_path, make_note):
    writer = run_script(tmp_path, """
        import os, sys, time
        from monkeyllm_core import Vine
        vine = Vine(sys.argv[1])  # holds the lock
        with vine.bulk():
            vine.plant({"id": "fact", "type": "note", "title": "Fact", "summary": "A fact."})
            child = os.fork()  # a plain fork, as a plugin might do: no die-with-parent here
            if child == 0:
                time.sleep(60)
                os._exit(0)
            print(child, flush=True)
            time.sleep(60)
    """, str(brain.root))
    child = int(first_line(writer))
    try:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(timeout=30)
        assert alive(child)  # the fork outlives the writer...
        with Vine(brain.root) as vine:  # ...and yet the forest opens for writing at once
            vine.plant(make_note("after"))
    finally:
        end(child)
    brain.assert_clean()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_git_reader_ends_with_a_killed_writer_even_while_a_forked_child_lives(brain, tmp_path):
    writer = run_script(tmp_path, """
        import os, sys, time
        from monkeyllm_core import Vine
        vine = Vine(sys.argv[1])
        with vine.bulk():
            vine.plant({"id": "fact", "type": "note", "title": "Fact", "summary": "A fact."})  # starts cat-file
            child = os.fork()
            if child == 0:
                time.sleep(60)
                os._exit(0)
            def reader(pid):  # a process may end between listdir and open: then it is none
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as fh:
                        if b"cat-file" not in fh.read():
                            return False
                    with open(f"/proc/{pid}/stat", "rb") as fh:
                        return fh.read().rsplit(b")", 1)[1].split()[1] == str(os.getpid()).encode()
                except OSError:
                    return False
            readers = [pid for pid in os.listdir("/proc") if pid.isdigit() and reader(pid)]
            print(child, *readers, flush=True)
            time.sleep(60)
    """, str(brain.root))
    child, *readers = (int(pid) for pid in first_line(writer).split())
    try:
        assert readers, "the writer had no git cat-file running"
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(timeout=30)
        assert alive(child)
        assert all(wait_gone(pid) for pid in readers), "git cat-file outlived the killed writer"
    finally:
        end(child)


ORPHANING_WRITER = """
    import fcntl, json, os, sys, time
    # a writer that lets a forked child inherit its lock (as vine did before issue 10)
    fd = os.open(os.path.join(sys.argv[1], ".vine.lock"), os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.write(fd, json.dumps({"pid": os.getpid(), "host": "here", "since": "now"}).encode())
    child = os.fork()
    if child == 0:
        time.sleep(60)
        os._exit(0)
    print(child, flush=True)
    os._exit(0)  # the writer dies; its child keeps the lock
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_lock_held_by_an_orphan_of_a_dead_writer_names_the_orphan(brain, tmp_path):
    writer = run_script(tmp_path, ORPHANING_WRITER, str(brain.root))
    orphan = int(first_line(writer))
    writer.wait(timeout=30)
    try:
        with pytest.raises(VineError) as info:
            Vine(brain.root)
        assert info.value.code == "E_LOCKED"
        assert f"the writer that took the lock (pid {writer.pid}) is dead" in info.value.message
        assert f"process(es) {orphan} (" in info.value.message
        assert f"kill {orphan}" in info.value.hint
    finally:
        end(orphan)
    assert wait_gone(orphan)
    with Vine(brain.root) as vine:  # once the orphan is gone the forest opens
        assert vine.writable


def test_a_live_writer_is_still_reported_as_the_holder(brain, tmp_path):
    writer = run_script(tmp_path, """
        import sys, time
        from monkeyllm_core import Vine
        vine = Vine(sys.argv[1])
        print("holding", flush=True)
        time.sleep(60)
    """, str(brain.root))
    try:
        assert first_line(writer) == "holding"
        with pytest.raises(VineError) as info:
            Vine(brain.root)
        assert info.value.code == "E_LOCKED"
        assert info.value.message.startswith(f"the forest is locked by pid {writer.pid} on ")
        assert "dead" not in info.value.message
    finally:
        writer.kill()
        writer.wait(timeout=30)
