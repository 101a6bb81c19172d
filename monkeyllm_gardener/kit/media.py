"""What an image or audio converter returns: a media node with the file's own bytes
as its payload.

A media converter reads what it can without a model (format, pixel size,
duration, the file's own tags and captions) into a ``MediaInfo`` and hands it to
``media_conversion``; the Gardener renders the node body from it (the textual
proxy the forest searches, pinned by FOREST-FORMAT.md, Media), installs the bytes
in ``_assets/`` and lets a describer write the description later. A file that
cannot be fully read still plants: its ``MediaInfo.problem`` is stated in the body
and in a warning, so nothing a user exported is silently dropped.

Every value a file declares about itself is file content: ``clean_tag`` makes one
safe, short line of it (the same one-line rule as every title and summary), so an
ID3 title padded with NULs or an EXIF caption holding terminal escapes cannot
break the body or drive a terminal.
"""
from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any, Mapping

from monkeyllm_core.store.messages import one_line

from monkeyllm_gardener.conversion import Conversion, MediaInfo, PayloadType

__all__ = ["MAX_TAG_CHARACTERS", "clean_tag", "media_conversion", "media_title"]

MAX_TAG_CHARACTERS = 200


def media_conversion(path: Path, info: MediaInfo, *, payload_type: PayloadType, noun: str = "file",
                     warnings: tuple[str, ...] = (), frontmatter: Mapping[str, Any] | None = None) -> Conversion:
    """An image or audio file as a media node with its original bytes as the payload.
    A file that could not be read fully still plants, with the problem stated
    (``noun``: what the user is asked to re-export). ``frontmatter``: the passport
    fields the file declares itself (see ``Conversion.frontmatter``)."""
    if info.problem:
        warnings = (*warnings, f"{path.name}: {info.problem}; planted as a media node with its original "
                               f"bytes; re-export the {noun} to read it fully")
    return Conversion(kind="payload", payload_type=payload_type, payload_path=path, node_type="media",
                      title=media_title(path.name), media=info, warnings=warnings,
                      frontmatter=dict(frontmatter or {}))


def media_title(source_name: str) -> str:
    """A readable title from a file name: ``team_photo.png`` -> ``team photo``."""
    stem = PurePosixPath(source_name).stem or source_name
    readable = one_line(stem.replace("_", " ").replace("-", " "))
    return readable or one_line(stem) or one_line(source_name)


def clean_tag(value: str, limit: int = MAX_TAG_CHARACTERS) -> str:
    """A metadata value (EXIF, ID3, ...) as one short line: control characters
    (NUL padding included) and whitespace runs become one space; a value over
    ``limit`` characters is cut, with a visible ``…``."""
    text = one_line(value)
    if len(text) > limit:
        text = text[: limit - 1] + "\u2026"
    return text
