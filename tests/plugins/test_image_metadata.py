"""A photo's own EXIF, XMP, IPTC and PNG text reach its media node: body and passport.

Every image is built in code: Pillow writes the EXIF and PNG text; the XMP (APP1)
and IPTC (Photoshop APP13) segments are spliced into the JPEG byte for byte, as
Lightroom or Photoshop would leave them.
"""
from __future__ import annotations

import struct
import time
from pathlib import Path

import pytest
from PIL import Image, PngImagePlugin
from PIL.TiffImagePlugin import IFDRational

from monkeyllm_gardener.media import SENTINEL, render_media_body
from monkeyllm_plugins._xmp import MAX_XMP_BYTES
from monkeyllm_plugins.image_media import ImageConverter

EXIF_IFD, GPS_IFD = 0x8769, 0x8825
IMAGE_DESCRIPTION, ARTIST, COPYRIGHT, DATETIME = 0x010E, 0x013B, 0x8298, 0x0132
XP_TITLE, XP_AUTHOR, XP_KEYWORDS = 0x9C9B, 0x9C9D, 0x9C9E
DATETIME_ORIGINAL, OFFSET_TIME_ORIGINAL = 0x9003, 0x9011
EIFFEL_LATITUDE = (IFDRational(48), IFDRational(51), IFDRational(303, 10))  # 48.858417 N
EIFFEL_LONGITUDE = (IFDRational(2), IFDRational(17), IFDRational(402, 10))  # 2.2945 E

XMP_EIFFEL = """<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/">
 <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
  <rdf:Description rdf:about=""
    xmlns:dc="http://purl.org/dc/elements/1.1/"
    xmlns:xmp="http://ns.adobe.com/xap/1.0/"
    xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/"
    photoshop:DateCreated="2024-06-01T21:47:05+02:00"
    xmp:ModifyDate="2024-06-03T09:12:00+02:00">
   <dc:title><rdf:Alt>
    <rdf:li xml:lang="fr">Tour Eiffel au crépuscule</rdf:li>
    <rdf:li xml:lang="x-default">Eiffel tower at dusk</rdf:li>
   </rdf:Alt></dc:title>
   <dc:description><rdf:Alt>
    <rdf:li xml:lang="x-default">The tower lit up, seen from the Trocadéro</rdf:li>
   </rdf:Alt></dc:description>
   <dc:creator><rdf:Seq><rdf:li>Ana Silva</rdf:li><rdf:li>Bruno Costa</rdf:li></rdf:Seq></dc:creator>
   <dc:subject><rdf:Bag><rdf:li>Paris</rdf:li><rdf:li>Eiffel Tower</rdf:li><rdf:li>night</rdf:li></rdf:Bag></dc:subject>
   <dc:rights><rdf:Alt><rdf:li xml:lang="x-default">© 2024 Ana Silva</rdf:li></rdf:Alt></dc:rights>
  </rdf:Description>
 </rdf:RDF>
</x:xmpmeta>
<?xpacket end="w"?>"""


def xmp_packet(title: str) -> str:
    return (
        '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
        '<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f'<dc:title><rdf:Alt><rdf:li xml:lang="x-default">{title}</rdf:li></rdf:Alt></dc:title>'
        "</rdf:Description></rdf:RDF></x:xmpmeta>"
    )


# -- builders ----------------------------------------------------------------------------
def save_jpeg(path: Path, exif: Image.Exif | None = None, *, xmp: str | bytes | None = None,
              iptc: list[tuple[int, int, bytes]] | None = None, size=(32, 24)) -> Path:
    picture = Image.new("RGB", size, (40, 90, 160))
    picture.save(path, format="JPEG", **({"exif": exif} if exif is not None else {}))
    data = path.read_bytes()
    if xmp is not None:
        packet = xmp.encode("utf-8") if isinstance(xmp, str) else xmp
        data = insert_segment(data, 0xE1, b"http://ns.adobe.com/xap/1.0/\x00" + packet)
    if iptc is not None:
        data = insert_segment(data, 0xED, photoshop_iptc(iptc))
    path.write_bytes(data)
    return path


