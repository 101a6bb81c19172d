"""REST on the HTTP server, beside ``/mcp``: primitives.md's route shape.

- ``GET /v1/forests``: the forests the caller's key may see (the ``forests`` tool);
- ``POST /v1/forests/{forest}/{primitive}``: the JSON body is the argument
  object, checked by the same ``check_args`` as MCP; the forest is in the path,
  never in the body;
- ``GET /v1/forests/{forest}/payload/{id}``: a node's payload file (a dataset's
  ``.db``, an image), streamed.

Every call is checked against the caller (``Principal.check``: a key scoped to
another forest gets 404, a read-only key 403 on a write) before its body is
read, and runs through ``ForestService.acall``, so the event loop never waits
on forest work. The answer body is exactly ``wire(response)``, the compact JSON
the budgets measured; a failure is the error envelope with the status of
``STATUS`` (any other code is the server's own trouble: 500).

A caller's hunt is its own session: the forest service's client is
``rest:<key name>``, plus ``:<session>`` when the request names one in the
``X-MonkeyLLM-Session`` header or the ``session`` query parameter, so two keys
never share a session, and one key can run several hunts apart.
"""
from __future__ import annotations

import json
import logging
import mimetypes
import os
import re
import stat
from typing import Any, AsyncIterator, BinaryIO
from urllib.parse import quote

import anyio.to_thread
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from monkeyllm_core import Vine, VineError
from monkeyllm_core.read.contract import wire

from .auth import JSON_TYPE
from .forest_service import ForestService
from .forests import Forests
from .answer import answer_call as run_answer
from .answer_model import AnswerModel
from .payloads import missing_payload, payload_in_forest
from .principal import SESSION_HEADER, Principal, check_session_name, principal_of

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1024 * 1024
PAYLOAD_CHUNK = 256 * 1024
ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

STATUS = {
    "E_SCHEMA": 400, "E_QUERY_INVALID": 400, "E_FRONTMATTER": 400,  # the request was wrong: fix it, retry
    "E_UNAUTHORIZED": 401,
    "E_QUERY_FORBIDDEN": 403, "E_READONLY": 403,  # the caller may not: retrying is pointless
    "E_NOT_FOUND": 404, "E_NOT_A_FOREST": 404,
    "E_METHOD": 405, "E_LOCKED": 409, "E_EXISTS": 409, "E_CONFLICT": 409,  # E_LOCKED: retry later
    "E_TOO_LARGE": 413, "E_MEDIA_TYPE": 415,
    "E_TIMEOUT": 504,
}


def routes(forests: Forests, answer_model: AnswerModel | None = None) -> list[Route]:
    """The REST routes; ``answer`` is one of the primitives only when a model is bound."""
    api = RestApi(forests, answer_model)
    return [
        Route("/v1/forests", api.list_forests, methods=ALL_METHODS),
        Route("/v1/forests/{forest}/payload/{node_id:path}", api.payload, methods=ALL_METHODS),
        Route("/v1/forests/{forest}/{primitive}", api.call, methods=ALL_METHODS),
        Route("/v1/{rest:path}", api.no_route, methods=ALL_METHODS),
    ]


