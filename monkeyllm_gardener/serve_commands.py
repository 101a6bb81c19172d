"""``vine serve``: a forest (``--forest DIR``) or a folder of forests (``--root DIR``)
for agents, over MCP on stdio (the default) or streamable HTTP.

Over stdio (``serve.stdio_transport``, on the event loop) stdout is kept for the
protocol alone (file descriptor 1 points at stderr while it serves, so a stray
print or a child process cannot corrupt it); everything this command says goes
to stderr. Over HTTP the server binds
loopback only until keys exist: a non-loopback ``--host`` is refused in one line.

Ctrl-C and SIGTERM stop either transport cleanly: the calls already queued on a
forest's thread finish (a write in flight commits), then every forest is closed.
A write is durable before its answer anyway, so even a SIGKILL loses no
acknowledged write.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from typing import Any

from .cli import UsageError

EXIT_OK, EXIT_USAGE = 0, 2


def serve_arguments(p: argparse.ArgumentParser, forest_arg: Any, forest_of: Any) -> None:
    """The arguments of ``vine serve`` (``cli.COMMANDS``): its own ``--forest``, beside ``--root``."""
    p.add_argument("--forest", help="the forest directory to serve")
    p.add_argument("--root", help="a folder whose forests are all served; each tool then takes `forest`")
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                   help="stdio (default: one client, e.g. Claude Desktop) or http (MCP at /mcp)")
    p.add_argument("--host", default="127.0.0.1", help="http: the address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="http: the port (default 8000; 0 picks a free one)")
    p.add_argument("--readonly", action="store_true", help="offer no write tool (plant, graft, tend)")
    p.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS,
                   help="re-raise errors with a traceback")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    if (args.forest is None) == (args.root is None):
        raise UsageError("vine serve needs exactly one of --forest DIR or --root DIR",
                         "--forest serves one forest, --root every forest in a folder.")
    if args.transport == "http" and not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port} is not a port", "Use 1-65535, or 0 for any free port.")
    from .serve.answer_model import model_for_answer
    from .serve.forests import Forests  # the SDK is imported only by the command that needs it
    from .kit.model import ModelConfigError
    try:
        answer_model = model_for_answer(os.environ)  # None: no model bound, no `answer` offered
    except ModelConfigError as exc:
        raise UsageError(str(exc), "Fix the MONKEYLLM_LLM_* variables, or unset MONKEYLLM_LLM_ENDPOINT.") from None
    # one forest over stdio has one client, sending a call at a time: its calls run on
    # the event loop's thread (ForestService, "inline"); HTTP and --root keep a thread per forest
    forests = Forests(forest=Path(args.forest) if args.forest else None,
                      root=Path(args.root) if args.root else None, readonly=args.readonly,
                      inline=args.transport == "stdio" and bool(args.forest))
    import logging  # here, not at import: `vine --help` imports this module (issue 16: what a command runs)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="vine serve: %(levelname)s %(message)s")
    try:
        if args.transport == "stdio":
            return _serve_stdio(forests, answer_model)
        return _serve_http(forests, args.host, args.port, answer_model)
    finally:
        if answer_model is not None:
            answer_model.close()


def _serve_stdio(forests: Any, answer_model: Any) -> int:
    import anyio

    from .serve.mcp_server import build_mcp_server
    from .serve.stdio_transport import run_stdio
    server = build_mcp_server(forests, answer_model)

    async def serve() -> None:
        async with anyio.create_task_group() as group:
            async def stop_on_signal(*, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    task_status.started()
                    async for _ in signals:
                        group.cancel_scope.cancel()
                        return
            await group.start(stop_on_signal)  # said once a signal can stop it cleanly
            _say(f"serving {_what(forests)} over MCP stdio" + (" (read-only)" if forests.readonly else ""))
            await run_stdio(server)  # returns when the client closes stdin
            group.cancel_scope.cancel()

    try:
        anyio.run(serve)
    finally:
        forests.close()
    _say("stopped")
    return EXIT_OK


def _serve_http(forests: Any, host: str, port: int, answer_model: Any) -> int:
    import asyncio
    import socket

    import uvicorn

    from .serve import rest
    from .serve.auth import auth_middleware, check_bind, is_loopback
    from .serve.http_app import MCP_PATH, build_app
    from .serve.keys import KeyStore
    store = KeyStore()
    try:
        check_bind(host, store)  # beyond loopback only with a key; a corrupt key store is refused here too
    except Exception:
        forests.close()
        raise
    app = build_app(forests, host=host, answer_model=answer_model,
                    extra_routes=rest.routes(forests, answer_model),
                    # past loopback a key is required even if the last one is revoked while serving
                    middleware=[auth_middleware(store, require_key=not is_loopback(host))])
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP
    # (otherwise every kept-alive answer waits ~40 ms for Nagle and delayed ACKs)
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))  # bound here so the address printed is the real one (--port 0)
    except OSError as exc:
        forests.close()
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror}", "Pick another --port.") from None
    bound = listener.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))

    async def serve() -> None:
        running = asyncio.ensure_future(server.serve(sockets=[listener]))
        while not (server.started or running.done()):
            await asyncio.sleep(0.02)
        if server.started:  # said once uvicorn's signal handlers are in place
            _say(f"serving {_what(forests)} over MCP streamable HTTP at http://{shown}:{bound}{MCP_PATH}"
                 + (" (read-only)" if forests.readonly else ""))
        await running

    # uvicorn turns SIGINT/SIGTERM into a graceful shutdown (the app's lifespan closes
    # the forests), then raises the signal again under the handler it found: with
    # these no-op handlers in place, that ends the run normally instead of killing
    # the process or raising KeyboardInterrupt.
    previous = {sig: signal.signal(sig, _ignore) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        asyncio.run(serve())
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        forests.close()  # when the server failed to start (idempotent after a shutdown)
        listener.close()
    _say("stopped")
    return EXIT_OK


def _ignore(_signal: int, _frame: Any) -> None:
    pass


def _what(forests: Any) -> str:
    names = list(forests.paths())
    return f"the forest {names[0]}" if forests.single else f"{len(names)} forest(s) under the root"


def _say(line: str) -> None:
    sys.stderr.write(f"vine serve: {line}\n")
    sys.stderr.flush()