def insert_segment(jpeg: bytes, marker: int, payload: bytes) -> bytes:
    """``payload`` as an APPn segment right after the SOI marker."""
    assert jpeg[:2] == b"\xff\xd8" and len(payload) + 2 <= 0xFFFF
    return jpeg[:2] + bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload + jpeg[2:]


def photoshop_iptc(records: list[tuple[int, int, bytes]]) -> bytes:
    """An APP13 Photoshop 3.0 segment holding one IPTC-NAA resource (8BIM 0x0404)."""
    iptc = b"".join(b"\x1c" + bytes([record, dataset]) + struct.pack(">H", len(value)) + value
                    for record, dataset, value in records)
    resource = b"8BIM" + struct.pack(">H", 0x0404) + b"\x00\x00" + struct.pack(">I", len(iptc)) + iptc
    return b"Photoshop 3.0\x00" + resource + (b"\x00" if len(iptc) % 2 else b"")


def gps_exif(latitude=EIFFEL_LATITUDE, latitude_ref="N", longitude=EIFFEL_LONGITUDE, longitude_ref="E",
             altitude=None, below_sea_level=False, status=None) -> Image.Exif:
    exif = Image.Exif()
    gps = exif.get_ifd(GPS_IFD)
    if latitude_ref is not None:
        gps[1] = latitude_ref
    gps[2] = latitude
    if longitude_ref is not None:
        gps[3] = longitude_ref
    gps[4] = longitude
    if altitude is not None:
        gps[5] = 1 if below_sea_level else 0
        gps[6] = altitude
    if status is not None:
        gps[9] = status
    return exif


def save_png(path: Path, text: dict[str, str] | None = None, *, itxt: dict[str, str] | None = None) -> Path:
    info = PngImagePlugin.PngInfo()
    for key, value in (text or {}).items():
        info.add_text(key, value)
    for key, value in (itxt or {}).items():
        info.add_itxt(key, value)
    Image.new("RGB", (16, 12), "white").save(path, format="PNG", pnginfo=info)
    return path


def body_of(conversion) -> str:
    return render_media_body(conversion.title if "title" not in conversion.frontmatter
                             else conversion.frontmatter["title"], conversion.media)


def assert_planted_as_media(conversion, path: Path) -> None:
    assert conversion.kind == "payload" and conversion.payload_type == "image"
    assert conversion.payload_path == path and conversion.media.problem is None
    assert body_of(conversion).endswith(f"\n\n{SENTINEL}\n")


# -- what a well-formed photo carries ------------------------------------------------------
def test_xmp_title_description_author_keywords_and_dates_reach_passport_and_body(tmp_path):
    photo = save_jpeg(tmp_path / "IMG_0042.jpg", xmp=XMP_EIFFEL)

    conversion = ImageConverter().convert(photo)

    assert conversion.warnings == ()
    assert dict(conversion.frontmatter) == {
        "title": "Eiffel tower at dusk",
        "created": "2024-06-01",
        "modified": "2024-06-03",
        "author": "Ana Silva, Bruno Costa",
        "tags": ["paris", "eiffel-tower", "night"],
    }
    assert body_of(conversion) == (
        "# Eiffel tower at dusk\n\n"
        f"Media file `IMG_0042.jpg` (JPEG format, {photo.stat().st_size} bytes, 32x24 pixels; "
        "taken 2024-06-01 21:47 +02:00).\n\n"
        "- Title: Eiffel tower at dusk\n"
        "- Description: The tower lit up, seen from the Trocadéro\n"
        "- Author: Ana Silva, Bruno Costa\n"
        "- Keywords: Paris, Eiffel Tower, night\n"
        "- Copyright: © 2024 Ana Silva\n\n"
        f"{SENTINEL}\n"
    )


def test_exif_date_taken_and_gps_go_on_the_media_line(tmp_path):
    exif = gps_exif(altitude=IFDRational(352, 10))
    exif.get_ifd(EXIF_IFD)[DATETIME_ORIGINAL] = "2024:06:01 14:03:22"
    exif.get_ifd(EXIF_IFD)[OFFSET_TIME_ORIGINAL] = "+02:00"
    exif[DATETIME] = "2024:06:05 08:00:00"
    photo = save_jpeg(tmp_path / "tower.jpg", exif)

    conversion = ImageConverter().convert(photo)

    info = conversion.media
    assert (info.taken, info.latitude, info.longitude, info.altitude_m) == (
        "2024-06-01 14:03 +02:00", 48.858417, 2.2945, 35.2)
    assert f"32x24 pixels; taken 2024-06-01 14:03 +02:00, GPS 48.858417 N 2.2945 E, altitude 35.2 m)." \
        in body_of(conversion)
    assert dict(conversion.frontmatter) == {"created": "2024-06-01", "modified": "2024-06-05"}
    assert conversion.warnings == ()


