"""How the Curator reaches its model: read from the environment, like every other
model binding in the engine."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

ENDPOINT_MISSING = (
    "--curate needs MONKEYLLM_LLM_ENDPOINT "
    "(an OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1)"
)
LOCAL_MODEL = "local"  # ask the endpoint's /models and take the first entry


class CuratorConfigError(Exception):
    """The curation settings cannot work as given. The message is one line naming
    the variable and the fix."""


@dataclass(frozen=True, kw_only=True)
class CuratorSettings:
    endpoint: str
    api_key: str = field(default="not-needed", repr=False)  # never in a repr, a log or a test's failure report
    model: str = LOCAL_MODEL
    max_tokens: int = 300
    timeout_seconds: float = 60.0
    concurrency: int = 8
    retries: int = 3  # transport retries after the first attempt (429, 5xx, network)
    # Not read from the environment: knobs for tests, benchmarks and embedders.
    backoff_seconds: float = 0.5  # first transport backoff; doubles, plus jitter
    backoff_cap_seconds: float = 8.0
    max_content_chars: int = 6000  # how much of a node body the model is shown
    summary_attempts: int = 3  # model answers per node, the first included
    degrade_after_failures: int = 3  # consecutive transport-failed nodes before degrading

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> CuratorSettings:
        endpoint = (environ.get("MONKEYLLM_LLM_ENDPOINT") or "").strip()
        if not endpoint:
            raise CuratorConfigError(ENDPOINT_MISSING)
        if not endpoint.startswith(("http://", "https://")):
            raise CuratorConfigError(
                f"MONKEYLLM_LLM_ENDPOINT must be an http(s) URL, got {_quote(endpoint)} "
                "(e.g. http://127.0.0.1:8080/v1)"
            )
        return cls(
            endpoint=endpoint.rstrip("/"),
            api_key=(environ.get("MONKEYLLM_LLM_API_KEY") or "").strip() or "not-needed",
            model=(environ.get("MONKEYLLM_LLM_MODEL") or "").strip() or LOCAL_MODEL,
            max_tokens=_positive_int(environ, "MONKEYLLM_LLM_MAX_TOKENS", 300),
            timeout_seconds=_positive_float(environ, "MONKEYLLM_LLM_TIMEOUT", 60.0),
            concurrency=_positive_int(environ, "MONKEYLLM_LLM_CONCURRENCY", 8),
            retries=_positive_int(environ, "MONKEYLLM_LLM_RETRIES", 3, allow_zero=True),
        )


def _positive_int(environ: Mapping[str, str], name: str, default: int, *, allow_zero: bool = False) -> int:
    raw = (environ.get(name) or "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0 or (value == 0 and not allow_zero):
        kind = "a whole number >= 0" if allow_zero else "a whole number >= 1"
        raise CuratorConfigError(f"{name} must be {kind}, got {_quote(raw)}")
    return value


def _positive_float(environ: Mapping[str, str], name: str, default: float) -> float:
    raw = (environ.get(name) or "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise CuratorConfigError(f"{name} must be a number of seconds > 0, got {_quote(raw)}")
    return value


def _quote(raw: str) -> str:
    return repr(raw if len(raw) <= 80 else raw[:79] + "…")
