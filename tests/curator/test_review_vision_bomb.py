"""The vision describer never decodes an image the image converter refused as a bomb."""
from __future__ import annotations

from pathlib import Path

import pytest
from monkeyllm_plugins.image_media import read_image_info
from monkeyllm_plugins.vision_describer import describer_from_env
from PIL import Image

from monkeyllm_gardener.curator.testing_server import (
    ScriptedOpenAIServer,
    chat_completion,
)


def test_image_over_the_pixel_limit_is_not_decoded_nor_sent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A small pixel limit stands in for Pillow's 89 M pixels: the image is over it but
    # under twice it, where Pillow only warns (DecompressionBombWarning) and would decode.
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 10_000)
    bomb = tmp_path / "bomb.png"
    Image.new("1", (120, 100)).save(bomb)
    info = read_image_info(bomb)
    assert info.problem and "decompression bomb refused" in info.problem
    with ScriptedOpenAIServer(default_reply=chat_completion("A black square.")) as server:
        env = {"MONKEYLLM_VISION_MODEL": "vision-model", "MONKEYLLM_LLM_ENDPOINT": server.base_url,
               "MONKEYLLM_LLM_RETRIES": "0", "MONKEYLLM_LLM_TIMEOUT": "5"}
        describer = describer_from_env(env)
        try:
            with pytest.raises(Exception, match="(?i)bomb|pixel"):
                describer.describe(bomb, info)
        finally:
            describer.close()
        assert server.requests == []
