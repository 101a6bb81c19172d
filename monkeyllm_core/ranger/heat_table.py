"""The Ranger's view of ``_derived/trails.db``: evaporation, and the heat after it.

A cycle reads the table once, through a read-only connection, at one clock
reading: what evaporation leaves (decayed with ``HeatStore.decayed``, the read
engine's rule) and what it takes. Then a real cycle evaporates through
``HeatStore.evaporate`` (the derived layer only, never a commit); a dry run stops
at the read, so it writes nothing, not even the file when there is none (a
writable HeatStore would create it and sweep expired sessions on opening).
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..data.query import database_uri
from ..errors import VineError
from ..read.heat import COLD, TRAILS_PATH, HeatStore
from ..read.ranger_settings import HeatSettings

# the shape of the table: how many rows fall in each band of decayed heat
HEAT_BANDS = ((COLD, 0.1), (0.1, 0.2), (0.2, 0.5), (0.5, 0.8), (0.8, 1.0))


@dataclass(frozen=True)
class HeatAfterEvaporation:
    heat: dict[str, float]   # node -> decayed persistent heat, warm rows only
    evaporated: int          # persistent rows gone cold (deleted, or that a real cycle would delete)
    expired: int             # session rows past their ttl (likewise)
    session_rows: int        # session rows still live
    sessions: int            # live sessions
    bytes: int               # trails.db and its WAL on disk

    def shape(self) -> dict[str, Any]:
        values = sorted(self.heat.values())
        bands = {}
        for low, high in HEAT_BANDS:
            last = high == HEAT_BANDS[-1][1]
            bands[f"{low:g}-{high:g}"] = sum(1 for v in values if low <= v and (v <= high if last else v < high))
        return {"rows": len(values), "session_rows": self.session_rows, "sessions": self.sessions,
                "bytes": self.bytes, "bands": bands,
                "max": round(values[-1], 4) if values else 0.0,
                "median": round(values[len(values) // 2], 4) if values else 0.0}


def evaporate_and_read(root: Path, settings: HeatSettings, now: float, *, dry_run: bool) -> HeatAfterEvaporation:
    """The heat a cycle tends links with, read once at ``now``; then, unless a dry
    run, the cold and expired rows deleted (the same rows the read left out)."""
    path = Path(root) / TRAILS_PATH
    if not path.is_file():
        return HeatAfterEvaporation({}, 0, 0, 0, 0, 0)
    store = HeatStore(root, settings)  # for its decay rule; it opens no connection until it writes
    try:
        heat, cold, expired, live, sessions = _read(path, store, settings, now)
    except sqlite3.Error as exc:
        # read as empty, every low link would look cold and be pruned: stop instead
        raise VineError("E_SCHEMA", f"{TRAILS_PATH} cannot be read ({exc})",
                        "Delete it (heat is derived: past hunts are forgotten, never knowledge) "
                        "and run the Ranger again.") from None
    if not dry_run:
        try:
            store.evaporate(now)
        finally:
            store.close()
    size = sum(p.stat().st_size for p in (path, path.with_name(path.name + "-wal")) if p.is_file())
    return HeatAfterEvaporation(heat, cold, expired, live, sessions, size)


def _read(path: Path, store: HeatStore, settings: HeatSettings,
          now: float) -> tuple[dict[str, float], int, int, int, int]:
    db = sqlite3.connect(database_uri(path, mode="ro"), uri=True, timeout=5.0)
    try:
        heat: dict[str, float] = {}
        cold = 0
        for node, value, at in db.execute("SELECT node, heat, at FROM heat"):
            decayed = store.decayed(value, at, now)
            if decayed:
                heat[node] = decayed
            else:
                cold += 1
        since = now - settings.session_ttl_seconds
        expired, live, sessions = db.execute(
            "SELECT COALESCE(SUM(at < ?), 0), COALESCE(SUM(at >= ?), 0), "
            "COUNT(DISTINCT CASE WHEN at >= ? THEN session END) FROM session_heat",
            (since, since, since)).fetchone()
    finally:
        db.close()
    return heat, cold, int(expired), int(live), int(sessions)
