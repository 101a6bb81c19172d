"""What a photo says about itself, read with Pillow alone: its title, description,
author, keywords, copyright, when it was taken, when it was last edited and where.

Sources, per field, in this order of precedence (the first usable value wins, so
a field one source lacks or garbles falls through to the next):

1. XMP (``dc:``, ``xmp:``, ``photoshop:``, ``exif:`` properties): what current
   editors (Lightroom, Photoshop, darktable, digiKam) write last, always Unicode.
2. IPTC IIM (record 2): XMP's legacy predecessor, kept in sync by the same editors.
3. EXIF (IFD0, the Exif IFD, the Windows ``XP*`` tags): written by the camera;
   its strings are ASCII by the standard.
4. PNG text chunks (``Title``, ``Author``, ``Description``, ``Copyright``,
   ``Creation Time``): PNG's own, for files no photo tool has touched.

Where each field is read from (in that order within a source, too):

- title: XMP dc:title; IPTC 2:05 Object Name; EXIF XPTitle; PNG Title.
- description: XMP dc:description; IPTC 2:120 Caption; EXIF ImageDescription,
  XPSubject, XPComment; PNG Description. Dropped when it repeats the title
  (Windows writes its Title into ImageDescription too).
- author: XMP dc:creator; IPTC 2:80 By-line; EXIF Artist, XPAuthor; PNG Author.
- keywords: XMP dc:subject; IPTC 2:25 Keywords; EXIF XPKeywords (``;``-separated).
- copyright: XMP dc:rights; IPTC 2:116 Copyright Notice; EXIF Copyright; PNG Copyright.
- taken: XMP photoshop:DateCreated, exif:DateTimeOriginal, xmp:CreateDate; IPTC 2:55
  Date Created with 2:60 Time Created; EXIF DateTimeOriginal (with
  OffsetTimeOriginal), DateTimeDigitized; PNG Creation Time.
- modified: XMP xmp:ModifyDate; EXIF DateTime.

The position (latitude, longitude, altitude) comes from the EXIF GPS IFD only.

Metadata is untrusted file content, and none of it may stop an image from planting.
A field that cannot be read is skipped and named in ``ImageFacts.skipped`` (its
name and our reason, never its value), and the next source is tried:

- Text must decode exactly: EXIF ASCII and IPTC strings as UTF-8 (plain ASCII is
  UTF-8), the ``XP*`` tags as UTF-16LE. A value that does not decode is skipped,
  never guessed at in another code page.
- XMP is parsed only when it is small and declares no DTD (see ``_xmp``).
- Rationals with a zero denominator, a GPS position outside +-90 / +-180 degrees
  or without its N/S, E/W reference, a fix the receiver marked void, and dates that
  are not real calendar dates are skipped. The all-zero date cameras write when
  their clock is unset counts as no date.
- Every value becomes one line (control characters and newlines become spaces)
  and is cut to a bounded length with a visible ``…``; past ``MAX_KEYWORDS``
  keywords, the rest are counted, not kept.

An EXIF ImageDescription that is only the camera's placeholder ("OLYMPUS DIGITAL
CAMERA", "SONY DSC", ...) names the make, describes nothing, and is not used.
"""
from __future__ import annotations

import datetime as _dt
import email.utils
import math
import re
import warnings
from dataclasses import dataclass
from typing import Any, Iterable

from monkeyllm_gardener.kit import clean_tag

from ._xmp import parse_xmp, rdf_descriptions, xmp_packet, xmp_values

MAX_TEXT_CHARACTERS = 200  # title, author, copyright, each keyword
MAX_DESCRIPTION_CHARACTERS = 1000
MAX_KEYWORDS = 30
ALTITUDE_RANGE_M = (-12_000.0, 100_000.0)  # deeper than any ocean trench .. higher than any balloon
GPS_DECIMALS = 6  # about 0.1 m: finer than any consumer GPS

