"""One served forest: its own thread, a long-lived reader, and a writer per write.

Every call on a forest runs on that forest's one thread, in arrival order: SQLite
connections stay on the thread that opened them, and the calls of one forest
never race each other (the Vine keeps per-client state, see
``ReadFacade.client_session``). Forests are independent: a slow query on one
does not hold another.

Reads go through one read-only ``Vine``, kept for the server's life: it takes no
lock, and before each call it brings its catalog up to date with whatever
committed under it (a ``vine sync`` of the served forest, a ``git pull``) and
with files edited by hand (``monkeyllm_core.read.freshness``).

Served alone over stdio (``--forest``, one client), the forest's one thread is
the event loop's own (``inline``): the client sends a call and waits for its
answer, so a hop to a worker thread and back bought nothing but two thread
wake-ups a call, about a quarter of a warm read's time over stdio (bench/README.md,
"stdio MCP: the forest on the loop's thread"). While a call runs the loop does
nothing else: the next line waits in the pipe and a signal is handled once the
call returns; what awaits outside the forest (``answer``'s model) still overlaps.
HTTP and ``--root`` keep a thread per forest: clients and forests run apart.

A write opens a writable ``Vine`` for that write alone and closes it before
answering, so the commit is on the branch ref (durable) before the client hears
of it, and the writer lock is held only for the write: ``vine sync`` or ``vine
adopt`` of a served forest runs while the server runs; a write that meets their
lock answers E_LOCKED (409 over REST) and can be retried.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from pathlib import Path
from typing import Any, Callable

from monkeyllm_core import Vine, VineError

from .tools import TOOLS, Tool, check_args

DEFAULT_CLIENT = "local"


def _settle(future: asyncio.Future, outcome: Any, failure: BaseException | None) -> None:
    if future.done():  # the caller stopped waiting (cancelled)
        return
    if failure is None:
        future.set_result(outcome)
    else:
        future.set_exception(failure)


def _run_now(work: Callable[[], Any]) -> concurrent.futures.Future:
    """A future already holding ``work()``'s outcome (``submit`` of an inline forest)."""
    future: concurrent.futures.Future = concurrent.futures.Future()
    try:
        future.set_result(work())
    except BaseException as exc:  # noqa: BLE001 (handed to the caller, who raises it)
        future.set_exception(exc)
    return future


class ForestService:
    def __init__(self, name: str, root: Path, *, readonly: bool = False, inline: bool = False) -> None:
        self.name = name
        self.root = Path(root)
        self.readonly = readonly
        # inline: the forest's thread is the one making the calls (see the module's docstring)
        self._thread = None if inline else concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix=f"forest-{name}")
        self._caller: int | None = None  # inline: the thread ident of the first call
        self._reader: Vine | None = None  # opened on the forest's thread, on first use
        self._closed = False

    # -- calls ----------------------------------------------------------------------------
    def call(self, tool_name: str, args: Any, client: str = DEFAULT_CLIENT) -> dict[str, Any]:
        """Run one tool call on the forest's thread and wait for it. Expected failures
        raise ``VineError``; the transports turn it into the error envelope."""
        return self.submit(tool_name, args, client).result()

    async def acall(self, tool_name: str, args: Any, client: str = DEFAULT_CLIENT) -> dict[str, Any]:
        """``call`` for an event loop: the loop keeps serving while the forest works."""
        tool, checked = self._checked(tool_name, args)
        return await self._awaited(lambda: self._run(tool, checked, client))

    def submit(self, tool_name: str, args: Any, client: str = DEFAULT_CLIENT) -> concurrent.futures.Future:
        tool, checked = self._checked(tool_name, args)
        if self._thread is None:
            return _run_now(lambda: self._inline(lambda: self._run(tool, checked, client)))
        return self._thread.submit(self._run, tool, checked, client)

    async def arun_on_thread(self, work: Any) -> Any:
        """Run ``work(reader)`` on the forest's thread with its reader (``view`` and
        other host-side calls that read the forest), awaited."""
        self._check_open()
        return await self._awaited(lambda: work(self._open_reader()))

    def _checked(self, tool_name: str, args: Any) -> tuple[Tool, dict[str, Any]]:
        tool = self.tool(tool_name)
        if tool.writes and self.readonly:  # before the arguments: a malformed write is still a write
            raise VineError("E_READONLY", f"{self.name} is served read-only: {tool.name} is not offered",
                            "Serve it without --readonly to write, or use a key that may write.")
        checked = check_args(tool, args)  # on the caller's thread: a bad call never waits in the queue
        self._check_open()
        return tool, checked

    async def _awaited(self, work: Callable[[], Any]) -> Any:
        """``work()`` on the forest's thread (inline: right here), its outcome handed
        straight to the loop's future (one ``call_soon_threadsafe``). Cheaper than ``asyncio.wrap_future``,
        which chains a second, thread-safe future and its callbacks to every call: a
        warm read over stdio is about a millisecond, and the hop is paid on each."""
        if self._thread is None:
            return self._inline(work)
        loop = asyncio.get_running_loop()
        answered = loop.create_future()

        def run() -> None:
            try:
                outcome, failure = work(), None
            except BaseException as exc:  # noqa: BLE001 (handed to the caller, who raises it)
                outcome, failure = None, exc
            if not loop.is_closed():  # a loop already gone has no one waiting
                loop.call_soon_threadsafe(_settle, answered, outcome, failure)
        self._thread.submit(run)
        return await answered

    def _inline(self, work: Callable[[], Any]) -> Any:
        """``work()`` here, on the one thread an inline forest is ever used from."""
        caller = threading.get_ident()
        if self._caller is None:
            self._caller = caller
        elif caller != self._caller:  # its SQLite connections belong to the first caller's thread
            raise RuntimeError(f"forest {self.name} is served inline on another thread")
        return work()

    @staticmethod
    def tool(name: str) -> Tool:
        tool = TOOLS.get(name)
        if tool is None or tool.run is None:
            offered = ", ".join(n for n, t in TOOLS.items() if t.run is not None)
            raise VineError("E_NOT_FOUND", f"no primitive named {name!r}", f"Primitives: {offered}.")
        return tool

    def _run(self, tool: Tool, args: dict[str, Any], client: str) -> dict[str, Any]:
        assert tool.run is not None
        if tool.writes:
            with Vine(self.root) as writer:  # the lock for this write only; close() makes it durable
                return tool.run(writer, args)
        reader = self._open_reader()
        with reader.client_session(client):
            return tool.run(reader, args)

    def _check_open(self) -> None:
        if self._closed:  # a closed executor would refuse with a bare RuntimeError
            raise VineError("E_READONLY", f"{self.name} is no longer served", "The server is shutting down.")

    def _open_reader(self) -> Vine:
        if self._reader is None:
            self._reader = Vine(self.root, writable=False)
        return self._reader

    # -- lifecycle ------------------------------------------------------------------------
    def close(self) -> None:
        """Finish the calls already queued, then close the reader on its own thread."""
        if self._closed:
            return
        self._closed = True

        def close_reader() -> None:
            if self._reader is not None:
                self._reader.close()
                self._reader = None
        if self._thread is None:
            self._inline(close_reader)
            return
        self._thread.submit(close_reader)
        self._thread.shutdown(wait=True)
