"""The forests over MCP: the official SDK's low-level ``Server`` offering ``tools.TOOLS``.

The low-level ``Server``, not ``MCPServer``: every tool here declares its own
schema and checks its own arguments, so ``MCPServer``'s layers (its tool
manager, the ``Context`` it builds, result conversion, the request-state
middleware) did nothing for us but cost about 0.15 ms of CPU on every call
(bench/README.md, "stdio MCP at the floor"). The SDK still speaks the whole
protocol: the handshake or the 2026-07-28 envelope, the JSON-RPC dispatcher,
streamable HTTP and its sessions.

Every tool is listed with the JSON schema ``tools`` declares (the ``Vine``
method's parameter names, as primitives.md promises), not one derived from a
Python signature: the raw argument object goes to ``check_args`` like on every
other transport, so a wrong call is the same E_SCHEMA envelope everywhere.
Serving a root of forests, each tool also takes ``forest``. A ``--readonly``
server lists no write tool; one called anyway gets E_READONLY, as on REST.

An answer is one text block holding ``wire(response)``, the compact JSON the
budget measured, byte for byte (no structured copy: it would double what goes on
the wire and be serialized by another encoder). An expected failure is the error
envelope's JSON with ``isError: true``; an unexpected exception is logged on
stderr and answered the same way (E_INTERNAL, naming the exception's type), so
one bad call never takes the server down.

Who calls: the ``Principal`` the HTTP layer put on the ASGI scope (``LOCAL`` over
stdio and without keys) is checked before any forest work, and ``forests`` lists
only what it may see. Each MCP client hunts in its own session (``client_key``).
"""
from __future__ import annotations

import base64
import logging
import mimetypes
import uuid
from pathlib import Path
from typing import Any, Awaitable, Callable, Mapping

from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp_types import (CallToolRequestParams, CallToolResult, ContentBlock, ImageContent, ListToolsResult,
                       PaginatedRequestParams, TextContent, ToolAnnotations)
from mcp_types import Tool as ListedTool

from monkeyllm_core import Vine, VineError
from monkeyllm_core.read.contract import wire

from .answer import answer_call as run_answer
from .answer_model import AnswerModel
from .forest_service import DEFAULT_CLIENT
from .forests import Forests
from .payloads import missing_payload, payload_in_forest
from .principal import SESSION_HEADER, Principal, check_session_name, principal_of
from .tools import TOOLS, Tool, check_args

log = logging.getLogger(__name__)

VIEW_LIMIT_BYTES = 6 * 1024 * 1024
MCP_SESSION_HEADER = "mcp-session-id"
FOREST_ARGUMENT = {"type": "string", "description": "The forest to call (see the forests tool)."}

INSTRUCTIONS = (
    "A MonkeyLLM forest: markdown nodes in branches, datasets in SQLite. Start a hunt with locate (a "
    "question) or sniff (an exact string), look at a node before you pick its body or query its dataset, "
    "follow edges with move, filter a branch with scan; harvest does locate+sniff in one call. End a hunt "
    "with close_session. Every answer is JSON; truncated: true means a budget cut it, not that nothing else "
    "matched."
)

Context = ServerRequestContext[Any, Any]
Answer = Callable[[dict[str, Any], Context], Awaitable[list[ContentBlock]]]


def build_mcp_server(forests: Forests, answer_model: AnswerModel | None = None) -> Server[Any]:
    """The MCP server of these forests (stdio or streamable HTTP alike). ``answer``
    is offered only when a model is bound (``answer_model``)."""
    answerable = [tool for tool in TOOLS.values() if tool.name != "answer" or answer_model is not None]
    # a --readonly server lists no write tool; one called anyway is refused where
    # every transport's calls are (ForestService: E_READONLY), not here
    listed = [_listed(tool, takes_forest=not forests.single) for tool in answerable
              if not (tool.writes and forests.readonly)]
    answers = {tool.name: _answer_for(tool, forests, answer_model) for tool in answerable}
    schemas = {tool.name: tool.input_schema for tool in listed}

    async def list_tools(_context: Context, _params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=listed)

    async def call_tool(context: Context, params: CallToolRequestParams) -> CallToolResult:
        return await _call(params.name, answers.get(params.name), dict(params.arguments or {}), context)

    server = Server("monkeyllm", instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool,
                    get_tool_input_schema=schemas.get)
    # The SDK's one default middleware opens an OpenTelemetry span per message, a no-op
    # until an exporter is installed, which vine serve never does; dropping it (the
    # SDK's documented opt-out) saves about 0.06 ms of CPU a call.
    server.middleware.clear()
    return server


# -- one listed tool per declared tool, and the call that answers it ------------------------------
def _listed(tool: Tool, *, takes_forest: bool) -> ListedTool:
    schema = tool.input_schema()
    if takes_forest and tool.name != "forests":
        schema["properties"] = {**schema["properties"], "forest": FOREST_ARGUMENT}
        schema["required"] = [*schema["required"], "forest"]
    return ListedTool(name=tool.name, description=tool.description, input_schema=schema,
                      annotations=ToolAnnotations(read_only_hint=not tool.writes))


