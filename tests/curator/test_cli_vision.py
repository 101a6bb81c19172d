"""The vision describer through the real CLI: an adopted image is described by a
real OpenAI-compatible server on 127.0.0.1, and a failing one degrades to the stub."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PIL import Image

from monkeyllm_gardener.curator.testing_server import (
    ScriptedOpenAIServer,
    chat_completion,
)
from monkeyllm_gardener.media import SENTINEL

from cli_helpers import Result

DESCRIPTION = "A whiteboard listing three price tiers: Basic $10, Pro $25, Enterprise on request."


def _adopt_one_image(vine_cli: Any, tmp_path: Path, env: dict[str, str]) -> tuple[Result, Path]:
    forest = vine_cli.init(tmp_path / "forest", title="T", env=env)
    source = tmp_path / "export"
    source.mkdir()
    Image.new("RGB", (2400, 1200), (250, 250, 250)).save(source / "whiteboard.png")
    return vine_cli.adopt(source, forest, expect=None, env=env), forest


def test_an_image_is_described_by_the_vision_model(vine_cli: Any, tmp_path: Path) -> None:
    with ScriptedOpenAIServer(default_reply=chat_completion(DESCRIPTION)) as server:
        env = dict(MONKEYLLM_LLM_ENDPOINT=server.base_url, MONKEYLLM_VISION_MODEL="vision-1")
        result, forest = _adopt_one_image(vine_cli, tmp_path, env)
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


def test_a_failing_vision_endpoint_leaves_the_stub_and_a_warning(vine_cli: Any, tmp_path: Path) -> None:
    with ScriptedOpenAIServer(default_reply=(500, {"error": {"message": "model crashed"}})) as server:
        env = dict(MONKEYLLM_LLM_ENDPOINT=server.base_url, MONKEYLLM_VISION_MODEL="vision-1",
                   MONKEYLLM_LLM_RETRIES="0")
        result, forest = _adopt_one_image(vine_cli, tmp_path, env)
    assert result.returncode == 0, result.stderr  # a describer failure is a warning, not a failure
    report = json.loads(result.stdout)
    assert report["planted"] == ["whiteboard"] and report["errors"] == []
    assert any("vision" in w for w in report["warnings"]), report["warnings"]
    assert SENTINEL in (forest / "whiteboard.md").read_text()