@pytest.mark.parametrize(("name", "image_format"), [("a.png", "PNG"), ("a.webp", "WEBP"), ("a.jpg", "JPEG")])
def test_exif_is_read_from_every_format_that_carries_it(tmp_path, name, image_format):
    exif = gps_exif()
    exif[ARTIST] = "Ana Silva"
    exif.get_ifd(EXIF_IFD)[DATETIME_ORIGINAL] = "2024:06:01 14:03:22"
    Image.new("RGB", (8, 8)).save(tmp_path / name, format=image_format, exif=exif)

    conversion = ImageConverter().convert(tmp_path / name)

    assert dict(conversion.frontmatter) == {"created": "2024-06-01", "author": "Ana Silva"}
    assert (conversion.media.latitude, conversion.media.longitude) == (48.858417, 2.2945)


def test_a_tiffs_own_tags_are_its_exif(tmp_path):
    Image.new("RGB", (8, 8)).save(tmp_path / "scan.tif", tiffinfo={ARTIST: "Ana Silva", IMAGE_DESCRIPTION: "Deed"})

    conversion = ImageConverter().convert(tmp_path / "scan.tif")

    assert dict(conversion.media.details) == {"description": "Deed", "author": "Ana Silva"}


@pytest.mark.parametrize(
    ("latitude_ref", "longitude_ref", "below", "shown"),
    [
        ("S", "W", False, "GPS 48.858417 S 2.2945 W, altitude 12 m"),
        ("N", "W", True, "GPS 48.858417 N 2.2945 W, altitude -12 m"),
    ],
)
def test_south_west_and_below_sea_level_are_shown_with_their_hemisphere(tmp_path, latitude_ref, longitude_ref,
                                                                          below, shown):
    exif = gps_exif(latitude_ref=latitude_ref, longitude_ref=longitude_ref, altitude=IFDRational(12),
                    below_sea_level=below)

    conversion = ImageConverter().convert(save_jpeg(tmp_path / "p.jpg", exif))

    assert f"; {shown})." in body_of(conversion)
    assert conversion.warnings == ()


@pytest.mark.parametrize(
    ("written", "taken"),
    [
        ("2024-06-01T14:03:22.5Z", "2024-06-01 14:03 +00:00"),
        ("2024-06-01T14:03-0330", "2024-06-01 14:03 -03:30"),
        ("2024-06-01", "2024-06-01"),
    ],
)
def test_xmp_dates_keep_their_minute_and_utc_offset(tmp_path, written, taken):
    xmp = xmp_packet("t").replace('rdf:about=""', f'rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/" '
                                                  f'xmp:CreateDate="{written}"')

    conversion = ImageConverter().convert(save_jpeg(tmp_path / "d.jpg", xmp=xmp))

    assert conversion.media.taken == taken
    assert conversion.frontmatter["created"] == "2024-06-01"


def test_an_unknown_exif_utc_offset_leaves_the_date_taken_alone(tmp_path):
    exif = Image.Exif()
    exif.get_ifd(EXIF_IFD)[DATETIME_ORIGINAL] = "2024:06:01 14:03:22"
    exif.get_ifd(EXIF_IFD)[OFFSET_TIME_ORIGINAL] = "   :  "

    conversion = ImageConverter().convert(save_jpeg(tmp_path / "o.jpg", exif))

    assert (conversion.media.taken, conversion.warnings) == ("2024-06-01 14:03", ())


