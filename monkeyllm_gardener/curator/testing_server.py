"""A scripted OpenAI-compatible server on 127.0.0.1, for our tests and for plugin
authors who want to exercise curation or a describer without a model.

    with ScriptedOpenAIServer(replies=[json_reply(summary="Expense policy ...")]) as server:
        settings = CuratorSettings(endpoint=server.base_url, model="local")
        ...
        server.requests  # every chat request body, parsed

Replies come from ``responder(request_json) -> reply`` or, failing that, from the
``replies`` queue (then ``default_reply``). A reply is a ``ScriptedReply``, a
``(status, body)`` tuple, or a body alone (status 200). A body that is a dict is
sent as JSON; a str is sent as text. ``tool_calls_completion`` scripts a model
that calls tools. Only the standard library is used.

``/embeddings`` answers with ``embed(text)`` per input (by default
``hashed_embedding``: deterministic, and close for texts that share words), or
with what ``embeddings_responder(request_json)`` returns when it returns a reply
(a failure to script); ``embedding_requests`` records every body.
"""
from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable, Mapping, Union

Body = Union[dict, list, str]


@dataclass(frozen=True, kw_only=True)
class ScriptedReply:
    status: int = 200
    body: Body = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering (timeouts, slow models)
    headers: Mapping[str, str] = field(default_factory=dict)  # e.g. {"Retry-After": "0"}


ReplyLike = Union[ScriptedReply, tuple, dict, str]
Responder = Callable[[dict[str, Any]], ReplyLike]


