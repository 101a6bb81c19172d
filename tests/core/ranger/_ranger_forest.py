"""The forest the Ranger tests tend, planted with ``Vine.plant``, and heat left on it
by real hunts (read-only Vine reads, then ``close_session(True, ...)``)."""
from __future__ import annotations

import contextlib
import gc
import os
import sqlite3
import sys
import time
from contextlib import closing
from pathlib import Path

from monkeyllm_core import Vine
from monkeyllm_core.read.heat import TRAILS_PATH

HOT = ("notes/a", "notes/b", "notes/f")


def plant_notes(root: Path, links: dict[str, list[dict]], names: str = "abcdef") -> None:
    """notes/_index with one note per letter; ``links``: each note's passport links."""
    with Vine(root) as vine:
        vine.plant({"id": "notes/_index", "type": "branch", "title": "notes", "summary": "Notes on the project."})
        for name in names:
            node_id = f"notes/{name}"
            vine.plant({"id": node_id, "type": "note", "title": f"note {name}", "summary": f"Note {name}, one fact.",
                        "body": f"# note {name}\n\nA fact.\n", "links": links.get(node_id, [])})


def hunt(root: Path, answers: tuple[str, ...] | list[str], times: int) -> None:
    """``times`` successful hunts that picked each answer: +0.1 heat on each per hunt."""
    reader = Vine(root, writable=False)
    try:
        for _ in range(times):
            for node in answers:
                reader.pick(node)
            reader.close_session(True, list(answers))
    finally:
        reader.close()
        del reader
        # the read engine's heat connections outlive Vine.close until collected: collected
        # now, their last close checkpoints the WAL here, not under a later byte comparison
        gc.collect()


def age_heat(root: Path, node: str, seconds: float) -> None:
    """Make a node's last deposit ``seconds`` older, as if its hunts were that long ago."""
    with closing(sqlite3.connect(root / TRAILS_PATH)) as db, db:
        db.execute("UPDATE heat SET at = ? WHERE node = ?", (time.time() - seconds, node))


def heat_rows(root: Path) -> dict[str, float]:
    with closing(sqlite3.connect(root / TRAILS_PATH)) as db:
        return dict(db.execute("SELECT node, heat FROM heat"))


def link(target: str, confidence: float | None = None, rel: str = "related-to") -> dict:
    out: dict = {"rel": rel, "target": target}
    if confidence is not None:
        out["confidence"] = confidence
    return out


_watching: list[tuple[str, list[str]]] = []  # (path, the mode of each open of it), innermost last


def _record_opens(event: str, args: tuple) -> None:
    if event == "open" and _watching and isinstance(args[0], (str, os.PathLike)):
        path, opened = _watching[-1]
        if os.fspath(args[0]) == path:
            opened.append(str(args[1]))


sys.addaudithook(_record_opens)  # hooks cannot be removed: it records only inside opens_of


@contextlib.contextmanager
def opens_of(path: Path):
    """Each time the interpreter opened ``path`` inside the block (an audit hook sees every open)."""
    opened: list[str] = []
    _watching.append((str(path), opened))
    try:
        yield opened
    finally:
        _watching.pop()