def test_xmp_wins_over_iptc_which_wins_over_exif_field_by_field(tmp_path):
    exif = Image.Exif()
    exif[XP_TITLE] = "EXIF title".encode("utf-16-le")
    exif[IMAGE_DESCRIPTION] = "EXIF description"
    exif[ARTIST] = "EXIF artist"
    exif[COPYRIGHT] = "EXIF copyright"
    iptc = [(2, 5, b"IPTC title"), (2, 120, b"IPTC caption"), (2, 80, "Zoë IPTC".encode("utf-8"))]
    photo = save_jpeg(tmp_path / "layers.jpg", exif, xmp=xmp_packet("XMP title"), iptc=iptc)

    conversion = ImageConverter().convert(photo)

    assert dict(conversion.media.details) == {
        "title": "XMP title",  # XMP has it: XMP wins
        "description": "IPTC caption",  # XMP lacks it: IPTC next
        "author": "Zoë IPTC",
        "copyright": "EXIF copyright",  # only EXIF has it
    }
    assert conversion.frontmatter["title"] == "XMP title"
    assert conversion.frontmatter["author"] == "Zoë IPTC"


def test_iptc_name_caption_byline_keywords_and_date_created(tmp_path):
    iptc = [
        (2, 5, b"Harbour at dawn"),
        (2, 120, b"Fishing boats leaving Peniche"),
        (2, 80, b"Ana Silva"),
        (2, 80, b"Bruno Costa"),
        (2, 25, b"harbour"),
        (2, 25, b"Fishing Boats"),
        (2, 55, b"20230914"),
        (2, 60, b"061500+0100"),
    ]
    conversion = ImageConverter().convert(save_jpeg(tmp_path / "dawn.jpg", iptc=iptc))

    assert dict(conversion.frontmatter) == {
        "title": "Harbour at dawn",
        "created": "2023-09-14",
        "author": "Ana Silva, Bruno Costa",
        "tags": ["harbour", "fishing-boats"],
    }
    assert conversion.media.taken == "2023-09-14 06:15 +01:00"
    assert "- Description: Fishing boats leaving Peniche\n" in body_of(conversion)


def test_windows_xp_tags_are_read_as_utf16(tmp_path):
    exif = Image.Exif()
    exif[XP_TITLE] = "Réunion d'équipe".encode("utf-16-le") + b"\x00\x00"
    exif[XP_AUTHOR] = "Zoë".encode("utf-16-le") + b"\x00\x00"
    exif[XP_KEYWORDS] = "team;offsite;Lisboa".encode("utf-16-le") + b"\x00\x00"

    conversion = ImageConverter().convert(save_jpeg(tmp_path / "team.jpg", exif))

    assert dict(conversion.frontmatter) == {"title": "Réunion d'équipe", "author": "Zoë",
                                            "tags": ["team", "offsite", "lisboa"]}


def test_png_itxt_xmp_and_text_chunks_with_rfc1123_creation_time(tmp_path):
    image = save_png(tmp_path / "diagram.png", {"Author": "Ana Silva", "Creation Time": "Sat, 01 Jun 2024 14:03:00 GMT"},
                     itxt={"XML:com.adobe.xmp": xmp_packet("Deploy pipeline")})

    conversion = ImageConverter().convert(image)

    assert dict(conversion.frontmatter) == {"title": "Deploy pipeline", "created": "2024-06-01", "author": "Ana Silva"}
    assert conversion.media.taken == "2024-06-01 14:03 +00:00"


def test_only_five_keywords_become_tags_and_every_keyword_stays_in_the_body(tmp_path):
    words = ["alpha", "Beta", "gamma", "delta", "epsilon", "zeta", "a" * 60, "!!!"]
    iptc = [(2, 25, word.encode()) for word in words]

    conversion = ImageConverter().convert(save_jpeg(tmp_path / "k.jpg", iptc=iptc))

    assert conversion.frontmatter["tags"] == ["alpha", "beta", "gamma", "delta", "epsilon"]
    assert f"- Keywords: alpha, Beta, gamma, delta, epsilon, zeta, {'a' * 60}, !!!\n" in body_of(conversion)


