"""A model client for plugins: the OpenAI-compatible endpoint the environment binds,
reached the way the Curator reaches it.

A describer (or any plugin that asks a model) should not invent its own binding:
the user configures one endpoint for the whole Gardener (``MONKEYLLM_LLM_ENDPOINT``,
``MONKEYLLM_LLM_API_KEY``, ``MONKEYLLM_LLM_TIMEOUT``, ``MONKEYLLM_LLM_RETRIES``; see
the README) and every model call honours it, with the same retry loop (429, 5xx,
connection errors and timeouts retried with backoff, anything else failing at
once) and the same one-line errors. ``ModelClient.from_env(os.environ)`` reads
that binding; the ``openai`` package is imported on the first request, so a
plugin that never asks a model never needs it.

Errors: ``ModelConfigError`` when the binding cannot work as given (raised by
``from_env``, or on the first request when ``openai`` is missing; the message
names the variable and the fix), ``ModelFailure`` when a request failed for good.
Both are the Curator's own classes, so a host or CLI that reports one reports
the other.
"""
from __future__ import annotations

import threading
from typing import Any, Mapping

from monkeyllm_gardener.curator.settings import CuratorConfigError, CuratorSettings
from monkeyllm_gardener.curator.transport import ChatTransport, TransportFailure

__all__ = ["ModelClient", "ModelConfigError", "ModelFailure"]

ModelConfigError = CuratorConfigError
ModelFailure = TransportFailure


class ModelClient:
    """A thread-safe client of one OpenAI-compatible endpoint: one connection shared
    by every thread, opened on the first request. ``close()`` ends it (a retry that
    is waiting gives up at once)."""

    def __init__(self, settings: CuratorSettings) -> None:
        self.settings = settings
        self._transport: ChatTransport | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> ModelClient:
        """The client the environment binds (``MONKEYLLM_LLM_*``); raises
        ``ModelConfigError`` (one line) when the endpoint is missing or a value is
        unusable."""
        return cls(CuratorSettings.from_env(environ))

    def complete(self, *, model: str, messages: list[dict[str, Any]], max_tokens: int) -> str:
        """The text of the model's first choice ("" when it sent none) for OpenAI-style
        chat ``messages`` (text or ``image_url`` parts). Raises ``ModelFailure`` when
        the request failed after the configured retries."""
        return self._connection().complete(model=model, messages=messages, max_tokens=max_tokens)

    def close(self) -> None:
        """Close the connection, if one was opened."""
        with self._lock:
            if self._transport is not None:
                self._transport.close()

    def _connection(self) -> ChatTransport:
        with self._lock:
            if self._transport is None:
                self._transport = ChatTransport(self.settings)
            return self._transport
