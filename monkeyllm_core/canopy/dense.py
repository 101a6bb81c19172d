"""The canopy as the read calls use it: locate's dense half, the Gauntlet's order, the stale count.

One ``DenseLayer`` per Vine holds what is worth keeping between calls: the loaded
canopy (loaded again only when the file changes: a build renamed a new one into
place), the catalog's view of it (which vectors belong to nodes that exist, their
kind and type, the stale count; computed again only when the catalog changed,
``catalog_state``), and the vectors of recent queries (a repeated query is not
embedded again). The read path embeds queries only, never nodes. A query
embedder that did not answer is let rest for ``EMBEDDER_REST_SECONDS`` (locate
answers from BM25 meanwhile, and says why) rather than waited on by every call.

The stale count is the build's debt, read by comparing the catalog with the
canopy rather than marked by the write path: a node with no vector (planted since
the build), a node whose title or summary changed (its vector is of the old text),
and a vector whose node is gone. A changed node keeps its old vector until the
next build (still about the node, and counted stale); a gone node's vector never
surfaces, since every candidate is a catalog row.

``DenseSearch`` is locate's handle for one call. When the dense layer can be used
it returns the vector ranks and ``{"used": true, "model", "stale"}`` for the
response, and makes the query the session's goal (the Gauntlet's one embedding per
hunt). When the canopy was built with another model, the embedder is misconfigured
or failed, or the canopy file is there but not whole, it returns no ranks and
``{"used": false, "reason"}``: locate answers from BM25 and says so. When there is
no canopy file at all it returns nothing, and the response is the one it was
before canopies existed.

``Frontier`` is the Gauntlet (concepts.md): a session goal and the canopy's
vectors, ordering a candidate list before its cap is applied. Closeness is
``(1 + cosine) / 2``, weighed by heat like every ranking here (closeness x (1 +
alpha x heat)), so with heat off or cold it is the cosine order. Candidates
without a vector (planted since the build) follow the ranked ones, in the order
they had.
"""
from __future__ import annotations

import json
import os
import sqlite3
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence, TypeVar

from ..errors import VineError
from .embedder import Embedder
from .index import CANOPY_PATH, Canopy, embedded_text, file_identity, load, text_hash

if TYPE_CHECKING:
    import numpy

T = TypeVar("T")
QUERY_CACHE = 128  # query vectors kept per Vine
# After a query embedder did not answer (dead, hanging, 429/5xx after its retries),
# locate does not wait on it again for this long: in ``vine serve`` every read of a
# forest waits on its one thread, so a hanging embedder would otherwise cost each
# locate its whole timeout, and every other client's call queued behind it.
EMBEDDER_REST_SECONDS = 30.0
BM25_ALONE = "ranked by BM25 alone"


@dataclass(frozen=True)
class Goal:
    """What a hunt is after: its latest locate or harvest query, embedded once."""

    query: str
    model: str
    vector: "numpy.ndarray"  # unit length


@dataclass(frozen=True, kw_only=True)
class CatalogView:
    """The canopy's rows seen through the catalog at one state."""

    present: "numpy.ndarray"  # bool per canopy row: its node exists
    kinds: "numpy.ndarray"    # the node's kind per row ("" when gone)
    types: "numpy.ndarray"
    stale: dict[str, int]


def keep_goal(session: Any, goal: Goal | None) -> None:
    """Make ``goal`` the session's (None: it has none now); a joined session also
    writes it beside its trace (``Session.goal_path``), for the next process."""
    before, session.goal = session.goal, goal
    unchanged = (before is None) == (goal is None) and (goal is None or (goal.query, goal.model) ==
                                                         (before.query, before.model))
    if unchanged or not session.joined:
        return
    try:
        if goal is None:
            session.goal_path.unlink(missing_ok=True)
            return
        session.goal_path.parent.mkdir(parents=True, exist_ok=True)
        spare = session.goal_path.with_name(session.goal_path.name + ".tmp")
        spare.write_text(json.dumps({"query": goal.query, "model": goal.model,
                                     "vector": [float(x) for x in goal.vector]}), encoding="utf-8")
        os.replace(spare, session.goal_path)
    except OSError:
        pass  # a read-only _derived/: the goal lives in this process only


def load_goal(path: Path) -> Goal | None:
    """The goal a joined session's earlier process kept; None when unreadable or numpy is missing."""
    try:
        import numpy

        record = json.loads(path.read_text(encoding="utf-8"))
        vector = numpy.asarray(record["vector"], dtype=numpy.float32)
        if vector.ndim != 1 or not isinstance(record["query"], str) or not isinstance(record["model"], str):
            return None
        return Goal(query=record["query"], model=record["model"], vector=vector)
    except (ImportError, OSError, ValueError, KeyError, TypeError):
        return None


