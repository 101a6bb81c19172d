from __future__ import annotations

import struct
from pathlib import Path

import pytest

from monkeyllm_core import Vine
from monkeyllm_gardener.conversion import MediaInfo
from monkeyllm_gardener.kit import clean_tag, media_title
from monkeyllm_gardener.media import (
    SENTINEL,
    media_asset_name,
    media_summary_facts,
    render_media_body,
)


def test_stub_body_is_byte_for_byte_the_forest_format_example():
    info = MediaInfo(kind="image", filename="team_photo.png", format="PNG", size_bytes=73)

    body = render_media_body("team photo", info)

    assert body == (
        "# team photo\n\n"
        "Media file `team_photo.png` (PNG format, 73 bytes).\n\n"
        "No description has been generated for this media yet.\n"
    )


def test_sentinel_is_the_verbatim_sentence_other_tools_search_for():
    assert SENTINEL == "No description has been generated for this media yet."


MEDIA_LINE_VECTORS = [
    pytest.param(
        MediaInfo(kind="image", filename="a.png", format="PNG", size_bytes=73, width=640, height=480),
        "Media file `a.png` (PNG format, 73 bytes, 640x480 pixels).",
        id="image-pixels",
    ),
    pytest.param(
        MediaInfo(
            kind="audio",
            filename="memo.wav",
            format="WAV",
            size_bytes=44144,
            duration_seconds=2.5,
            tags={"title": "X", "artist": "Y"},
        ),
        "Media file `memo.wav` (WAV format, 44144 bytes, 2.5 seconds; title: X, artist: Y).",
        id="audio-duration-and-tags",
    ),
    pytest.param(
        MediaInfo(kind="audio", filename="a.mp3", format="MP3", size_bytes=1, duration_seconds=1.0),
        "Media file `a.mp3` (MP3 format, 1 byte, 1 second).",
        id="singulars",
    ),
    pytest.param(
        MediaInfo(kind="audio", filename="a.mp3", format="MP3", size_bytes=1234567, duration_seconds=185.0404),
        "Media file `a.mp3` (MP3 format, 1234567 bytes, 185.04 seconds).",
        id="no-thousands-separator-two-decimals",
    ),
    pytest.param(
        MediaInfo(
            kind="image",
            filename="x.png",
            format="unknown",
            size_bytes=0,
            problem="corrupt or truncated image: the file is empty",
        ),
        "Media file `x.png` (unknown format, 0 bytes). "
        "The file could not be fully read: corrupt or truncated image: the file is empty.",
        id="problem-is-its-own-sentence",
    ),
    pytest.param(
        MediaInfo(kind="image", filename="a`b``c.png", format="PNG", size_bytes=5),
        "Media file ```a`b``c.png``` (PNG format, 5 bytes).",
        id="backticks-in-name-get-a-longer-fence",
    ),
    pytest.param(
        MediaInfo(kind="image", filename="`edge`.png", format="PNG", size_bytes=5),
        "Media file `` `edge`.png `` (PNG format, 5 bytes).",
        id="leading-backtick-is-padded",
    ),
    pytest.param(
        MediaInfo(kind="image", filename="two\nlines.png", format="PNG", size_bytes=5),
        "Media file `two\ufffdlines.png` (PNG format, 5 bytes).",
        id="newline-in-name-cannot-break-the-body",
    ),
    pytest.param(
        MediaInfo(
            kind="audio",
            filename="s.mp3",
            format="MP3",
            size_bytes=9,
            tags={"title": "line one\n## Query manual", "album": ""},
        ),
        "Media file `s.mp3` (MP3 format, 9 bytes; title: line one ## Query manual).",
        id="tags-stay-on-the-line-and-empty-tags-are-dropped",
    ),
]


