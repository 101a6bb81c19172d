"""Fixtures every test folder shares, and the names the whole suite agrees on.

One fixture name means one thing everywhere:

- ``forest``: the ``Path`` of an initialised, empty forest at ``tmp_path / "forest"``
  (the fixture shipped to plugin authors in ``monkeyllm_gardener.testing``;
  tests/gardener makes the same forest with the real ``vine init``).
- ``brain``: the core tests' forest (tests/core/conftest.py), an initialised, empty
  forest at ``tmp_path / "brain"`` wrapped in a ``Forest`` with the checks a user
  runs after a write: ``root``, ``open()``, ``git()``, ``head()``, ``text()``,
  ``snapshot()``, ``cli()`` (the CLI in this process's environment),
  ``assert_clean()``.
- ``vine``: an open, writable ``Vine`` on ``brain``, closed after the test (tests/core).
- ``vine_cli``: the real ``vine`` command in a subprocess with a fresh machine's
  environment (``cli_helpers.VineRunner``): ``vine_cli("validate", "--forest",
  forest)`` returns a ``Result`` and fails the test on a traceback; ``init``,
  ``adopt``, ``sync``, ``adopt_into_new_forest`` and ``assert_consistent`` are the
  usual steps.
- ``cli``: tests/cli_helpers.py as a namespace: readers of what the CLI wrote
  (``cli.node(forest, id)``, ``cli.body``, ``cli.snapshot``, ``cli.git``...) and
  makers of export folders (``cli.write``, ``cli.write_png``, ``cli.install_dists``...).
- ``make_note``: ``make_note(id, summary=None, **fields)``, a note's passport for
  ``vine.plant`` (tests/core).
- ``repo``: an empty git repository that is not a forest, at ``tmp_path / "repo"``
  (tests/core, for the object store).
- ``rich_export``: an export folder holding one file of each kind (tests/gardener).
- ``adopted_*``: what one adopt left, named after what was adopted
  (``adopted_rich_export``, ``adopted_vectors``, ``adopted_fixture_export``).
- ``configured_forest``: a ``forest`` with a ``_meta/gardener.yaml`` (tests/curator).
- ``embed_server``: the scripted OpenAI-compatible server on 127.0.0.1, running for the
  test, whose ``/embeddings`` is the deterministic ``hashed_embedding`` (the canopy
  tests; tests/endpoints.py has ``embedder(embed_server)`` and ``closed_port()``).

A fixture only one module needs stays in that module, named after what it holds
(``holder``, ``orders_db``, ``quarterly_report``, ``without_extras``).

A helper two modules need is written once: tests/cli_helpers.py (the CLI and its
readers, for every folder), tests/processes.py (whether a process has ended),
tests/endpoints.py (a dead port, an embedder of ``embed_server``), and a folder's
own ``_*.py`` modules: tests/core/_git_runs.py, tests/gardener/_command_tools.py,
tests/plugins/_conversions.py, _word_documents.py and _containers.py. Test modules
import them by name. ``monkeyllm_gardener/testing.py`` is for plugin authors: nothing
internal goes there.
"""
from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest

# Test modules import the helper modules of tests/ by name (cli_helpers, processes):
# pytest's default import mode already puts this folder on sys.path (it holds a
# conftest.py and no __init__.py); saying so here keeps them importable under any mode.
TESTS = str(Path(__file__).resolve().parent)
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)

import cli_helpers  # noqa: E402 - needs tests/ on sys.path, above
from cli_helpers import VineRunner  # noqa: E402


@pytest.fixture
def vine_cli(tmp_path: Path) -> VineRunner:
    """The real `vine` CLI, run with HOME at tmp_path/home from tmp_path/cwd."""
    return VineRunner(tmp_path)


@pytest.fixture(scope="session")
def cli() -> ModuleType:
    """The end-to-end helpers (tests/cli_helpers.py): ``cli.node(forest, "notes/x")``."""
    return cli_helpers


@pytest.fixture
def embed_server():
    """The scripted OpenAI-compatible server, embedding with ``hashed_embedding``."""
    from monkeyllm_gardener.curator.testing_server import ScriptedOpenAIServer
    with ScriptedOpenAIServer() as server:
        yield server