def json_response(response: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(wire(response), status_code=status, media_type=JSON_TYPE, headers=headers)


def error_response(exc: VineError, headers: dict[str, str] | None = None) -> Response:
    return json_response(exc.envelope(), STATUS.get(exc.code, 500), headers)


class RestApi:
    def __init__(self, forests: Forests, answer_model: AnswerModel | None = None) -> None:
        self.forests = forests
        self.answer_model = answer_model

    async def list_forests(self, request: Request) -> Response:
        return await _answer(request, "GET", self._list_forests)

    async def call(self, request: Request) -> Response:
        return await _answer(request, "POST", self._call)

    async def payload(self, request: Request) -> Response:
        return await _answer(request, "GET", self._payload)

    async def no_route(self, request: Request) -> Response:
        return error_response(VineError(
            "E_NOT_FOUND", f"no route {request.url.path}",
            "Routes: GET /v1/forests, POST /v1/forests/{forest}/{primitive}, "
            "GET /v1/forests/{forest}/payload/{id}."))

    # -- the calls ------------------------------------------------------------------------
    async def _list_forests(self, request: Request, principal: Principal) -> Response:
        return json_response(self.forests.listing(allowed=principal.visible(self.forests.paths())))

    async def _call(self, request: Request, principal: Principal) -> Response:
        forest, primitive = request.path_params["forest"], request.path_params["primitive"]
        answering = primitive == "answer" and self.answer_model is not None
        writes = False if answering else ForestService.tool(primitive).writes  # unknown: 404 naming the real ones
        principal.check(forest, writes)  # before the body is read: a refused caller sends nothing more
        service = self.forests.service(forest)
        client = _client(request, principal)
        args = await read_arguments(request)
        if answering:
            assert self.answer_model is not None
            return json_response(await run_answer(service, args, client, self.answer_model))
        return json_response(await service.acall(primitive, args, client))

    async def _payload(self, request: Request, principal: Principal) -> Response:
        forest, node_id = request.path_params["forest"], request.path_params["node_id"]
        principal.check(forest, writes=False)
        service = self.forests.service(forest)
        opened = await service.arun_on_thread(lambda reader: open_payload(reader, node_id))
        return opened.response()


async def _answer(request: Request, method: str, handler: Any) -> Response:
    """Run one route: the method checked, the caller resolved, every failure an envelope."""
    if request.method != method:
        return error_response(VineError("E_METHOD", f"{request.url.path} answers {method}, not {request.method}",
                                        f"Send a {method} request."), headers={"Allow": method})
    try:
        return await handler(request, principal_of(request.scope))
    except VineError as exc:
        return error_response(exc)
    except ClientDisconnect:  # gone while sending its body: nobody is left to answer
        return Response(status_code=400)
    except Exception as exc:  # the server's own failure: logged here, a clean envelope for the caller
        log.exception("REST %s %s failed", request.method, request.url.path)
        return json_response({"error": {"code": "E_INTERNAL", "message": f"the server failed on this call "
                                        f"({type(exc).__name__})", "hint": "See the server's log."}}, 500)


def _client(request: Request, principal: Principal) -> str:
    """The forest service's client for this request: the key's own, plus a named session."""
    header = request.headers.get(SESSION_HEADER)
    param = request.query_params.get("session")
    if header is not None and param is not None and header != param:
        raise VineError("E_SCHEMA", f"two sessions named: {header!r} (header) and {param!r} (?session=)",
                        "Name the session once.")
    session = header if header is not None else param
    if session is None:
        return f"rest:{principal.name}"
    return f"rest:{principal.name}:{check_session_name(session)}"


async def read_arguments(request: Request) -> Any:
    """The JSON body (None when empty), at most ``MAX_BODY_BYTES``: the declared length
    is checked first, and a streamed body is counted as it arrives."""
    content_type = request.headers.get("content-type", "")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise _too_large(int(declared))
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _too_large(size)
        chunks.append(chunk)
    body = b"".join(chunks)
    if not body.strip():
        return None
    # a web page can POST a text/plain "simple request" cross-site without asking;
    # it cannot send application/json that way, so JSON is required
    if content_type.split(";")[0].strip().lower() != "application/json":
        raise VineError("E_MEDIA_TYPE", f"the request body is {content_type or 'untyped'}, not application/json",
                        "Send the argument object with `Content-Type: application/json`.")
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        where = f" ({exc.msg} at line {exc.lineno} column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise VineError("E_SCHEMA", f"the request body is not JSON{where}",
                        'Send the argument object, e.g. {"query": "exchange policy deadlines", "k": 3}.') from None


def _too_large(size: int) -> VineError:
    return VineError("E_TOO_LARGE", f"the request body is over 1 MiB ({size} bytes or more)",
                     "Send less: plant a big body in parts with graft append_section, rows in several tends.")


# -- payloads ---------------------------------------------------------------------------------
class PayloadChanged(Exception):
    """The payload file changed while it was being sent (a tend): the download is cut
    short rather than completed with a copy that was never on disk."""


class OpenedPayload:
    def __init__(self, fh: BinaryIO, name: str, media_type: str, payload_hash: str | None) -> None:
        self.fh, self.name, self.media_type, self.payload_hash = fh, name, media_type, payload_hash
        self.stat = os.fstat(fh.fileno())

    def response(self) -> Response:
        headers = {"Content-Length": str(self.stat.st_size),
                   "Content-Disposition": f"inline; filename*=utf-8''{quote(self.name)}"}
        if self.payload_hash:
            headers["X-MonkeyLLM-Payload-Hash"] = self.payload_hash
        return StreamingResponse(self._chunks(), media_type=self.media_type, headers=headers)

    async def _chunks(self) -> AsyncIterator[bytes]:
        try:
            while True:
                data = await anyio.to_thread.run_sync(self.fh.read, PAYLOAD_CHUNK)
                if self._changed():
                    log.warning("payload %s changed while it was sent: the download was cut short", self.name)
                    raise PayloadChanged(self.name)
                if not data:
                    return
                yield data
        finally:
            self.fh.close()

    def _changed(self) -> bool:
        now = os.fstat(self.fh.fileno())
        return (now.st_mtime_ns, now.st_size) != (self.stat.st_mtime_ns, self.stat.st_size)


def open_payload(reader: Vine, node_id: str) -> OpenedPayload:
    """Open a node's payload file (on the forest's thread): only a file inside the forest."""
    frontmatter = reader.read(node_id).frontmatter  # E_NOT_FOUND for no such node
    real = payload_in_forest(reader, node_id, frontmatter)
    try:
        fh = open(real, "rb")
    except OSError:
        raise missing_payload(node_id, frontmatter) from None
    if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # a device, say: only a regular file is streamed
        fh.close()
        raise missing_payload(node_id, frontmatter)
    if frontmatter.get("payload_type") == "sqlite":
        media_type = "application/vnd.sqlite3"
    else:
        media_type = mimetypes.guess_type(real.name)[0] or "application/octet-stream"
    digest = frontmatter.get("payload_hash")
    return OpenedPayload(fh, real.name, media_type,
                         digest if isinstance(digest, str) and re.fullmatch(r"[0-9a-f]{64}", digest) else None)