MEDIA_LINE_VECTORS += [
    pytest.param(
        MediaInfo(kind="image", filename="p.jpg", format="JPEG", size_bytes=9, width=4, height=3,
                  taken="2024-06-01 14:03", latitude=48.858417, longitude=2.2945, altitude_m=35.0),
        "Media file `p.jpg` (JPEG format, 9 bytes, 4x3 pixels; taken 2024-06-01 14:03, "
        "GPS 48.858417 N 2.2945 E, altitude 35 m).",
        id="taken-gps-altitude-after-the-pixels",
    ),
    pytest.param(
        MediaInfo(kind="image", filename="p.jpg", format="JPEG", size_bytes=9,
                  latitude=-33.8567844, longitude=-0.0000001, altitude_m=-12.25),
        "Media file `p.jpg` (JPEG format, 9 bytes; GPS 33.856784 S 0 E, altitude -12.2 m).",
        id="gps-south-west-six-decimals-at-most",
    ),
    pytest.param(
        MediaInfo(kind="image", filename="p.jpg", format="JPEG", size_bytes=9, latitude=10.5, altitude_m=3.0),
        "Media file `p.jpg` (JPEG format, 9 bytes).",
        id="half-a-position-is-not-shown",
    ),
    pytest.param(
        MediaInfo(kind="image", filename="p.jpg", format="JPEG", size_bytes=9, latitude=float("nan"), longitude=2.0),
        "Media file `p.jpg` (JPEG format, 9 bytes).",
        id="a-nan-position-is-not-shown",
    ),
    pytest.param(
        MediaInfo(kind="image", filename="p.jpg", format="JPEG", size_bytes=9, taken="2024-06-01\n# x"),
        "Media file `p.jpg` (JPEG format, 9 bytes; taken 2024-06-01 # x).",
        id="taken-stays-on-the-line",
    ),
]


@pytest.mark.parametrize(("info", "expected_line"), MEDIA_LINE_VECTORS)
def test_media_line_carries_what_is_known_without_a_model(info, expected_line):
    body = render_media_body("t", info)

    assert body == f"# t\n\n{expected_line}\n\n{SENTINEL}\n"


def test_description_replaces_the_sentinel_and_keeps_the_media_line():
    info = MediaInfo(kind="image", filename="slide.png", format="PNG", size_bytes=10, width=2, height=3)

    body = render_media_body("slide", info, description="A slide.\n\n- Q1 revenue up 12%\n")

    assert body == (
        "# slide\n\n"
        "Media file `slide.png` (PNG format, 10 bytes, 2x3 pixels).\n\n"
        "## Description\n\n"
        "A slide.\n\n- Q1 revenue up 12%\n"
    )
    assert SENTINEL not in body


def test_blank_description_keeps_the_sentinel():
    info = MediaInfo(kind="image", filename="a.png", format="PNG", size_bytes=1)

    assert render_media_body("a", info, description="  \n").endswith(f"\n\n{SENTINEL}\n")


@pytest.mark.parametrize(
    ("source_name", "title"),
    [
        ("team_photo.png", "team photo"),
        ("2026-q1_board--deck.JPG", "2026 q1 board deck"),
        ("___.png", "___"),
        ("plain.wav", "plain"),
    ],
)
def test_media_title_turns_separators_into_spaces(source_name, title):
    assert media_title(source_name) == title


@pytest.mark.parametrize(
    ("node_slug", "source_name", "asset"),
    [
        ("team-photo", "Team Photo.PNG", "team-photo.png"),
        ("photos/team-photo", "team_photo.jpeg", "team-photo.jpeg"),
        ("../../etc/passwd", "x.png", "passwd.png"),
        ("we#ird?%name", "a.wav", "we-ird-name.wav"),
        ("..", "a.png", "media.png"),
        ("memo", "memo.w av", "memo"),
        ("memo", "no_extension", "memo"),
        ("memo", "rm -rf;.MP3", "memo.mp3"),
    ],
)
def test_asset_name_is_the_slug_plus_a_safe_lowercase_extension(node_slug, source_name, asset):
    assert media_asset_name(node_slug, source_name) == asset


def test_long_tags_are_cut_visibly():
    cut = clean_tag("a" * 500)

    assert len(cut) == 200
    assert cut.endswith("\u2026")
    assert clean_tag("Ana\x00\x00  Silva ") == "Ana Silva"


def test_details_are_listed_after_the_media_line_and_before_the_sentinel():
    info = MediaInfo(kind="image", filename="p.jpg", format="JPEG", size_bytes=9,
                     details={"title": "Eiffel tower", "description": "Lit up\n## Notes\n- at night", "author": " "})

    body = render_media_body("Eiffel tower", info)

    assert body == (
        "# Eiffel tower\n\n"
        "Media file `p.jpg` (JPEG format, 9 bytes).\n\n"
        "- Title: Eiffel tower\n"
        "- Description: Lit up ## Notes - at night\n\n"
        f"{SENTINEL}\n"
    )


def test_a_description_replaces_the_sentinel_and_the_details_stay():
    info = MediaInfo(kind="image", filename="p.jpg", format="JPEG", size_bytes=9, details={"author": "Ana"})

    body = render_media_body("p", info, description="A tower.")

    assert body == "# p\n\nMedia file `p.jpg` (JPEG format, 9 bytes).\n\n- Author: Ana\n\n## Description\n\nA tower.\n"


