"""The wire to an OpenAI-compatible endpoint, with our own retry loop.

The SDK's built-in retries are switched off (``max_retries=0``) so every failed
attempt is seen here and counted as a transport error: 429, 5xx, connection errors
and timeouts are retried with exponential backoff plus jitter; anything else fails
the request at once. ``openai`` is imported lazily so the package imports without it.
"""
from __future__ import annotations

import random
import threading
from typing import Any, Callable, TypeVar

from monkeyllm_gardener.curator.settings import CuratorConfigError, CuratorSettings

T = TypeVar("T")
INSTALL_HINT = 'curation needs the openai package: pip install -e ".[curate]"'


class TransportFailure(Exception):
    """A request failed for good (after retries, or at once when not retriable).
    The message is one line: what failed and how."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


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

    def list_models(self) -> list[str]:
        page = self._with_retries(lambda: self._client.models.list(), what="GET /models")
        return [model.id for model in page.data if getattr(model, "id", None)]

    def complete(self, *, model: str, messages: list[dict[str, Any]], max_tokens: int,
                 json_mode: bool = False) -> str:
        """The text of the first choice ("" when the server sent none)."""
        extra: dict[str, Any] = {"response_format": {"type": "json_object"}} if json_mode else {}

        def call() -> Any:
            return self._client.chat.completions.create(
                model=model, messages=messages, max_tokens=max_tokens, **extra
            )

        completion = self._with_retries(call, what="POST /chat/completions")
        choices = getattr(completion, "choices", None) or []
        if not choices or choices[0].message is None:
            return ""
        return choices[0].message.content or ""

    def close(self) -> None:
        self._closing.set()
        self._client.close()

    def _with_retries(self, call: Callable[[], T], *, what: str) -> T:
        openai = self._openai
        attempts = self._settings.retries + 1
        for attempt in range(attempts):
            status: int | None = None
            retry_after: float | None = None
            try:
                return call()
            except openai.APIStatusError as exc:
                status = exc.status_code
                reason = f"{what} answered HTTP {status}"
                retry_after = _retry_after_seconds(exc)
                cause: Exception = exc
            except openai.APITimeoutError as exc:  # before APIConnectionError: a subclass
                reason = f"{what} timed out after {self._settings.timeout_seconds:g}s"
                cause = exc
            except openai.APIConnectionError as exc:
                reason = f"{what} could not connect to {self._settings.endpoint}"
                cause = exc
            self._on_error()
            if status is not None and not _retriable_status(status):
                raise TransportFailure(reason, status=status) from cause
            if attempt + 1 == attempts:
                raise TransportFailure(f"{reason} ({attempts} attempt(s))", status=status) from cause
            if self._closing.wait(self._backoff(attempt, retry_after)):
                raise TransportFailure(f"{reason}; curator closed while waiting to retry", status=status)
        raise AssertionError("unreachable")  # pragma: no cover

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        ceiling = min(self._settings.backoff_cap_seconds, self._settings.backoff_seconds * 2**attempt)
        delay = ceiling / 2 + random.uniform(0, ceiling / 2)  # jitter spreads the herd
        if retry_after is not None:
            delay = max(delay, min(retry_after, self._settings.backoff_cap_seconds))
        return delay


def _retriable_status(status: int) -> bool:
    return status in (408, 409, 429) or status >= 500


def _retry_after_seconds(exc: Any) -> float | None:
    try:
        value = exc.response.headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, TypeError, ValueError):
        return None