_EXIF_IFD, _GPS_IFD = 0x8769, 0x8825
_EXIF_TEXT_TAGS = {  # field -> (tag id, the name shown in a skipped note), in order of preference
    "description": ((0x010E, "ImageDescription"),),
    "author": ((0x013B, "Artist"),),
    "copyright": ((0x8298, "Copyright"),),
}
_EXIF_XP_TAGS = {
    "title": ((0x9C9B, "XPTitle"),),
    "description": ((0x9C9F, "XPSubject"), (0x9C9C, "XPComment")),
    "author": ((0x9C9D, "XPAuthor"),),
}
_EXIF_XP_KEYWORDS = 0x9C9E
# What cameras write into ImageDescription when nobody described the photo: the
# make, not a description. Skipped without a note (compared case-insensitively).
_CAMERA_PLACEHOLDERS = frozenset({
    "olympus digital camera", "sony dsc", "digital camera", "konica minolta digital camera",
    "minolta digital camera", "samsung camera pictures",
})
_EXIF_DATETIME = 0x0132  # IFD0: when the file was last changed
_EXIF_TAKEN_TAGS = ((0x9003, 0x9011, "DateTimeOriginal"), (0x9004, 0x9012, "DateTimeDigitized"))
_PNG_TEXT_KEYS = (("title", "Title"), ("description", "Description"), ("author", "Author"),
                  ("copyright", "Copyright"))
_IPTC_TEXT = (("title", (2, 5), "Object Name"), ("description", (2, 120), "Caption"),
              ("author", (2, 80), "By-line"), ("copyright", (2, 116), "Copyright Notice"))

_XMP_TEXT = (("title", "dc:title"), ("description", "dc:description"), ("author", "dc:creator"),
             ("copyright", "dc:rights"))
_XMP_TAKEN = ("photoshop:DateCreated", "exif:DateTimeOriginal", "xmp:CreateDate")
# ``2024:06:01 14:03:22`` (EXIF), ``2024-06-01T14:03:22.5+02:00`` (XMP), ``2024-06-01``.
_DATE_TIME = re.compile(
    r"(\d{4})[-:](\d{2})[-:](\d{2})"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?(?:[.,]\d+)?)?"
    r"\s*(Z|[+-]\d{2}:?\d{2})?"
)
_UTC_OFFSET = re.compile(r"[+-]\d{2}:?\d{2}")
_UNSET_DATE = re.compile(r"[0\s:.\-T]*")  # all zeros or blanks: the camera's clock was never set


class _Skip(Exception):
    """A field cannot be used; the message is our reason, never the field's value."""


@dataclass(frozen=True, kw_only=True)
class ImageFacts:
    """What the image's metadata declares, cleaned; None or empty when absent."""

    title: str | None = None
    description: str | None = None
    author: str | None = None
    keywords: tuple[str, ...] = ()  # the first MAX_KEYWORDS, without repeats
    keywords_omitted: int = 0  # how many more the file lists (shown as "… and N more")
    copyright: str | None = None
    taken: str | None = None  # "2024-06-01 14:03", plus its UTC offset (" +02:00") when the source gives one
    modified: str | None = None  # "2024-06-03"
    latitude: float | None = None  # decimal degrees, north positive
    longitude: float | None = None  # decimal degrees, east positive
    altitude_m: float | None = None  # metres above sea level, negative below
    skipped: tuple[str, ...] = ()  # "EXIF Artist: not UTF-8 text": names and reasons, never values


def read_image_facts(image: Any, *, open_warnings: Iterable[warnings.WarningMessage] = ()) -> ImageFacts:
    """Every source's fields, merged by precedence (XMP > IPTC > EXIF > PNG text).
    ``open_warnings``: what Pillow warned while opening the image (a JPEG's EXIF is
    parsed then), so that a corrupt block is reported."""
    notes: list[str] = []
    # Pillow reads a corrupt EXIF IFD as far as it can and says so only with a
    # UserWarning on stderr: caught here, it becomes a note in the run report.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exif = _exif_of(image, notes)
        sources = (_xmp_fields(image, notes), _iptc_fields(image, notes), _exif_fields(exif, notes),
                   _png_fields(image, notes))
        position = _gps_fields(exif, notes)
    notes.extend(_pillow_complaint(warning) for warning in (*open_warnings, *caught))
    merged: dict[str, Any] = {}
    for fields in sources:
        for key, value in fields.items():
            merged.setdefault(key, value)
    if merged.get("description") is not None and merged.get("description") == merged.get("title"):
        del merged["description"]  # Windows writes its Title into ImageDescription too
    return ImageFacts(**merged, **position, skipped=tuple(dict.fromkeys(notes)))


