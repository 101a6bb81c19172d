"""Fixtures of the `vine serve` tests: the read engine's test forest, copied per test."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core" / "read"))
from _read_forest import planted_base, private_copy  # noqa: E402  (the read tests' forest: typed edges, a dataset, ...)


@pytest.fixture(scope="session")
def served_forest_base(tmp_path_factory) -> Path:
    return planted_base(tmp_path_factory.mktemp("serve"), "acme", "Acme")


@pytest.fixture
def served_forest(served_forest_base, tmp_path) -> Path:
    """A private copy of the test forest, named ``acme``."""
    return private_copy(served_forest_base, tmp_path / "forests" / "acme")