async def _call(name: str, answer: Answer | None, arguments: dict[str, Any], context: Context) -> CallToolResult:
    try:
        if answer is None:
            raise VineError("E_NOT_FOUND", f"no tool named {name!r:.80}",
                            "tools/list names the tools this server offers.")
        return CallToolResult(content=await answer(arguments, context))
    except VineError as exc:
        return _error(exc.envelope())
    except Exception as exc:  # noqa: BLE001 (one bad call must not end the server)
        log.exception("%s failed unexpectedly", name)
        # the exception's type names the problem; its text (paths, data) stays in the server's log
        return _error({"error": {"code": "E_INTERNAL", "message": f"{name}: unexpected {type(exc).__name__}",
                                 "hint": "The server logged the traceback on its stderr; report it."}})


def _text(response: Any) -> list[ContentBlock]:
    return [TextContent(type="text", text=wire(response))]


def _error(envelope: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=_text(envelope), is_error=True)


# -- what each tool answers ----------------------------------------------------------------
def _answer_for(tool: Tool, forests: Forests, answer_model: AnswerModel | None) -> Answer:
    if tool.name == "answer":
        assert answer_model is not None

        async def answer_answer(arguments: dict[str, Any], context: Context) -> list[ContentBlock]:
            principal = caller(context)
            service = _service(forests, arguments, principal, writes=False)
            return _text(await run_answer(service, arguments, client_key(context, principal), answer_model))
        return answer_answer

    if tool.name == "forests":
        async def answer_forests(arguments: dict[str, Any], context: Context) -> list[ContentBlock]:
            check_args(tool, arguments)
            principal = caller(context)
            allowed = None if principal.forest is None else principal.visible(forests.paths())
            return _text(forests.listing(allowed))
        return answer_forests

    if tool.name == "view":
        async def answer_view(arguments: dict[str, Any], context: Context) -> list[ContentBlock]:
            service = _service(forests, arguments, caller(context), writes=False)
            node_id = check_args(tool, arguments)["id"]
            data, mime_type = await service.arun_on_thread(lambda reader: image_of(reader, node_id))
            return [ImageContent(type="image", data=base64.b64encode(data).decode("ascii"), mime_type=mime_type)]
        return answer_view

    async def answer_call(arguments: dict[str, Any], context: Context) -> list[ContentBlock]:
        principal = caller(context)
        service = _service(forests, arguments, principal, writes=tool.writes)
        return _text(await service.acall(tool.name, arguments, client_key(context, principal)))
    return answer_call


def _service(forests: Forests, arguments: dict[str, Any], principal: Principal, *, writes: bool) -> Any:
    """The forest a call names (``forest``, taken out of the arguments), once the
    caller may make this call there."""
    if forests.single:
        service = forests.service(None)
        principal.check(service.name, writes)
        return service
    name = arguments.pop("forest", None)
    if not isinstance(name, str):
        listed = ", ".join(principal.visible(forests.paths())) or "none"
        raise VineError("E_SCHEMA", "forest must name one of this server's forests"
                        + ("" if name is None else f", not {name!r:.80}"), f"Forests: {listed}.")
    principal.check(name, writes)  # before the lookup, whose hint lists every forest
    return forests.service(name)


# -- who calls, and which hunt is theirs -------------------------------------------------------
def caller(context: Context) -> Principal:
    return principal_of(getattr(context.request, "scope", None))


def client_key(context: Context, principal: Principal) -> str:
    """The session a call belongs to: over stdio the process (one client); over HTTP
    the MCP session id, else the ``MonkeyLLM-Session`` header, else this call alone.
    Keys are prefixed with the principal, so one key's caller cannot join another's hunt."""
    headers: Mapping[str, str] | None = getattr(context.request, "headers", None)  # None over stdio
    if headers is None:
        return DEFAULT_CLIENT
    session = headers.get(MCP_SESSION_HEADER)
    if session:
        return f"{principal.name}/mcp/{session}"
    named = headers.get(SESSION_HEADER)  # a 2026-07-28 client has no MCP session: it names its hunt
    if named is not None:
        return f"{principal.name}/named/{check_session_name(named)}"
    return f"{principal.name}/call/{uuid.uuid4().hex}"


# -- view --------------------------------------------------------------------------------------
def image_of(reader: Vine, node_id: str) -> tuple[bytes, str]:
    """The image payload of a node and its MIME type, at most ``VIEW_LIMIT_BYTES``."""
    frontmatter = reader.read(node_id).frontmatter
    if frontmatter.get("payload_type") != "image":
        kind = frontmatter.get("payload_type")
        raise VineError("E_NOT_FOUND", f"{node_id} has no image payload"
                        + (f" (its payload is {kind})" if kind else ""),
                        "view shows media nodes whose payload_type is image; scan with "
                        "filter={\"payload_type\": \"image\"} to find them.")
    path = payload_in_forest(reader, node_id, frontmatter)
    try:
        size = path.stat().st_size
    except OSError:
        raise missing_payload(node_id, frontmatter) from None
    if size > VIEW_LIMIT_BYTES:
        raise VineError("E_UNSUPPORTED", f"{node_id}: the image is {size / 2**20:.1f} MiB, over view's 6 MiB cap",
                        f"Open it from the forest instead: {path.relative_to(reader.root).as_posix()}.")
    return path.read_bytes(), _mime_type(Path(str(frontmatter["payload"])))


def _mime_type(payload: Path) -> str:
    guessed, _ = mimetypes.guess_type(payload.name)
    return guessed if guessed and guessed.startswith("image/") else "application/octet-stream"
