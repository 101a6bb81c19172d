"""The catalog, ``_derived/catalog.db``: nodes, typed edges and entry search.

Disposable by design: every row is derived from the markdown files, so
``vine reindex`` rebuilds it and deleting ``_derived/`` loses nothing. It carries
the Gardener's provenance columns (source_path, source_hash, source_size,
source_mtime, origin) so a sync reads its state from here without parsing YAML.

Every node row written or deleted is logged in ``node_changes`` (by triggers, so no
write path can forget it; the newest 100,000 are kept) under the catalog's random
``instance`` id: derived layers built from the bodies (sniff's ``_derived/bodies.db``)
learn from it which nodes to look at again, and from a new instance that the
catalog was rebuilt from nothing.

Readers see each write whole: the rows one write changes (the node, its parent's
coverage, a grandparent's entry) are one SQLite transaction (``begin``/``commit``
around them in ``WriteTransaction.apply``), committed after the write's files are in place,
so a row a reader sees always has its file on disk. A reader that needs several
statements to agree runs them in one read transaction (WAL gives it a snapshot).
"""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from .rules import is_branch_id, parent_of

if TYPE_CHECKING:
    from .dialect import Dialect

CATALOG_PATH = "_derived/catalog.db"
SCHEMA_VERSION = "4"  # 2: nodes_fts rowid == nodes rowid (O(1) FTS delete); 3: repeats; 4: outline

_FTS_DDL = """CREATE VIRTUAL TABLE IF NOT EXISTS nodes_fts USING fts5(
    id UNINDEXED, title, aliases, tags, summary, tokenize = 'unicode61 remove_diacritics 2'
)"""
_DDL = _FTS_DDL + """;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS nodes (
    id TEXT PRIMARY KEY, type TEXT NOT NULL, kind TEXT NOT NULL, parent TEXT,
    title TEXT NOT NULL, summary TEXT NOT NULL, tags TEXT, aliases TEXT,
    created TEXT, updated TEXT, confidence REAL, source TEXT,
    payload TEXT, payload_type TEXT, payload_hash TEXT, coverage TEXT,
    origin TEXT, source_path TEXT, source_hash TEXT, source_size INTEGER,
    source_mtime REAL, stale INTEGER NOT NULL DEFAULT 0, body_tokens INTEGER, outline TEXT
);
CREATE INDEX IF NOT EXISTS nodes_parent ON nodes(parent);
CREATE INDEX IF NOT EXISTS nodes_origin ON nodes(origin);
CREATE TABLE IF NOT EXISTS edges (
    source TEXT NOT NULL, rel TEXT NOT NULL, target TEXT NOT NULL,
    confidence REAL, inferred INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS edges_source ON edges(source);
CREATE INDEX IF NOT EXISTS edges_target ON edges(target);
CREATE TABLE IF NOT EXISTS repeats (branch TEXT NOT NULL, child TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS repeats_child ON repeats(child);
CREATE INDEX IF NOT EXISTS repeats_branch ON repeats(branch);
CREATE TABLE IF NOT EXISTS node_changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL);
CREATE TRIGGER IF NOT EXISTS node_changes_on_insert AFTER INSERT ON nodes BEGIN
    INSERT INTO node_changes (id) VALUES (NEW.id);
    DELETE FROM node_changes WHERE seq <= (SELECT max(seq) FROM node_changes) - 100000;
END;
CREATE TRIGGER IF NOT EXISTS node_changes_on_delete AFTER DELETE ON nodes BEGIN
    INSERT INTO node_changes (id) VALUES (OLD.id);
END;
INSERT OR IGNORE INTO meta VALUES ('instance', lower(hex(randomblob(8))));
"""

