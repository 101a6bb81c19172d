"""Who turns text into vectors: the ``Embedder`` protocol and the OpenAI-compatible one.

An embedder has a ``model`` (the name the canopy records, and that a query
embedder must match) and ``embed(texts)``, one vector per text, in order. It is
called from several threads at once by a build (``build.py`` batches and fans
out), so it must be thread-safe; one ``embed`` call is one request.

``OpenAIEmbedder`` speaks ``POST /embeddings`` through the ``openai`` client
(imported when the first one is made, so the base install never needs it), with
the retry policy the Curator uses (``monkeyllm_core.model_retries``: 429 and 5xx
and dropped connections retried with backoff). It is configured from the
environment:

    MONKEYLLM_EMBED_ENDPOINT   an OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1
    MONKEYLLM_EMBED_MODEL      the embedding model (required: the canopy records it)
    MONKEYLLM_EMBED_API_KEY    optional

Failures are ``VineError`` with one line naming the endpoint: ``E_TIMEOUT`` when it
did not answer (dead, or 429/5xx after the retries), ``E_UNSUPPORTED`` when it
refused the request as it is (another 4xx, a reply of the wrong shape),
``E_SCHEMA`` for a setting that cannot work.
"""
from __future__ import annotations

import dataclasses
import json
import threading
from dataclasses import dataclass, field
from typing import Mapping, Protocol, Sequence

from ..errors import VineError
from ..model_retries import TransportFailure, retriable, with_retries

ENV_ENDPOINT, ENV_MODEL, ENV_KEY = "MONKEYLLM_EMBED_ENDPOINT", "MONKEYLLM_EMBED_MODEL", "MONKEYLLM_EMBED_API_KEY"
INSTALL_HINT = "pip install 'monkeyllm[canopy]'"
Vector = Sequence[float]


class Embedder(Protocol):
    model: str

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        """One vector per text, in the order given."""
        ...


@dataclass(frozen=True, kw_only=True)
class EmbedSettings:
    endpoint: str
    model: str
    api_key: str = field(default="not-needed", repr=False)  # never in a repr, a log or a test's failure report
    timeout_seconds: float = 60.0
    retries: int = 3  # after the first attempt
    backoff_seconds: float = 0.5
    backoff_cap_seconds: float = 8.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> EmbedSettings | None:
        """The settings the environment names; None when no endpoint is set (no embedder)."""
        endpoint = (environ.get(ENV_ENDPOINT) or "").strip()
        if not endpoint:
            return None
        if not endpoint.startswith(("http://", "https://")):
            raise VineError("E_SCHEMA", f"{ENV_ENDPOINT} must be an http(s) URL, not {endpoint[:80]!r}",
                            f"e.g. {ENV_ENDPOINT}=http://127.0.0.1:8080/v1")
        model = (environ.get(ENV_MODEL) or "").strip()
        if not model:
            raise VineError("E_SCHEMA", f"{ENV_ENDPOINT} is set but {ENV_MODEL} is not",
                            f"Name the embedding model, e.g. {ENV_MODEL}=nomic-embed-text: the canopy records it.")
        return cls(endpoint=endpoint.rstrip("/"), model=model,
                   api_key=(environ.get(ENV_KEY) or "").strip() or "not-needed")

    def for_queries(self) -> EmbedSettings:
        """A read waits for its query's vector: one retry and 10 s, not a build's patience."""
        return dataclasses.replace(self, retries=min(self.retries, 1), timeout_seconds=min(self.timeout_seconds, 10.0))


class OpenAIEmbedder:
    """Thread-safe: one client shared by every worker of a build."""

    def __init__(self, settings: EmbedSettings) -> None:
        try:
            import openai
        except ImportError:
            raise VineError("E_UNSUPPORTED", "embeddings need the openai package, which is not installed",
                            INSTALL_HINT) from None
        self._openai = openai
        self.settings = settings
        self.model = settings.model
        self._closing = threading.Event()
        self._client = openai.OpenAI(base_url=settings.endpoint, api_key=settings.api_key,
                                     timeout=settings.timeout_seconds, max_retries=0)

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> OpenAIEmbedder | None:
        settings = EmbedSettings.from_env(environ)
        return None if settings is None else cls(settings)

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        texts = list(texts)
        if not texts:
            return []
        try:
            # the raw reply, parsed here: the SDK's typed parse validates every float of
            # every vector (about 80 ms of CPU per 64 vectors of 256), json.loads does not
            raw = with_retries(
                self._openai, lambda timeout: self._client.embeddings.with_raw_response.create(
                    model=self.model, input=texts, encoding_format="float", timeout=timeout),
                settings=self.settings, what="POST /embeddings", closing=self._closing)
        except TransportFailure as failure:
            raise embed_failure(self.settings.endpoint, failure) from None
        return _vectors_of(raw.text, len(texts), self.settings.endpoint)

    def close(self) -> None:
        self._closing.set()
        self._client.close()


def embed_failure(endpoint: str, failure: TransportFailure) -> VineError:
    if retriable(failure):
        return VineError("E_TIMEOUT", f"the embedder at {endpoint} did not answer: {failure}",
                         f"Start it, or point {ENV_ENDPOINT} at one that runs.")
    return VineError("E_UNSUPPORTED", f"the embedder at {endpoint} refused the request: {failure}",
                     f"Check {ENV_MODEL} and {ENV_KEY}.")


def _vectors_of(text: str, expected: int, endpoint: str) -> list[Vector]:
    """The vectors in input order (``index`` says which text each is for)."""
    try:
        data = json.loads(text).get("data")
        data = sorted(data, key=lambda item: item.get("index", 0)) if isinstance(data, list) else []
        vectors = [item.get("embedding") for item in data]
    except (ValueError, AttributeError, TypeError):
        vectors = []
    if len(vectors) != expected or not all(isinstance(v, list) and v for v in vectors):
        raise VineError("E_UNSUPPORTED", f"the embedder at {endpoint} sent {len(vectors)} vector(s) for "
                        f"{expected} text(s)", "Is the endpoint an embeddings server? Check "
                        f"{ENV_ENDPOINT} and {ENV_MODEL}.")
    return vectors