def test_a_packet_listing_thousands_of_keywords_keeps_thirty_and_counts_the_rest(tmp_path):
    items = "".join(f"<rdf:li>keyword{i}</rdf:li>" for i in range(30_000))
    bag = f'<dc:subject><rdf:Bag>{items}<rdf:li>keyword0</rdf:li></rdf:Bag></dc:subject>'
    xmp = xmp_packet("tagged").replace("</rdf:Description>", bag + "</rdf:Description>")
    assert len(xmp) < MAX_XMP_BYTES
    image = save_png(tmp_path / "tagged.png", itxt={"XML:com.adobe.xmp": xmp})

    started = time.monotonic()
    conversion = ImageConverter().convert(image)

    assert time.monotonic() - started < 2
    listed = ", ".join(f"keyword{i}" for i in range(30))
    assert f"- Keywords: {listed}, \u2026 and 29970 more\n" in body_of(conversion)
    assert conversion.frontmatter["tags"] == [f"keyword{i}" for i in range(5)]


def test_a_description_repeating_the_title_is_listed_once(tmp_path):
    exif = Image.Exif()
    exif[XP_TITLE] = "Quarterly board".encode("utf-16-le")
    exif[IMAGE_DESCRIPTION] = "Quarterly board"  # what Windows Explorer writes for a Title

    conversion = ImageConverter().convert(save_jpeg(tmp_path / "b.jpg", exif))

    assert dict(conversion.media.details) == {"title": "Quarterly board"}


@pytest.mark.parametrize("placeholder", ["OLYMPUS DIGITAL CAMERA", "SONY DSC   "])
def test_a_cameras_placeholder_description_is_not_a_description(tmp_path, placeholder):
    exif = Image.Exif()
    exif[IMAGE_DESCRIPTION] = placeholder

    conversion = ImageConverter().convert(save_jpeg(tmp_path / "P1010001.jpg", exif))

    assert dict(conversion.media.details) == {}
    assert conversion.warnings == ()


def test_an_image_without_metadata_keeps_the_file_name_title_and_an_empty_frontmatter(tmp_path):
    conversion = ImageConverter().convert(save_jpeg(tmp_path / "team_photo.jpg"))

    assert conversion.title == "team photo"
    assert dict(conversion.frontmatter) == {}
    assert (conversion.media.taken, conversion.media.latitude, dict(conversion.media.details)) == (None, None, {})


