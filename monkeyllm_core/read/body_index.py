"""The body index, ``_derived/bodies.db``: which bodies may hold a term, without reading them all.

sniff is a literal scan of bodies, and a plain scan opens every file in scope on
every call. This index keeps, per banana, its folded body and the set of its
folded words in an FTS5 table (``ascii`` tokenizer, no positions), with the
vocabulary of every word it has seen (reversed, for suffixes, and in a trigram
table, for infixes); ``wordplan`` says why a body holding a term must hold its
pieces' words. A term's candidates are the bodies holding those words, and sniff
scans the candidates' folded copies literally, line by line, exactly as it scans a
file: the index narrows and caches, it never matches.

One kind of term the index places exactly, without a scan: a term of word
characters only (``xchang``, a surname, a code without a dash), whose vocabulary
words the index lists (at most MAX_WORDS). Its lines are the lines of the words
containing it (``wordplan``), so a body holding one such word holds the term on
that word's lines: ``word_lines`` keeps, per body, the words it holds on two lines
or more and on how many (a word without a row is on one line; most are), and each
copy's non-blank lines bound any term's. sniff then ranks by lines reading no
copy but the few it cannot place (a body holding several of the words, whose lines
may be shared) and those it shows. Before showing a result,
sniff reads that body from disk and compares it with its copy; a copy found out of
date is replaced by the file's scan for that result, and the index sweeps before
the next answer. So sniff's answer is a plain scan's, as long as the copies are
current, which is what the rest of this module keeps true.

Kept true lazily, at read time, so a write pays nothing (ingestion speed is its own
target) and a forest another engine wrote, or a file edited by hand, is read the
same way. Before answering, the index brings itself up to date:

- the catalog logs every node row written (``node_changes``): those nodes are
  looked at again, so a write through any Vine, in any process, is seen by the
  next sniff;
- every read call (a sniff; a harvest's several sniffs are one call, ``one_call``)
  compares each folder's mtime with the one recorded: a folder whose entries
  changed (an editor's save by rename, a git checkout, a file removed) has its
  files' sizes and mtimes compared, and what differs is read again;
- a sweep compares the catalog's bananas with the index and every file's size and
  mtime with what was indexed: on the first call of each ``BodyIndex`` (each
  process), when the catalog was rebuilt or its log pruned past what was read, and
  at most ``sweep_seconds`` (60) after the last one. That bounds how long a file
  rewritten in place by hand, outside any Vine (no folder change), can go unseen
  in a long-lived process; a stat per file is the cost (0.1-0.25 s for 10,000 on
  the benchmark machine, bench/README.md), so it is not paid on every call;
- a file or folder whose mtime is within a second of when it was read could change
  again without its mtime moving (timestamps are coarse): it stays "racy", and is
  read again whenever it is next checked (a file by content digest) until it is not.

Disposable and never in git (``_derived/``): a missing, unreadable or other-format
file is rebuilt, and when it cannot be written at all (a read-only disk) sniff
scans every body in scope instead.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from operator import itemgetter
from typing import Collection, Iterable, Iterator, Mapping, Sequence

from ..errors import VineError
from ..forest.catalog import Catalog
from ..forest.passport import split_node
from ..forest.rules import node_path
from .catalog_reads import IDS_PARAM, ids_param
from .folding import FOLD_VERSION, fold
from .freshness import RACY_NS  # a timestamp within it of a read may hide a later change
from .literal import nonblank_lines
from .wordplan import Piece, pieces_of, word_lines

INDEX_PATH = "_derived/bodies.db"
FORMAT = f"4.{FOLD_VERSION}"
SWEEP_SECONDS = 60.0
# a piece matching more vocabulary words than this narrows nothing worth the query: an OR
# of 190 words (`ba`) that every body holds cost 40 ms, reading every copy 6 ms (bench/README.md)
MAX_WORDS = 64
COPIES_IN_MEMORY = 64_000_000  # characters of folded copies a process keeps (about 13 MB for 10,000 bodies)

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS bodies (
    rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, folder TEXT NOT NULL,
    mtime_ns INTEGER, size INTEGER, digest BLOB, racy INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS bodies_folder ON bodies(folder);
CREATE TABLE IF NOT EXISTS folders (folder TEXT PRIMARY KEY, mtime_ns INTEGER, racy INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS texts (rowid INTEGER PRIMARY KEY, folded TEXT NOT NULL, nonblank INTEGER NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS body_words USING fts5(words, tokenize = 'ascii', detail = none);
CREATE TABLE IF NOT EXISTS word_lines (
    word TEXT NOT NULL, body INTEGER NOT NULL, lines INTEGER NOT NULL, PRIMARY KEY (word, body)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS vocab (word TEXT PRIMARY KEY, drow TEXT NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS vocab_drow ON vocab(drow);
CREATE VIRTUAL TABLE IF NOT EXISTS vocab_grams USING fts5(word, tokenize = 'trigram case_sensitive 1');
"""
_TABLES = ("meta", "bodies", "folders", "texts", "body_words", "word_lines", "vocab", "vocab_grams")
Copy = tuple[str, str, int]  # (id, folded body, non-blank lines) of one indexed banana