NODE_COLUMNS = (
    "id", "type", "kind", "parent", "title", "summary", "tags", "aliases", "created",
    "updated", "confidence", "source", "payload", "payload_type", "payload_hash",
    "coverage", "origin", "source_path", "source_hash", "source_size", "source_mtime",
    "stale", "body_tokens", "outline",
)
# JSON lists, parsed by the reads (outline: the body's section headings, read/headings.py)
JSON_COLUMNS = ("tags", "aliases", "outline")
# a node's row, bound by position (NODE_COLUMNS' order), and its search entry
# under the rowid the row had (None: a new one; REPLACE fires no delete trigger, so
# node_changes logs one change)
_INSERT_NODE = (f"INSERT OR REPLACE INTO nodes (rowid, {', '.join(NODE_COLUMNS)}) "
                f"VALUES ({', '.join('?' * (len(NODE_COLUMNS) + 1))})")
_TAGS, _ALIASES = NODE_COLUMNS.index("tags"), NODE_COLUMNS.index("aliases")
# what a search entry is made of, as the node's row stores it
_SEARCHED_FIELDS = "SELECT rowid, title, tags, aliases, summary FROM nodes WHERE id = ?"
_INSERT_SEARCH_ENTRY = "INSERT INTO nodes_fts (rowid, id, title, aliases, tags, summary) VALUES (?, ?, ?, ?, ?, ?)"
_BINDABLE = (str, int, float)  # what SQLite binds as it is (_scalar)
# BM25 column weights: id (unindexed), title heaviest, then aliases, tags, summary.
BM25_RANK = "bm25(nodes_fts, 0.0, 10.0, 6.0, 3.0, 1.0)"


