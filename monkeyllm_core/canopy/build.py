"""``vine canopy build``: one vector per node, embedding only what changed.

The nodes are the catalog's (bananas and branches alike; ``index.embedded_text``
says what of each). A node keeps its vector when the canopy holds one for the same
text with the same model; a node gone from the catalog loses its vector; the rest
are embedded, in batches of ``batch`` texts, ``workers`` requests in flight.

Nothing a build does is visible until it is complete. It writes
``_derived/canopy.building.db`` (kept vectors copied in, new ones committed batch
by batch as they arrive) and, when every node has its vector, renames it over
``_derived/canopy.db`` in one step. A dead endpoint, a refused request or a kill
at any moment leaves the previous canopy exactly as it was; the staged file stays
behind, and the next build with the same model starts from what it already
holds, so a failure near the end of a long build does not cost the whole build.
When nothing changed, the index is not rewritten: only its ``built_at`` moves, in
one transaction. A second build on the same forest while one runs is
``E_LOCKED`` (an flock on ``_derived/canopy.lock``).
"""
from __future__ import annotations

import fcntl
import os
import sqlite3
import time
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from ..errors import VineError
from .embedder import Embedder
from .index import (CANOPY_PATH, DDL, FORMAT, LOCK_PATH, STAGING_PATH, embedded_text, numpy_module, read_meta,
                    read_rows, text_hash, vector_blob)

DEFAULT_BATCH = 64
DEFAULT_WORKERS = 4
MAX_BATCH = 2048


def build_canopy(root: Path, db: sqlite3.Connection, embedder: Embedder, *, batch: int = DEFAULT_BATCH,
                 workers: int = DEFAULT_WORKERS) -> dict[str, Any]:
    """Bring ``_derived/canopy.db`` up to the catalog ``db``; what it did, as a report."""
    if isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= MAX_BATCH:
        raise VineError("E_SCHEMA", f"canopy build: batch must be a whole number from 1 to {MAX_BATCH}, not {batch!r}",
                        "It is how many summaries go in one request; 64 suits most servers.")
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= 64:
        raise VineError("E_SCHEMA", f"canopy build: workers must be a whole number from 1 to 64, not {workers!r}",
                        "It is how many requests are in flight at once.")
    numpy_module()  # before any request: a build that cannot store a vector asks for none
    root = Path(root)
    started, cpu = time.perf_counter(), time.process_time()
    with _build_lock(root):
        texts = {node: embedded_text(title, summary) for node, title, summary in
                 db.execute("SELECT id, title, summary FROM nodes ORDER BY id")}
        wanted = {node: text_hash(text) for node, text in texts.items()}
        old_meta, old_rows = read_rows(root / CANOPY_PATH)
        same_model = old_meta.get("model") == embedder.model and old_meta.get("format") == FORMAT
        report = {"model": embedder.model, "embedded": 0, "kept": 0, "resumed": 0,
                  "dropped": len(old_rows) if not same_model else sum(1 for node in old_rows if node not in wanted),
                  "previous_model": old_meta.get("model") if old_rows and not same_model else None}
        if same_model and {node: hashed for node, (hashed, _blob) in old_rows.items()} == wanted:
            _touch(root / CANOPY_PATH)
            report.update(kept=len(old_rows), dimension=int(old_meta["dimension"]))
        else:
            report.update(_stage_and_swap(root, texts, wanted, old_rows if same_model else {},
                                          int(old_meta["dimension"]) if same_model else None,
                                          embedder, batch, workers))
        report["count"] = len(wanted)
    report["seconds"] = round(time.perf_counter() - started, 3)
    report["cpu_seconds"] = round(time.process_time() - cpu, 3)
    return report


def _stage_and_swap(root: Path, texts: dict[str, str], wanted: dict[str, str], old_rows: dict[str, tuple[str, bytes]],
                    dimension: int | None, embedder: Embedder, batch: int, workers: int) -> dict[str, Any]:
    staging_path = root / STAGING_PATH
    staged = _open_staging(staging_path, embedder.model)
    try:
        meta = read_meta(staged)
        if dimension is None and "dimension" in meta:
            dimension = int(meta["dimension"])
        have = dict(staged.execute("SELECT id, text_hash FROM vectors"))
        stale = [node for node, hashed in have.items() if wanted.get(node) != hashed]
        staged.execute("BEGIN")
        staged.executemany("DELETE FROM vectors WHERE id = ?", [(node,) for node in stale])
        kept = [(node, hashed, blob) for node, (hashed, blob) in old_rows.items()
                if wanted.get(node) == hashed and node not in have]
        staged.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", kept)
        staged.execute("COMMIT")
        done = {node for node, hashed in have.items() if wanted.get(node) == hashed}
        # what an interrupted build embedded, as opposed to what it had copied from the old index
        resumed = sum(1 for node in done if old_rows.get(node, ("",))[0] != wanted[node])
        kept_count = len(kept) + len(done) - resumed
        done |= {row[0] for row in kept}
        todo = [node for node in wanted if node not in done]
        dimension = _embed_into(staged, embedder, [(node, texts[node], wanted[node]) for node in todo],
                                dimension, batch, workers)
        count = staged.execute("SELECT count(*) FROM vectors").fetchone()[0]
        staged.execute("BEGIN")
        staged.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [
            ("format", FORMAT), ("model", embedder.model), ("dimension", str(dimension or 0)),
            ("count", str(count)), ("built_at", repr(time.time()))])
        staged.execute("COMMIT")
    finally:
        staged.close()
    _fsync(staging_path)
    os.replace(staging_path, root / CANOPY_PATH)  # the one step that makes the new index visible
    return {"embedded": len(todo), "kept": kept_count, "resumed": resumed, "dimension": dimension or 0}


