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

``chat`` returns the whole reply (the transport's ``ChatReply``: text, tool
calls, the provider's token meter) for a caller that offers the model tools or
bills its tokens, and takes a ``deadline`` that bounds the request and its
retries together.

Errors: ``ModelConfigError`` when the binding cannot work as given (raised by
``from_env``, or on the first request when ``openai`` is missing; the message
names the variable and the fix), ``ModelFailure`` when a request failed for good.
Both are the Curator's own classes, so a host or CLI that reports one reports
the other.
"""
from __future__ import annotations

import threading
from typing import Any, Mapping

from monkeyllm_gardener.curator.settings import LOCAL_MODEL, CuratorConfigError, CuratorSettings
from monkeyllm_gardener.curator.transport import ChatReply, ChatTransport, TransportFailure

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
        self._resolved_model: str | None = None
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

    def chat(self, *, model: str, messages: list[dict[str, Any]], max_tokens: int,
             tools: list[dict[str, Any]] | None = None, deadline: float | None = None) -> ChatReply:
        """The model's first choice whole: text, the ``tools`` it calls (OpenAI's
        function-tool shape) and the provider's usage. ``deadline`` (a
        ``time.monotonic()`` instant) bounds every attempt and retry together.
        Raises ``ModelFailure`` when the request failed for good."""
        return self._connection().chat(model=model, messages=messages, max_tokens=max_tokens, tools=tools,
                                       deadline=deadline)

    def model_name(self, *, deadline: float | None = None) -> str:
        """The model to ask: ``MONKEYLLM_LLM_MODEL``, or for ``local`` (the default)
        the first the endpoint's ``/models`` lists, asked once. Raises
        ``ModelFailure`` when the endpoint cannot say, ``ModelConfigError`` when it
        lists none."""
        if self.settings.model != LOCAL_MODEL:
            return self.settings.model
        if self._resolved_model is None:
            self._resolved_model = self._connection().first_model(deadline=deadline)
        return self._resolved_model

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
