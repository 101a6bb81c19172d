"""Fixtures of the read-engine tests: the forest of ``_read_forest``, planted once per
test session, and a private copy of it for each test (``read_forest``), so heat and
traces one test leaves never reach another."""
from __future__ import annotations

from pathlib import Path

import pytest

from monkeyllm_core import Vine
from _read_forest import planted_base, private_copy


@pytest.fixture(scope="session")
def read_forest_base(tmp_path_factory) -> Path:
    return planted_base(tmp_path_factory.mktemp("read"), "brain", "Read forest")


@pytest.fixture
def read_forest(read_forest_base, tmp_path) -> Path:
    """A private copy of the read forest (its git, catalog and no heat)."""
    return private_copy(read_forest_base, tmp_path / "brain")


@pytest.fixture
def reader(read_forest):
    """A read-only Vine on the copy: reads never need the lock."""
    vine = Vine(read_forest, writable=False)
    yield vine
    vine.close()


@pytest.fixture(scope="session")
def shared_reader(read_forest_base):
    """One read-only Vine on the base forest for tests that only read: never pick,
    close a session or change alpha through it (that would warm nodes for others)."""
    vine = Vine(read_forest_base, writable=False)
    yield vine
    vine.close()
