"""MCP over this process's stdin and stdout, on the event loop itself.

The SDK's ``stdio_server`` reads and writes through ``anyio.wrap_file``: every
line read and every write and flush is a hop to a worker thread and back,
about as much CPU per call as a warm ``look`` itself (bench/README.md, "stdio
MCP at the floor"). Here the pipes are the event loop's own
(``connect_read_pipe``/``connect_write_pipe``): a line is parsed where it
arrives and an answer is written where it is made, with no thread between.

What stays the SDK's: the messages (its pydantic JSON-RPC types parse every
line and serialize every answer) and everything above the two streams handed
to ``Server.run`` (the dispatcher, the handshake, the tools). What this adds
on top of what the SDK's transport did: a line that is not UTF-8 JSON, or not
a JSON-RPC message, is answered with the JSON-RPC parse (-32700) or invalid
request (-32600) error instead of being dropped, so a client never waits for
an answer that will not come; lines may be any length.

As with the SDK's transport, while serving fd 0 reads the null device and fd
1 writes to stderr, so a stray ``print`` or a child process can never corrupt
the protocol on stdout; both are put back at the end. stdin's EOF ends the
server. When stdin and stdout are not two pipes or sockets of their own (a
regular file, which an event loop cannot watch; a terminal; one socket for both;
stdout shared with stderr: ``_own_pipes``), the SDK's own transport serves.
"""
from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import stat
from collections import deque
from typing import Any, AsyncIterator

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server as sdk_stdio_server
from mcp.shared.message import SessionMessage

# Lines parsed ahead of the dispatcher before the pipe stops being read: the
# client then blocks on its write (backpressure), and memory stays bounded.
MAX_LINES_AHEAD = 64
CLOSE_SECONDS = 5.0  # at the end, how long answers still buffered may take to reach the client


@contextlib.asynccontextmanager
async def stdio_streams() -> AsyncIterator[tuple[Any, Any]]:
    """The (read stream, write stream) pair ``Server.run`` serves, over fds 0 and 1."""
    if not _own_pipes():
        async with sdk_stdio_server() as streams:
            yield streams
        return
    loop = asyncio.get_running_loop()
    with _wire_fds() as (wire_in, wire_out):
        write_transport, writer = await loop.connect_write_pipe(
            _LineWriter, os.fdopen(wire_out, "wb", buffering=0, closefd=False))
        read_transport, reader = await loop.connect_read_pipe(
            _LineReader, os.fdopen(wire_in, "rb", buffering=0, closefd=False))
        try:
            yield MessageReader(reader, writer), MessageWriter(writer)
        finally:
            read_transport.close()
            write_transport.close()  # once what is buffered is written
            # even when cancelled (a signal): the fds are put back only once the loop has let go of them
            with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_SECONDS):
                await writer.closed()
            if not writer.lost:
                write_transport.abort()  # a client that stopped reading: what it did not read is dropped


async def run_stdio(server: Server[Any]) -> None:
    """Serve ``server`` over stdin and stdout until stdin's EOF."""
    async with stdio_streams() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _own_pipes() -> bool:
    """Whether stdin and stdout are pipes or sockets the loop can watch, each its own.

    Not when they are one socket (socat ``EXEC:``, inetd, a systemd socket unit):
    asyncio's write transport watches a socket for the peer's close by reading it,
    and would take the first request for one. Not when stdout is stderr's file
    (``2>&1``) or a terminal: the loop makes the wire non-blocking, and stderr
    would go non-blocking with it. A regular file cannot be watched at all. Those
    are served by the SDK's own transport, as before."""
    try:
        stdin, stdout = os.fstat(0), os.fstat(1)
    except OSError:
        return False
    try:
        stderr: os.stat_result | None = os.fstat(2)
    except OSError:
        stderr = None
    def same(a: os.stat_result, b: os.stat_result | None) -> bool:
        return b is not None and (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
    watchable = all(stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode) for st in (stdin, stdout))
    return watchable and not same(stdin, stdout) and not same(stdout, stderr)


@contextlib.contextmanager
def _wire_fds() -> Any:
    """Private duplicates of fds 0 and 1 (the wire), with 0 and 1 pointed away from it."""
    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        try:
            os.dup2(2, 1)
        except OSError:  # started with stderr closed: what a stray print writes goes nowhere
            sink = os.open(os.devnull, os.O_WRONLY)
            os.dup2(sink, 1)
            os.close(sink)
        yield wire_in, wire_out
    finally:
        os.close(null)
        for fd, wire in ((0, wire_in), (1, wire_out)):
            os.set_blocking(wire, True)  # the loop made it non-blocking; a terminal is shared with the shell
            os.dup2(wire, fd)
            os.close(wire)


