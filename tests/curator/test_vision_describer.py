"""The vision describer against a real HTTP server on 127.0.0.1."""
from __future__ import annotations

import base64
import io
import socket
from pathlib import Path

import pluggy
import pytest
from PIL import Image

from monkeyllm_gardener import hookspecs
from monkeyllm_gardener.conversion import MediaInfo
from monkeyllm_gardener.curator import CuratorConfigError
from monkeyllm_gardener.curator.testing_server import ScriptedOpenAIServer, chat_completion
from monkeyllm_plugins import vision_describer
from monkeyllm_plugins.vision_describer import VisionDescribeError, describer_from_env, encode_for_vision
from monkeyllm_plugins.image_media import read_image_info

DESCRIPTION = "A whiteboard sketch of the pricing tiers.\n\nText: **Basic 10 USD**, **Pro 25 USD**."


def make_image(path: Path, size: tuple[int, int], mode: str = "RGB") -> Path:
    color = (30, 120, 200, 128) if mode == "RGBA" else (30, 120, 200)
    Image.new(mode, size, color).save(path)
    return path


def info_for(path: Path) -> MediaInfo:
    return MediaInfo(kind="image", filename=path.name, format="PNG", size_bytes=path.stat().st_size)


def env_for(server: ScriptedOpenAIServer) -> dict[str, str]:
    return {"MONKEYLLM_VISION_MODEL": "vision-model", "MONKEYLLM_LLM_ENDPOINT": server.base_url,
            "MONKEYLLM_LLM_RETRIES": "0", "MONKEYLLM_LLM_TIMEOUT": "5"}


def decode_data_url(url: str) -> tuple[str, Image.Image, int]:
    header, encoded = url.split(",", 1)
    data = base64.b64decode(encoded)
    return header, Image.open(io.BytesIO(data)), len(data)


def test_request_carries_a_downscaled_image_as_data_url(tmp_path):
    photo = make_image(tmp_path / "whiteboard-pricing.png", (3000, 2000))
    with ScriptedOpenAIServer(default_reply=chat_completion(DESCRIPTION)) as server:
        describer = describer_from_env(env_for(server))
        text = describer.describe(photo, info_for(photo))
        describer.close()
        sent = server.requests[0]
    assert text == DESCRIPTION
    assert sent["model"] == "vision-model"
    assert "transcribe" in sent["messages"][0]["content"].lower()
    parts = sent["messages"][1]["content"]
    image_url = next(part["image_url"]["url"] for part in parts if part["type"] == "image_url")
    header, image, size = decode_data_url(image_url)
    assert header == "data:image/jpeg;base64"
    assert image.size == (1024, 683)
    assert size <= 1_500_000
    assert "whiteboard-pricing.png" in parts[0]["text"]


def test_transparent_image_is_sent_as_png_and_small_images_keep_their_size(tmp_path):
    encoded = encode_for_vision(make_image(tmp_path / "logo.png", (300, 200), mode="RGBA"))
    assert encoded.mime == "image/png" and (encoded.width, encoded.height) == (300, 200)


def test_encoding_respects_the_byte_cap(tmp_path):
    noisy = tmp_path / "noise.png"
    Image.effect_noise((1024, 1024), 100).convert("RGB").save(noisy)
    encoded = encode_for_vision(noisy, max_bytes=60_000)
    assert encoded.size_bytes <= 60_000
    assert encoded.data_url.startswith("data:image/jpeg;base64,")


def test_transport_failure_raises_so_the_host_falls_back_to_the_stub(tmp_path):
    photo = make_image(tmp_path / "team.png", (64, 64))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    describer = describer_from_env(
        {"MONKEYLLM_VISION_MODEL": "v", "MONKEYLLM_LLM_ENDPOINT": f"http://127.0.0.1:{port}/v1",
         "MONKEYLLM_LLM_RETRIES": "0", "MONKEYLLM_LLM_TIMEOUT": "2"}
    )
    with pytest.raises(VisionDescribeError) as raised:
        describer.describe(photo, info_for(photo))
    assert "team.png" in str(raised.value) and "could not connect" in str(raised.value)


def test_server_error_raises_too(tmp_path):
    photo = make_image(tmp_path / "team.png", (64, 64))
    with ScriptedOpenAIServer(default_reply=(503, {"error": {"message": "overloaded"}})) as server:
        describer = describer_from_env(env_for(server))
        with pytest.raises(VisionDescribeError, match="HTTP 503"):
            describer.describe(photo, info_for(photo))


def test_audio_is_passed(tmp_path):
    with ScriptedOpenAIServer() as server:
        describer = describer_from_env(env_for(server))
        info = MediaInfo(kind="audio", filename="a.wav", format="WAV", size_bytes=10)
        assert describer.describe(tmp_path / "a.wav", info) is None
        assert server.requests == []


def test_disabled_without_a_vision_model(monkeypatch):
    monkeypatch.delenv("MONKEYLLM_VISION_MODEL", raising=False)
    registered = []
    vision_describer.register_describers(register=lambda describer, **kw: registered.append(describer))
    assert registered == []


def test_enabled_with_a_vision_model_registers_an_image_describer(monkeypatch):
    monkeypatch.setenv("MONKEYLLM_VISION_MODEL", "vision-model")
    monkeypatch.setenv("MONKEYLLM_LLM_ENDPOINT", "http://127.0.0.1:9/v1")
    manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    manager.add_hookspecs(hookspecs)
    manager.register(vision_describer)
    manager.check_pending()
    registered = []
    manager.hook.register_describers(register=lambda describer, **kw: registered.append(describer))
    assert [(d.name, set(d.kinds)) for d in registered] == [("vision", {"image"})]


def test_vision_model_without_endpoint_is_a_one_line_config_error():
    with pytest.raises(CuratorConfigError, match="MONKEYLLM_VISION_MODEL is set but MONKEYLLM_LLM_ENDPOINT is not"):
        describer_from_env({"MONKEYLLM_VISION_MODEL": "v"})


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