@dataclass(frozen=True, kw_only=True)
class Scope:
    """Which bananas a sniff reads: all, one subtree (ids under ``prefix``), or one node."""

    prefix: str | None = None
    node: str | None = None

    def sql(self, column: str) -> tuple[str, list[str]]:
        if self.node is not None:
            return f" AND {column} = ?", [self.node]
        if self.prefix:
            # ids under "sales/" sort between "sales/" and "sales0" ("0" follows "/")
            return f" AND {column} >= ? AND {column} < ?", [self.prefix, self.prefix[:-1] + "0"]
        return "", []


@dataclass(frozen=True)
class Lookup:
    """What the index says of some folded terms in the bananas of one scope, bodies
    named by rowid.

    ``lines``, per term: for a term the index places exactly, every body in scope
    holding it -> its matching lines there (for a rowid in ``at_most``, a bound on
    them: it holds the term through several words); None for any other term, held,
    if at all, by bodies among ``maybe``, which sniff scans. ``copies`` holds at
    least every rowid named."""

    copies: Mapping[int, Copy]
    lines: list[dict[int, int] | None]
    at_most: set[int]
    maybe: Collection[int]


def read_body(root: Path, node_id: str) -> str | None:
    """A node's body as on disk (None when the file is gone): what sniff reads and indexes.

    Undecodable bytes are replaced rather than hiding the rest of the body; a file
    that is no longer a node (no frontmatter block) has no body to search."""
    try:  # os.path, not pathlib: sniff reads thousands of bodies per call
        with open(os.path.join(root, node_path(node_id)), "rb") as handle:
            data = handle.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return _body_of(data, node_id)


def _body_of(data: bytes, node_id: str) -> str:
    try:
        return split_node(data.decode("utf-8", errors="replace"), where=node_id)[1]
    except VineError:
        return ""


def _folder_of(node_id: str) -> str:
    return node_id.rpartition("/")[0]


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


