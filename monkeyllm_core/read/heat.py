"""Heat, the pheromone of past hunts: ``_derived/trails.db``, never in git.

Two kinds live side by side (concepts.md, Pheromone):

- **persistent heat**, one row per node, deposited only when a hunt closes with
  success (``Session.close``) or a link is fortified. It decays lazily: a row keeps
  the value and the time of its last deposit, and is read as
  ``heat x 0.5 ^ (elapsed / half_life)``, so evaporation costs nothing until someone
  looks. A row read below 0.01 counts as cold, and ``evaporate`` deletes such rows,
  so the table stays the size of what is warm.
- **session heat**, one row per (session, node), deposited by the reads of a live
  hunt (pick and harvest, +0.1 on the trail of what they return). It does not
  decay; it expires ``session_ttl`` after its last deposit, so a crashed session's
  leftovers never become memory, and a closed session's rows are deleted.

Every value is in [0, 1]: deposits saturate at 1.0. The file is disposable like
the rest of ``_derived/``: deleting it forgets past hunts, never knowledge. It is
written by readers too (a read-only Vine keeps heat), so it is its own SQLite file
in WAL mode with a busy timeout, never the catalog, and a forest whose
``_derived/`` cannot be written still reads: heat is then 0 everywhere and nothing
is kept (``available`` is False).
"""
from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Callable, Iterable

from .ranger_settings import HeatSettings

TRAILS_PATH = "_derived/trails.db"
COLD = 0.01          # below this, heat is gone (concepts.md: rows under 0.01 are deleted)
SATURATION = 1.0
_CHUNK = 500         # ids per IN (...) list
CACHE_SECONDS = 60.0  # how long a read of the warm set serves (decay over a minute is ~1e-5 of a value)

_DDL = """
CREATE TABLE IF NOT EXISTS heat (node TEXT PRIMARY KEY, heat REAL NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS session_heat (
    session TEXT NOT NULL, node TEXT NOT NULL, heat REAL NOT NULL, at REAL NOT NULL,
    PRIMARY KEY (session, node)
);
CREATE INDEX IF NOT EXISTS session_heat_at ON session_heat(at);
"""


