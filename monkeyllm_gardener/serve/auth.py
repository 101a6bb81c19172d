"""Who may call the HTTP server: bearer keys, checked in front of MCP and REST alike.

``BearerAuth`` is a pure ASGI middleware: it looks at the request's headers and
either answers 401 itself or passes the request on untouched, so MCP's streamed
responses flow through it unbuffered (Starlette's ``BaseHTTPMiddleware`` would
sit on the response stream).

- When the key store holds keys, every HTTP request needs ``Authorization:
  Bearer <key>``; a missing, unknown or revoked key is 401 with the error
  envelope and ``WWW-Authenticate: Bearer``. A good key's ``Principal`` goes on
  the ASGI scope under ``principal.SCOPE_KEY``, where the tools and routes read it.
- With no keys (only allowed on loopback, see ``check_bind``) a caller who
  sends no key is ``LOCAL``, and the request must name a loopback host: a web
  page the user visits cannot reach the server by pointing its own domain at
  127.0.0.1 (DNS rebinding), as the MCP SDK also refuses on its own loopback
  servers. A key that is sent is always checked, so a revoked key is refused
  even once it was the last one.
- A server bound beyond loopback stays closed if its last key is revoked while
  it runs (``require_key``): it never falls back to letting everyone in.
- A key store that cannot be read refuses every request (503) rather than
  reading as "no keys"; the reason goes to the server's log, not to the caller.
"""
from __future__ import annotations

import ipaddress
import logging
from typing import Any

from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.types import ASGIApp, Receive, Scope, Send

from monkeyllm_core import VineError
from monkeyllm_core.read.contract import wire

from .keys import KeyStore
from .principal import SCOPE_KEY

log = logging.getLogger(__name__)

JSON_TYPE = "application/json; charset=utf-8"  # every answer and error of the HTTP server
LOOPBACK_NAMES = ("localhost", "localhost.")


def is_loopback(host: str) -> bool:
    """True for an address (or ``localhost``) only this machine can reach."""
    host = host.strip().strip("[]").lower()
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything, so it is not loopback


def check_bind(host: str, store: KeyStore) -> None:
    """Refuse to listen beyond loopback without a key (the server would be open)."""
    if not is_loopback(host) and not store.current():
        raise VineError("E_KEYS", f"refusing to serve on {host} without a key: anyone who can reach it "
                                  "could read and write the forest",
                        "Add one with `vine keys add NAME` (callers send it as `Authorization: Bearer KEY`), "
                        "or bind to 127.0.0.1.")


class BearerAuth:
    def __init__(self, app: ASGIApp, store: KeyStore, *, require_key: bool = False) -> None:
        self.app = app
        self.store = store
        self.require_key = require_key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):  # lifespan
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        try:
            keys = self.store.current()
        except VineError as exc:
            log.error("%s", exc.one_line())
            await _refuse(scope, send, 503, "E_KEYS", "the server cannot read its key store",
                          "The server's operator must fix its keys file; see the server's log.")
            return
        presented = headers.get("authorization")
        if not keys and not self.require_key and presented is None:
            if not _names_loopback(headers.get("host", "")):
                await _refuse(scope, send, 421, "E_UNAUTHORIZED", "this server answers only requests to a loopback host",
                              "Call it as http://127.0.0.1:PORT or http://localhost:PORT, or give it a key.")
                return
            await self.app(scope, receive, send)  # LOCAL: principal_of() answers for an empty scope
            return
        principal = keys.resolve(_bearer(presented))
        if principal is None:
            missing = presented is None
            await _refuse(scope, send, 401, "E_UNAUTHORIZED",
                          "this server needs a key" if missing else "the key was not accepted",
                          "Send `Authorization: Bearer KEY` with a key from `vine keys add`"
                          + ("." if missing else "; it may have been revoked."),
                          challenge=True)
            return
        await self.app({**scope, SCOPE_KEY: principal}, receive, send)


def auth_middleware(store: KeyStore, *, require_key: bool = False) -> Middleware:
    """``BearerAuth`` as the ``middleware=`` entry of a Starlette app."""
    return Middleware(BearerAuth, store=store, require_key=require_key)


def _bearer(value: str | None) -> str | None:
    if not value:
        return None
    scheme, _, credentials = value.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return credentials.strip() or None


def _names_loopback(host_header: str) -> bool:
    host = host_header.rsplit(":", 1)[0] if not host_header.endswith("]") else host_header
    return is_loopback(host)


async def _refuse(scope: Scope, send: Send, status: int, code: str, message: str, hint: str, *,
                  challenge: bool = False) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    body = wire(VineError(code, message, hint).envelope()).encode("utf-8")
    headers: list[tuple[bytes, Any]] = [(b"content-type", JSON_TYPE.encode()),
                                        (b"content-length", str(len(body)).encode())]
    if challenge:
        headers.append((b"www-authenticate", b'Bearer realm="monkeyllm"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
