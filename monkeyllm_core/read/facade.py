"""The read calls as ``Vine`` methods: ``vine.locate(...)``, ``vine.look(...)``, ...

``Vine`` inherits this mixin, so the read engine stays in its own room and
``vine.py`` names it once. Each method is a thin wrapper: make sure the catalog
matches the forest (``freshness``), build the ``ReadContext``, run the primitive,
and trace the call in the session (``sessions``), errors included, before the
error is raised again. Reads never take the writer lock and never commit; what
they keep (heat, traces) is in ``_derived/``, so a read-only Vine keeps it too.

``alpha`` weighs heat in every ranking (score = strength x (1 + alpha x heat),
concepts.md); set ``vine.alpha = 0`` to turn pheromone off.

The state here is created on first use, not in ``Vine.__init__``: a writer that
never reads (the Gardener's adopt) opens no heat store and writes no trace.

The canopy (``monkeyllm_core.canopy``) joins the reads when a query embedder is
configured: ``vine.embedder`` (any ``Embedder``), else the ``MONKEYLLM_EMBED_*``
environment, read at each call. ``canopy_build`` and ``canopy_status`` are
``vine canopy build|status``.
"""
from __future__ import annotations

import os
import sqlite3
import time
import weakref
from collections import OrderedDict
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from ..errors import VineError
from ..forest.catalog import Catalog
from ..forest.dialect import load_dialect
from ..forest.passport import split_node
from ..forest.rules import node_path, trail_of
from .catalog_reads import not_found
from .context import DEFAULT_ALPHA, ReadContext
from .contract import tokens_of
from .freshness import CatalogFreshness, record as record_freshness

if TYPE_CHECKING:
    from ..vine import Vine
    from .body_index import BodyIndex
    from .sessions import Session

# The primitives, the heat store and the sessions are imported by the calls that
# use them: every ``Vine`` is a ``ReadFacade``, and a writer that never reads
# (a no-change sync) must not pay for the read engine's modules.

MAX_CLIENTS = 1000  # client sessions one served Vine remembers


