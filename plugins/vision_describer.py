"""Describe images with a vision model bound through the environment.

Enabled only when ``MONKEYLLM_VISION_MODEL`` is set; the endpoint and key come from
the same variables as the Curator (``MONKEYLLM_LLM_ENDPOINT``, ``MONKEYLLM_LLM_API_KEY``,
``MONKEYLLM_LLM_TIMEOUT``, ``MONKEYLLM_LLM_RETRIES``), through the kit's
``ModelClient``. ``MONKEYLLM_VISION_MAX_TOKENS`` (default 1200) bounds the description.

The image is downscaled to at most 1024 px on its long side and re-encoded (PNG when
it has transparency, else JPEG), capped at 1.5 MB, and sent as a data URL. The model
is asked what the image shows and to transcribe legible text, labels, code and the
structure of diagrams: the transcription is what exact-term search will read.
A transport failure raises, so the host records a warning and falls back to the stub.
pillow, openai and the model client (the Curator's package) are imported lazily.
"""
from __future__ import annotations

import base64
import io
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from monkeyllm_gardener import MediaInfo, hookimpl

MAX_SIDE_PX = 1024
MAX_ENCODED_BYTES = 1_500_000
DEFAULT_MAX_TOKENS = 1200

VISION_INSTRUCTIONS = """\
You describe one image for a searchable knowledge base. Reply in markdown:
1. One or two sentences stating what the image shows (kind of image and subject).
2. Then transcribe every legible piece of text exactly as written: headings, labels, \
bullet points, numbers, code (in a fenced block), axis titles, signs.
3. For a diagram, chart or whiteboard, describe its structure: the boxes or nodes, \
what connects to what, and the direction of arrows.
Do not guess text you cannot read; say that it is illegible. No preamble."""


class VisionDescribeError(RuntimeError):
    """Describing one image failed; the message is one line naming the file."""


@dataclass(frozen=True, kw_only=True)
class EncodedImage:
    data_url: str
    mime: str
    width: int
    height: int
    size_bytes: int


def encode_for_vision(path: Path, *, max_side: int = MAX_SIDE_PX, max_bytes: int = MAX_ENCODED_BYTES) -> EncodedImage:
    """The image at ``path`` downscaled and re-encoded as a data URL under ``max_bytes``."""
    from PIL import Image, ImageOps

    with warnings.catch_warnings():
        # Over Pillow's pixel limit (but under twice it) Pillow only warns and decodes
        # anyway; the image converter refuses such a file as a bomb, so do we.
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            with Image.open(path) as opened:
                opened.seek(0)  # first frame of an animation
                image = ImageOps.exif_transpose(opened)
                image.load()
        except (Image.DecompressionBombWarning, Image.DecompressionBombError):
            raise VisionDescribeError(
                f"{path.name}: decompression bomb refused (over {Image.MAX_IMAGE_PIXELS} pixels): not sent"
            ) from None
    has_alpha = image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info)
    image = image.convert("RGBA" if has_alpha else "RGB")
    side = max_side
    while True:
        scaled = image.copy()
        scaled.thumbnail((side, side), Image.Resampling.LANCZOS)
        for mime, save in _encoders(has_alpha):
            buffer = io.BytesIO()
            save(scaled, buffer)
            data = buffer.getvalue()
            if len(data) <= max_bytes:
                encoded = base64.b64encode(data).decode("ascii")
                return EncodedImage(
                    data_url=f"data:{mime};base64,{encoded}",
                    mime=mime,
                    width=scaled.width,
                    height=scaled.height,
                    size_bytes=len(data),
                )
        if side <= 128:
            raise VisionDescribeError(f"{path.name}: could not encode the image under {max_bytes} bytes")
        side = side * 3 // 4  # still too big at every quality: fewer pixels


def _encoders(has_alpha: bool) -> list[tuple[str, Callable[[Any, io.BytesIO], None]]]:
    if has_alpha:  # JPEG cannot carry transparency; flatten on white as a last resort
        return [
            ("image/png", lambda img, buf: img.save(buf, format="PNG", optimize=True)),
            ("image/jpeg", lambda img, buf: _flatten(img).save(buf, format="JPEG", quality=80)),
        ]
    return [
        ("image/jpeg", lambda img, buf: img.save(buf, format="JPEG", quality=85)),
        ("image/jpeg", lambda img, buf: img.save(buf, format="JPEG", quality=60)),
    ]


def _flatten(image: Any) -> Any:
    from PIL import Image

    background = Image.new("RGB", image.size, (255, 255, 255))
    background.paste(image, mask=image.getchannel("A"))
    return background


class VisionDescriber:
    name = "vision"
    kinds = frozenset({"image"})

    def __init__(self, *, model: str, environ: Mapping[str, str]) -> None:
        from monkeyllm_gardener.kit import ModelClient  # only once a vision model is bound

        self.model = model
        self.client = ModelClient.from_env(environ)  # ModelConfigError if unusable
        self.max_tokens = _int_env(environ, "MONKEYLLM_VISION_MAX_TOKENS", DEFAULT_MAX_TOKENS)

    def describe(self, path: Path, info: MediaInfo) -> str | None:
        if info.kind != "image":
            return None
        image = encode_for_vision(path)
        messages = [
            {"role": "system", "content": VISION_INSTRUCTIONS},
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": f"Image file: {info.filename} ({info.format}, "
                        f"{image.width}x{image.height} px as sent).",
                    },
                    {"type": "image_url", "image_url": {"url": image.data_url}},
                ],
            },
        ]
        from monkeyllm_gardener.kit import ModelFailure

        try:
            text = self.client.complete(model=self.model, messages=messages, max_tokens=self.max_tokens)
        except ModelFailure as exc:
            raise VisionDescribeError(f"{info.filename}: vision model {self.model!r} failed: {exc}") from exc
        text = text.strip()
        return text or None

    def close(self) -> None:
        self.client.close()


def _int_env(environ: Mapping[str, str], name: str, default: int) -> int:
    raw = (environ.get(name) or "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        from monkeyllm_gardener.kit import ModelConfigError

        raise ModelConfigError(f"{name} must be a whole number >= 1, got {raw[:40]!r}")
    return int(raw)


def describer_from_env(environ: Mapping[str, str]) -> VisionDescriber | None:
    """The describer the environment binds, or None when MONKEYLLM_VISION_MODEL is unset.
    Raises ModelConfigError (one line) when it is set but the endpoint is not."""
    model = (environ.get("MONKEYLLM_VISION_MODEL") or "").strip()
    if not model:
        return None
    if not (environ.get("MONKEYLLM_LLM_ENDPOINT") or "").strip():
        from monkeyllm_gardener.kit import ModelConfigError

        raise ModelConfigError(
            "MONKEYLLM_VISION_MODEL is set but MONKEYLLM_LLM_ENDPOINT is not "
            "(an OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1)"
        )
    return VisionDescriber(model=model, environ=environ)


@hookimpl
def register_describers(register: Callable[..., None]) -> None:
    describer = describer_from_env(os.environ)
    if describer is not None:
        register(describer)