def _embed_into(staged: sqlite3.Connection, embedder: Embedder, todo: list[tuple[str, str, str]],
                dimension: int | None, batch: int, workers: int) -> int | None:
    """Embed ``todo`` (id, text, hash) in batches, ``workers`` at once, committing each
    batch to the staged file as it arrives (here, on the caller's thread: one
    connection). The first failure stops the build; what was committed stays staged."""
    batches = [todo[at:at + batch] for at in range(0, len(todo), batch)]
    if not batches:
        return dimension
    pool = ThreadPoolExecutor(max_workers=min(workers, len(batches)), thread_name_prefix="canopy-embed")
    try:
        pending: set[Future[Any]] = set()
        stored = 0
        owner: dict[Future[Any], list[tuple[str, str, str]]] = {}
        queue = iter(batches)
        for part in queue:  # keep ``workers`` requests in flight, not every batch queued at once
            future = pool.submit(embedder.embed, [text for _node, text, _hash in part])
            owner[future] = part
            pending.add(future)
            if len(pending) >= workers:
                break
        while pending:
            finished, pending = wait(pending, return_when=FIRST_EXCEPTION)
            for future in finished:
                part = owner.pop(future)
                vectors = _result(future, stored)
                dimension = _store(staged, embedder.model, part, vectors, dimension)
                stored += len(part)
                nxt = next(queue, None)
                if nxt is not None:
                    again = pool.submit(embedder.embed, [text for _node, text, _hash in nxt])
                    owner[again] = nxt
                    pending.add(again)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return dimension


def _result(future: Future[Any], stored: int) -> list[Any]:
    try:
        return future.result()
    except VineError as exc:
        raise VineError(exc.code, f"canopy build stopped: {exc.message}",
                        f"{exc.hint} The previous canopy is unchanged; {stored} new vector(s) are staged for the "
                        "next `vine canopy build`.".strip()) from None


def _store(staged: sqlite3.Connection, model: str, part: list[tuple[str, str, str]], vectors: list[Any],
           dimension: int | None) -> int:
    if len(vectors) != len(part):
        raise VineError("E_UNSUPPORTED", f"the embedder sent {len(vectors)} vector(s) for {len(part)} text(s)",
                        "The previous canopy is unchanged.")
    if dimension is None:
        dimension = len(vectors[0])
    rows = []
    for (node, _text, hashed), vector in zip(part, vectors):
        try:
            rows.append((node, hashed, vector_blob(vector, dimension)))
        except ValueError as exc:
            raise VineError("E_CORRUPT", f"the embedder sent {exc} for {node}: the canopy of {model} records "
                            f"{dimension} dimensions", f"Has the model behind the endpoint changed? Delete "
                            f"{CANOPY_PATH} and {STAGING_PATH} to build from nothing; the previous canopy is "
                            "unchanged.") from None
    staged.execute("BEGIN")
    staged.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)
    staged.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                       [("format", FORMAT), ("model", model), ("dimension", str(dimension))])
    staged.execute("COMMIT")
    return dimension


def _open_staging(path: Path, model: str) -> sqlite3.Connection:
    """The staged file, kept from an interrupted build of the same model, else new."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staged = sqlite3.connect(path, isolation_level=None)
    try:
        meta = read_meta(staged)
        if meta and (meta.get("model") != model or meta.get("format") != FORMAT):
            staged.close()
            path.unlink()
            staged = sqlite3.connect(path, isolation_level=None)
        return _prepared(staged)
    except sqlite3.DatabaseError:
        staged.close()
        path.unlink(missing_ok=True)  # a torn staged file: derived work, start again
        return _prepared(sqlite3.connect(path, isolation_level=None))


def _prepared(staged: sqlite3.Connection) -> sqlite3.Connection:
    staged.execute("PRAGMA journal_mode=DELETE")  # one file: the rename moves all of it
    staged.execute("PRAGMA synchronous=OFF")  # derived; the file is synced once, before the rename
    staged.executescript(DDL)
    return staged


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _touch(path: Path) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("UPDATE meta SET value = ? WHERE key = 'built_at'", (repr(time.time()),))
    finally:
        db.close()


@contextmanager
def _build_lock(root: Path) -> Iterator[None]:
    path = root / LOCK_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise VineError("E_LOCKED", "another `vine canopy build` is running on this forest",
                            "Wait for it to finish; its index appears when it is complete.") from None
        yield
    finally:
        os.close(fd)
