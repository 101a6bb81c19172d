"""`vine canopy build|status` (issue 15): the real command in a subprocess, the
scripted OpenAI-compatible server on 127.0.0.1 as the embedder, a forest made by
`vine init` and planted with the real Vine. A build killed with SIGKILL halfway
never shows a half-built index, and the next build keeps what it had embedded."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from endpoints import EMBED_MODEL, dead_endpoint
from monkeyllm_core import Vine
from monkeyllm_gardener.curator.testing_server import ScriptedOpenAIServer

MODEL = EMBED_MODEL


@pytest.fixture
def notes(forest: Path) -> Path:
    with Vine(forest) as vine:
        vine.plant({"id": "notes/_index", "title": "Notes", "summary": "Notes of the team."})
        for n in range(6):
            vine.plant({"id": f"notes/n{n}", "type": "note", "parent": "notes/_index", "title": f"Note {n}",
                        "summary": f"Note {n} on exchange windows and invoice rules, 2026."})
    return forest


def env_for(embed_server: ScriptedOpenAIServer | str, model: str = MODEL) -> dict[str, str]:
    url = embed_server if isinstance(embed_server, str) else embed_server.base_url
    return {"MONKEYLLM_EMBED_ENDPOINT": url, "MONKEYLLM_EMBED_MODEL": model}


def test_build_prints_what_it_did_and_status_what_it_holds(vine_cli, notes, embed_server):
    built = vine_cli("canopy", "build", "--forest", notes, "--batch", "3", env=env_for(embed_server))
    assert built.returncode == 0, built.describe()
    assert built.stdout.startswith("canopy: 8 embedded, 0 kept, 0 dropped; 8 vector(s) of 256 dimensions, model "
                                   "hash-256, in ")
    assert sorted(len(body["input"]) for body in embed_server.embedding_requests) == [2, 3, 3]
    status = vine_cli("canopy", "status", "--forest", notes, env=env_for(embed_server))
    assert status.returncode == 0
    lines = status.stdout.splitlines()
    assert lines[0].startswith("canopy: model hash-256, 256 dimensions, 8 vector(s), built 20")
    assert lines[1] == "stale: 0 (0 without a vector, 0 changed, 0 deleted)"
    assert lines[2] == "query embedder: hash-256"
    with Vine(notes) as vine:
        vine.plant({"id": "notes/late", "type": "note", "parent": "notes/_index", "title": "Late",
                    "summary": "Planted after the build."})
    stale = vine_cli("canopy", "status", "--forest", notes, "--json").json()
    assert stale["stale"] == {"total": 1, "missing": 1, "changed": 0, "deleted": 0}
    assert stale["embedder"] is None and stale["count"] == 8 and stale["model"] == MODEL
    again = vine_cli("canopy", "build", "--forest", notes, "--json", env=env_for(embed_server)).json()
    assert (again["embedded"], again["kept"], again["dropped"], again["count"]) == (1, 8, 0, 9)


def test_status_of_a_forest_never_built(vine_cli, notes):
    ran = vine_cli("canopy", "status", "--forest", notes)
    assert ran.returncode == 0
    assert ran.stdout.splitlines()[:2] == ["canopy: none built (run `vine canopy build`); locate ranks by BM25 alone",
                                           "stale: 8 (8 without a vector, 0 changed, 0 deleted)"]


def test_a_dead_endpoint_is_one_line_exit_2(vine_cli, notes):
    dead = dead_endpoint()
    ran = vine_cli("canopy", "build", "--forest", notes, env=env_for(dead))
    assert ran.returncode == 2 and ran.stdout == ""
    assert len(ran.stderr.splitlines()) == 1 and "Traceback" not in ran.stderr
    assert ran.stderr.startswith("error E_TIMEOUT: canopy build stopped: the embedder at " + dead)
    assert "MONKEYLLM_EMBED_ENDPOINT" in ran.stderr
    assert not (notes / "_derived" / "canopy.db").exists()


@pytest.mark.parametrize("env, words", [
    ({}, "MONKEYLLM_EMBED_ENDPOINT is not set"),
    ({"MONKEYLLM_EMBED_ENDPOINT": "http://127.0.0.1:9/v1"}, "MONKEYLLM_EMBED_MODEL is not"),
    ({"MONKEYLLM_EMBED_ENDPOINT": "ftp://x", "MONKEYLLM_EMBED_MODEL": "m"}, "must be an http(s) URL"),
])
def test_missing_or_bad_settings_are_one_line_exit_2(vine_cli, notes, env, words):
    ran = vine_cli("canopy", "build", "--forest", notes, env=env)
    assert ran.returncode == 2 and len(ran.stderr.splitlines()) == 1 and words in ran.stderr


def test_a_bad_batch_is_one_line_exit_2(vine_cli, notes, embed_server):
    ran = vine_cli("canopy", "build", "--forest", notes, "--batch", "0", env=env_for(embed_server))
    assert ran.returncode == 2 and "batch must be a whole number" in ran.stderr
    assert embed_server.embedding_requests == []


def vectors_in(path: Path) -> int:
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return db.execute("SELECT count(*) FROM vectors").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def test_a_build_killed_halfway_leaves_the_previous_canopy_whole(vine_cli, notes, embed_server):
    assert vine_cli("canopy", "build", "--forest", notes, env=env_for(embed_server)).returncode == 0
    with Vine(notes) as vine:
        for n in range(10):
            vine.plant({"id": f"notes/late-{n}", "type": "note", "parent": "notes/_index", "title": f"Late {n}",
                        "summary": f"Late note {n}."})
    previous = (notes / "_derived" / "canopy.db").read_bytes()
    release = threading.Event()
    answered = []

    def two_then_hang(_body):
        answered.append(1)
        if len(answered) > 2:  # two batches answered, then the endpoint hangs
            release.wait(60)
        return None

    embed_server.embeddings_responder = two_then_hang
    staging = notes / "_derived" / "canopy.building.db"
    proc = vine_cli.popen("canopy", "build", "--forest", notes, "--batch", "2", "--workers", "1", env=env_for(embed_server))
    try:
        deadline = time.monotonic() + 60
        while vectors_in(staging) < 8 + 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert vectors_in(staging) == 8 + 4  # the old vectors copied in, two batches embedded
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        release.set()
        if proc.poll() is None:
            proc.kill()
    assert (notes / "_derived" / "canopy.db").read_bytes() == previous
    status = vine_cli("canopy", "status", "--forest", notes, "--json").json()
    assert (status["count"], status["staged"], status["stale"]["missing"]) == (8, 4, 10)
    located = vine_cli("locate", "exchange windows", "--forest", notes, "--json", env=env_for(embed_server)).json()
    assert located["dense"] == {"used": True, "model": MODEL, "stale": 10}  # the previous index, whole
    embed_server.embeddings_responder = None
    resumed = vine_cli("canopy", "build", "--forest", notes, "--json", env=env_for(embed_server)).json()
    assert (resumed["resumed"], resumed["embedded"], resumed["kept"], resumed["count"]) == (4, 6, 8, 18)


@pytest.mark.parametrize("absent", ["numpy", "openai"])
def test_without_the_canopy_extra_build_says_how_to_install_it(vine_cli, notes, embed_server, absent):
    """The command as a base install runs it: the package is made unimportable
    before the CLI starts (``sys.modules[name] = None`` is what Python does for a
    module that is not there)."""
    code = (f"import sys; sys.modules[{absent!r}] = None; from monkeyllm_gardener.cli import main; "
            f"sys.exit(main(['canopy', 'build', '--forest', {str(notes)!r}]))")
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=vine_cli.env(env_for(embed_server)))
    assert ran.returncode == 2 and len(ran.stderr.splitlines()) == 1 and "Traceback" not in ran.stderr
    assert "pip install 'monkeyllm[canopy]'" in ran.stderr and absent in ran.stderr
    assert embed_server.embedding_requests == []


def test_locate_without_numpy_answers_from_bm25_and_says_why(vine_cli, notes, embed_server):
    assert vine_cli("canopy", "build", "--forest", notes, env=env_for(embed_server)).returncode == 0
    code = ("import sys; sys.modules['numpy'] = None; from monkeyllm_gardener.cli import main; "
            f"sys.exit(main(['locate', 'exchange windows', '--json', '--forest', {str(notes)!r}]))")
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=vine_cli.env(env_for(embed_server)))
    assert ran.returncode == 0, ran.stderr
    response = json.loads(ran.stdout)
    plain = vine_cli("locate", "exchange windows", "--json", "--forest", notes).json()
    assert response["results"] == plain["results"]
    assert response["dense"]["used"] is False and "numpy" in response["dense"]["reason"]


def test_locate_on_a_terminal_says_whether_the_vectors_ranked_it(vine_cli, notes, embed_server):
    assert vine_cli("canopy", "build", "--forest", notes, env=env_for(embed_server)).returncode == 0
    fused = vine_cli("locate", "exchange windows", "--forest", notes, env=env_for(embed_server))
    assert fused.returncode == 0 and f"(fused with the canopy's vectors, model {MODEL}, 0 stale)" in fused.stdout
    other = vine_cli("locate", "exchange windows", "--forest", notes, env=env_for(embed_server, model="another-model"))
    assert other.returncode == 0
    assert f"(vectors not used: the canopy was built with '{MODEL}', the query embedder is 'another-model'" \
        in other.stdout
    plain = vine_cli("locate", "exchange windows", "--forest", notes)
    assert "vectors" not in plain.stdout  # no embedder configured: the output it always had


def test_status_of_a_torn_canopy_says_it_is_not_whole(vine_cli, notes, embed_server):
    assert vine_cli("canopy", "build", "--forest", notes, env=env_for(embed_server)).returncode == 0
    path = notes / "_derived" / "canopy.db"
    path.write_bytes(path.read_bytes()[:100])
    status = vine_cli("canopy", "status", "--forest", notes, env=env_for(embed_server))
    assert status.returncode == 0
    assert status.stdout.splitlines()[0].startswith("canopy: _derived/canopy.db is not a whole index")
    assert vine_cli("canopy", "build", "--forest", notes, env=env_for(embed_server)).returncode == 0
    assert vine_cli("canopy", "status", "--forest", notes, "--json").json()["built"] is True
