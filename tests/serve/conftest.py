"""Fixtures of the `vine serve` tests: the read engine's test forest, copied per test."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core" / "read"))
from _read_forest import plant_forest, private_copy  # noqa: E402  (the read tests' forest: typed edges, a dataset, ...)

from monkeyllm_core import init_forest  # noqa: E402


@pytest.fixture(scope="session")
def served_forest_base(tmp_path_factory) -> Path:
    root = init_forest(tmp_path_factory.mktemp("serve") / "acme", "Acme")
    plant_forest(root)
    return root


@pytest.fixture
def served_forest(served_forest_base, tmp_path) -> Path:
    """A private copy of the test forest, named ``acme``."""
    return private_copy(served_forest_base, tmp_path / "forests" / "acme")
