"""Built-in converter: an image plants as a media node with its bytes as the payload.

An image is never unsupported: a truncated, corrupt, unknown or oversized file still
plants, with the problem stated in its body and in a warning. Pillow's pixel limit
(``Image.MAX_IMAGE_PIXELS``) is left at its default; an image over it is never
decoded. Pillow signals that with ``DecompressionBombWarning`` (over the limit) or
``DecompressionBombError`` (over twice the limit), neither of which is an OSError.

What the photo says about itself (EXIF, XMP, IPTC, PNG text: see ``_image_metadata``
for the sources and their precedence, XMP > IPTC > EXIF > PNG text) goes into:

- the body: when and where it was taken on the media line
  (``...; taken 2024-06-01 14:03, GPS 48.8584 N 2.2945 E, altitude 35 m``), its
  title, description, author, keywords and copyright as a list after that line;
- the passport, through ``Conversion.frontmatter``: ``title`` (the photo's own
  title, else the file-name title), ``created`` (the day it was taken), ``modified``
  (its last edit: ``source_modified``), ``author`` (``source_author``) and ``tags``:
  its first five keywords folded the way the forest stores tags (lowercase, one
  word: "Eiffel Tower" -> ``eiffel-tower``); the keywords stay listed in the body
  (the first 30, then how many more).

A metadata field that cannot be read is skipped, and one warning names the file and
the skipped fields (never their values); the image plants either way.
"""
from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

from monkeyllm_gardener import Conversion, ConversionError, MediaInfo, hookimpl
from monkeyllm_gardener.kit import media_conversion

from ._extras import INGEST_HINT
from ._image_metadata import ImageFacts, read_image_facts

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
MAX_KEYWORD_TAGS = 5  # the Curator's tag cap: more would be dropped at curation anyway
MAX_TAG_CHARACTERS = 32  # a tag is a short word; a longer keyword stays in the body only


class ImageConverter:
    name = "image"
    extensions = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff")
    requires = ("PIL",)
    install_hint = INGEST_HINT

    def convert(self, path: Path) -> Conversion:
        info, facts = inspect_image(path)
        notes = (f"{path.name}: some image metadata could not be read and was skipped "
                 f"({'; '.join(facts.skipped)}); the image planted without it",) if facts.skipped else ()
        return media_conversion(path, info, payload_type="image", noun="image", warnings=notes,
                                frontmatter=passport_fields(facts))


@hookimpl
def register_converters(register) -> None:
    register(ImageConverter(), priority=0.0)


def read_image_info(path: Path) -> MediaInfo:
    """Format, pixel size and the photo's own metadata; ``problem`` says why decoding stopped."""
    return inspect_image(path)[0]


def inspect_image(path: Path) -> tuple[MediaInfo, ImageFacts]:
    """What the body shows, and everything the metadata declared (for the passport)."""
    from PIL import Image

    size_bytes = _file_size(path)
    sniffed_format = _sniff_format(_read_prefix(path))
    base = dict(kind="image", filename=path.name, size_bytes=size_bytes)
    nothing = ImageFacts()
    if size_bytes == 0:
        return MediaInfo(**base, format="unknown", problem="corrupt or truncated image: the file is empty"), nothing
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", Image.DecompressionBombWarning)
            image = Image.open(path)
    except Image.DecompressionBombError as error:
        return MediaInfo(**base, format=sniffed_format, problem=_bomb_problem(_declared_pixels(error))), nothing
    except Image.UnidentifiedImageError:
        problem = "corrupt or truncated image: Pillow cannot identify the image format"
        return MediaInfo(**base, format=sniffed_format, problem=problem), nothing
    except Exception as error:  # noqa: BLE001 - Pillow parsing untrusted bytes; the image still plants
        return MediaInfo(**base, format=sniffed_format, problem=_corrupt_problem(error, path)), nothing
    with image:
        width, height = image.size
        if any(issubclass(w.category, Image.DecompressionBombWarning) for w in caught):
            problem = _bomb_problem(f"{width}x{height} pixels")
        else:
            problem = _decode_problem(image, path)
        # After decoding: a PNG's text and eXIf chunks may follow its pixel data, and
        # Pillow adds them to image.info only once it has read that far.
        facts = _guarded_facts(image, [w for w in caught if not issubclass(w.category, Image.DecompressionBombWarning)])
        known = dict(base, format=image.format or sniffed_format, width=width, height=height, **_body_facts(facts))
    return MediaInfo(**known, problem=problem), facts


def passport_fields(facts: ImageFacts) -> dict[str, Any]:
    """The ``Conversion.frontmatter`` a photo's metadata declares."""
    fields: dict[str, Any] = {}
    if facts.title:
        fields["title"] = facts.title
    if facts.taken:
        fields["created"] = facts.taken[:10]  # "2024-06-01 14:03 +02:00" -> the day it was taken
    if facts.modified:
        fields["modified"] = facts.modified
    if facts.author:
        fields["author"] = facts.author
    tags = keyword_tags(facts.keywords)
    if tags:
        fields["tags"] = tags
    return fields


def keyword_tags(keywords: tuple[str, ...]) -> list[str]:
    """The first ``MAX_KEYWORD_TAGS`` keywords as forest tags ("Eiffel Tower" ->
    ``eiffel-tower``), skipping any that fold to nothing or to more than a short word."""
    from monkeyllm_gardener.kit import fold_tag  # the Curator's rule: imported when a photo has keywords

    tags: list[str] = []
    for keyword in keywords:
        tag = fold_tag(keyword)
        if tag and len(tag) <= MAX_TAG_CHARACTERS and tag not in tags:
            tags.append(tag)
    return tags[:MAX_KEYWORD_TAGS]


def _body_facts(facts: ImageFacts) -> dict[str, Any]:
    """The MediaInfo fields the body renders: capture facts for the media line, the
    file's own text as the details list."""
    keywords = ", ".join(facts.keywords)
    if facts.keywords_omitted:
        keywords += f", \u2026 and {facts.keywords_omitted} more"
    details = {"title": facts.title, "description": facts.description, "author": facts.author,
               "keywords": keywords, "copyright": facts.copyright}
    return dict(taken=facts.taken, latitude=facts.latitude, longitude=facts.longitude,
                altitude_m=facts.altitude_m, details={key: value for key, value in details.items() if value})


def _guarded_facts(image: Any, open_warnings: list[Any]) -> ImageFacts:
    # read_image_facts guards each source itself; this is the last line of defence
    # for a Pillow failure nobody has seen yet: metadata is optional, the image is not.
    try:
        return read_image_facts(image, open_warnings=open_warnings)
    except Exception as error:  # noqa: BLE001 - third-party parsers on untrusted bytes
        return ImageFacts(skipped=(f"metadata: unreadable ({type(error).__name__})",))


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