class BodyIndex:
    """The body index of one forest, for one process (it remembers when it last swept)."""

    def __init__(self, root: Path, catalog: Catalog, *, sweep_seconds: float = SWEEP_SECONDS) -> None:
        self.root = Path(root)
        self.catalog = catalog
        self.sweep_seconds = sweep_seconds
        self.path = self.root / INDEX_PATH
        self._db: sqlite3.Connection | None = None
        self._swept_at: float | None = None
        # rowid -> (id, folded copy, non-blank lines), as of the index's data_version:
        # reading 10,000 copies out of SQLite costs more than scanning them
        self._copies: dict[int, Copy] | None = None
        self._copies_version: int | None = None
        self._lock = threading.Lock()  # one connection, one refresh or query at a time
        self._call: str | None = None  # inside ``one_call``: "due" until its first refresh, then "fresh"

    def close(self) -> None:
        self._copies = None
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> "BodyIndex":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- answering ---------------------------------------------------------------
    @contextmanager
    def one_call(self) -> Iterator["BodyIndex"]:
        """One read call made of several sniffs (harvest: one, then one per term and
        result): the index is brought up to date by the first of them only, as the
        catalog is once per call, instead of statting every folder each time. A copy
        a sniff finds out of date (``forget``) still makes the next one refresh."""
        outer, self._call = self._call, "due"
        try:
            yield self
        finally:
            self._call = outer

    def lookup(self, terms: Sequence[str], scope: Scope) -> Lookup | None:
        """What the index says of the folded ``terms`` in ``scope`` (``Lookup``), after
        bringing it up to date; None when it cannot be used (then every body in scope
        must be read from its file)."""
        try:
            if self._call != "fresh":
                self.refresh()
                if self._call == "due":
                    self._call = "fresh"
            with self._lock:
                return self._lookup(self._connect(), terms, scope)
        except (sqlite3.Error, OSError):  # unwritable, locked past the timeout, not a file
            self.close()
            return None

    def _lookup(self, db: sqlite3.Connection, terms: Sequence[str], scope: Scope) -> Lookup:
        where, params = scope.sql("b.id")
        copies = self._copies_in_memory(db)
        lines: list[dict[int, int] | None] = []
        at_most: set[int] = set()
        narrowed: set[int] = set()  # the bodies that may hold a term not placed exactly (its pieces' match)
        everything = False  # a term that narrows nothing: every body in scope may hold it
        for term in terms:
            pieces = pieces_of(term)
            if len(pieces) == 1 and pieces[0].kind == "infix":  # word characters only: placed exactly
                words = self._vocabulary_matching(db, pieces[0])
                if words is not None:
                    lines.append(self._lines_of(db, [w for w in words if term in w], where, params, at_most))
                    continue
                match = None  # in too many words to narrow (`ba`)
            else:
                match = None if everything else self._match_for(db, pieces)
            lines.append(None)
            if match is None:
                everything = True
            elif match:  # "": no indexed word fits, no body holds the term
                narrowed.update(self._rowids(db, match, where, params))
        maybe: Collection[int] = narrowed
        if everything:  # in the whole forest, that is every copy kept: no query, no set
            maybe = copies.keys() if copies is not None and not where else set(self._rowids(db, None, where, params))
        held = [found for found in lines if found]
        if copies is None:  # a forest too big to keep: the copies named are read now
            copies = self._copies_read(db, set(maybe).union(*held))
        if not all(all(map(copies.__contains__, rowids)) for rowids in (maybe, *held)):
            # another process changed the index between two of these reads: what it took
            # away is not answered for (the next call refreshes and sees it all)
            maybe = [rowid for rowid in maybe if rowid in copies]
            lines = [None if found is None else {r: n for r, n in found.items() if r in copies} for found in lines]
        return Lookup(copies=copies, lines=lines, at_most=at_most, maybe=maybe)

    def _lines_of(self, db: sqlite3.Connection, words: list[str], where: str, params: list[str],
                  at_most: set[int]) -> dict[int, int]:
        """The bodies in scope holding one of ``words`` -> their lines holding any of
        them; a body holding several gets the sum, a bound, and goes in ``at_most``."""
        total: dict[int, int] = {}
        for word in words:
            # every body holding the word, on one line unless word_lines has a row for it
            found = dict.fromkeys(self._rowids(db, _quoted(word), where, params), 1)
            found.update(db.execute(
                f"SELECT w.body, w.lines FROM word_lines w JOIN bodies b ON b.rowid = w.body WHERE w.word = ?{where}"
                if where else "SELECT body, lines FROM word_lines WHERE word = ?", [word, *params]).fetchall())
            shared = found.keys() & total.keys()
            for body in shared:
                found[body] += total[body]
            at_most |= shared
            total.update(found)
        return total

    @staticmethod
    def _rowids(db: sqlite3.Connection, match: str | None, where: str, params: list[str]) -> Iterator[int]:
        """The rowids of the bodies in scope (``where``) that hold the FTS5 ``match``
        (every one, for None)."""
        if match is None:
            rows = db.execute(f"SELECT b.rowid FROM bodies b WHERE 1{where}", params)
        elif not where:  # the whole forest: the word index alone answers
            rows = db.execute("SELECT rowid FROM body_words WHERE body_words MATCH ?", (match,))
        else:
            rows = db.execute("SELECT b.rowid FROM bodies b JOIN body_words ON body_words.rowid = b.rowid "
                              f"WHERE body_words MATCH ?{where}", [match, *params])
        return map(itemgetter(0), rows.fetchall())

    @staticmethod
    def _copies_read(db: sqlite3.Connection, rowids: Iterable[int]) -> dict[int, Copy]:
        """The copies of these rowids, read from the index file."""
        rows = db.execute("SELECT b.rowid, b.id, t.folded, t.nonblank FROM bodies b JOIN texts t ON t.rowid = b.rowid "
                          f"WHERE b.rowid IN {IDS_PARAM}", [json.dumps(list(rowids))])
        return {rowid: (node_id, folded, nonblank) for rowid, node_id, folded, nonblank in rows}

    def _copies_in_memory(self, db: sqlite3.Connection) -> dict[int, Copy] | None:
        """Every folded copy by rowid, read once and kept while the index file is
        unchanged (``data_version`` moves when another connection commits; this
        object's own refreshes drop the copies); None past COPIES_IN_MEMORY."""
        version = db.execute("PRAGMA data_version").fetchone()[0]
        if self._copies is not None and self._copies_version == version:
            return self._copies
        self._copies = None
        if db.execute("SELECT coalesce(sum(length(folded)), 0) FROM texts").fetchone()[0] > COPIES_IN_MEMORY:
            return None
        rows = db.execute("SELECT b.rowid, b.id, t.folded, t.nonblank FROM bodies b JOIN texts t ON t.rowid = b.rowid")
        self._copies = {rowid: (node_id, folded, nonblank) for rowid, node_id, folded, nonblank in rows}
        self._copies_version = version
        return self._copies

    def forget(self, node_id: str) -> None:
        """Sniff found this body's copy out of date (an edit that moved neither size nor
        mtime): read it again, and sweep everything, before the next answer."""
        self._swept_at = None
        if self._call == "fresh":
            self._call = "due"
        try:
            with self._lock:
                self._connect().execute("UPDATE bodies SET racy = 1 WHERE id = ?", (node_id,))
        except (sqlite3.Error, OSError):
            self.close()

    def _match_for(self, db: sqlite3.Connection, pieces: list[Piece]) -> str | None:
        """The FTS5 query a body holding all ``pieces`` matches; "" when none can, None
        when the pieces narrow nothing."""
        parts = []
        for piece in pieces:
            if piece.kind == "exact":
                parts.append(_quoted(piece.word))
            elif piece.kind == "prefix":
                if len(piece.word) > 1:  # a one-letter prefix is half the vocabulary
                    parts.append(_quoted(piece.word) + "*")
            else:
                words = self._vocabulary_matching(db, piece)
                if words is None:
                    continue  # too common to narrow: the other pieces still may
                if not words:
                    return ""
                parts.append("(" + " OR ".join(_quoted(word) for word in words) + ")")
        return " AND ".join(parts) if parts else None

    def _vocabulary_matching(self, db: sqlite3.Connection, piece: Piece) -> list[str] | None:
        """The vocabulary words ending with (suffix) or containing (infix) the piece;
        None when there are more than MAX_WORDS."""
        if piece.kind == "suffix":
            # GLOB with a literal prefix runs on the index; words never hold * ? [
            rows = db.execute("SELECT word FROM vocab WHERE drow GLOB ? LIMIT ?",
                              (piece.word[::-1] + "*", MAX_WORDS + 1))
        elif len(piece.word) >= 3:
            rows = db.execute("SELECT word FROM vocab_grams WHERE vocab_grams MATCH ? LIMIT ?",
                              (_quoted(piece.word), MAX_WORDS + 1))
        else:  # under three characters a trigram index cannot answer
            rows = db.execute("SELECT word FROM vocab WHERE instr(word, ?) LIMIT ?", (piece.word, MAX_WORDS + 1))
        words = [row[0] for row in rows]
        return None if len(words) > MAX_WORDS else words

    # -- keeping it true -----------------------------------------------------------
    def refresh(self) -> None:
        """Bring the index up to date with the catalog and the files (see the module doc)."""
        with self._lock:
            db = self._connect()
            log = self._catalog_log()
            if self._sweep_due(db, log):
                started = time.monotonic()
                self._in_transaction(db, lambda: self._sweep(db), log)
                self._swept_at = started
                return
            assert log is not None
            seen = self._seen(db)
            logged = {row[0] for row in self.catalog.db.execute(
                "SELECT id FROM node_changes WHERE seq > ? AND seq <= ?", (seen, log[2]))} if log[2] > seen else set()
            moved = self._moved_folders(db)
            if logged or moved or seen != log[2]:  # else nothing to do, and no write lock taken
                self._in_transaction(db, lambda: self._revisit(db, logged, moved), log)

    def _in_transaction(self, db: sqlite3.Connection, work, log: tuple[str, int, int] | None) -> None:
        db.execute("BEGIN IMMEDIATE")
        try:
            work()
            if log is not None:
                db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                               [("instance", log[0]), ("seq", str(log[2]))])
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    @staticmethod
    def _seen(db: sqlite3.Connection) -> int:
        row = db.execute("SELECT value FROM meta WHERE key = 'seq'").fetchone()
        return int(row[0]) if row else 0

    def _sweep_due(self, db: sqlite3.Connection, log: tuple[str, int, int] | None) -> bool:
        if log is None or self._swept_at is None or time.monotonic() - self._swept_at >= self.sweep_seconds:
            return True
        row = db.execute("SELECT value FROM meta WHERE key = 'instance'").fetchone()
        # another catalog, or its log pruned past what this index read
        return row is None or row[0] != log[0] or self._seen(db) < log[1] - 1

    def _catalog_log(self) -> tuple[str, int, int] | None:
        """(instance, oldest seq kept, newest seq) of the catalog's change log; None
        for a catalog without one (then every call sweeps)."""
        try:
            instance = self.catalog.db.execute("SELECT value FROM meta WHERE key = 'instance'").fetchone()
            # two statements: SQLite answers min() or max() from the key alone, not both at once
            oldest = self.catalog.db.execute("SELECT min(seq) FROM node_changes").fetchone()[0]
            newest = self.catalog.db.execute("SELECT max(seq) FROM node_changes").fetchone()[0]
        except sqlite3.OperationalError:
            return None
        if instance is None:
            return None
        newest = newest or self._sequence_end()
        return str(instance[0]), int(oldest or newest + 1), int(newest)

    def _sequence_end(self) -> int:
        row = self.catalog.db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'node_changes'").fetchone()
        return int(row[0]) if row else 0

    def _bananas(self, ids: Iterable[str] | None = None) -> set[str]:
        if ids is None:
            return {row[0] for row in self.catalog.db.execute("SELECT id FROM nodes WHERE kind = 'banana'")}
        return {row[0] for row in self.catalog.db.execute(
            f"SELECT id FROM nodes WHERE kind = 'banana' AND id IN {IDS_PARAM}", [ids_param(ids)])}

    def _moved_folders(self, db: sqlite3.Connection) -> list[str]:
        """The folders whose mtime moved (an entry created, renamed or removed: an
        editor's atomic save, a git checkout) or is too recent to trust."""
        moved = []
        for folder, mtime_ns, racy in db.execute("SELECT folder, mtime_ns, racy FROM folders").fetchall():
            try:
                if racy or os.stat(os.path.join(self.root, folder)).st_mtime_ns != mtime_ns:
                    moved.append(folder)
            except (FileNotFoundError, NotADirectoryError):
                moved.append(folder)
        return moved

    def _note_folders(self, db: sqlite3.Connection, folders: Iterable[str]) -> None:
        for folder in set(folders):
            checked_at = time.time_ns()
            try:
                mtime_ns = os.stat(os.path.join(self.root, folder)).st_mtime_ns
            except (FileNotFoundError, NotADirectoryError):
                db.execute("DELETE FROM folders WHERE folder = ?", (folder,))
                continue
            db.execute("INSERT OR REPLACE INTO folders VALUES (?, ?, ?)",
                       (folder, mtime_ns, 1 if mtime_ns >= checked_at - RACY_NS else 0))

    def _sweep(self, db: sqlite3.Connection) -> None:
        bananas = self._bananas()
        indexed = {row[0]: row[1:] for row in db.execute("SELECT id, rowid, mtime_ns, size, digest, racy FROM bodies")}
        for node_id in indexed.keys() - bananas:
            self._drop(db, indexed[node_id][0])
        db.execute("DELETE FROM folders")
        # folders first: a file written after its folder's mtime was read is still seen
        self._note_folders(db, (_folder_of(node_id) for node_id in bananas))
        batch = _Batch()
        for node_id in sorted(bananas):
            self._verify(db, node_id, indexed.get(node_id), batch)
        batch.store_vocabulary(db)

    def _revisit(self, db: sqlite3.Connection, logged: set[str], moved: list[str]) -> None:
        ids = set(logged)
        for folder in moved:
            ids.update(row[0] for row in db.execute("SELECT id FROM bodies WHERE folder = ?", (folder,)))
        self._note_folders(db, [*moved, *(_folder_of(node_id) for node_id in logged)])
        bananas = self._bananas(ids)
        batch = _Batch()
        for node_id in sorted(ids):
            row = db.execute("SELECT rowid, mtime_ns, size, digest, racy FROM bodies WHERE id = ?",
                             (node_id,)).fetchone()
            if node_id not in bananas:
                if row is not None:
                    self._drop(db, row[0])
                continue
            self._verify(db, node_id, row, batch)
        batch.store_vocabulary(db)

    def _verify(self, db: sqlite3.Connection, node_id: str, row: tuple | None, batch: "_Batch") -> None:
        """Re-read the node's file when its size or mtime moved, or its row is racy."""
        path = os.path.join(self.root, node_path(node_id))  # os.path: a sweep checks every file
        try:
            st = os.stat(path)
            if row is not None and row[1] == st.st_mtime_ns and row[2] == st.st_size and not row[4]:
                return
            read_at = time.time_ns()
            with open(path, "rb") as handle:
                data = handle.read()
        except (FileNotFoundError, NotADirectoryError):
            if row is not None:
                self._drop(db, row[0])
            return
        digest = _digest(data)
        racy = 1 if st.st_mtime_ns >= read_at - RACY_NS else 0
        if row is not None and row[3] == digest:
            db.execute("UPDATE bodies SET mtime_ns = ?, size = ?, racy = ? WHERE rowid = ?",
                       (st.st_mtime_ns, st.st_size, racy, row[0]))
            return
        folded = fold(_body_of(data, node_id))
        lines = word_lines(folded)
        if row is not None:
            self._drop(db, row[0])
        rowid = db.execute("INSERT INTO bodies (id, folder, mtime_ns, size, digest, racy) VALUES (?, ?, ?, ?, ?, ?)",
                           (node_id, _folder_of(node_id), st.st_mtime_ns, len(data), digest, racy)).lastrowid
        db.execute("INSERT INTO texts VALUES (?, ?, ?)", (rowid, folded, nonblank_lines(folded)))
        self._copies = None  # read again, with this one
        db.execute("INSERT INTO body_words (rowid, words) VALUES (?, ?)", (rowid, " ".join(sorted(lines))))
        db.executemany("INSERT OR REPLACE INTO word_lines VALUES (?, ?, ?)",
                       ((word, rowid, count) for word, count in _repeated(lines)))
        batch.words.update(lines)

    def _drop(self, db: sqlite3.Connection, rowid: int) -> None:
        self._copies = None  # read again, without this one
        db.execute("DELETE FROM body_words WHERE rowid = ?", (rowid,))
        old = db.execute("SELECT folded FROM texts WHERE rowid = ?", (rowid,)).fetchone()
        if old is not None:  # its rows are its copy's repeated words (no index on body: 4 MB, 0.3 s a build)
            db.executemany("DELETE FROM word_lines WHERE word = ? AND body = ?",
                           ((word, rowid) for word, _count in _repeated(word_lines(old[0]))))
        db.execute("DELETE FROM texts WHERE rowid = ?", (rowid,))
        db.execute("DELETE FROM bodies WHERE rowid = ?", (rowid,))

    def _connect(self) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            db = self._open_current()
        except sqlite3.DatabaseError:
            # not a database at all (a torn or foreign file): it is derived, start again
            for suffix in ("", "-wal", "-shm"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            db = self._open_current()
        self._db = db
        return db

    def _open_current(self) -> sqlite3.Connection:
        """The index file in this format: one in another format is emptied and made anew."""
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=10.0)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=OFF")  # derived: a crash costs a rebuild, never knowledge
            if _format_of(db) != FORMAT:
                for table in _TABLES:
                    db.execute(f"DROP TABLE IF EXISTS {table}")
                db.executescript(_DDL)
                db.execute("INSERT INTO meta VALUES ('format', ?)", (FORMAT,))
                self._swept_at = None
        except BaseException:
            db.close()
            raise
        return db


