"""A pytest plugin for plugin authors (loaded automatically once monkeyllm is installed).

``isolated_env(home, extra)`` is the environment to run ``vine`` in a subprocess
with: an empty HOME and git config (no identity, no user plugins' allow-list), so
a test sees what a fresh machine sees.

Fixtures:

- ``forest``: a fresh forest under tmp_path (real git, real catalog).
- ``adopt_folder``: ``adopt_folder(source, **kwargs) -> Report`` adopts a folder
  into ``forest`` through the real pipeline, in-process (``jobs=1``).
- ``plugin_host``: ``plugin_host("my_plugin_module", builtins=True) -> PluginHost``
  builds a host that loads your plugin module by import name, beside (or instead
  of) the built-ins, so one test can register a plugin without installing it.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Mapping

import pytest

from monkeyllm_core import init_forest


def isolated_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """PATH, an empty HOME and git config, a UTF-8 locale, plus ``extra``."""
    home.mkdir(parents=True, exist_ok=True)
    gitconfig = home / ".gitconfig-empty"
    gitconfig.touch()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "GIT_CONFIG_GLOBAL": str(gitconfig),
           "GIT_CONFIG_NOSYSTEM": "1", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
    env.update(extra or {})
    return env


@pytest.fixture
def forest(tmp_path: Path) -> Path:
    return init_forest(tmp_path / "forest", "Test forest")


@pytest.fixture
def adopt_folder(forest: Path) -> Callable[..., Any]:
    from .pipeline import Gardener

    def adopt(source: Path, **kwargs: Any) -> Any:
        kwargs.setdefault("jobs", 1)
        return Gardener(forest).adopt(Path(source), **kwargs)

    return adopt


@pytest.fixture
def plugin_host() -> Callable[..., Any]:
    from .host import BUILTIN_PLUGIN_MODULES, PluginHost

    def build(*modules: str, builtins: bool = True, **kwargs: Any) -> PluginHost:
        names = tuple(modules) + (BUILTIN_PLUGIN_MODULES if builtins else ())
        kwargs.setdefault("load_entry_points", False)
        return PluginHost(builtins=names, **kwargs)

    return build
