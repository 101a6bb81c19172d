"""Fixtures of the Troop tests: the read engine's test forest, copied per test, and
helpers to script a troop of chat models on the scripted OpenAI-compatible server."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core" / "read"))
from _read_forest import planted_base, private_copy  # noqa: E402  (typed edges, a dataset, ...)


@pytest.fixture(scope="session")
def troop_forest_base(tmp_path_factory) -> Path:
    return planted_base(tmp_path_factory.mktemp("troop"), "acme", "Acme")


@pytest.fixture
def acme_forest(troop_forest_base, tmp_path) -> Path:
    """A private copy of the test forest (no heat, no traces)."""
    return private_copy(troop_forest_base, tmp_path / "acme")
