"""The vision describer through the real CLI: an adopted image is described by a
real OpenAI-compatible server on 127.0.0.1, and a failing one degrades to the stub."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from PIL import Image

from monkeyllm_gardener.curator.testing_server import (
    ScriptedOpenAIServer,
    chat_completion,
)
from monkeyllm_gardener.media import SENTINEL
from monkeyllm_gardener.testing import isolated_env

VINE = [sys.executable, "-m", "monkeyllm_gardener.cli"]
DESCRIPTION = "A whiteboard listing three price tiers: Basic $10, Pro $25, Enterprise on request."


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return isolated_env(tmp_path / "home", extra)


def _adopt_one_image(tmp_path: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], Path]:
    forest = tmp_path / "forest"
    subprocess.run([*VINE, "init", "--forest", str(forest), "--title", "T"], env=env, check=True,
                   capture_output=True)
    source = tmp_path / "export"
    source.mkdir()
    Image.new("RGB", (2400, 1200), (250, 250, 250)).save(source / "whiteboard.png")
    result = subprocess.run([*VINE, "adopt", str(source), "--forest", str(forest), "--json"],
                            env=env, capture_output=True, text=True, timeout=120)
    return result, forest


def test_an_image_is_described_by_the_vision_model(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(default_reply=chat_completion(DESCRIPTION)) as server:
        env = _env(tmp_path, MONKEYLLM_LLM_ENDPOINT=server.base_url, MONKEYLLM_VISION_MODEL="vision-1")
        result, forest = _adopt_one_image(tmp_path, env)
        requests = server.requests
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["planted"] == ["whiteboard"]
    body = (forest / "whiteboard.md").read_text()
    assert DESCRIPTION in body and "## Description" in body
    assert SENTINEL not in body
    assert "(PNG format" in body  # the facts line stays
    (request,) = requests
    assert request["model"] == "vision-1"
    parts = [p for m in request["messages"] if isinstance(m["content"], list) for p in m["content"]]
    urls = [p["image_url"]["url"] for p in parts if p.get("type") == "image_url"]
    assert len(urls) == 1 and urls[0].startswith("data:image/")


def test_a_failing_vision_endpoint_leaves_the_stub_and_a_warning(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(default_reply=(500, {"error": {"message": "model crashed"}})) as server:
        env = _env(tmp_path, MONKEYLLM_LLM_ENDPOINT=server.base_url, MONKEYLLM_VISION_MODEL="vision-1",
                   MONKEYLLM_LLM_RETRIES="0")
        result, forest = _adopt_one_image(tmp_path, env)
    assert result.returncode == 0, result.stderr  # a describer failure is a warning, not a failure
    report = json.loads(result.stdout)
    assert report["planted"] == ["whiteboard"] and report["errors"] == []
    assert any("vision" in w for w in report["warnings"]), report["warnings"]
    assert SENTINEL in (forest / "whiteboard.md").read_text()