class Catalog:
    def __init__(self, root: Path, *, readonly: bool = False) -> None:
        path = root / CATALOG_PATH
        self.path = path
        if readonly:
            from ..data.query import open_readonly
            self.db = open_readonly(path)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            # Disposable: a crash costs a `vine reindex`, never knowledge.
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=OFF")
            self._drop_if_other_version()
            self.db.executescript(_DDL)
            self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (SCHEMA_VERSION,))

    def _drop_if_other_version(self) -> None:
        """A catalog from another layout is rebuilt (it is derived; the missing
        head row makes the next writable open reindex from the files)."""
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except sqlite3.OperationalError:
            return  # a new, empty catalog
        if row is not None and row[0] == SCHEMA_VERSION:
            return
        for table in ("meta", "nodes", "edges", "repeats", "nodes_fts", "node_changes"):
            self.db.execute(f"DROP TABLE IF EXISTS {table}")

    def close(self) -> None:
        self.db.close()

    # -- writes (inside the caller's transaction) --------------------------
    def begin(self) -> None:
        self.db.execute("BEGIN")

    def commit(self) -> None:
        self.db.execute("COMMIT")

    def rollback(self) -> None:
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")

    def upsert_node(self, fm: dict[str, Any], dialect: Dialect, *, body_tokens: int | None = None,
                    outline: list[str] | None = None, new: bool = False) -> None:
        """Write the node's row, search entry and links. ``new``: the caller knows the
        catalog holds no row for this id (a rebuild), so nothing is looked up or deleted."""
        node_id = fm["id"]
        get = fm.get
        # a hand-edited passport may hold any YAML shape: the catalog keeps what it can
        # read (validate reports the rest), it never fails a reindex over one node
        tags = _strings(get("tags"))
        aliases = _strings(get("aliases"))
        title, summary = str(get("title", "")), str(get("summary", ""))
        row = tuple(value if value is None or isinstance(value, _BINDABLE) else _scalar(value) for value in (
            node_id, get("type"), "branch" if is_branch_id(node_id) else "banana", parent_of(node_id), title,
            summary, _json_list(tags), _json_list(aliases), get("created"), get("updated"), get("confidence", 1.0),
            get("source"), get("payload"), get("payload_type"), get("payload_hash"), get("coverage"),
            get("origin"), get("source_path"), get("source_hash"), get("source_size"), get("source_mtime"),
            1 if get("stale") else 0, body_tokens, None if outline is None else _json_list(outline),
        ))  # in NODE_COLUMNS' order
        # the FTS row shares the node row's rowid: `id` is UNINDEXED in FTS5, so a
        # delete by id would scan the whole index on every write (O(forest size))
        old = None if new else self.db.execute(_SEARCHED_FIELDS, (node_id,)).fetchone()
        # the row keeps its rowid, so an unchanged search entry stays as it is: a
        # branch is rewritten by every write beneath it, its title and summary rarely
        rowid = self.db.execute(_INSERT_NODE, (None if old is None else old[0], *row)).lastrowid
        searched_changed = old is None or old[1:] != (title, row[_TAGS], row[_ALIASES], summary)
        if old is not None and searched_changed:
            self.db.execute("DELETE FROM nodes_fts WHERE rowid = ?", (rowid,))
        if searched_changed:
            self.db.execute(_INSERT_SEARCH_ENTRY,
                            (rowid, node_id, title, " ".join(aliases), " ".join(tags), summary))
        self.set_edges(node_id, fm.get("links") or [], dialect, new=new)

    def set_edges(self, node_id: str, links: Iterable[dict[str, Any]], dialect: Dialect, *,
                  new: bool = False) -> None:
        if not new:
            self.db.execute("DELETE FROM edges WHERE source = ? AND inferred = 0", (node_id,))
            self.db.execute("DELETE FROM edges WHERE target = ? AND inferred = 1", (node_id,))
        for link in links if isinstance(links, list) else []:
            if not isinstance(link, dict):
                continue
            rel, target = link.get("rel"), link.get("target")
            if not isinstance(rel, str) or not isinstance(target, str) or not rel or not target:
                continue
            conf = _scalar(link.get("confidence", 1.0))
            self.db.execute("INSERT INTO edges VALUES (?, ?, ?, ?, 0)", (node_id, rel, target, conf))
            inverse = dialect.inverse(rel)
            if inverse:
                # the inverse is materialised so both directions are one lookup away
                self.db.execute("INSERT INTO edges VALUES (?, ?, ?, ?, 1)", (target, inverse, node_id, conf))

    def set_repeats(self, branch_id: str, children: Iterable[str]) -> None:
        """The ids a branch index names outside its own listings (cross trails,
        landmarks): a change to one of their summaries must reach that index too."""
        self.db.execute("DELETE FROM repeats WHERE branch = ?", (branch_id,))
        self.db.executemany("INSERT INTO repeats VALUES (?, ?)", [(branch_id, child) for child in children])

    def repeated_by(self, child_id: str) -> list[str]:
        rows = self.db.execute("SELECT DISTINCT branch FROM repeats WHERE child = ? ORDER BY branch", (child_id,))
        return [row[0] for row in rows]

    def touch_source_stat(self, node_id: str, size: int, mtime: float) -> None:
        """Record a source file's new size and mtime when its bytes did not change:
        the next sync takes the no-hash fast path again. No file and no commit
        change, so it needs no transaction of its own."""
        self.db.execute("UPDATE nodes SET source_size = ?, source_mtime = ? WHERE id = ?", (size, mtime, node_id))

    def delete_node(self, node_id: str) -> None:
        """Drop a node whose file is gone: its row, its FTS row, its own edges and
        the inverses they materialised, and the cross trails its index named."""
        old = self.db.execute("SELECT rowid FROM nodes WHERE id = ?", (node_id,)).fetchone()
        if old is not None:
            self.db.execute("DELETE FROM nodes_fts WHERE rowid = ?", (old[0],))
            self.db.execute("DELETE FROM nodes WHERE rowid = ?", (old[0],))
        self.db.execute("DELETE FROM edges WHERE source = ? AND inferred = 0", (node_id,))
        self.db.execute("DELETE FROM edges WHERE target = ? AND inferred = 1", (node_id,))
        self.db.execute("DELETE FROM repeats WHERE branch = ?", (node_id,))

    def delete_all(self) -> None:
        """Empty the catalog for a rebuild (inside the caller's transaction). The search
        table is dropped and made anew: FTS5 deletes row by row, re-tokenizing each."""
        for table in ("nodes", "edges", "repeats"):
            self.db.execute(f"DELETE FROM {table}")
        self.db.execute("DROP TABLE nodes_fts")
        self.db.execute(_FTS_DDL)

    def optimize_search(self) -> None:
        """Merge the search index into one segment (after a rebuild): a query then reads
        one b-tree per term instead of one per segment, several times faster
        (bench/README.md, Read engine)."""
        self.db.execute("INSERT INTO nodes_fts (nodes_fts) VALUES ('optimize')")

    # -- reads --------------------------------------------------------------
    def get(self, node_id: str) -> dict[str, Any] | None:
        cur = self.db.execute(f"SELECT {', '.join(NODE_COLUMNS)} FROM nodes WHERE id = ?", (node_id,))
        row = cur.fetchone()
        return dict(zip(NODE_COLUMNS, row)) if row else None

    def exists(self, node_id: str) -> bool:
        return self.db.execute("SELECT 1 FROM nodes WHERE id = ?", (node_id,)).fetchone() is not None

    def children(self, branch_id: str) -> list[dict[str, Any]]:
        cur = self.db.execute(f"SELECT {', '.join(NODE_COLUMNS)} FROM nodes WHERE parent = ? ORDER BY id", (branch_id,))
        return [dict(zip(NODE_COLUMNS, r)) for r in cur.fetchall()]

    def count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM nodes").fetchone()[0]

    def provenance(self, origin_prefix: str) -> dict[str, dict[str, Any]]:
        """source state of every node whose origin starts with origin_prefix, by origin."""
        cur = self.db.execute(
            "SELECT id, origin, source_path, source_hash, source_size, source_mtime, stale, type, summary "
            "FROM nodes WHERE origin >= ? AND origin < ?",
            (origin_prefix, origin_prefix + "\U0010ffff"),
        )
        keys = ("id", "origin", "source_path", "source_hash", "source_size", "source_mtime", "stale", "type", "summary")
        return {r[1]: dict(zip(keys, r)) for r in cur.fetchall()}

    def edges_of(self, node_id: str) -> list[tuple[str, str, str, float]]:
        return self.db.execute(
            "SELECT source, rel, target, confidence FROM edges WHERE source = ? ORDER BY rel, target",
            (node_id,)).fetchall()

    def search(self, query: str, *, k: int = 8, kind: str | None = None,
               exclude: Iterable[str] = ()) -> list[dict[str, Any]]:
        """BM25 entry search over title, aliases, tags and summary."""
        terms = [t for t in "".join(ch if ch.isalnum() else " " for ch in query).split() if len(t) > 1]
        if not terms:
            return []
        match = " OR ".join(f'"{t}"' for t in terms[:32])
        excluded = list(exclude)
        sql = (f"SELECT n.id, n.kind, n.type, n.title, n.summary, {BM25_RANK} AS score "
               "FROM nodes_fts JOIN nodes n ON n.id = nodes_fts.id WHERE nodes_fts MATCH ?")
        params: list[Any] = [match]
        if kind:
            sql += " AND n.kind = ?"
            params.append(kind)
        if excluded:
            sql += f" AND n.id NOT IN ({', '.join('?' * len(excluded))})"
            params += excluded
        sql += " ORDER BY score LIMIT ?"
        params.append(k)
        rows = self.db.execute(sql, params).fetchall()
        return [{"id": r[0], "kind": r[1], "type": r[2], "title": r[3], "summary": r[4],
                 "score": round(-r[5], 4)} for r in rows]


def _json_list(values: list[str]) -> str:
    return json.dumps(values, ensure_ascii=False) if values else "[]"


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _scalar(value: Any) -> Any:
    """A value SQLite can bind: other YAML shapes (lists, maps) are stored as JSON."""
    if value is None or isinstance(value, (str, int, float)):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)