def _pillow_complaint(warning: warnings.WarningMessage) -> str:
    # Pillow parses EXIF with its TIFF tag reader; its warnings quote tag numbers and
    # sizes only, but the note is ours all the same.
    if "TiffImagePlugin" in str(warning.filename) or "EXIF" in str(warning.message):
        return "EXIF: part of the block is corrupt and could not be read"
    return f"metadata: Pillow warned while reading it ({warning.category.__name__})"


# -- XMP ---------------------------------------------------------------------------------
def _xmp_fields(image: Any, notes: list[str]) -> dict[str, Any]:
    packet = xmp_packet(image)
    root = parse_xmp(packet, notes) if packet is not None else None
    if root is None:
        return {}
    descriptions = rdf_descriptions(root)
    fields: dict[str, Any] = {}
    for field, prop in _XMP_TEXT:
        values = xmp_values(descriptions, prop)
        _put_text(fields, field, ", ".join(values) if field == "author" else _first(values), _limit(field))
    _put_keywords(fields, xmp_values(descriptions, "dc:subject"))
    for prop in _XMP_TAKEN:
        _put_moment(fields, "taken", _first(xmp_values(descriptions, prop)), f"XMP {prop}", notes)
    _put_moment(fields, "modified", _first(xmp_values(descriptions, "xmp:ModifyDate")), "XMP xmp:ModifyDate", notes)
    return fields


# -- IPTC --------------------------------------------------------------------------------
def _iptc_fields(image: Any, notes: list[str]) -> dict[str, Any]:
    from PIL import IptcImagePlugin

    try:
        iptc = IptcImagePlugin.getiptcinfo(image)
    except Exception:  # noqa: BLE001 - Pillow parsing an untrusted IPTC block
        notes.append("IPTC: the block is malformed")
        return {}
    if not iptc:
        return {}
    fields: dict[str, Any] = {}
    for field, dataset, label in _IPTC_TEXT:
        values = _iptc_strings(iptc.get(dataset), f"IPTC {label}", notes)
        _put_text(fields, field, ", ".join(values) if field == "author" else _first(values), _limit(field))
    _put_keywords(fields, _iptc_strings(iptc.get((2, 25)), "IPTC Keywords", notes))
    date = _first(_iptc_strings(iptc.get((2, 55)), "IPTC Date Created", notes))
    time = _first(_iptc_strings(iptc.get((2, 60)), "IPTC Time Created", notes))
    _put_moment(fields, "taken", _iptc_moment(date, time), "IPTC Date Created", notes)
    return fields


def _iptc_strings(value: Any, label: str, notes: list[str]) -> list[str]:
    out = []
    for raw in value if isinstance(value, list) else [value]:
        if raw is None:
            continue
        try:
            out.append(_decode(raw, "utf-8"))
        except _Skip as reason:
            notes.append(f"{label}: {reason}")
    return out


def _iptc_moment(date: str | None, time: str | None) -> str | None:
    """IPTC's ``20240601`` and ``140322+0200`` as one ISO-like string."""
    if not date:
        return None
    date = date.strip()
    if not re.fullmatch(r"\d{8}", date):
        return date  # left for the date parser to refuse
    shown = f"{date[:4]}-{date[4:6]}-{date[6:]}"
    if time and re.fullmatch(r"\d{6}([+-]\d{4})?", time.strip()):
        time = time.strip()
        shown += f"T{time[:2]}:{time[2:4]}:{time[4:6]}{time[6:]}"
    return shown


# -- EXIF --------------------------------------------------------------------------------
def _exif_of(image: Any, notes: list[str]) -> Any:
    if image.format == "PNG" and "exif" not in image.info:
        # Pillow's PNG getexif() decodes the whole image to look for a late eXIf
        # chunk; the converter has decoded it already (or refused to: a bomb).
        return None
    try:
        return image.getexif()
    except Exception:  # noqa: BLE001 - Pillow parsing an untrusted EXIF block
        notes.append("EXIF: the block is malformed")
        return None