# -- reading: lines off the pipe, messages to the dispatcher -----------------------------------
class _LineReader(asyncio.Protocol):
    """Splits what arrives into lines, holding at most ``MAX_LINES_AHEAD`` of them."""

    def __init__(self) -> None:
        self._partial = bytearray()
        self._lines: deque[bytes] = deque()
        self._eof = False
        self._paused = False
        self._arrived: asyncio.Event = asyncio.Event()
        self._transport: Any = None

    def connection_made(self, transport: Any) -> None:
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        searched = len(self._partial)
        self._partial += data
        end = self._partial.rfind(b"\n", searched)  # only the new bytes: a long line is not rescanned
        if end < 0:
            return
        self._lines.extend(bytes(self._partial[:end]).split(b"\n"))
        del self._partial[:end + 1]
        self._arrived.set()
        if len(self._lines) >= MAX_LINES_AHEAD and not self._paused:
            self._paused = True
            self._transport.pause_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._partial:  # a last line without its newline is still a line
            self._lines.append(bytes(self._partial))
            self._partial.clear()
        self._eof = True
        self._arrived.set()

    async def line(self) -> bytes | None:
        """The next line, or None at EOF."""
        while not self._lines:
            if self._eof:
                return None
            self._arrived.clear()
            await self._arrived.wait()
        if self._paused and len(self._lines) <= MAX_LINES_AHEAD // 2:
            self._paused = False
            self._transport.resume_reading()
        return self._lines.popleft()


class MessageReader:
    """The read stream ``Server.run`` iterates: a ``SessionMessage`` per line, EOF its end.
    A line that is no message is answered on the spot with its JSON-RPC error."""

    def __init__(self, lines: _LineReader, answers: _LineWriter) -> None:
        self._lines = lines
        self._answers = answers
        self._closed = False

    async def receive(self) -> SessionMessage:
        while not self._closed:
            line = await self._lines.line()
            if line is None:
                break
            if not line or line.isspace():
                continue  # a blank line carries nothing to answer
            try:
                return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
            except ValueError:  # pydantic's ValidationError is one
                self._answers.write_message(_refusal(line))
        raise anyio.EndOfStream

    async def aclose(self) -> None:
        self._closed = True

    def __aiter__(self) -> MessageReader:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> MessageReader:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()


def _refusal(line: bytes) -> types.JSONRPCError:
    """The JSON-RPC error for a line that is not a message: a parse error when it is
    not UTF-8 JSON, else an invalid request (answered to its id, when it has one)."""
    try:
        parsed = json.loads(line.decode("utf-8"))  # decoded first: json.loads would guess UTF-16 from bytes
    except ValueError:  # UnicodeDecodeError and JSONDecodeError alike
        return types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(
            code=types.PARSE_ERROR, message="Parse error: each line must be one JSON-RPC message in UTF-8 JSON"))
    request_id = parsed.get("id") if isinstance(parsed, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        request_id = None
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(
        code=types.INVALID_REQUEST, message="Invalid Request: not a JSON-RPC 2.0 request, notification or response"))


# -- writing: one line per message, straight onto the pipe --------------------------------------
class _LineWriter(asyncio.Protocol):
    """The write end: a message is written as it is made; a full pipe makes writers wait."""

    def __init__(self) -> None:
        self._transport: Any = None
        self._resumed: asyncio.Event = asyncio.Event()
        self._resumed.set()
        self._lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: Any) -> None:
        self._transport = transport

    def pause_writing(self) -> None:
        self._resumed.clear()

    def resume_writing(self) -> None:
        self._resumed.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self._resumed.set()  # nobody reads any more: nothing to wait for
        if not self._lost.done():
            self._lost.set_result(None)

    @property
    def lost(self) -> bool:
        return self._lost.done()

    def write_message(self, message: Any) -> None:
        if self.lost:
            return  # the client is gone; there is no one left to answer
        self._transport.write(message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n")

    async def drained(self) -> None:
        await self._resumed.wait()

    async def closed(self) -> None:
        await self._lost


class MessageWriter:
    """The write stream ``Server.run`` sends to: each message one line on stdout."""

    def __init__(self, lines: _LineWriter) -> None:
        self._lines = lines

    async def send(self, message: SessionMessage, /) -> None:
        self._lines.write_message(message.message)
        await self._lines.drained()

    async def aclose(self) -> None:
        pass  # the pipe is closed by ``stdio_streams`` once the server is done with it

    async def __aenter__(self) -> MessageWriter:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()
