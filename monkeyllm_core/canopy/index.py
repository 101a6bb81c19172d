"""The canopy on disk, ``_derived/canopy.db``, and what a reader loads of it.

One SQLite file: ``meta`` (format, model, dimension, count, built_at) and
``vectors`` (node id, the hash of the text embedded, the vector as little-endian
float32). A build writes another file, ``_derived/canopy.building.db``, and
renames it over this one when it is complete (``build.py``), so whatever a reader
opens here is a whole index; the rollback journal (not WAL) keeps it one file, so
the rename moves all of it. A file that is not whole anyway (a meta row missing
or unreadable, a count that disagrees, a vector of another length) is no canopy to
every reader (``read_rows``): locate, ``vine canopy status`` and the next build.

What is embedded is ``embedded_text``: the title, a blank line, the summary. The
summary alone is what concepts.md names, but a summary is written to be read under
its title and often leaves out the noun the title carries ("Exchange policy":
"Return and exchange windows per channel..."), and locate's lexical half weighs
the title heaviest; a vector of both sees what the reader sees. So a new title,
like a new summary, makes the node's vector stale.
"""
from __future__ import annotations

import hashlib
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import VineError

if TYPE_CHECKING:
    import numpy

CANOPY_PATH = "_derived/canopy.db"
STAGING_PATH = "_derived/canopy.building.db"
LOCK_PATH = "_derived/canopy.lock"
FORMAT = "1"

DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vectors (id TEXT PRIMARY KEY, text_hash TEXT NOT NULL, vector BLOB NOT NULL);
"""


def numpy_module() -> Any:
    """numpy, or the one line saying how to get it (the ``canopy`` extra)."""
    try:
        import numpy
    except ImportError:
        raise VineError("E_UNSUPPORTED", "the canopy needs numpy, which is not installed",
                        "pip install 'monkeyllm[canopy]'") from None
    return numpy


def embedded_text(title: str | None, summary: str | None) -> str:
    return f"{title or ''}\n\n{summary or ''}".strip()


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def file_identity(path: Path) -> tuple[int, int, int] | None:
    """What changes when a build renames a new index into place (or rewrites its meta)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


@dataclass(frozen=True, kw_only=True)
class Canopy:
    """A loaded index: unit-length rows (cosine is a dot product), by node id."""

    model: str
    dimension: int
    built_at: float
    ids: list[str]
    hashes: dict[str, str]
    matrix: "numpy.ndarray"  # len(ids) x dimension, float32, rows of length 1 (or 0)
    identity: tuple[int, int, int] | None = None
    row_of: dict[str, int] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return len(self.ids)


def read_meta(db: sqlite3.Connection) -> dict[str, str]:
    try:
        return dict(db.execute("SELECT key, value FROM meta"))
    except sqlite3.DatabaseError:
        return {}


def read_rows(path: Path) -> tuple[dict[str, str], dict[str, tuple[str, bytes]]]:
    """An index file's meta and rows, without numpy ({} when there is none, or it is not whole)."""
    if not path.exists():
        return {}, {}
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            meta = read_meta(db)
            rows = {node: (hashed, blob) for node, hashed, blob in db.execute("SELECT id, text_hash, vector FROM vectors")}
        finally:
            db.close()
    except sqlite3.DatabaseError:
        return {}, {}
    return (meta, rows) if _whole(meta, rows) else ({}, {})


def _whole(meta: dict[str, str], rows: dict[str, tuple[str, bytes]]) -> bool:
    """Whether an index is one a build finished: every reader of the file (locate,
    status, the next build) trusts these fields, so a file edited or torn by hand
    is no canopy to all of them alike, never a traceback or a vector of the wrong length."""
    try:
        dimension, _built_at = int(meta["dimension"]), float(meta["built_at"])
    except (KeyError, ValueError):
        return False
    return (meta.get("format") == FORMAT and bool(meta.get("model")) and meta.get("count") == str(len(rows))
            and dimension >= (1 if rows else 0)
            and all(isinstance(blob, bytes) and len(blob) == dimension * 4 for _hash, blob in rows.values()))


def load(root: Path) -> Canopy | None:
    """The whole canopy, or None when there is none (never built, or not whole)."""
    path = Path(root) / CANOPY_PATH
    identity = file_identity(path)
    meta, rows = read_rows(path) if identity is not None else ({}, {})
    if not meta:
        return None
    dimension, built_at, model = int(meta["dimension"]), float(meta["built_at"]), meta["model"]
    numpy = numpy_module()
    ids = sorted(rows)
    matrix = numpy.frombuffer(b"".join(rows[node][1] for node in ids), dtype="<f4").reshape(len(ids), dimension)
    norms = numpy.linalg.norm(matrix, axis=1, keepdims=True)
    matrix = (matrix / numpy.where(norms == 0, 1.0, norms)).astype(numpy.float32)
    return Canopy(model=model, dimension=dimension, built_at=built_at, ids=ids,
                  hashes={node: rows[node][0] for node in ids}, matrix=matrix, identity=identity,
                  row_of={node: n for n, node in enumerate(ids)})


def vector_blob(vector: Any, dimension: int) -> bytes:
    numpy = numpy_module()
    array = numpy.asarray(vector, dtype="<f4")
    if array.shape != (dimension,) or not numpy.isfinite(array).all():
        raise ValueError(f"a vector of {array.shape[0] if array.ndim == 1 else array.shape} values, "
                         f"not {dimension}")
    return array.tobytes()
