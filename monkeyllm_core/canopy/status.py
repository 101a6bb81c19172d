"""``vine canopy status``: what the canopy holds and what a build would change.

Read from the files alone (no endpoint is asked, numpy is not needed): the
index's model, dimension, count and build time (or ``unreadable`` when the file
is there but not a whole index), the stale count against the catalog now (``dense.stale_of``), the vectors an unfinished build left staged,
and the model of the query embedder configured here, if any, with whether it
matches (a different one means locate ignores the canopy).
"""
from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .dense import stale_of
from .index import CANOPY_PATH, STAGING_PATH, read_rows


def canopy_status(root: Path, db: sqlite3.Connection, embedder_model: str | None) -> dict[str, Any]:
    root = Path(root)
    meta, rows = read_rows(root / CANOPY_PATH)
    status: dict[str, Any] = {"built": bool(meta)}
    if not meta and (root / CANOPY_PATH).exists():
        status["unreadable"] = True  # torn or edited by hand: no reader uses it, the next build replaces it
    if meta:
        status.update(model=meta["model"], dimension=int(meta["dimension"]), count=len(rows),
                      built_at=_iso(meta.get("built_at")))
    hashes = {node: hashed for node, (hashed, _blob) in rows.items()}
    status["stale"] = stale_of(db, hashes)
    status["staged"] = _staged(root / STAGING_PATH, hashes)
    status["embedder"] = embedder_model
    if meta and embedder_model is not None:
        status["embedder_matches"] = embedder_model == meta["model"]
    return status


def _staged(path: Path, built: dict[str, str]) -> int:
    """Vectors an interrupted build embedded (not those it copied from the canopy),
    which the next build of that model keeps."""
    if not path.exists():
        return 0
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return sum(1 for node, hashed in db.execute("SELECT id, text_hash FROM vectors")
                       if built.get(node) != hashed)
        finally:
            db.close()
    except sqlite3.DatabaseError:
        return 0


def _iso(stamp: str | None) -> str | None:
    try:
        return datetime.fromtimestamp(float(stamp or ""), tz=timezone.utc).isoformat(timespec="seconds")
    except ValueError:
        return None
