"""vine.canopy_build and vine.canopy_status (issue 15): a real forest, a real SQLite
canopy, and the scripted OpenAI-compatible server on 127.0.0.1 as the embedder
(``hashed_embedding`` behind ``/embeddings``). What is counted is what the server
saw: every request body it received."""
from __future__ import annotations

import fcntl
import os
import sqlite3

import pytest

from endpoints import EMBED_MODEL, dead_endpoint, embedder
from monkeyllm_core import Vine, VineError
from monkeyllm_gardener.curator.testing_server import ScriptedOpenAIServer, hashed_embedding

MODEL = EMBED_MODEL
NOTES = 10


@pytest.fixture
def planted(brain, make_note):
    """A forest of a branch and ten notes (plus the master index: 12 nodes)."""
    with brain.open() as vine:
        vine.plant({"id": "notes/_index", "title": "Notes", "summary": "Notes of the team."})
        for n in range(NOTES):
            vine.plant(make_note(f"notes/n{n}", f"Note {n} about topic {n}.", parent="notes/_index"))
    return brain.root


def reader(root, embedding=None):
    vine = Vine(root, writable=False)
    vine.embedder = embedding
    return vine


def texts_sent(embed_server, since=0):
    return [text for body in embed_server.embedding_requests[since:] for text in body["input"]]


def canopy_bytes(root):
    return (root / "_derived" / "canopy.db").read_bytes()


def test_a_build_embeds_each_node_once_in_batches_and_records_model_and_dimension(planted, embed_server):
    with reader(planted, embedder(embed_server)) as vine:
        before = vine.canopy_status()
        report = vine.canopy_build(batch=5)
        status = vine.canopy_status()
    assert before["built"] is False and before["stale"]["missing"] == NOTES + 2
    assert report["embedded"] == report["count"] == NOTES + 2 and report["kept"] == report["dropped"] == 0
    assert report["model"] == MODEL and report["dimension"] == 256
    assert sorted(len(body["input"]) for body in embed_server.embedding_requests) == [2, 5, 5]
    assert {body["model"] for body in embed_server.embedding_requests} == {MODEL}
    assert "n3\n\nNote 3 about topic 3." in texts_sent(embed_server)  # title, blank line, summary
    assert status["model"] == MODEL and status["dimension"] == 256 and status["count"] == NOTES + 2
    assert status["stale"] == {"total": 0, "missing": 0, "changed": 0, "deleted": 0}
    assert status["built_at"] and status["embedder_matches"] is True


def test_a_rebuild_embeds_only_what_changed_and_drops_the_gone(planted, embed_server, make_note):
    with reader(planted, embedder(embed_server)) as vine:
        vine.canopy_build()
    with Vine(planted) as writer:
        writer.plant(make_note("notes/new", "A new note, planted after the build.", parent="notes/_index"))
        writer.replace("notes/n1", {"summary": "Note 1, rewritten after the build."})
        writer.replace("notes/n2", {"title": "Renamed two"})  # the title is embedded too
    (planted / "notes" / "n5.md").unlink()  # deleted by hand: the reader's catalog follows
    sent = len(embed_server.embedding_requests)
    with reader(planted, embedder(embed_server)) as vine:
        stale = vine.canopy_status()["stale"]
        report = vine.canopy_build()
        after = vine.canopy_status()
    assert stale == {"total": 4, "missing": 1, "changed": 2, "deleted": 1}
    assert sorted(texts_sent(embed_server, sent)) == sorted([
        "new\n\nA new note, planted after the build.", "n1\n\nNote 1, rewritten after the build.",
        "Renamed two\n\nNote 2 about topic 2."])
    assert (report["embedded"], report["kept"], report["dropped"], report["count"]) == (3, NOTES + 2 - 3, 1, NOTES + 2)
    assert after["stale"]["total"] == 0 and after["count"] == NOTES + 2


def test_a_rebuild_with_nothing_changed_asks_nothing_and_keeps_the_file(planted, embed_server):
    with reader(planted, embedder(embed_server)) as vine:
        vine.canopy_build()
        sent, built = len(embed_server.embedding_requests), vine.canopy_status()["built_at"]
        before = (planted / "_derived" / "canopy.db").stat().st_ino
        report = vine.canopy_build()
        assert vine.canopy_status()["built_at"] >= built
    assert len(embed_server.embedding_requests) == sent
    assert report["embedded"] == 0 and report["kept"] == NOTES + 2
    assert (planted / "_derived" / "canopy.db").stat().st_ino == before


def test_a_dead_endpoint_is_one_line_and_the_previous_canopy_stays_whole(planted, embed_server):
    with reader(planted, embedder(embed_server)) as vine:
        vine.canopy_build()
    with Vine(planted) as writer:
        writer.replace("notes/n1", {"summary": "Changed, so the next build has work."})
    kept = canopy_bytes(planted)
    dead = dead_endpoint()
    with reader(planted, embedder(dead, retries=1, backoff_seconds=0.01)) as vine:
        with pytest.raises(VineError) as failed:
            vine.canopy_build()
        status = vine.canopy_status()
    line = failed.value.one_line()
    assert failed.value.code == "E_TIMEOUT" and "\n" not in line
    assert dead in line and "could not connect" in line and "previous canopy is unchanged" in line
    assert canopy_bytes(planted) == kept
    assert status["count"] == NOTES + 2 and status["stale"]["changed"] == 1