def catalog_state(db: sqlite3.Connection) -> tuple[Any, ...]:
    """Changes whenever a node row is written or deleted (the catalog's change log),
    or the catalog is rebuilt from nothing (its instance)."""
    return tuple(db.execute("SELECT (SELECT value FROM meta WHERE key = 'instance'), "
                            "(SELECT max(seq) FROM node_changes)").fetchone())


def stale_of(db: sqlite3.Connection, hashes: dict[str, str]) -> dict[str, int]:
    """What a build would do: nodes with no vector, nodes whose text changed, vectors of gone nodes."""
    missing = changed = seen = 0
    for node, title, summary in db.execute("SELECT id, title, summary FROM nodes"):
        held = hashes.get(node)
        if held is None:
            missing += 1
            continue
        seen += 1
        if held != text_hash(embedded_text(title, summary)):
            changed += 1
    deleted = len(hashes) - seen
    return {"total": missing + changed + deleted, "missing": missing, "changed": changed, "deleted": deleted}


def cosines(matrix: "numpy.ndarray", vector: "numpy.ndarray") -> "numpy.ndarray":
    """Each unit row's cosine with a unit vector. einsum, not ``@``: a matrix-vector
    product goes to the BLAS, whose worker threads spin on the other core after
    every call (measured: 2.5x the CPU of one locate on 10,000 vectors, on 2 cores);
    einsum's own loop is single-threaded and as fast at this size."""
    import numpy
    return numpy.einsum("ij,j->i", matrix, vector)


class DenseLayer:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._canopy: Canopy | None = None
        self._identity: tuple[int, int, int] | None = None
        self._view: tuple[tuple[Any, ...], CatalogView] | None = None
        self._queries: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._resting: tuple[Embedder, float, str] | None = None  # (embedder, until, why): see EMBEDDER_REST_SECONDS

    def canopy(self) -> Canopy | None:
        identity = file_identity(self.root / CANOPY_PATH)
        if identity != self._identity:
            self._canopy, self._identity, self._view = (load(self.root) if identity else None), identity, None
        return self._canopy

    @property
    def unreadable(self) -> bool:
        """The canopy file is there but is not a whole index (torn, or edited by hand)."""
        return self._identity is not None and self._canopy is None

    def view(self, db: sqlite3.Connection, canopy: Canopy) -> CatalogView:
        key = (*catalog_state(db), canopy.identity)
        if self._view is not None and self._view[0] == key:
            return self._view[1]
        import numpy
        rows = {node: (kind, type_) for node, kind, type_ in db.execute("SELECT id, kind, type FROM nodes")}
        present = numpy.array([node in rows for node in canopy.ids], dtype=bool)
        kinds = numpy.array([rows.get(node, ("", ""))[0] for node in canopy.ids], dtype=object)
        types = numpy.array([rows.get(node, ("", ""))[1] for node in canopy.ids], dtype=object)
        view = CatalogView(present=present, kinds=kinds, types=types, stale=stale_of(db, canopy.hashes))
        self._view = (key, view)
        return view

    def query_vector(self, embedder: Embedder, query: str) -> "numpy.ndarray":
        key = (embedder.model, query)
        cached = self._queries.get(key)
        if cached is not None:
            self._queries.move_to_end(key)
            return cached
        import numpy
        self._check_rested(embedder)
        try:
            vectors = embedder.embed([query])
        except VineError as exc:
            if exc.code == "E_TIMEOUT":
                self._resting = (embedder, time.monotonic() + EMBEDDER_REST_SECONDS, exc.message)
            raise
        vector = numpy.asarray(vectors[0], dtype=numpy.float32) if vectors else numpy.zeros(0, numpy.float32)
        norm = float(numpy.linalg.norm(vector))
        vector = vector / norm if norm else vector
        self._queries[key] = vector
        while len(self._queries) > QUERY_CACHE:
            self._queries.popitem(last=False)
        return vector

    def _check_rested(self, embedder: Embedder) -> None:
        if self._resting is None or self._resting[0] is not embedder:
            return
        _embedder, until, why = self._resting
        left = until - time.monotonic()
        if left <= 0:
            self._resting = None
            return
        raise VineError("E_TIMEOUT", f"the query embedder did not answer lately ({why}); not asked again for "
                                     f"{left:.0f} s", "")

    def frontier(self, goal: Goal | None, alpha: float) -> Frontier | None:
        """The Gauntlet for this call, when the session has a goal the canopy can rank toward."""
        if goal is None:
            return None
        canopy = self.canopy()
        if canopy is None or canopy.model != goal.model or canopy.dimension != goal.vector.shape[0]:
            return None
        return Frontier(canopy, goal, alpha)


