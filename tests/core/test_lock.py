"""One writer per forest: E_LOCKED names the holder, a dead holder's lock is
reclaimed, readers never take the lock and cannot write."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from monkeyllm_core import Vine, VineError

HOLDER = textwrap.dedent("""
    import sys, time
    from monkeyllm_core import Vine
    vine = Vine(sys.argv[1])
    vine.plant({"id": "held", "type": "note", "title": "Held", "summary": "Planted by the holder."})
    print("holding", flush=True)
    time.sleep(60)
""")


@pytest.fixture
def holder(brain, tmp_path):
    script = tmp_path / "holder.py"
    script.write_text(HOLDER)
    proc = subprocess.Popen([sys.executable, str(script), str(brain.root)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "holding", proc.stderr.read()
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=30)


def test_a_second_writer_in_another_process_gets_e_locked_naming_the_holder(brain, holder):
    with pytest.raises(VineError) as info:
        Vine(brain.root)
    assert info.value.code == "E_LOCKED"
    assert f"pid {holder.pid}" in info.value.message
    assert info.value.envelope()["error"]["hint"]
    card = json.loads((brain.root / ".vine.lock").read_text())
    assert card["pid"] == holder.pid and card["host"] and card["since"]


def test_the_cli_reports_a_held_lock_as_one_line(brain, holder):
    result = brain.cli("reindex")
    assert result.returncode == 2
    assert result.stderr.startswith("error E_LOCKED:") and f"pid {holder.pid}" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_dead_holders_lock_is_reclaimed(brain, holder, make_note):
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=30)
    with Vine(brain.root) as vine:  # the holder's plant had returned: it is committed (issue 10)
        assert vine.exists("held")
        assert "held.md" in brain.tracked()
        vine.plant(make_note("after"))
        card = json.loads((brain.root / ".vine.lock").read_text())
        assert card["pid"] == os.getpid()
    brain.assert_clean()


def test_readers_do_not_take_the_lock_and_refuse_writes(brain, holder, make_note):
    with Vine(brain.root, writable=False) as reader:  # opens while a writer holds the lock
        for write in (lambda: reader.plant(make_note("x")),
                      lambda: reader.graft("_index", {"body": "x"}),
                      lambda: reader.tend("x", "INSERT INTO t VALUES (1)")):
            with pytest.raises(VineError) as info:
                write()
            assert info.value.code == "E_READONLY"
    card = json.loads((brain.root / ".vine.lock").read_text())
    assert card["pid"] == holder.pid  # the reader never touched the card


def test_a_closed_writer_releases_the_lock(brain, make_note):
    first = Vine(brain.root)
    first.plant(make_note("one"))
    first.close()
    with pytest.raises(VineError) as info:
        first.plant(make_note("two"))
    assert info.value.code == "E_READONLY"
    with Vine(brain.root) as second:
        second.plant(make_note("two"))
    assert brain.subjects()[0] == "plant(two): two [source=agent]"