class ReadFacade:
    alpha: float = DEFAULT_ALPHA
    embedder: Any = None  # an Embedder for locate's queries; None: MONKEYLLM_EMBED_*, if set

    # -- the read calls of issue 12 (primitives.md; query is in vine.py) ----------------------------------
    def locate(self, query: str, k: int = 5, scope: str = "all",
               type_filter: str | Iterable[str] | None = None) -> dict[str, Any]:
        """Ranked entry points for a question, from curated metadata (800 tokens)."""
        from .locate import locate as locate_call
        return self._read_call("locate", {"query": query, "k": k, "scope": scope, "type_filter": type_filter},
                               None, lambda ctx: locate_call(ctx, query, k=k, scope=scope, type_filter=type_filter))

    def look(self, id: str, fields: Iterable[str] | None = None) -> dict[str, Any]:  # noqa: A002 (primitives.md)
        """The digest of one node: what it is, what it links to, what a pick costs (500 tokens)."""
        from .look import look as look_call
        return self._read_call("look", {"id": id, "fields": fields}, id, lambda ctx: look_call(ctx, id, fields))

    def move(self, id: str, rel: str | None = None, direction: str = "out") -> dict[str, Any]:  # noqa: A002
        """Neighbours along typed edges, or a branch's children with rel='children' (600 tokens)."""
        from .move import move as move_call
        return self._read_call("move", {"id": id, "rel": rel, "direction": direction}, id,
                               lambda ctx: move_call(ctx, id, rel=rel, direction=direction))

    def scan(self, parent_id: str, filter: dict[str, Any] | None = None,  # noqa: A002
             fields: Iterable[str] | None = None, recursive: bool = False, limit: int = 50) -> dict[str, Any]:
        """A branch's children filtered by passport fields, from the catalog alone (800 tokens)."""
        from .scan import scan as scan_call
        args = {"parent_id": parent_id, "filter": filter, "fields": fields, "recursive": recursive, "limit": limit}
        return self._read_call("scan", args, parent_id, lambda ctx: scan_call(
            ctx, parent_id, filter=filter, fields=fields, recursive=recursive, limit=limit))

    def pick(self, id: str, section: str | None = None) -> dict[str, Any]:  # noqa: A002
        """The whole body, or one section; over 4000 tokens the outline and a hint instead."""
        from .pick import pick as pick_call
        return self._read_call("pick", {"id": id, "section": section}, id,
                               lambda ctx: pick_call(ctx, id, section=section))

    def sniff(self, terms: Sequence[str] | str, scope: str | None = None, k: int = 5,
              type_filter: str | Iterable[str] | None = None) -> dict[str, Any]:
        """Literal, case- and accent-insensitive search of bodies, with the matching lines (800 tokens)."""
        args = {"terms": terms, "scope": scope, "k": k, "type_filter": type_filter}
        return self._read_call("sniff", args, scope, lambda ctx: self._sniff(ctx, terms, scope=scope, k=k,
                                                                            type_filter=type_filter))

    def harvest(self, query: str, terms: Sequence[str] | None = None, k: int = 3) -> dict[str, Any]:
        """locate and sniff fused (RRF), each node with its evidence attached (4000 tokens).
        What it returns warms its trail in this session, as a pick does."""
        from .harvest import harvest as harvest_call
        from .locate import locate as locate_call

        def run(ctx: ReadContext) -> dict[str, Any]:
            # the inner calls are parts of this one call: not traced on their own, and
            # the body index brought up to date once for all of them
            with self._body_index().one_call():
                response = harvest_call(
                    query, terms, k,
                    locate=lambda q, k=5, scope="all", type_filter=None: locate_call(
                        ctx, q, k=k, scope=scope, type_filter=type_filter),
                    sniff=lambda t, scope=None, k=5, type_filter=None: self._sniff(
                        ctx, t, scope=scope, k=k, type_filter=type_filter),
                    body_of=ctx.read_body, catalog=self.catalog)
            for result in response.get("results", []):
                ctx.deposit_session([*trail_of(result["id"]), result["id"]])
            return response
        return self._read_call("harvest", {"query": query, "terms": terms, "k": k}, None, run)

    def _sniff(self, ctx: ReadContext, terms: Sequence[str] | str, *, scope: str | None, k: int,
               type_filter: str | Iterable[str] | None) -> dict[str, Any]:
        from .sniff import sniff as sniff_call
        return sniff_call(self._body_index(), terms, scope=scope, k=k, type_filter=type_filter,
                          heat_of=ctx.heat_of, alpha=ctx.alpha, types=self.dialect.types)

    def _body_index(self: "Vine") -> BodyIndex:
        """One derived body index per Vine, over the catalog the reads use now (a
        read-only Vine may have reopened it after a rebuild)."""
        state = _state(self)
        index = state.get("bodies")
        if index is None:
            from .body_index import BodyIndex
            index = state["bodies"] = BodyIndex(self.root, self.catalog)
            weakref.finalize(self, index.close)
        elif index.catalog is not self.catalog:
            index.catalog = self.catalog  # reopened by a refresh, whose change log tells the index what moved
        return index

    # -- the canopy (issue 15) ------------------------------------------------------------------
    def canopy_build(self, embedder: Any = None, *, batch: int = 64, workers: int = 4) -> dict[str, Any]:
        """Embed the summaries that changed since the last build into ``_derived/canopy.db``
        (``canopy/build.py``): ``embedder``, else ``vine.embedder``, else MONKEYLLM_EMBED_*."""
        from ..canopy.build import build_canopy
        from ..canopy.embedder import ENV_ENDPOINT, ENV_MODEL, OpenAIEmbedder
        self._catalog_for_reads()
        owned = None
        if embedder is None and self.embedder is None:
            owned = OpenAIEmbedder.from_env(os.environ)
            if owned is None:
                raise VineError("E_SCHEMA", f"canopy build needs an embedder: {ENV_ENDPOINT} is not set",
                                f"Set {ENV_ENDPOINT} (an OpenAI-compatible base URL) and {ENV_MODEL}.")
        try:
            return build_canopy(self.root, self.catalog.db, embedder or self.embedder or owned,
                                batch=batch, workers=workers)
        finally:
            if owned is not None:
                owned.close()

    def canopy_status(self) -> dict[str, Any]:
        """The canopy's model, dimension, count, build time and stale count (no endpoint asked)."""
        from ..canopy.status import canopy_status
        self._catalog_for_reads()
        return canopy_status(self.root, self.catalog.db, self._embedder_model())

    def _embedder_model(self) -> str | None:
        """The model queries would be embedded with, from the settings alone: no
        client is built (status asks no endpoint and needs no ``openai``)."""
        if self.embedder is not None:
            return self.embedder.model
        from ..canopy.embedder import ENV_ENDPOINT, EmbedSettings
        if not os.environ.get(ENV_ENDPOINT):
            return None
        try:
            settings = EmbedSettings.from_env(os.environ)
        except VineError:
            return None
        return settings.model if settings is not None else None

    def _query_embedder(self) -> tuple[Any, str | None]:
        """(the embedder for queries, or None; why a configured one cannot work, or None)."""
        if self.embedder is not None:
            return self.embedder, None
        from ..canopy.embedder import ENV_ENDPOINT, EmbedSettings, OpenAIEmbedder
        if not os.environ.get(ENV_ENDPOINT):
            return None, None
        try:
            settings = EmbedSettings.from_env(os.environ)
            state = _state(self)
            cached = state.get("query_embedder")
            if cached is None or cached.settings != settings.for_queries():
                if cached is not None:
                    cached.close()
                cached = state["query_embedder"] = OpenAIEmbedder(settings.for_queries())
            return cached, None
        except VineError as exc:
            return None, exc.message

    def _canopy_handles(self, session: Session, alpha: float) -> dict[str, Any]:
        """The ReadContext's ``dense`` and ``frontier`` (both None: the canopy takes no part)."""
        embedder, problem = self._query_embedder()
        if not session.goal_read:  # a joined session: the goal another process set, if any
            session.goal_read = True
            if session.goal_path.is_file():
                from ..canopy.dense import load_goal
                session.goal = load_goal(session.goal_path)
        if embedder is None and problem is None and session.goal is None:
            return {}
        from ..canopy.dense import DenseLayer, DenseSearch, keep_goal
        state = _state(self)
        layer = state.get("dense")
        if layer is None:
            layer = state["dense"] = DenseLayer(self.root)
        handles: dict[str, Any] = {"frontier": layer.frontier(session.goal, alpha)}
        if embedder is not None or problem is not None:
            handles["dense"] = DenseSearch(layer, self.catalog.db, embedder, problem,
                                           lambda goal: keep_goal(session, goal))
        return handles

    def close_session(self, success: bool, answer_nodes: Sequence[str]) -> dict[str, Any]:
        """End the hunt: heat on the winning trail when it succeeded, its metrics and
        shortcut suggestions (concepts.md, Pheromone); the next read starts a new session."""
        return self.close_session_with(success, answer_nodes, calls=None)

    def close_session_with(self, success: bool, answer_nodes: Sequence[str], *,
                           calls: Sequence[dict[str, Any]] | None) -> dict[str, Any]:
        """``close_session`` reading the hunt from ``calls`` (trace-shaped records:
        call, focus, returned, tokens) instead of the trace, when the trace is not all
        of it: a Troop forager's reads that the visited cache served (``Session.close``)."""
        if isinstance(answer_nodes, str) or not all(isinstance(a, str) for a in answer_nodes):
            raise VineError("E_SCHEMA", "close_session: answer_nodes must be a list of node ids",
                            "e.g. close_session(True, ['sales/exchange-policy']).")
        session = self.read_session()
        outcome = session.close(success, list(answer_nodes), self._linked, calls=calls)
        state = _state(self)
        client = state.get("client")
        from .sessions import Session
        fresh = Session(self.root, state["heat"])
        if client is None:
            state["session"] = fresh
        else:
            state["clients"][client] = fresh
        return outcome

    @contextmanager
    def client_session(self, client: str, *, heat_scope: str | None = None) -> Iterator[Session]:
        """Route the read calls made inside to one client's own session (``vine
        serve`` has one per MCP connection or REST caller), so two agents' traces
        and session heat never mix; ``close_session`` inside starts that client a
        fresh one. Calls on one Vine are not concurrent (a server runs them on the
        forest's one thread), so the client is state of the Vine, not of a thread.
        The least recently used sessions are forgotten past ``MAX_CLIENTS``: their
        traces stay on disk, and that client's next call starts a new session.

        ``heat_scope`` makes a client's new session share that scope's session heat
        while keeping its own trace (a Troop's foragers); a client that already has
        a session keeps it as it is, and the fresh one after a close has its own."""
        self.read_session()  # the heat store, shared by every session
        state = _state(self)
        clients: OrderedDict[str, Session] = state.setdefault("clients", OrderedDict())
        if client not in clients:
            from .sessions import Session
            clients[client] = Session(self.root, state["heat"], heat_scope=heat_scope)
            while len(clients) > MAX_CLIENTS:
                clients.popitem(last=False)
        clients.move_to_end(client)
        outer = state.get("client")
        state["client"] = client
        try:
            yield clients[client]
        finally:
            state["client"] = outer

    def heat_fortified(self, node_id: str, fortified: Sequence[dict[str, Any]]) -> None:
        """A link grafted again is fortification: heat rises on both ends (concepts.md,
        reinforce before create), persistent like a successful hunt's, with no commit."""
        targets = [link["target"] for link in fortified if isinstance(link.get("target"), str)]
        if targets:
            from .sessions import DEPOSIT
            self.read_session().heat.deposit([node_id, *targets], DEPOSIT)

    def _close_reads(self) -> None:
        """Close what the reads opened (heat store, body index) with the Vine, not at
        garbage collection: a late close would checkpoint trails.db behind a caller
        that already moved on (a test's copy, a Ranger cycle's next read)."""
        state = _state(self)
        for name in ("bodies", "heat", "query_embedder"):
            store = state.get(name)
            if store is not None:
                store.close()

    # -- what the read calls share ------------------------------------------------------
    def read_session(self) -> Session:
        """This Vine's live session (or, inside ``client_session``, that client's):
        ``heat_of``, ``deposit_session``, ``trace``."""
        state = _state(self)
        if "session" not in state:
            from .heat import HeatStore
            from .ranger_settings import HeatSettings
            from .sessions import Session, session_id_from_env
            heat = HeatStore(self.root, HeatSettings.load(self.root))
            weakref.finalize(self, heat.close)
            state["heat"] = heat
            state["session"] = Session(self.root, heat, session_id_from_env())
        client = state.get("client")
        return state["session"] if client is None else state["clients"][client]

    def read_context(self) -> ReadContext:
        """The catalog (made current first), dialect, files and heat the primitives read."""
        if self._closed:
            raise VineError("E_READONLY", "this Vine is closed", "Open the forest again to read it.")
        self._catalog_for_reads()
        session = self.read_session()
        alpha = self.alpha
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or alpha < 0:
            raise VineError("E_SCHEMA", f"alpha must be a number of at least 0, not {alpha!r}",
                            "0 turns pheromone off; 0.3 is the default.")
        return ReadContext(db=self.catalog.db, dialect=self.dialect, read_node=self.read, read_body=self._read_body,
                           heat_of=session.heat_of, warm=session.warm,
                           deposit_session=session.deposit_session, alpha=float(alpha),
                           **self._canopy_handles(session, float(alpha)))

    def _read_call(self, call: str, args: dict[str, Any], focus: Any,
                   run: Callable[[ReadContext | None], dict[str, Any]], *, catalog: bool = True) -> dict[str, Any]:
        """Run one read call and trace it. ``catalog=False`` is for a call that reads
        no catalog and no heat (query: a payload and its passport), so it opens
        neither, and works on read-only media as it did before it was traced."""
        started = time.perf_counter()
        ctx = self.read_context() if catalog else None
        try:
            response = run(ctx)
        except VineError as exc:
            self.read_session().trace(call, args, focus=focus if isinstance(focus, str) else None, returned=[],
                                      tokens=tokens_of(exc.envelope()), ms=(time.perf_counter() - started) * 1000,
                                      error=exc.code)
            raise
        self.read_session().trace(call, args, focus=focus if isinstance(focus, str) else None,
                                  returned=returned_ids(response), tokens=tokens_of(response),
                                  ms=(time.perf_counter() - started) * 1000)
        return response

    def _catalog_for_reads(self: "Vine") -> None:
        """Re-index what changed under a read-only Vine since its last call
        (``freshness``); a writable Vine keeps its catalog true by itself."""
        if self.writable:
            return
        state = _state(self)
        freshness = state.get("freshness")
        if freshness is None:
            freshness = state["freshness"] = CatalogFreshness(self.root)
        plan = freshness.plan(self.catalog.db)
        if plan is None:
            return
        self.catalog.close()
        try:
            self.catalog = Catalog(self.root)  # a writable connection, for the refresh only
            try:
                if plan.full:
                    self.dialect = load_dialect(self.root)
                    self.reindex()
                else:
                    self.reindex_nodes(plan.node_ids)
                self.catalog.begin()
                record_freshness(self.catalog.db, plan)
                self.catalog.commit()
            finally:
                self.catalog.close()
        except sqlite3.OperationalError:
            freshness.forget()  # another reader is refreshing it this moment: read what is there (WAL keeps it whole)
        self.catalog = Catalog(self.root, readonly=True)

    def _read_body(self: "Vine", node_id: str) -> str:
        text = self._files.read(node_path(node_id))  # checked ids only: callers found the row first
        if text is None:
            raise not_found(node_id)
        return split_node(text, where=node_path(node_id))[1]

    def _linked(self: "Vine", a: str, b: str) -> bool:
        return self.catalog.db.execute(
            "SELECT 1 FROM edges WHERE inferred = 0 AND ((source = ? AND target = ?) OR (source = ? AND target = ?)) "
            "LIMIT 1", (a, b, b, a)).fetchone() is not None


def _state(vine: Any) -> dict[str, Any]:
    """The read engine's per-Vine state, kept on the instance under one name."""
    state = vine.__dict__.get("_read_state")
    if state is None:
        state = vine.__dict__["_read_state"] = {}
    return state


def returned_ids(response: dict[str, Any]) -> list[str]:
    """The node ids a response surfaced, for the trace (what a hunt could hop to next)."""
    ids: list[str] = []
    for key, field in (("results", "id"), ("neighbors", "id"), ("nodes", "id"), ("children", "id"),
                       ("edges_out", "target"), ("edges_in", "source"), ("cross_trails", "target")):
        for item in response.get(key) or ():
            if isinstance(item, dict) and isinstance(item.get(field), str):
                ids.append(item[field])
    if "body" in response and isinstance(response.get("id"), str):
        ids.append(response["id"])  # pick returned the banana itself
    return list(dict.fromkeys(ids))
