"""Endpoints for the tests that talk to a model server: a port nothing listens on
(a dead endpoint), and an embedder of the scripted OpenAI-compatible server (the
``embed_server`` fixture, tests/conftest.py, whose ``/embeddings`` is
``hashed_embedding``)."""
from __future__ import annotations

import socket

from monkeyllm_core.canopy.embedder import EmbedSettings, OpenAIEmbedder
from monkeyllm_gardener.curator.testing_server import ScriptedOpenAIServer

EMBED_MODEL = "hash-256"  # the name the canopy tests build and query with


def closed_port() -> int:
    """A loopback port nothing listens on (it was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def dead_endpoint() -> str:
    return f"http://127.0.0.1:{closed_port()}/v1"


def embedder(server: ScriptedOpenAIServer | str, model: str = EMBED_MODEL, **settings) -> OpenAIEmbedder:
    """The real OpenAI-compatible embedder, pointed at ``server`` (or a URL)."""
    url = server if isinstance(server, str) else server.base_url
    return OpenAIEmbedder(EmbedSettings(endpoint=url, model=model, **settings))
