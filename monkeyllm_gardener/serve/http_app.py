"""The one HTTP app of ``vine serve --transport http``: MCP streamable HTTP at
``/mcp`` and whatever else is given (the REST routes at ``/v1/...``), on one port.

The MCP endpoint is the SDK's own (its session manager runs in the app's
lifespan); the middleware given wraps every route alike, so the bearer-key check
and the ``Principal`` it puts on the ASGI scope cover MCP and REST the same way.
On a loopback host the SDK's DNS-rebinding protection is on: a web page in a
browser cannot reach the server through a name that resolves to 127.0.0.1.

The app owns the forests' end: its lifespan closes them at shutdown, inside the
server's own signal handling, so queued calls finish and a SIGTERM still closes
every forest before the process goes.
"""
from __future__ import annotations

import contextlib
from typing import AsyncIterator, Sequence

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute

from .answer_model import AnswerModel
from .forests import Forests
from .mcp_server import build_mcp_server

MCP_PATH = "/mcp"


def build_app(forests: Forests, *, extra_routes: Sequence[BaseRoute] = (), middleware: Sequence[Middleware] = (),
              host: str = "127.0.0.1", answer_model: AnswerModel | None = None) -> Starlette:
    server = build_mcp_server(forests, answer_model)
    mcp_app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        try:
            async with server.session_manager.run():
                yield
        finally:
            forests.close()

    return Starlette(routes=[*mcp_app.routes, *extra_routes], middleware=list(middleware), lifespan=lifespan)
