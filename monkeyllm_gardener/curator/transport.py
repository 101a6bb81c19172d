"""The wire to an OpenAI-compatible endpoint, with our own retry loop.

The SDK's built-in retries are switched off (``max_retries=0``) so every failed
attempt is seen by the retry policy and counted as a transport error: 429, 5xx,
connection errors and timeouts are retried with exponential backoff plus jitter;
anything else fails the request at once (``monkeyllm_core.model_retries``, shared
with the Canopy's embedder). ``openai`` is imported lazily so the package imports without it.

``chat`` is the whole reply (text, tool calls, the provider's token meter) for a
caller that offers tools or bills tokens (``vine serve``'s ``answer``); a
``deadline`` (a ``time.monotonic()`` instant) bounds every attempt, backoff and
retry of one request together, so a caller can promise a total time.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from monkeyllm_core.model_retries import TransportFailure, retriable, with_retries
from monkeyllm_gardener.curator.settings import CuratorConfigError, CuratorSettings

T = TypeVar("T")
__all__ = ["ChatReply", "ChatTransport", "ToolCall", "TransportFailure", "retriable"]
INSTALL_HINT = 'curation needs the openai package: pip install -e ".[curate]"'


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as the model wrote it (it may not parse)


@dataclass(frozen=True)
class ChatReply:
    content: str  # "" when the model sent no text
    tool_calls: tuple[ToolCall, ...] = ()
    model: str | None = None  # the model the provider says answered
    prompt_tokens: int | None = None  # the provider's own meter; None when it sent none
    completion_tokens: int | None = None
    finish_reason: str | None = None


class ChatTransport:
    """Thread-safe: one client shared by every worker thread."""

    def __init__(self, settings: CuratorSettings, *, on_error: Callable[[], None] = lambda: None) -> None:
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - the dev venv has it
            raise CuratorConfigError(INSTALL_HINT) from exc
        self._openai = openai
        self._settings = settings
        self._on_error = on_error
        self._closing = threading.Event()
        self._client = openai.OpenAI(
            base_url=settings.endpoint,
            api_key=settings.api_key,
            timeout=settings.timeout_seconds,
            max_retries=0,
        )

    def list_models(self, *, deadline: float | None = None) -> list[str]:
        page = self._with_retries(lambda timeout: self._client.models.list(timeout=timeout),
                                  what="GET /models", deadline=deadline)
        return [model.id for model in page.data if getattr(model, "id", None)]

    def first_model(self, *, deadline: float | None = None) -> str:
        """What ``MONKEYLLM_LLM_MODEL=local`` means: the first model ``/models`` lists.
        Raises ``TransportFailure`` when the endpoint cannot say, ``CuratorConfigError``
        when it lists none."""
        models = self.list_models(deadline=deadline)
        if not models:
            raise CuratorConfigError(f"MONKEYLLM_LLM_MODEL is 'local' but {self._settings.endpoint}/models lists no "
                                     "model; name one with MONKEYLLM_LLM_MODEL")
        return models[0]

    def complete(self, *, model: str, messages: list[dict[str, Any]], max_tokens: int,
                 json_mode: bool = False) -> str:
        """The text of the first choice ("" when the server sent none)."""
        return self.chat(model=model, messages=messages, max_tokens=max_tokens, json_mode=json_mode).content

    def chat(self, *, model: str, messages: list[dict[str, Any]], max_tokens: int, json_mode: bool = False,
             tools: list[dict[str, Any]] | None = None, deadline: float | None = None) -> ChatReply:
        """The first choice whole: its text, the tools it calls (when ``tools`` were
        offered, OpenAI's function-tool shape) and the provider's usage."""
        extra: dict[str, Any] = {"response_format": {"type": "json_object"}} if json_mode else {}
        if tools:
            extra["tools"] = tools

        def call(timeout: float) -> Any:
            return self._client.chat.completions.create(
                model=model, messages=messages, max_tokens=max_tokens, timeout=timeout, **extra
            )

        return _reply_of(self._with_retries(call, what="POST /chat/completions", deadline=deadline))

    def close(self) -> None:
        self._closing.set()
        self._client.close()

    def _with_retries(self, call: Callable[[float], T], *, what: str, deadline: float | None = None) -> T:
        return with_retries(self._openai, call, settings=self._settings, what=what, deadline=deadline,
                            closing=self._closing, on_error=self._on_error)


def _reply_of(completion: Any) -> ChatReply:
    choices = getattr(completion, "choices", None) or []
    message = choices[0].message if choices else None
    usage = getattr(completion, "usage", None)
    calls = tuple(
        ToolCall(id=call.id or f"call-{n}", name=call.function.name or "", arguments=call.function.arguments or "")
        for n, call in enumerate(getattr(message, "tool_calls", None) or [])
        if getattr(call, "function", None) is not None
    )
    return ChatReply(
        content=(message.content or "") if message is not None else "",
        tool_calls=calls,
        model=getattr(completion, "model", None) or None,
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None),
        finish_reason=choices[0].finish_reason if choices else None,
    )