def _exif_fields(exif: Any, notes: list[str]) -> dict[str, Any]:
    if not exif:
        return {}
    fields: dict[str, Any] = {}
    for field in ("title", "description", "author", "copyright"):
        for tag, label in _EXIF_TEXT_TAGS.get(field, ()):
            text = _exif_string(exif.get(tag), f"EXIF {label}", notes)
            if field == "description" and text and text.strip().lower() in _CAMERA_PLACEHOLDERS:
                continue
            _put_text(fields, field, text, _limit(field))
        for tag, label in _EXIF_XP_TAGS.get(field, ()):
            _put_text(fields, field, _xp_string(exif.get(tag), f"EXIF {label}", notes), _limit(field))
    keywords = _xp_string(exif.get(_EXIF_XP_KEYWORDS), "EXIF XPKeywords", notes)
    _put_keywords(fields, keywords.split(";") if keywords else [])
    details = _sub_ifd(exif, _EXIF_IFD, "EXIF Exif IFD", notes)
    for tag, offset_tag, label in _EXIF_TAKEN_TAGS:
        moment = _exif_string(details.get(tag), f"EXIF {label}", notes)
        offset = (_exif_string(details.get(offset_tag), f"EXIF {label} offset", notes) or "").strip("\x00 ")
        if moment and _UTC_OFFSET.fullmatch(offset):  # cameras leave "   :  " when they do not know it
            moment = f"{moment} {offset}"
        _put_moment(fields, "taken", moment, f"EXIF {label}", notes)
    _put_moment(fields, "modified", _exif_string(exif.get(_EXIF_DATETIME), "EXIF DateTime", notes),
                "EXIF DateTime", notes)
    return fields


def _sub_ifd(exif: Any, tag: int, label: str, notes: list[str]) -> Any:
    try:
        return exif.get_ifd(tag) or {}
    except Exception:  # noqa: BLE001 - a sub-IFD offset pointing anywhere
        notes.append(f"{label}: malformed")
        return {}


def _exif_string(value: Any, label: str, notes: list[str]) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        # Pillow decodes EXIF ASCII as latin-1, which maps every byte to one
        # character: encoding back gives the exact bytes the file holds.
        try:
            value = value.encode("latin-1")
        except UnicodeEncodeError:
            return value  # already real text (an Exif object built in memory)
    try:
        return _decode(value, "utf-8")
    except _Skip as reason:
        notes.append(f"{label}: {reason}")
        return None


def _xp_string(value: Any, label: str, notes: list[str]) -> str | None:
    if value is None:
        return None
    if isinstance(value, tuple) and all(isinstance(byte, int) and 0 <= byte < 256 for byte in value):
        value = bytes(value)  # some writers store XP tags as a tuple of byte values
    try:
        text = _decode(value, "utf-16-le")
    except _Skip as reason:
        notes.append(f"{label}: {reason}")
        return None
    return text.rstrip("\x00")


# -- GPS ---------------------------------------------------------------------------------
def _gps_fields(exif: Any, notes: list[str]) -> dict[str, Any]:
    gps = _sub_ifd(exif, _GPS_IFD, "EXIF GPS", notes) if exif else {}
    if not gps or (gps.get(2) is None and gps.get(4) is None):
        return {}
    try:
        if _reference(gps.get(9)) == "V":
            raise _Skip("the receiver marked the fix void")
        fields: dict[str, Any] = {
            "latitude": _signed_degrees(gps.get(2), gps.get(1), "NS", 90.0),
            "longitude": _signed_degrees(gps.get(4), gps.get(3), "EW", 180.0),
        }
    except _Skip as reason:
        notes.append(f"EXIF GPS position: {reason}")
        return {}
    try:
        altitude = _altitude(gps.get(6), gps.get(5))
    except _Skip as reason:
        notes.append(f"EXIF GPS altitude: {reason}")
        altitude = None
    if altitude is not None:
        fields["altitude_m"] = altitude
    return fields


def _signed_degrees(value: Any, reference: Any, hemispheres: str, limit: float) -> float:
    """``(48, 51, 30.3)`` and ``N`` -> ``48.858417``; south and west are negative."""
    hemisphere = _reference(reference)
    if len(hemisphere) != 1 or hemisphere not in hemispheres:
        raise _Skip(f"no {'/'.join(hemispheres)} reference")
    parts = value if isinstance(value, (tuple, list)) else (value,)
    if not 1 <= len(parts) <= 3:
        raise _Skip("not degrees, minutes and seconds")
    numbers = [_finite(part) for part in parts]
    if any(number < 0 for number in numbers):
        raise _Skip("a negative component")
    degrees = sum(number / 60**index for index, number in enumerate(numbers))
    if degrees > limit:
        raise _Skip("out of range")
    signed = degrees if hemisphere == hemispheres[0] else -degrees
    return round(signed, GPS_DECIMALS)


