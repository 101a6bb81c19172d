"""A rebuild parses node files in worker processes (forest/parallel_read.py): the
entries, and so the catalog's rows, are the ones a serial read gives, in order, and
a worker that cannot run leaves its files to the caller, never a different answer."""
from __future__ import annotations

import os
import sys

from monkeyllm_core import Vine, render_node
from monkeyllm_core.forest import parallel_read
from monkeyllm_core.forest.parallel_read import CHUNK, PARALLEL_FROM, read_entries


def write_notes(root, count: int) -> list[str]:
    """``count`` notes written by hand in two folders, with the files a real forest
    holds now and then: CRLF line ends, a file that is not a node, one not UTF-8,
    one whose id does not match its path, and a branch index naming a cross trail."""
    ids = []
    for n in range(count):
        folder = "alpha" if n % 3 else "beta"
        node_id = f"{folder}/note-{n:05d}"
        text = render_node({"id": node_id, "type": "note", "title": f"Note {n}", "summary": f"Note number {n}.",
                            "tags": ["t"], "links": [{"rel": "related", "target": f"{folder}/note-{(n + 1) % count:05d}"}]},
                           f"# Note {n}\n\n## Part one\n\nText {n}.\n\n## Part two\n\nMore.\n")
        if n % 97 == 0:
            text = text.replace("\n", "\r\n")
        path = root / f"{node_id}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        ids.append(node_id)
    (root / "alpha" / "broken.md").write_text("no frontmatter here\n", encoding="utf-8")
    (root / "alpha" / "latin1.md").write_bytes("---\nid: alpha/latin1\ntitle: Caf\xe9\n---\n".encode("latin-1"))
    (root / "alpha" / "moved.md").write_text(render_node({"id": "elsewhere/moved", "title": "M", "summary": "M."}, ""),
                                             encoding="utf-8")
    (root / "alpha" / "_index.md").write_text(render_node(
        {"id": "alpha/_index", "type": "branch", "title": "Alpha", "summary": "Alpha notes."},
        "# Alpha\n\n## Cross trails\n\n- [[beta/note-00000]] — the first beta note\n"), encoding="utf-8")
    return [*ids, "alpha/broken", "alpha/latin1", "alpha/moved", "alpha/_index"]


def test_workers_give_the_serial_entries_in_order(tmp_path):
    ids = write_notes(tmp_path, 3 * CHUNK + 17)
    serial = list(read_entries(tmp_path, ids, workers=0))
    parallel = list(read_entries(tmp_path, ids, workers=2))
    assert parallel == serial
    assert [node_id for node_id, _ in parallel] == ids
    entries = dict(parallel)
    assert entries["alpha/broken"] is None and entries["alpha/latin1"] is None and entries["alpha/moved"] is None
    assert entries["beta/note-00000"].outline == ["Part one", "Part two"]  # read with its CRLF line ends
    assert entries["alpha/_index"].repeats == {"beta/note-00000"}
    assert entries["alpha/note-00001"].frontmatter["links"][0]["target"] == "alpha/note-00002"


def test_a_worker_that_cannot_start_leaves_its_files_to_the_caller(tmp_path, monkeypatch):
    ids = write_notes(tmp_path, 2 * CHUNK + 3)
    serial = list(read_entries(tmp_path, ids, workers=0))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    assert list(read_entries(tmp_path, ids, workers=2)) == serial


def test_a_worker_that_dies_leaves_its_files_to_the_caller(tmp_path, monkeypatch):
    ids = write_notes(tmp_path, 2 * CHUNK + 3)
    serial = list(read_entries(tmp_path, ids, workers=0))
    quitter = tmp_path / "quitter"
    quitter.write_text("#!/bin/sh\nexit 3\n")  # takes the arguments of a worker and dies at once
    quitter.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(quitter))
    assert list(read_entries(tmp_path, ids, workers=2)) == serial


def test_a_reindex_past_the_threshold_catalogs_every_readable_node(brain):
    ids = write_notes(brain.root, PARALLEL_FROM + 50)
    with Vine(brain.root) as vine:
        count = vine.reindex()
        catalogued = {row[0] for row in vine.catalog.db.execute("SELECT id FROM nodes")}
    readable = {node_id for node_id, entry in read_entries(brain.root, ids, workers=0) if entry is not None}
    assert readable <= catalogued and not {"alpha/broken", "alpha/latin1", "alpha/moved"} & catalogued
    assert count == len(catalogued) == len(readable) + 1  # and the master index
    if len(os.sched_getaffinity(0)) > 1:
        assert parallel_read.workers_for(len(ids)) >= 2  # so the rebuild above ran on workers