def chat_completion(content: str | None, *, model: str = "scripted-model", finish_reason: str = "stop",
                    prompt_tokens: int = 1, completion_tokens: int = 1) -> dict[str, Any]:
    """A chat.completion body whose single choice says ``content``, metered as
    ``prompt_tokens`` and ``completion_tokens``."""
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def tool_calls_completion(*calls: tuple[str, Any], content: str | None = None, **meter: Any) -> dict[str, Any]:
    """A chat.completion body whose single choice calls tools: each call is
    ``(name, arguments)``, the arguments a dict (sent as JSON text, as OpenAI does)
    or a str sent as it is (to script arguments that do not parse)."""
    body = chat_completion(content, finish_reason="tool_calls", **meter)
    body["choices"][0]["message"]["tool_calls"] = [
        {"id": f"call-{n}", "type": "function",
         "function": {"name": name, "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}}
        for n, (name, arguments) in enumerate(calls, start=1)
    ]
    return body


def json_reply(summary: str, tags: Iterable[str] = (), links: Iterable[str] = (), **extra: Any) -> dict[str, Any]:
    """A chat.completion body whose content is the Curator's JSON answer."""
    return chat_completion(json.dumps({"summary": summary, "tags": list(tags), "links": list(links), **extra}))


def error_body(message: str, *, kind: str = "server_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind}}


def message_text(request_json: Mapping[str, Any]) -> str:
    """All the text of a chat request's messages, joined: handy for assertions."""
    parts: list[str] = []
    for message in request_json.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [item.get("text", "") for item in content if isinstance(item, dict)]
    return "\n".join(parts)


class ScriptedOpenAIServer:
    def __init__(
        self,
        *,
        responder: Responder | None = None,
        replies: Iterable[ReplyLike] = (),
        default_reply: ReplyLike | None = None,
        models: Iterable[str] = ("scripted-model",),
        models_reply: ReplyLike | None = None,
        delay: float = 0.0,
        embed: Callable[[str], list[float]] | None = None,
        embeddings_responder: Callable[[dict[str, Any]], ReplyLike | None] | None = None,
    ) -> None:
        self.embed = embed or hashed_embedding
        self.embeddings_responder = embeddings_responder
        self._embedding_requests: list[dict[str, Any]] = []
        self.responder = responder
        self.models = list(models)
        self.models_reply = models_reply  # overrides the /models answer (e.g. (500, ...))
        self.default_reply = default_reply
        self.delay = delay  # applied to every chat request
        self._replies: deque[ReplyLike] = deque(replies)
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._model_requests = 0
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------

    def start(self) -> ScriptedOpenAIServer:
        handler = _make_handler(self)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="scripted-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "start the server first"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    # -- what happened -----------------------------------------------------------------

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every chat request body received, parsed, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def model_requests(self) -> int:
        with self._lock:
            return self._model_requests

    @property
    def embedding_requests(self) -> list[dict[str, Any]]:
        """Every /embeddings request body received, parsed, in arrival order."""
        with self._lock:
            return list(self._embedding_requests)

    def add_replies(self, *replies: ReplyLike) -> None:
        with self._lock:
            self._replies.extend(replies)

    # -- used by the handler -------------------------------------------------------------

    def _record_chat(self, body: dict[str, Any]) -> ScriptedReply:
        with self._lock:
            self._requests.append(body)
            queued = self._replies.popleft() if self._replies else None
        if self.responder is not None:
            reply = self.responder(body)
        elif queued is not None:
            reply = queued
        elif self.default_reply is not None:
            reply = self.default_reply
        else:
            reply = (500, error_body("ScriptedOpenAIServer: the script has no reply left"))
        return _as_reply(reply)

    def _embeddings_answer(self, body: dict[str, Any]) -> ScriptedReply:
        with self._lock:
            self._embedding_requests.append(body)
        scripted = self.embeddings_responder(body) if self.embeddings_responder is not None else None
        if scripted is not None:
            return _as_reply(scripted)
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
            return ScriptedReply(status=400, body=error_body("input must be a string or a list of strings",
                                                             kind="invalid_request"))
        data = [{"object": "embedding", "index": n, "embedding": self.embed(text)} for n, text in enumerate(texts)]
        return ScriptedReply(body={"object": "list", "data": data, "model": body.get("model", "scripted-embedder"),
                                   "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)}})

    def _models_answer(self) -> ScriptedReply:
        with self._lock:
            self._model_requests += 1
        if self.models_reply is not None:
            return _as_reply(self.models_reply)
        data = [{"id": name, "object": "model", "created": 0, "owned_by": "scripted"} for name in self.models]
        return ScriptedReply(body={"object": "list", "data": data})

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)


def _as_reply(reply: ReplyLike) -> ScriptedReply:
    if isinstance(reply, ScriptedReply):
        return reply
    if isinstance(reply, tuple):
        status, body = reply[0], reply[1]
        return ScriptedReply(status=status, body=body)
    return ScriptedReply(body=reply)


def _make_handler(server: ScriptedOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall between them

        def do_GET(self) -> None:  # noqa: N802 - http.server naming
            if self.path.rstrip("/").endswith("/models"):
                self._send(server._models_answer())
            else:
                self._send(ScriptedReply(status=404, body=error_body(f"no route {self.path}", kind="not_found")))

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            embeddings = self.path.rstrip("/").endswith("/embeddings")
            if not embeddings and not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(ScriptedReply(status=404, body=error_body(f"no route {self.path}", kind="not_found")))
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send(ScriptedReply(status=400, body=error_body("body is not JSON", kind="invalid_request")))
                return
            if embeddings:
                self._send(server._embeddings_answer(body))
                return
            reply = server._record_chat(body)
            server._sleep(server.delay + reply.delay)
            self._send(reply)

        def _send(self, reply: ScriptedReply) -> None:
            if isinstance(reply.body, str):
                payload, content_type = reply.body.encode("utf-8"), "text/plain; charset=utf-8"
            else:
                payload, content_type = json.dumps(reply.body).encode("utf-8"), "application/json"
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test): nothing to tell it

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet tests
            pass

    return Handler


EMBEDDING_DIMENSION = 256


def hashed_embedding(text: str, dimension: int = EMBEDDING_DIMENSION) -> list[float]:
    """A deterministic embedding for tests and benchmarks: each lower-cased word and
    each character trigram of a word (with its edges, so "return" and "returns"
    share most of theirs) is hashed to one of ``dimension`` signed slots and
    counted; the counts are scaled to length 1. Texts sharing words or word stems
    come out close; the same text, the same vector, on any machine."""
    import hashlib
    import math
    import re
    slots = [0.0] * dimension
    for word in re.findall(r"\w+", text.lower()):
        marked = f"<{word}>"
        features = [word] + [marked[at:at + 3] for at in range(len(marked) - 2)]
        for feature in features:
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            slot = int.from_bytes(digest[:4], "little") % dimension
            slots[slot] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(value * value for value in slots))
    return [value / norm for value in slots] if norm else slots