def _altitude(value: Any, reference: Any) -> float | None:
    if value is None:
        return None
    metres = _finite(value)
    if reference in (1, b"\x01", "\x01"):  # 1: below sea level
        metres = -metres
    low, high = ALTITUDE_RANGE_M
    if not low <= metres <= high:
        raise _Skip("out of range")
    return round(metres, 1)


def _reference(value: Any) -> str:
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    return value.strip("\x00 ").upper() if isinstance(value, str) else ""


def _finite(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError, ZeroDivisionError):
        raise _Skip("not a number") from None
    if not math.isfinite(number):
        raise _Skip("a zero denominator or not a number")
    return number


# -- PNG text ----------------------------------------------------------------------------
def _png_fields(image: Any, notes: list[str]) -> dict[str, Any]:
    if image.format != "PNG":
        return {}  # other formats' info keys are not the PNG text keywords
    fields: dict[str, Any] = {}
    for field, key in _PNG_TEXT_KEYS:
        value = image.info.get(key)
        _put_text(fields, field, value if isinstance(value, str) else None, _limit(field))
    created = image.info.get("Creation Time")
    if isinstance(created, str):
        _put_moment(fields, "taken", _rfc1123_as_iso(created), "PNG Creation Time", notes)
    return fields


def _rfc1123_as_iso(text: str) -> str:
    """The PNG spec suggests RFC 1123 dates (``Sat, 01 Jun 2024 14:03:00 +0200``);
    many writers use ISO instead, which is passed on unchanged."""
    try:
        moment = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return text
    offset = "" if moment.tzinfo is None else moment.strftime("%z")
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + offset


# -- shared ------------------------------------------------------------------------------
def _decode(raw: Any, codec: str) -> str:
    if isinstance(raw, str):
        return raw
    if not isinstance(raw, bytes):
        raise _Skip("not text")
    try:
        return raw.decode(codec)
    except UnicodeDecodeError:
        raise _Skip(f"not {codec.upper().replace('-LE', 'LE')} text") from None


def _put_text(fields: dict[str, Any], field: str, value: str | None, limit: int) -> None:
    if field in fields or not value:
        return
    text = clean_tag(value, limit)
    if text:
        fields[field] = text


def _put_keywords(fields: dict[str, Any], values: Iterable[str]) -> None:
    if "keywords" in fields:
        return
    keywords: dict[str, None] = {}  # insertion-ordered and O(1) to test: a packet may list 30,000
    omitted = 0
    for value in values:
        keyword = clean_tag(value, MAX_TEXT_CHARACTERS)
        if not keyword or keyword in keywords:
            continue
        if len(keywords) < MAX_KEYWORDS:
            keywords[keyword] = None
        else:
            omitted += 1
    if keywords:
        fields["keywords"] = tuple(keywords)
        fields["keywords_omitted"] = omitted


def _put_moment(fields: dict[str, Any], field: str, value: str | None, label: str, notes: list[str]) -> None:
    if field in fields or value is None:
        return
    try:
        moment = _moment(value)
    except _Skip as reason:
        notes.append(f"{label}: {reason}")
        return
    if moment is not None:
        fields[field] = moment if field == "taken" else moment[:10]


def _moment(text: str) -> str | None:
    """``2024-06-01 14:03`` (+ its UTC offset, `` +02:00``) from an EXIF, XMP or IPTC
    date; None for the all-zero date of an unset clock."""
    text = text.strip("\x00 \t\r\n")
    if _UNSET_DATE.fullmatch(text):
        return None
    found = _DATE_TIME.fullmatch(text)
    if found is None:
        raise _Skip("not a date")
    year, month, day, hour, minute, second, offset = found.groups()
    try:
        shown = _dt.date(int(year), int(month), int(day)).isoformat()
        if hour is not None:
            _dt.time(int(hour), int(minute), int(second or 0))
            shown += f" {hour}:{minute}"
    except ValueError:
        raise _Skip("not a real calendar date") from None
    if offset and hour is not None:
        shown += " +00:00" if offset == "Z" else f" {offset[:3]}:{offset[-2:]}"
    return shown


def _first(values: list[str]) -> str | None:
    return values[0] if values else None


def _limit(field: str) -> int:
    return MAX_DESCRIPTION_CHARACTERS if field == "description" else MAX_TEXT_CHARACTERS

