"""Fixtures for the Gardener's end-to-end tests: a forest made by the real ``vine
init`` and a rich export folder made in code (the helpers are tests/cli_helpers.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import VineRunner, make_rich_export


@pytest.fixture
def forest(vine_cli: VineRunner, tmp_path: Path) -> Path:
    """An initialised, empty forest, made by `vine init` (the same as the shipped fixture)."""
    return vine_cli.init(tmp_path / "forest")


@pytest.fixture
def rich_export(tmp_path: Path) -> Path:
    """An export folder with one file of each kind plus an unsupported and a broken file
    (``cli.RICH_EXPORT`` says where each must end)."""
    return make_rich_export(tmp_path / "export")