class DenseSearch:
    """locate's dense half for one call (see the module doc for what it answers)."""

    def __init__(self, layer: DenseLayer, db: sqlite3.Connection, embedder: Embedder | None,
                 problem: str | None, set_goal: Callable[[Goal | None], None]) -> None:
        self._layer, self._db, self._embedder, self._problem, self._set_goal = layer, db, embedder, problem, set_goal

    def ranks(self, query: str, kind: str | None, types: Sequence[str],
              limit: int) -> tuple[list[str] | None, dict[str, Any] | None]:
        try:
            canopy = self._layer.canopy()
        except VineError as exc:  # numpy missing: the canopy is there but cannot be read here
            self._set_goal(None)
            return None, {"used": False, "reason": f"{exc.message} ({exc.hint}); {BM25_ALONE}"}
        if canopy is None:
            self._set_goal(None)
            if self._layer.unreadable:  # a canopy that was built: ranking without it is said, not silent
                return None, {"used": False, "reason": f"{CANOPY_PATH} is not a whole index (torn or edited by "
                                                       f"hand): run `vine canopy build`; {BM25_ALONE}"}
            return None, None
        answer = self._usable(canopy, query)
        if isinstance(answer, dict):
            self._set_goal(None)
            return None, answer
        import numpy
        view = self._layer.view(self._db, canopy)
        mask = view.present.copy()
        if kind:
            mask &= view.kinds == kind
        if types:
            mask &= numpy.isin(view.types, list(types))
        scores = cosines(canopy.matrix, answer)
        chosen = numpy.flatnonzero(mask)
        if len(chosen) > limit:
            chosen = chosen[numpy.argpartition(-scores[chosen], limit - 1)[:limit]]
        ranked = sorted(chosen.tolist(), key=lambda row: (-float(scores[row]), canopy.ids[row]))
        self._set_goal(Goal(query=query, model=canopy.model, vector=answer))
        return [canopy.ids[row] for row in ranked], {"used": True, "model": canopy.model,
                                                     "stale": view.stale["total"]}

    def _usable(self, canopy: Canopy, query: str) -> Any:
        """The query's vector, or the ``dense`` field saying why there is none."""
        if self._problem is not None or self._embedder is None:
            return {"used": False, "reason": f"{self._problem}; {BM25_ALONE}"}
        model = self._embedder.model
        if model != canopy.model:
            return {"used": False, "reason": f"the canopy was built with {canopy.model!r}, the query embedder is "
                                             f"{model!r}: vectors of two models do not compare; {BM25_ALONE}. "
                                             f"Rebuild the canopy with {model!r}, or embed queries with "
                                             f"{canopy.model!r}."}
        try:
            vector = self._layer.query_vector(self._embedder, query)
        except VineError as exc:
            return {"used": False, "reason": f"{exc.message}; {BM25_ALONE}"}
        except Exception as exc:  # an embedder of a Python caller: a read that can be answered is answered
            return {"used": False, "reason": f"the query embedder failed ({type(exc).__name__}: {exc}); {BM25_ALONE}"}
        if vector.shape != (canopy.dimension,):
            return {"used": False, "reason": f"the query embedder sent {vector.shape[0]} dimensions, the canopy "
                                             f"holds {canopy.dimension}; {BM25_ALONE}"}
        return vector


class Frontier:
    """The Gauntlet: candidates ordered by closeness to the session's goal."""

    def __init__(self, canopy: Canopy, goal: Goal, alpha: float) -> None:
        self._canopy, self._goal, self._alpha = canopy, goal, alpha
        self.report = {"ranked": True, "toward": goal.query}

    def order(self, items: Iterable[T], key: Callable[[T], str], heat: dict[str, float]) -> list[T]:
        """``items`` (already in their heat order) with the ones that have a vector
        first, closest to the goal first; the rest after, in the order they came."""
        items = list(items)
        rows = [self._canopy.row_of.get(key(item)) for item in items]
        placed = [n for n, row in enumerate(rows) if row is not None]
        if not placed:
            return items
        closeness = (1.0 + cosines(self._canopy.matrix[[rows[n] for n in placed]], self._goal.vector)) / 2.0
        score = {n: float(value) * (1.0 + self._alpha * heat.get(key(items[n]), 0.0))
                 for n, value in zip(placed, closeness.tolist())}
        ranked = sorted(placed, key=lambda n: -score[n])  # stable: ties keep the heat order
        return [items[n] for n in ranked] + [item for n, item in enumerate(items) if rows[n] is None]
