"""Built-in converter: an image plants as a media node with its bytes as the payload.

An image is never unsupported: a truncated, corrupt, unknown or oversized file still
plants, with the problem stated in its body and in a warning. Pillow's pixel limit
(``Image.MAX_IMAGE_PIXELS``) is left at its default; an image over it is never
decoded. Pillow signals that with ``DecompressionBombWarning`` (over the limit) or
``DecompressionBombError`` (over twice the limit), neither of which is an OSError.
"""
from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

from monkeyllm_gardener.conversion import Conversion, ConversionError, MediaInfo
from monkeyllm_gardener.hookspecs import hookimpl
from monkeyllm_gardener.media import clean_tag, media_conversion

# Magic numbers of the formats this converter claims, used to name the format when
# Pillow refuses the file before telling us (a bomb, a broken header).
_MAGIC_FORMATS = (
    (b"\x89PNG\r\n\x1a\n", "PNG"),
    (b"\xff\xd8\xff", "JPEG"),
    (b"GIF87a", "GIF"),
    (b"GIF89a", "GIF"),
    (b"BM", "BMP"),
    (b"II*\x00", "TIFF"),
    (b"MM\x00*", "TIFF"),
)
# EXIF tag ids: ImageDescription, Artist, XPTitle (UTF-16LE bytes, set by Windows).
_EXIF_DESCRIPTION, _EXIF_ARTIST, _EXIF_XP_TITLE = 0x010E, 0x013B, 0x9C9B
# PNG text chunk keys (PNG spec, section 11.3.4.2) -> our tag names.
_PNG_TEXT_KEYS = (("Title", "title"), ("Description", "description"), ("Author", "artist"))


class ImageConverter:
    name = "image"
    extensions = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff")
    requires = ("PIL",)
    install_hint = 'pip install "monkeyllm[ingest]"'

    def convert(self, path: Path) -> Conversion:
        info = read_image_info(path)
        return media_conversion(path, info, payload_type="image", noun="image")


@hookimpl
def register_converters(register) -> None:
    register(ImageConverter(), priority=0.0)


def read_image_info(path: Path) -> MediaInfo:
    """Format, pixel size and cheap tags; ``problem`` says why decoding stopped."""
    from PIL import Image

    size_bytes = _file_size(path)
    sniffed_format = _sniff_format(_read_prefix(path))
    base = dict(kind="image", filename=path.name, size_bytes=size_bytes)
    if size_bytes == 0:
        return MediaInfo(**base, format="unknown", problem="corrupt or truncated image: the file is empty")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", Image.DecompressionBombWarning)
            image = Image.open(path)
    except Image.DecompressionBombError as error:
        return MediaInfo(**base, format=sniffed_format, problem=_bomb_problem(_declared_pixels(error)))
    except Image.UnidentifiedImageError:
        return MediaInfo(
            **base,
            format=sniffed_format,
            problem="corrupt or truncated image: Pillow cannot identify the image format",
        )
    except Exception as error:  # noqa: BLE001 - Pillow parsing untrusted bytes; the image still plants
        return MediaInfo(**base, format=sniffed_format, problem=_corrupt_problem(error, path))
    with image:
        image_format = image.format or sniffed_format
        width, height = image.size
        known = dict(base, format=image_format, width=width, height=height, tags=_cheap_tags(image))
        if any(issubclass(w.category, Image.DecompressionBombWarning) for w in caught):
            return MediaInfo(**known, problem=_bomb_problem(f"{width}x{height} pixels"))
        problem = _decode_problem(image, path)
    return MediaInfo(**known, problem=problem)


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError as error:
        raise ConversionError(f"{path.name}: cannot read the file ({error.strerror})") from error


def _decode_problem(image: Any, path: Path) -> str | None:
    """Decode every pixel once, the only way to find a truncated body."""
    from PIL import Image

    try:
        if image.format == "JPEG":
            # Draft mode decodes at 1/8 scale: the whole entropy-coded stream is still
            # read (so truncation shows), at a fraction of the memory.
            image.draft(image.mode, (max(1, image.width // 8), max(1, image.height // 8)))
        image.load()
    except Image.DecompressionBombError as error:
        return _bomb_problem(_declared_pixels(error))
    except Exception as error:  # noqa: BLE001 - Pillow decoding untrusted bytes; the image still plants
        return _corrupt_problem(error, path)
    return None


def _bomb_problem(declared: str) -> str:
    from PIL import Image

    return (
        f"decompression bomb refused: the image declares {declared}, over Pillow's safety "
        f"limit of {Image.MAX_IMAGE_PIXELS} pixels, so it was not decoded"
    )


def _declared_pixels(error: Exception) -> str:
    # Pillow says "Image size (900000000 pixels) exceeds limit of ..."; only the
    # count is kept, in our own sentence.
    found = re.search(r"\((\d+) pixels\)", str(error))
    return f"{found.group(1)} pixels" if found else "more pixels than that"


def _corrupt_problem(error: BaseException, path: Path) -> str:
    # Pillow's messages name the defect ("image file is truncated"); some repeat the
    # path, which the report already shows.
    reason = str(error).replace(str(path), path.name).strip() or type(error).__name__
    return f"corrupt or truncated image: {reason.splitlines()[0]}"


def _read_prefix(path: Path) -> bytes:
    # An unreadable file (permissions, a directory, deleted since the walk) fails
    # here, so it is never mistaken for a corrupt image.
    try:
        with path.open("rb") as handle:
            return handle.read(16)
    except OSError as error:
        raise ConversionError(f"{path.name}: cannot read the file ({error.strerror})") from error


def _sniff_format(prefix: bytes) -> str:
    if prefix[:4] == b"RIFF" and prefix[8:12] == b"WEBP":
        return "WEBP"
    for magic, name in _MAGIC_FORMATS:
        if prefix.startswith(magic):
            return name
    return "unknown"


def _cheap_tags(image: Any) -> dict[str, str]:
    """Title, description and artist from PNG text chunks or EXIF, when present.
    Metadata is optional: a malformed block is skipped, the image still plants."""
    tags: dict[str, str] = {}
    for key, tag in _PNG_TEXT_KEYS:
        value = image.info.get(key)
        if isinstance(value, str):
            _put(tags, tag, value)
    try:
        exif = image.getexif()
    except Exception:  # noqa: BLE001 - third-party parser on untrusted bytes
        return tags
    _put(tags, "title", _decode_xp(exif.get(_EXIF_XP_TITLE)))
    _put(tags, "description", exif.get(_EXIF_DESCRIPTION))
    _put(tags, "artist", exif.get(_EXIF_ARTIST))
    return {key: tags[key] for key in ("title", "description", "artist") if key in tags}


def _decode_xp(value: Any) -> str | None:
    if isinstance(value, tuple):  # some writers store XP tags as a tuple of byte values
        value = bytes(value)
    if isinstance(value, bytes):
        return value.decode("utf-16-le", errors="replace")
    return value if isinstance(value, str) else None


def _put(tags: dict[str, str], key: str, value: Any) -> None:
    if key in tags or not isinstance(value, (str, bytes)):
        return
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    text = clean_tag(value)
    if text:
        tags[key] = text