def test_a_failure_mid_build_keeps_the_old_index_and_the_next_build_resumes(planted, embed_server, make_note):
    with reader(planted, embedder(embed_server)) as vine:
        vine.canopy_build()
    with Vine(planted) as writer:
        for n in range(10):
            writer.plant(make_note(f"notes/late-{n}", f"Late note {n}.", parent="notes/_index"))
    kept = canopy_bytes(planted)
    answered = []

    def two_then_down(_body):
        answered.append(1)
        return (503, {"error": {"message": "overloaded"}}) if len(answered) > 2 else None

    embed_server.embeddings_responder = two_then_down
    sent = len(embed_server.embedding_requests)
    with reader(planted, embedder(embed_server, retries=0)) as vine:
        with pytest.raises(VineError) as failed:
            vine.canopy_build(batch=2, workers=1)
        assert "HTTP 503" in failed.value.message and "4 new vector(s) are staged" in failed.value.hint
        assert canopy_bytes(planted) == kept  # never half-built
        assert vine.canopy_status()["staged"] == 4
        embed_server.embeddings_responder = None
        report = vine.canopy_build(batch=2, workers=1)
    assert (report["resumed"], report["embedded"], report["count"]) == (4, 6, NOTES + 12)
    assert len(texts_sent(embed_server, sent)) == 2 * 2 + 1 * 2 + 6  # 2 answered, 1 failed, then only the rest
    assert not (planted / "_derived" / "canopy.building.db").exists()


def test_a_vector_of_another_dimension_stops_the_build(planted, make_note):
    with ScriptedOpenAIServer() as wide, ScriptedOpenAIServer(embed=lambda text: hashed_embedding(text, 64)) as narrow:
        with reader(planted, embedder(wide)) as vine:
            vine.canopy_build()
        with Vine(planted) as writer:
            writer.plant(make_note("notes/new", "Planted after.", parent="notes/_index"))
        kept = canopy_bytes(planted)
        with reader(planted, embedder(narrow)) as vine:
            with pytest.raises(VineError) as failed:
                vine.canopy_build()
    assert failed.value.code == "E_CORRUPT" and "256 dimensions" in failed.value.message
    assert canopy_bytes(planted) == kept


def test_another_model_embeds_everything_again(planted, embed_server):
    with reader(planted, embedder(embed_server)) as vine:
        vine.canopy_build()
    with reader(planted, embedder(embed_server, model="other")) as vine:
        report = vine.canopy_build()
        status = vine.canopy_status()
    assert report["previous_model"] == MODEL and report["embedded"] == NOTES + 2 and report["dropped"] == NOTES + 2
    assert status["model"] == "other"


def test_a_second_build_at_once_is_e_locked(planted, embed_server):
    lock = planted / "_derived" / "canopy.lock"
    lock.parent.mkdir(exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # what a running build holds
        with reader(planted, embedder(embed_server)) as vine:
            with pytest.raises(VineError) as failed:
                vine.canopy_build()
    finally:
        os.close(fd)
    assert failed.value.code == "E_LOCKED" and embed_server.embedding_requests == []


def test_a_build_without_an_embedder_names_the_setting(planted, monkeypatch):
    monkeypatch.delenv("MONKEYLLM_EMBED_ENDPOINT", raising=False)
    with reader(planted) as vine:
        with pytest.raises(VineError) as failed:
            vine.canopy_build()
    assert failed.value.code == "E_SCHEMA" and "MONKEYLLM_EMBED_ENDPOINT" in failed.value.one_line()


def test_a_torn_canopy_file_is_no_canopy_and_locate_says_so(planted, embed_server):
    with reader(planted, embedder(embed_server)) as vine:
        vine.canopy_build()
    path = planted / "_derived" / "canopy.db"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with reader(planted, embedder(embed_server)) as vine:
        status = vine.canopy_status()
        assert status["built"] is False and status["unreadable"] is True
        dense = vine.locate("note topic")["dense"]
    assert dense["used"] is False and "_derived/canopy.db is not a whole index" in dense["reason"]


@pytest.mark.parametrize("key, value", [("dimension", "many"), ("built_at", ""), ("model", "")])
def test_a_canopy_whose_meta_was_edited_is_no_canopy_to_status_locate_and_build(planted, embed_server, key, value):
    with reader(planted, embedder(embed_server)) as vine:
        vine.canopy_build()
    db = sqlite3.connect(planted / "_derived" / "canopy.db", isolation_level=None)
    db.execute("UPDATE meta SET value = ? WHERE key = ?", (value, key))
    db.close()
    with reader(planted, embedder(embed_server)) as vine:
        assert vine.canopy_status()["unreadable"] is True
        assert vine.locate("note topic")["dense"]["used"] is False
        report = vine.canopy_build()  # made again from nothing, not a traceback
        assert report["embedded"] == NOTES + 2 and vine.locate("note topic")["dense"]["used"] is True
        assert "unreadable" not in vine.canopy_status()


def test_a_torn_staged_file_is_started_again(planted, embed_server):
    staged = planted / "_derived" / "canopy.building.db"
    staged.parent.mkdir(exist_ok=True)
    staged.write_bytes(b"SQLite format 3\x00" + b"\xff" * 100)  # what a crash mid-write can leave
    with reader(planted, embedder(embed_server)) as vine:
        report = vine.canopy_build()
        assert report["embedded"] == NOTES + 2 and vine.canopy_status()["count"] == NOTES + 2
    assert not staged.exists()
