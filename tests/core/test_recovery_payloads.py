"""A payload replaced twice before a crash comes back as HEAD's version: every
replacement keeps its own backup until the checkpoint."""
from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from monkeyllm_core import NodeWrite, PayloadSpec, Vine, parse_node


def _db(path: Path, value: str) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (v TEXT)")
    conn.execute("INSERT INTO t VALUES (?)", (value,))
    conn.commit()
    conn.close()
    return path


def test_two_replacements_then_a_crash_restore_the_committed_payload(brain, tmp_path: Path) -> None:
    with Vine(brain.root) as vine:
        vine.plant(NodeWrite(passport={"id": "data", "type": "dataset", "title": "Data",
                                       "summary": "One table of values.", "payload": "data.db", "payload_type": "sqlite"},
                             payload=PayloadSpec(source=_db(tmp_path / "v0.db", "v0"))))
    committed = (brain.root / "data.db").read_bytes()
    script = tmp_path / "replace_twice.py"
    script.write_text(textwrap.dedent(f"""
        import os, sqlite3, sys
        from monkeyllm_core import NodeWrite, PayloadSpec, Vine
        def db(path, value):
            conn = sqlite3.connect(path); conn.execute("CREATE TABLE t (v TEXT)")
            conn.execute("INSERT INTO t VALUES (?)", (value,)); conn.commit(); conn.close()
            return path
        vine = Vine({str(brain.root)!r})
        with vine.bulk(seconds=3600):  # no checkpoint until the session ends
            for value in ("v1", "v2"):
                vine.replace("data", NodeWrite(passport={{"summary": "One table of values, " + value + "."}},
                                               payload=PayloadSpec(source=db({str(tmp_path)!r} + "/" + value + ".db", value))))
            os._exit(9)  # die before any checkpoint, like kill -9
    """))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 9, proc.stderr
    assert sqlite3.connect(brain.root / "data.db").execute("SELECT v FROM t").fetchone() == ("v2",)

    with Vine(brain.root) as vine:  # the next writer recovers
        fm = vine.read("data").frontmatter
    assert (brain.root / "data.db").read_bytes() == committed
    assert fm["payload_hash"] == hashlib.sha256(committed).hexdigest()
    assert fm["summary"] == "One table of values."
    assert not list(brain.root.glob(".data.db.*"))  # no backup left behind
    assert parse_node((brain.root / "data.md").read_text()).frontmatter == fm
    brain.assert_clean()
