"""Adopt an export folder with the real ``vine`` CLI in a subprocess and read back
what it planted, for converter behaviour that only shows end to end (a pathological
line must plant fast, a view that never ends must not hang the walk). The
environment is a fresh machine's: an empty HOME and git config, no third-party
plugins (``MONKEYLLM_LOAD_PLUGINS`` empty)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from monkeyllm_gardener.testing import isolated_env

VINE = [sys.executable, "-m", "monkeyllm_gardener.cli"]


def run_vine(tmp_path: Path, *args: Any, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = isolated_env(tmp_path / "home", {"MONKEYLLM_LOAD_PLUGINS": ""})
    proc = subprocess.run([*VINE, *map(str, args)], check=False, cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def adopt_with_cli(tmp_path: Path, export: Path, timeout: float = 60) -> tuple[Path, dict[str, Any]]:
    """``vine init`` a forest beside ``export``, ``vine adopt --json`` it; the forest and the report."""
    forest = tmp_path / "forest"
    init = run_vine(tmp_path, "init", "--forest", forest, "--title", "Review")
    assert init.returncode == 0, init.stderr
    proc = run_vine(tmp_path, "adopt", export, "--forest", forest, "--json", timeout=timeout)
    assert proc.returncode in (0, 1), proc.stderr
    return forest, json.loads(proc.stdout)


def passport_of(forest: Path, node_id: str) -> dict[str, Any]:
    text = (forest / f"{node_id}.md").read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---\n", 2)[1])