class _Batch:
    """The words of the bodies indexed in one refresh, added to the vocabulary once."""

    def __init__(self) -> None:
        self.words: set[str] = set()

    def store_vocabulary(self, db: sqlite3.Connection) -> None:
        if not self.words:
            return
        db.execute("CREATE TEMP TABLE IF NOT EXISTS fresh_words (word TEXT PRIMARY KEY)")
        db.execute("DELETE FROM temp.fresh_words")
        db.executemany("INSERT INTO temp.fresh_words VALUES (?)", ((w,) for w in self.words))
        db.execute("DELETE FROM temp.fresh_words WHERE word IN (SELECT word FROM vocab)")
        new = [row[0] for row in db.execute("SELECT word FROM temp.fresh_words")]
        db.executemany("INSERT INTO vocab VALUES (?, ?)", ((w, w[::-1]) for w in new))
        db.executemany("INSERT INTO vocab_grams (word) VALUES (?)", ((w,) for w in new))
        db.execute("DELETE FROM temp.fresh_words")


def _repeated(lines: Mapping[str, int]) -> Iterator[tuple[str, int]]:
    """The words on two lines or more, and on how many: a body's rows in ``word_lines``."""
    return ((word, count) for word, count in lines.items() if count > 1)


def _format_of(db: sqlite3.Connection) -> str | None:
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
    except sqlite3.OperationalError:
        return None
    return row[0] if row else None


def _quoted(word: str) -> str:
    """An FTS5 string: words never hold a double quote, doubled anyway for safety."""
    return '"' + word.replace('"', '""') + '"'