def test_metadata_of_a_truncated_jpeg_is_still_read(tmp_path):
    exif = Image.Exif()
    exif[ARTIST] = "Ana Silva"
    photo = save_jpeg(tmp_path / "cut.jpg", exif, size=(300, 200))
    whole = photo.read_bytes()
    photo.write_bytes(whole[: len(whole) * 2 // 3])

    conversion = ImageConverter().convert(photo)

    assert conversion.media.problem.startswith("corrupt or truncated image: ")
    assert conversion.frontmatter == {"author": "Ana Silva"}


# -- hostile metadata: the image plants, the bad field is skipped and named ----------------
def only_warning(conversion, name: str) -> str:
    [warning] = conversion.warnings
    assert warning.startswith(f"{name}: some image metadata could not be read and was skipped (")
    assert warning.endswith("); the image planted without it")
    assert "\n" not in warning
    return warning


@pytest.mark.parametrize(
    ("gps", "reason"),
    [
        (dict(latitude=(IFDRational(48, 0), IFDRational(51), IFDRational(0, 0))),
         "EXIF GPS position: a zero denominator or not a number"),
        (dict(latitude=(IFDRational(95), IFDRational(0), IFDRational(0))), "EXIF GPS position: out of range"),
        (dict(longitude=(IFDRational(181), IFDRational(0), IFDRational(0))), "EXIF GPS position: out of range"),
        (dict(latitude_ref=None), "EXIF GPS position: no N/S reference"),
        (dict(longitude_ref="Q"), "EXIF GPS position: no E/W reference"),
        (dict(status="V"), "EXIF GPS position: the receiver marked the fix void"),
    ],
)
def test_an_unusable_gps_position_is_skipped_and_named(tmp_path, gps, reason):
    photo = save_jpeg(tmp_path / "where.jpg", gps_exif(**gps))

    conversion = ImageConverter().convert(photo)

    assert reason in only_warning(conversion, "where.jpg")
    assert (conversion.media.latitude, conversion.media.longitude) == (None, None)
    assert "GPS" not in body_of(conversion)
    assert_planted_as_media(conversion, photo)


def test_an_altitude_with_a_zero_denominator_drops_only_the_altitude(tmp_path):
    photo = save_jpeg(tmp_path / "alt.jpg", gps_exif(altitude=IFDRational(35, 0)))

    conversion = ImageConverter().convert(photo)

    assert "EXIF GPS altitude: a zero denominator or not a number" in only_warning(conversion, "alt.jpg")
    assert "; GPS 48.858417 N 2.2945 E)." in body_of(conversion)


def test_non_utf8_bytes_in_an_exif_string_skip_that_field_without_quoting_it(tmp_path):
    exif = Image.Exif()
    exif[ARTIST] = b"Jos\xe9 Ant\xf3nio"  # latin-1, not the UTF-8 (or ASCII) EXIF allows
    exif[COPYRIGHT] = "ACME Photo"
    photo = save_jpeg(tmp_path / "latin.jpg", exif)

    conversion = ImageConverter().convert(photo)

    warning = only_warning(conversion, "latin.jpg")
    assert "EXIF Artist: not UTF-8 text" in warning
    assert "Jos" not in warning and "ACME" not in warning
    assert "author" not in conversion.frontmatter
    assert dict(conversion.media.details) == {"copyright": "ACME Photo"}
    assert_planted_as_media(conversion, photo)


def test_an_exif_string_in_utf8_is_read_exactly(tmp_path):
    exif = Image.Exif()
    exif[ARTIST] = "José António".encode("utf-8")

    conversion = ImageConverter().convert(save_jpeg(tmp_path / "utf8.jpg", exif))

    assert conversion.frontmatter == {"author": "José António"}
    assert conversion.warnings == ()


def test_an_odd_length_xp_tag_is_skipped(tmp_path):
    exif = Image.Exif()
    exif[XP_TITLE] = b"T\x00i\x00t"  # half a UTF-16 code unit at the end

    conversion = ImageConverter().convert(save_jpeg(tmp_path / "xp.jpg", exif))

    assert "EXIF XPTitle: not UTF-16LE text" in only_warning(conversion, "xp.jpg")
    assert conversion.title == "xp" and "title" not in conversion.frontmatter


def test_an_xmp_entity_bomb_is_not_expanded(tmp_path):
    levels = ['<!ENTITY lol0 "lol">'] + [f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10)]
    bomb = f'<?xml version="1.0"?><!DOCTYPE x:xmpmeta [{"".join(levels)}]>' + xmp_packet("&lol9;")
    exif = Image.Exif()
    exif[ARTIST] = "Ana Silva"
    photo = save_jpeg(tmp_path / "laughs.jpg", exif, xmp=bomb)

    started = time.monotonic()
    conversion = ImageConverter().convert(photo)

    assert time.monotonic() - started < 2
    assert "XMP: the packet declares a DTD or entities, so it was not parsed" in only_warning(conversion, "laughs.jpg")
    assert "lol" not in body_of(conversion)
    assert conversion.frontmatter == {"author": "Ana Silva"}  # EXIF still read
    assert_planted_as_media(conversion, photo)


def test_an_xmp_packet_over_the_size_limit_is_not_parsed(tmp_path):
    padding = " " * (MAX_XMP_BYTES + 10)
    huge = xmp_packet("Should not be read").replace("</rdf:RDF>", padding + "</rdf:RDF>")
    image = save_png(tmp_path / "huge.png", {"Title": "PNG title"}, itxt={"XML:com.adobe.xmp": huge})

    conversion = ImageConverter().convert(image)

    warning = only_warning(conversion, "huge.png")
    assert f"XMP: the packet is {len(huge)} bytes, over the limit of {MAX_XMP_BYTES}" in warning
    assert conversion.frontmatter == {"title": "PNG title"}  # the next source in line
    assert_planted_as_media(conversion, image)


def test_malformed_xmp_is_skipped_and_exif_is_used(tmp_path):
    exif = Image.Exif()
    exif[XP_TITLE] = "EXIF title".encode("utf-16-le")
    photo = save_jpeg(tmp_path / "broken.jpg", exif, xmp=xmp_packet("<unclosed"))

    conversion = ImageConverter().convert(photo)

    assert "XMP: the packet is not well-formed XML" in only_warning(conversion, "broken.jpg")
    assert conversion.frontmatter == {"title": "EXIF title"}


@pytest.mark.parametrize(
    ("written", "skipped_note"),
    [
        ("2024:13:45 25:61:00", "EXIF DateTimeOriginal: not a real calendar date"),
        ("yesterday at noon", "EXIF DateTimeOriginal: not a date"),
        ("0000:00:00 00:00:00", None),  # the camera's clock was never set: no date, nothing to report
        ("    :  :     :  :  ", None),
    ],
)
def test_a_date_taken_that_is_not_a_date_is_skipped(tmp_path, written, skipped_note):
    exif = Image.Exif()
    exif.get_ifd(EXIF_IFD)[DATETIME_ORIGINAL] = written

    conversion = ImageConverter().convert(save_jpeg(tmp_path / "when.jpg", exif))

    assert "created" not in conversion.frontmatter
    assert conversion.media.taken is None
    if skipped_note:
        assert skipped_note in only_warning(conversion, "when.jpg")
    else:
        assert conversion.warnings == ()


def test_a_malformed_iptc_block_is_skipped(tmp_path):
    broken = b"Photoshop 3.0\x008BIM\x04\x04\x00\x00\x00\x00\x00\x08\x1c\x02\x05\xff\xff\x00"
    photo = save_jpeg(tmp_path / "iptc.jpg")
    photo.write_bytes(insert_segment(photo.read_bytes(), 0xED, broken))

    conversion = ImageConverter().convert(photo)

    assert "IPTC" in only_warning(conversion, "iptc.jpg")
    assert_planted_as_media(conversion, photo)


def exif_segment(entries: list[tuple[int, int, int, int]]) -> bytes:
    """An APP1 Exif payload: a little-endian TIFF header and one IFD of raw entries."""
    ifd = struct.pack("<H", len(entries)) + b"".join(struct.pack("<HHII", *entry) for entry in entries)
    return b"Exif\x00\x00" + struct.pack("<2sHI", b"II", 42, 8) + ifd + struct.pack("<I", 0)


@pytest.mark.parametrize(
    "segment",
    [
        pytest.param(exif_segment([(GPS_IFD, 4, 1, 0x7FFFFFFF)]), id="gps-ifd-pointing-past-the-end"),
        pytest.param(exif_segment([(EXIF_IFD, 4, 1, 0x7FFFFFF0)]), id="exif-ifd-pointing-past-the-end"),
        pytest.param(exif_segment([(ARTIST, 2, 0x7FFFFFFF, 0x7FFFFFFF)]), id="artist-claiming-2-gb"),
    ],
)
def test_a_corrupt_exif_block_is_reported_and_the_image_plants(tmp_path, segment, recwarn):
    photo = save_jpeg(tmp_path / "corrupt.jpg")
    photo.write_bytes(insert_segment(photo.read_bytes(), 0xE1, segment))

    conversion = ImageConverter().convert(photo)

    assert "EXIF: part of the block is corrupt and could not be read" in only_warning(conversion, "corrupt.jpg")
    assert dict(conversion.frontmatter) == {}
    assert_planted_as_media(conversion, photo)
    assert not [w for w in recwarn if "EXIF" in str(w.message)]  # reported, not printed on stderr


def test_control_characters_and_markdown_in_metadata_cannot_break_the_body(tmp_path):
    title = "Line one\n## Query manual\r\n- evil: yes\x00\x1b[31m"
    description = "x" * 5000
    photo = save_jpeg(tmp_path / "sneaky.jpg", iptc=[(2, 5, title.encode()), (2, 120, description.encode())])

    conversion = ImageConverter().convert(photo)

    body = body_of(conversion)
    lines = body.split("\n")
    assert lines[0] == "# Line one ## Query manual - evil: yes"
    assert "- Title: Line one ## Query manual - evil: yes" in lines
    [described] = [line for line in lines if line.startswith("- Description: ")]
    assert len(described) == len("- Description: ") + 1000 and described.endswith("\u2026")
    assert [line for line in lines if line.startswith("#")] == [lines[0]]
    assert lines[-2] == SENTINEL
    assert conversion.frontmatter["title"] == "Line one ## Query manual - evil: yes"
