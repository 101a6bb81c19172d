"""``answer``'s cache: a repeated question answered without asking the model again.

An entry is keyed by the question (case, accents' composition and spacing
normalised), k, reply_tokens, hops, the model's name and the forest's HEAD
commit, so any new commit is a miss: the answer may stand on what changed.
Entries of an older HEAD are dropped when the next answer is stored, and at most
``MAX_ENTRIES`` entries and ``MAX_BYTES`` of responses are kept (the least
recently used go first; a hop answer's ``read`` can be a few hundred KiB).

It lives in ``_derived/answer-cache.db``: derived, never committed, and deleting
it loses nothing. The forest's own thread runs every lookup and store, so one
forest's cache is never written by two threads of a server at once; SQLite's own
locking covers a second server on the same forest.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import time
import unicodedata
from contextlib import closing
from pathlib import Path
from typing import Any

CACHE_FILE = "_derived/answer-cache.db"
MAX_ENTRIES = 256
MAX_BYTES = 16 * 1024 * 1024

# ``used`` counts uses, a clock that never ties (time.time() can, between two quick calls)
_SCHEMA = ("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, head TEXT NOT NULL, response TEXT NOT NULL, "
           "stored REAL NOT NULL, used INTEGER NOT NULL)")
_NEXT_USE = "(SELECT COALESCE(MAX(used), 0) + 1 FROM answers)"
# the least recently used past either bound: a running total, newest first
_EVICT = ("DELETE FROM answers WHERE key IN (SELECT key FROM (SELECT key, "
          "SUM(LENGTH(CAST(response AS BLOB))) OVER (ORDER BY used DESC) AS bytes, "
          "ROW_NUMBER() OVER (ORDER BY used DESC) AS n FROM answers) WHERE bytes > ? OR n > ?)")


def cache_key(*, question: str, k: int, reply_tokens: int, hops: int | None, model: str, head: str | None) -> str:
    spelled = " ".join(unicodedata.normalize("NFKC", question).casefold().split())
    parts = {"question": spelled, "k": k, "reply_tokens": reply_tokens, "hops": hops, "model": model, "head": head}
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


class AnswerCache:
    def __init__(self, root: Path, *, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES) -> None:
        self.path = Path(root) / CACHE_FILE
        self.max_entries = max_entries
        self.max_bytes = max_bytes

    def get(self, key: str) -> tuple[dict[str, Any], float] | None:
        """The stored response and when it was stored (epoch seconds), or None."""
        if not self.path.exists():
            return None
        with closing(self._connect()) as db, db:
            row = db.execute("SELECT response, stored FROM answers WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            db.execute(f"UPDATE answers SET used = {_NEXT_USE} WHERE key = ?", (key,))
        return json.loads(row[0]), row[1]

    def put(self, key: str, head: str | None, response: dict[str, Any]) -> bool:
        """Store the response; False when it alone is over ``max_bytes``."""
        text = json.dumps(response, ensure_ascii=False)
        if len(text.encode("utf-8")) > self.max_bytes:
            return False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as db, db:
            db.execute("DELETE FROM answers WHERE head != ?", (head or "",))
            db.execute(f"INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, {_NEXT_USE})",
                       (key, head or "", text, time.time()))
            db.execute(_EVICT, (self.max_bytes, self.max_entries))
        return True

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=5)
        db.execute(_SCHEMA)
        return db