def test_summary_facts_are_the_line_facts_then_the_description_never_the_problem():
    info = MediaInfo(kind="image", filename="photo (1).jpg", format="JPEG", size_bytes=9, width=4, height=3,
                     taken="2024-06-01", details={"author": "Ana", "description": "Lisbon\nharbour"},
                     problem="corrupt or truncated image: image file is truncated (3 bytes not processed)")

    assert media_summary_facts(info) == "JPEG format, 9 bytes, 4x3 pixels; taken 2024-06-01; Lisbon harbour"


def write_photo(path: Path, title: str = "Eiffel tower at dusk") -> None:
    """A JPEG as a phone and Lightroom leave it: EXIF date and GPS, an XMP packet."""
    from PIL import Image
    from PIL.TiffImagePlugin import IFDRational

    exif = Image.Exif()
    exif[0x013B] = "Ana Silva"  # Artist
    exif.get_ifd(0x8769)[0x9003] = "2024:06:01 14:03:22"  # DateTimeOriginal
    gps = exif.get_ifd(0x8825)
    gps.update({1: "N", 2: (IFDRational(48), IFDRational(51), IFDRational(303, 10)),
                3: "E", 4: (IFDRational(2), IFDRational(17), IFDRational(402, 10))})
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (40, 30), "navy").save(path, format="JPEG", exif=exif)
    xmp = (
        '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
        '<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f'<dc:title><rdf:Alt><rdf:li xml:lang="x-default">{title}</rdf:li></rdf:Alt></dc:title>'
        '<dc:description><rdf:Alt><rdf:li xml:lang="x-default">Seen from the Trocadero gardens</rdf:li>'
        "</rdf:Alt></dc:description></rdf:Description></rdf:RDF></x:xmpmeta>"
    ).encode()
    segment = b"http://ns.adobe.com/xap/1.0/\x00" + xmp
    data = path.read_bytes()
    path.write_bytes(data[:2] + b"\xff\xe1" + struct.pack(">H", len(segment) + 2) + segment + data[2:])


def test_vine_adopt_plants_a_photos_own_facts_in_passport_and_body(vine_cli, cli, forest, tmp_path):
    export = tmp_path / "export"
    write_photo(export / "photos" / "IMG_0042.jpg")

    report = vine_cli.adopt(export, forest).json()

    assert report["planted"] == ["photos/img-0042"], report
    assert report["errors"] == [], report
    passport = cli.node(forest, "photos/img-0042")
    assert (passport["title"], passport["created"], passport["source_author"]) == (
        "Eiffel tower at dusk", "2024-06-01", "Ana Silva")
    body = cli.body(forest, "photos/img-0042")
    assert body.startswith("\n# Eiffel tower at dusk\n\n")  # the blank line after the passport
    assert "; taken 2024-06-01 14:03, GPS 48.858417 N 2.2945 E)." in body
    assert "- Description: Seen from the Trocadero gardens\n" in body
    assert body.endswith(f"\n\n{SENTINEL}\n")
    assert passport["summary"] == ('Image "Eiffel tower at dusk": JPEG format, '
                                   f'{(export / "photos/IMG_0042.jpg").stat().st_size} bytes, 40x30 pixels; '
                                   "taken 2024-06-01 14:03, GPS 48.858417 N 2.2945 E; Seen from the Trocadero gardens.")
    vine_cli.assert_consistent(forest)
    with Vine(forest, writable=False) as reader:  # the catalog the CLI built: the description is findable
        assert [hit["id"] for hit in reader.search("Trocadero")] == ["photos/img-0042"]


def test_vine_sync_takes_a_retitled_photos_new_title(vine_cli, cli, forest, tmp_path):
    photo = tmp_path / "export" / "IMG_0042.jpg"
    write_photo(photo)
    vine_cli.adopt(photo.parent, forest)
    write_photo(photo, title="Tour Eiffel, 21h47")
    cli.bump_mtime(photo)

    report = vine_cli.sync(forest).json()

    assert report["updated"] == ["img-0042"], report
    assert cli.node(forest, "img-0042")["title"] == "Tour Eiffel, 21h47"
    assert cli.body(forest, "img-0042").startswith("\n# Tour Eiffel, 21h47\n\n")
    vine_cli.assert_consistent(forest)
