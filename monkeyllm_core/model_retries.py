"""The retry policy for requests to an OpenAI-compatible endpoint, in one place.

Shared by the Curator's chat transport (``monkeyllm_gardener.curator.transport``)
and the Canopy's embedder (``monkeyllm_core.canopy.embedder``), so a model and an
embedder behind the same server fail and back off the same way.

The SDK's built-in retries are switched off (``max_retries=0``) by both callers so
every failed attempt is seen here: 429, 408, 409, 5xx, connection errors and
timeouts are retried with exponential backoff plus jitter (never shorter than a
``Retry-After`` the server sent, never longer than the cap); anything else fails
the request at once. A ``deadline`` (a ``time.monotonic()`` instant) bounds every
attempt, backoff and retry of one request together. ``openai`` is handed in by the
caller, which imported it lazily.
"""
from __future__ import annotations

import random
import threading
import time
from typing import Any, Callable, Protocol, TypeVar

T = TypeVar("T")


class TransportFailure(Exception):
    """A request failed for good (after retries, or at once when not retriable).
    The message is one line: what failed and how."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class RetrySettings(Protocol):
    """What the policy reads of a caller's settings (``CuratorSettings``, ``EmbedSettings``)."""

    endpoint: str
    retries: int  # retries after the first attempt
    timeout_seconds: float
    backoff_seconds: float  # the first backoff; doubles, plus jitter
    backoff_cap_seconds: float


def with_retries(openai: Any, call: Callable[[float], T], *, settings: RetrySettings, what: str,
                 deadline: float | None = None, closing: threading.Event | None = None,
                 on_error: Callable[[], None] = lambda: None) -> T:
    """``call(timeout)`` until it answers, retrying what may work later. ``closing``
    set while waiting to retry ends the wait (the caller is shutting down);
    ``on_error`` is told of every failed attempt."""
    attempts = settings.retries + 1
    for attempt in range(attempts):
        status: int | None = None
        retry_after: float | None = None
        timeout = settings.timeout_seconds
        if deadline is not None:
            timeout = min(timeout, deadline - time.monotonic())
            if timeout <= 0:
                raise TransportFailure(f"{what} timed out: the caller's deadline passed ({attempt} attempt(s))")
        try:
            return call(timeout)
        except openai.APIStatusError as exc:
            status = exc.status_code
            reason = f"{what} answered HTTP {status}"
            retry_after = _retry_after_seconds(exc)
            cause: Exception = exc
        except openai.APITimeoutError as exc:  # before APIConnectionError: a subclass
            reason = f"{what} timed out after {timeout:g}s"
            cause = exc
        except openai.APIConnectionError as exc:
            reason = f"{what} could not connect to {settings.endpoint}"
            cause = exc
        on_error()
        if status is not None and not retriable_status(status):
            raise TransportFailure(reason, status=status) from cause
        if attempt + 1 == attempts:
            raise TransportFailure(f"{reason} ({attempts} attempt(s))", status=status) from cause
        delay = backoff(settings, attempt, retry_after)
        if deadline is not None and time.monotonic() + delay >= deadline:
            raise TransportFailure(f"{reason}; no time left before the caller's deadline to retry "
                                   f"({attempt + 1} attempt(s))", status=status) from cause
        if closing is not None and closing.wait(delay):
            raise TransportFailure(f"{reason}; closed while waiting to retry", status=status)
        if closing is None:
            time.sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover


def backoff(settings: RetrySettings, attempt: int, retry_after: float | None) -> float:
    ceiling = min(settings.backoff_cap_seconds, settings.backoff_seconds * 2**attempt)
    delay = ceiling / 2 + random.uniform(0, ceiling / 2)  # jitter spreads the herd
    if retry_after is not None:
        delay = max(delay, min(retry_after, settings.backoff_cap_seconds))
    return delay


def retriable(failure: TransportFailure) -> bool:
    """Whether the request may work later as it is (a timeout, a dropped connection,
    429 or 5xx) rather than being refused for what it is (another 4xx)."""
    return failure.status is None or retriable_status(failure.status)


def retriable_status(status: int) -> bool:
    return status in (408, 409, 429) or status >= 500


def _retry_after_seconds(exc: Any) -> float | None:
    try:
        value = exc.response.headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, TypeError, ValueError):
        return None