class HeatStore:
    def __init__(self, root: Path, settings: HeatSettings) -> None:
        self.path = Path(root) / TRAILS_PATH
        self.settings = settings
        self._db: sqlite3.Connection | None = None
        self.available = True
        self._warm_cache: tuple[tuple[str, int], float, dict[str, float]] | None = None

    # -- the connection ---------------------------------------------------------
    def _connection(self) -> sqlite3.Connection | None:
        if self._db is not None or not self.available:
            return self._db
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=5.0, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # derived: a crash may lose the last deposits, nothing else
            db.executescript(_DDL)
        except (OSError, sqlite3.Error):
            self.available = False  # a read-only _derived/: reads go on, without memory
            return None
        self._db = db
        self.drop_expired_sessions()
        return db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def decayed(self, heat: float, at: float, now: float) -> float:
        elapsed = max(0.0, now - at)
        value = heat * 0.5 ** (elapsed / self.settings.half_life_seconds)
        return value if value >= COLD else 0.0

    # -- reading ----------------------------------------------------------------------
    def persistent(self, ids: Iterable[str], now: float | None = None) -> dict[str, float]:
        """Decayed persistent heat of the warm ones among ``ids``."""
        now = time.time() if now is None else now
        out: dict[str, float] = {}
        for node, heat, at in self._rows("SELECT node, heat, at FROM heat WHERE node IN ({})", ids):
            value = self.decayed(heat, at, now)
            if value:
                out[node] = value
        return out

    def session(self, session: str, ids: Iterable[str], now: float | None = None) -> dict[str, float]:
        """Unexpired session heat of the warm ones among ``ids``."""
        since = (time.time() if now is None else now) - self.settings.session_ttl_seconds
        rows = self._rows("SELECT node, heat FROM session_heat WHERE session = ? AND at >= ? AND node IN ({})",
                          ids, (session, since))
        return {node: heat for node, heat in rows}

    def warm(self, session: str, now: float | None = None) -> dict[str, float]:
        """Every warm node, blended (persistent + this session's, at most 1.0).

        Read once and kept while nothing changed it: SQLite's ``data_version`` moves
        when another connection (another process's session) commits, this store's
        own deposits drop the copy, and the copy is re-read after CACHE_SECONDS so
        that decay and expiry stay current. A read call then ranks with dict
        lookups, not a query per call."""
        db = self._connection()
        if db is None:
            return {}
        now = time.time() if now is None else now
        version = db.execute("PRAGMA data_version").fetchone()[0]
        cached = self._warm_cache
        if cached is not None and cached[0] == (session, version) and now - cached[1] < CACHE_SECONDS:
            return cached[2]
        out: dict[str, float] = {}
        for node, heat, at in db.execute("SELECT node, heat, at FROM heat"):
            value = self.decayed(heat, at, now)
            if value:
                out[node] = value
        since = now - self.settings.session_ttl_seconds
        for node, heat in db.execute("SELECT node, heat FROM session_heat WHERE session = ? AND at >= ?",
                                     (session, since)):
            out[node] = min(SATURATION, out.get(node, 0.0) + heat)
        self._warm_cache = ((session, version), now, out)
        return out

    def _rows(self, sql: str, ids: Iterable[str], params: tuple = ()) -> list[tuple]:
        db = self._connection()
        wanted = list(dict.fromkeys(ids))
        if db is None or not wanted:
            return []
        rows: list[tuple] = []
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start:start + _CHUNK]
            rows += db.execute(sql.format(", ".join("?" * len(chunk))), (*params, *chunk)).fetchall()
        return rows

    # -- depositing -------------------------------------------------------------------
    def deposit(self, ids: Iterable[str], amount: float, now: float | None = None) -> None:
        """Add ``amount`` of persistent heat to each node (decayed first, saturating)."""
        now = time.time() if now is None else now
        wanted = list(dict.fromkeys(ids))

        def write(db: sqlite3.Connection) -> None:
            current = self.persistent(wanted, now)
            rows = [(node, min(SATURATION, current.get(node, 0.0) + amount), now) for node in wanted]
            db.executemany("INSERT OR REPLACE INTO heat (node, heat, at) VALUES (?, ?, ?)", rows)

        if wanted:
            self._write(write)

    def deposit_session(self, session: str, ids: Iterable[str], amount: float, now: float | None = None) -> None:
        now = time.time() if now is None else now
        wanted = list(dict.fromkeys(ids))

        def write(db: sqlite3.Connection) -> None:
            current = self.session(session, wanted, now)
            rows = [(session, node, min(SATURATION, current.get(node, 0.0) + amount), now) for node in wanted]
            db.executemany("INSERT OR REPLACE INTO session_heat (session, node, heat, at) VALUES (?, ?, ?, ?)",
                           rows)

        if wanted:
            self._write(write)

    def _write(self, write: Callable[[sqlite3.Connection], object]) -> object:
        """Run ``write`` in one IMMEDIATE transaction: the read-modify-write of a deposit
        holds the write lock, so two processes depositing at once both count. A file
        that cannot be written (read-only media) loses the deposit, never the read."""
        db = self._connection()
        if db is None:
            return None
        self._warm_cache = None  # this connection's own commits do not move data_version
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                result = write(db)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return result
        except sqlite3.OperationalError:
            return None

    def drop_expired_sessions(self, now: float | None = None) -> None:
        """Forget the heat of sessions that never closed (a crash, a one-call CLI hunt)
        once their time is up; a cheap indexed probe when there is nothing to drop."""
        db = self._connection()
        if db is None:
            return
        since = (time.time() if now is None else now) - self.settings.session_ttl_seconds
        if db.execute("SELECT 1 FROM session_heat WHERE at < ? LIMIT 1", (since,)).fetchone() is not None:
            self._write(lambda db: db.execute("DELETE FROM session_heat WHERE at < ?", (since,)))

    def end_session(self, session: str) -> None:
        """A closed session's heat evaporates with it (only the winning trail was kept)."""
        self._write(lambda db: db.execute("DELETE FROM session_heat WHERE session = ?", (session,)))

    def evaporate(self, now: float | None = None) -> int:
        """Delete cold persistent rows and expired session rows. Returns how many went."""
        now = time.time() if now is None else now

        def write(db: sqlite3.Connection) -> int:
            cold = [node for node, heat, at in db.execute("SELECT node, heat, at FROM heat")
                    if not self.decayed(heat, at, now)]
            for start in range(0, len(cold), _CHUNK):
                chunk = cold[start:start + _CHUNK]
                db.execute(f"DELETE FROM heat WHERE node IN ({', '.join('?' * len(chunk))})", chunk)
            expired = db.execute("DELETE FROM session_heat WHERE at < ?",
                                 (now - self.settings.session_ttl_seconds,)).rowcount
            return len(cold) + expired

        return int(self._write(write) or 0)
