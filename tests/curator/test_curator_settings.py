"""Reading the Curator's binding from the environment."""
from __future__ import annotations

import pytest

from monkeyllm_gardener.curator import CuratorConfigError, CuratorSettings


def test_missing_endpoint_is_one_line_naming_the_variable():
    with pytest.raises(CuratorConfigError) as raised:
        CuratorSettings.from_env({})
    assert str(raised.value) == (
        "--curate needs MONKEYLLM_LLM_ENDPOINT (an OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1)"
    )


def test_defaults_apply_when_only_the_endpoint_is_set():
    settings = CuratorSettings.from_env({"MONKEYLLM_LLM_ENDPOINT": "http://127.0.0.1:8080/v1/"})
    assert (settings.endpoint, settings.api_key, settings.model) == ("http://127.0.0.1:8080/v1", "not-needed", "local")
    assert (settings.max_tokens, settings.timeout_seconds, settings.concurrency, settings.retries) == (300, 60.0, 8, 3)


def test_every_variable_is_read():
    settings = CuratorSettings.from_env(
        {
            "MONKEYLLM_LLM_ENDPOINT": "https://openrouter.ai/api/v1",
            "MONKEYLLM_LLM_API_KEY": "sk-or-test",
            "MONKEYLLM_LLM_MODEL": "google/gemma-3-12b-it",
            "MONKEYLLM_LLM_MAX_TOKENS": "500",
            "MONKEYLLM_LLM_TIMEOUT": "12.5",
            "MONKEYLLM_LLM_CONCURRENCY": "16",
            "MONKEYLLM_LLM_RETRIES": "0",
        }
    )
    assert settings.api_key == "sk-or-test" and settings.model == "google/gemma-3-12b-it"
    assert (settings.max_tokens, settings.timeout_seconds, settings.concurrency, settings.retries) == (500, 12.5, 16, 0)
    assert "sk-or-test" not in repr(settings) and "sk-or-test" not in str(settings)  # a logged setting hides the key


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("MONKEYLLM_LLM_MAX_TOKENS", "lots"),
        ("MONKEYLLM_LLM_CONCURRENCY", "0"),
        ("MONKEYLLM_LLM_TIMEOUT", "-1"),
        ("MONKEYLLM_LLM_RETRIES", "-2"),
        ("MONKEYLLM_LLM_ENDPOINT", "127.0.0.1:8080"),
    ],
)
def test_bad_values_are_one_line_errors_naming_the_variable(name, value):
    environ = {"MONKEYLLM_LLM_ENDPOINT": "http://127.0.0.1:8080/v1", name: value}
    with pytest.raises(CuratorConfigError) as raised:
        CuratorSettings.from_env(environ)
    assert name in str(raised.value) and repr(value) in str(raised.value) and "\n" not in str(raised.value)
