"""The body of a media node: the textual proxy the forest searches for an image or
audio file, and the name its payload takes inside ``_assets/``. (Converters make
the media conversion this renders with the plugin kit: ``kit.media_conversion``.)

The body without a description is pinned by FOREST-FORMAT.md (Media):

    # team photo

    Media file `team_photo.png` (PNG format, 73 bytes).

    No description has been generated for this media yet.

What is known without a model (pixel size, duration, when and where a photo was
taken, tags) goes on the line with the format and size; a file that could not be
fully read says so in a sentence of its own on that line. Text the file declares
about itself (``MediaInfo.details``: a photo's title, description, author,
keywords, copyright) follows as a short list, so it is searchable, before the
sentinel, which stays the last line, verbatim, until a describer writes a
description; the description then takes its place under ``## Description``:

    # Eiffel tower at dusk

    Media file `IMG_0042.jpg` (JPEG format, 52311 bytes, 640x480 pixels; taken 2024-06-01 14:03, GPS 48.8584 N 2.2945 E, altitude 35 m).

    - Title: Eiffel tower at dusk
    - Author: Ana Silva

    No description has been generated for this media yet.

Every value is file content: each is forced onto one line (control characters
and newlines become spaces), so none can break the body's structure.
"""
from __future__ import annotations

import math
import re
from pathlib import PurePosixPath

from monkeyllm_gardener.conversion import MediaInfo
from monkeyllm_core.store.messages import one_line
from monkeyllm_gardener.derive import CONTROL_CHARACTERS

SENTINEL = "No description has been generated for this media yet."

# Control characters (newline included) would break the body's line structure: in
# titles, tags and problems they become spaces; in a file name they are shown as
# U+FFFD, so the name stays recognisable (the exact name is in source_path).
_UNSAFE_ASSET_CHARACTERS = re.compile(r"[^A-Za-z0-9_-]+")
_SAFE_EXTENSION = re.compile(r"\.[a-z0-9]{1,10}")


def render_media_body(title: str, info: MediaInfo, description: str | None = None) -> str:
    """The markdown body of a media node; ``description`` (markdown from a
    describer) replaces the sentinel when given and not blank."""
    heading = f"# {one_line(title) or one_line(info.filename) or 'media'}"
    if description is not None and description.strip():
        closing = f"## Description\n\n{description.strip()}"
    else:
        closing = SENTINEL
    details = media_details(info)
    listed = f"{details}\n\n" if details else ""
    return f"{heading}\n\n{media_line(info)}\n\n{listed}{closing}\n"


def media_line(info: MediaInfo) -> str:
    """``Media file `name` (FORMAT format, N bytes, ...; taken ..., GPS ...; tags).``
    plus the problem, if any."""
    line = f"Media file {_code_span(info.filename)} ({_line_facts(info)})."
    if info.problem:
        line += f" The file could not be fully read: {_sentence(one_line(info.problem))}"
    return line


def media_summary_facts(info: MediaInfo) -> str:
    """What a derived summary says after the title: the media line's facts (not its
    ``Media file`` preamble nor a problem), then the file's own description, the
    best scent a photo has."""
    facts = _line_facts(info)
    description = one_line(info.details.get("description", ""))
    return f"{facts}; {description}" if description else facts


def _line_facts(info: MediaInfo) -> str:
    facts = [f"{one_line(info.format) or 'unknown'} format", _count(info.size_bytes, "byte")]
    if info.width is not None and info.height is not None:
        facts.append(f"{info.width}x{info.height} pixels")
    if info.duration_seconds is not None:
        facts.append(_duration(info.duration_seconds))
    shown = ", ".join(facts)
    capture = _capture_facts(info)
    if capture:
        shown += "; " + ", ".join(capture)
    tags = [f"{one_line(key)}: {one_line(value)}" for key, value in info.tags.items() if one_line(value)]
    if tags:
        shown += "; " + ", ".join(tags)
    return shown


def media_details(info: MediaInfo) -> str:
    """``- Title: ...`` lines for the text the file declares about itself; "" when none."""
    items = []
    for key, value in info.details.items():
        label, text = one_line(key), one_line(value)
        if label and text:
            items.append(f"- {label[:1].upper()}{label[1:]}: {text}")
    return "\n".join(items)


def media_asset_name(node_slug: str, source_name: str) -> str:
    """The payload's file name inside ``_assets/``: the node's slug (its last path
    segment, reduced to ``[A-Za-z0-9_-]``) plus the source's lowercase extension
    (dropped when it is not plain ``[a-z0-9]``), e.g. ``team-photo.png``. Never
    contains a separator or ``..``, so it cannot point outside ``_assets/``."""
    last_segment = node_slug.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    safe_stem = _UNSAFE_ASSET_CHARACTERS.sub("-", last_segment).strip("-_") or "media"
    extension = PurePosixPath(source_name.replace("\\", "/")).suffix.lower()
    if not _SAFE_EXTENSION.fullmatch(extension):
        extension = ""
    return safe_stem + extension


def _code_span(text: str) -> str:
    """A CommonMark code span that survives backticks in ``text``: the fence is one
    backtick longer than the longest run inside, padded when ``text`` starts or
    ends with a backtick."""
    shown = CONTROL_CHARACTERS.sub("\ufffd", text)
    longest_run = max((len(run) for run in re.findall(r"`+", shown)), default=0)
    fence = "`" * (longest_run + 1)
    if shown.startswith("`") or shown.endswith("`"):
        shown = f" {shown} "
    return f"{fence}{shown}{fence}"


def _capture_facts(info: MediaInfo) -> list[str]:
    """``taken 2024-06-01 14:03``, ``GPS 48.8584 N 2.2945 E``, ``altitude 35 m``."""
    facts = []
    if info.taken and one_line(info.taken):
        facts.append(f"taken {one_line(info.taken)}")
    if _finite(info.latitude) and _finite(info.longitude):
        latitude = _degrees(info.latitude, "N", "S")
        longitude = _degrees(info.longitude, "E", "W")
        facts.append(f"GPS {latitude} {longitude}")
        if _finite(info.altitude_m):
            facts.append(f"altitude {_decimal(info.altitude_m, 1)} m")
    return facts


def _finite(value: float | None) -> bool:
    # a converter's NaN or infinity (a zero denominator it did not catch) is not a place
    return value is not None and math.isfinite(value)


def _degrees(value: float, positive: str, negative: str) -> str:
    """Decimal degrees with their hemisphere, at most 6 decimals: ``48.8584 N``."""
    rounded = round(value, 6)  # a value that shows as 0 is on the equator/meridian: no "0 W"
    return f"{_decimal(abs(rounded), 6)} {positive if rounded >= 0 else negative}"


def _decimal(value: float, places: int) -> str:
    shown = f"{value:.{places}f}".rstrip("0").rstrip(".")
    return "0" if shown in ("", "-0") else shown


def _count(number: int, unit: str) -> str:
    return f"{number} {unit}" if number == 1 else f"{number} {unit}s"


def _duration(seconds: float) -> str:
    shown = f"{seconds:.2f}".rstrip("0").rstrip(".")
    return f"{shown} second" if shown == "1" else f"{shown} seconds"


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?")) else text + "."
