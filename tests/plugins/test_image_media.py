from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pluggy
import pytest
from PIL import Image, PngImagePlugin

from monkeyllm_gardener import hookspecs
from monkeyllm_gardener.conversion import ConversionError, MediaInfo
from monkeyllm_gardener.media import SENTINEL, render_media_body
from monkeyllm_plugins import image_media
from monkeyllm_plugins.image_media import ImageConverter

PILLOW_DEFAULT_LIMIT = Image.MAX_IMAGE_PIXELS


def save_image(path: Path, size=(64, 48), image_format=None, **save_options) -> Path:
    picture = Image.new("RGB", size, (200, 30, 90))
    # Noise-free gradients still need real entropy so a cut lands mid-stream.
    for x in range(size[0]):
        picture.putpixel((x, x % size[1]), (x * 3 % 256, 10, 250))
    picture.save(path, format=image_format, **save_options)
    return path


def patch_png_dimensions(path: Path, width: int, height: int) -> None:
    """Rewrite IHDR's width and height and its CRC, as a crafted bomb would."""
    data = bytearray(path.read_bytes())
    ihdr_at = data.index(b"IHDR")
    struct.pack_into(">II", data, ihdr_at + 4, width, height)
    crc = zlib.crc32(bytes(data[ihdr_at : ihdr_at + 17])) & 0xFFFFFFFF
    struct.pack_into(">I", data, ihdr_at + 17, crc)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("name", "image_format", "expected_format"),
    [
        ("team_photo.png", "PNG", "PNG"),
        ("holiday-2026.jpg", "JPEG", "JPEG"),
        ("spinner.gif", "GIF", "GIF"),
        ("scan.tiff", "TIFF", "TIFF"),
        ("icon.bmp", "BMP", "BMP"),
        ("hero.webp", "WEBP", "WEBP"),
    ],
)
def test_readable_image_plants_with_format_and_pixel_size(tmp_path, name, image_format, expected_format):
    image = save_image(tmp_path / name, size=(64, 48), image_format=image_format)

    conversion = ImageConverter().convert(image)

    assert conversion.kind == "payload"
    assert conversion.payload_type == "image"
    assert conversion.payload_path == image
    assert conversion.node_type == "media"
    assert conversion.warnings == ()
    assert conversion.media == MediaInfo(
        kind="image",
        filename=name,
        format=expected_format,
        size_bytes=image.stat().st_size,
        width=64,
        height=48,
    )


def test_png_body_names_file_format_bytes_and_pixels(tmp_path):
    image = save_image(tmp_path / "team_photo.png", size=(640, 480))

    conversion = ImageConverter().convert(image)

    assert conversion.title == "team photo"
    assert render_media_body(conversion.title, conversion.media) == (
        "# team photo\n\n"
        f"Media file `team_photo.png` (PNG format, {image.stat().st_size} bytes, 640x480 pixels).\n\n"
        f"{SENTINEL}\n"
    )


def test_png_text_chunks_become_details(tmp_path):
    text = PngImagePlugin.PngInfo()
    text.add_text("Title", "Whiteboard pricing")
    text.add_text("Author", "Ana Silva")
    text.add_text("Description", "Q1 pricing tiers\nsketched in the standup")
    image = save_image(tmp_path / "whiteboard.png", pnginfo=text)

    info = ImageConverter().convert(image).media

    assert dict(info.details) == {
        "title": "Whiteboard pricing",
        "description": "Q1 pricing tiers sketched in the standup",
        "author": "Ana Silva",
    }
    assert dict(info.tags) == {}  # a photo's own text is listed after the media line, not on it


def test_jpeg_exif_description_and_artist_become_details(tmp_path):
    exif = Image.Exif()
    exif[0x010E] = "Team offsite, Lisbon"
    exif[0x013B] = "Bruno"
    image = save_image(tmp_path / "offsite.jpg", image_format="JPEG", exif=exif)

    info = ImageConverter().convert(image).media

    assert dict(info.details) == {"description": "Team offsite, Lisbon", "author": "Bruno"}


@pytest.mark.parametrize(("name", "image_format"), [("cut.png", "PNG"), ("cut.jpg", "JPEG")])
def test_truncated_image_still_plants_with_the_problem_stated(tmp_path, name, image_format):
    image = save_image(tmp_path / name, size=(300, 200), image_format=image_format)
    whole = image.read_bytes()
    image.write_bytes(whole[: len(whole) * 2 // 3])

    conversion = ImageConverter().convert(image)

    info = conversion.media
    assert (info.format, info.width, info.height) == (image_format, 300, 200)
    assert info.size_bytes == len(whole) * 2 // 3
    assert info.problem.startswith("corrupt or truncated image: ")
    assert conversion.warnings == (
        f"{name}: {info.problem}; planted as a media node with its original bytes; "
        "re-export the image to read it fully",
    )
    assert "The file could not be fully read: corrupt or truncated image: " in render_media_body("x", info)


def test_decompression_bomb_plants_undecoded_and_limit_stays_default(tmp_path):
    image = save_image(tmp_path / "bomb.png", size=(4, 4))
    patch_png_dimensions(image, 30000, 30000)

    conversion = ImageConverter().convert(image)

    info = conversion.media
    assert (info.format, info.width, info.height) == ("PNG", None, None)
    assert info.problem == (
        "decompression bomb refused: the image declares 900000000 pixels, over Pillow's "
        f"safety limit of {PILLOW_DEFAULT_LIMIT} pixels, so it was not decoded"
    )
    assert conversion.warnings[0].startswith("bomb.png: decompression bomb refused")
    assert Image.MAX_IMAGE_PIXELS == PILLOW_DEFAULT_LIMIT


def test_image_over_the_limit_but_under_twice_it_is_refused_with_its_size(tmp_path):
    image = save_image(tmp_path / "poster.png", size=(4, 4))
    patch_png_dimensions(image, 10000, 10000)  # 1e8 pixels: Pillow only warns

    info = ImageConverter().convert(image).media

    assert (info.format, info.width, info.height) == ("PNG", 10000, 10000)
    assert info.problem == (
        "decompression bomb refused: the image declares 10000x10000 pixels, over Pillow's "
        f"safety limit of {PILLOW_DEFAULT_LIMIT} pixels, so it was not decoded"
    )


def test_unknown_bytes_behind_an_image_name_plant_as_unknown_format(tmp_path):
    fake = tmp_path / "not-really.png"
    fake.write_bytes(b"this is a text file pretending\n" * 4)

    conversion = ImageConverter().convert(fake)

    assert conversion.media == MediaInfo(
        kind="image",
        filename="not-really.png",
        format="unknown",
        size_bytes=124,
        problem="corrupt or truncated image: Pillow cannot identify the image format",
    )
    assert render_media_body(conversion.title, conversion.media) == (
        "# not really\n\n"
        "Media file `not-really.png` (unknown format, 124 bytes). The file could not be fully "
        "read: corrupt or truncated image: Pillow cannot identify the image format.\n\n"
        f"{SENTINEL}\n"
    )


def test_zero_byte_image_plants_with_the_empty_file_stated(tmp_path):
    empty = tmp_path / "blank.jpeg"
    empty.write_bytes(b"")

    conversion = ImageConverter().convert(empty)

    assert conversion.media == MediaInfo(
        kind="image",
        filename="blank.jpeg",
        format="unknown",
        size_bytes=0,
        problem="corrupt or truncated image: the file is empty",
    )
    assert conversion.warnings == (
        "blank.jpeg: corrupt or truncated image: the file is empty; planted as a media node "
        "with its original bytes; re-export the image to read it fully",
    )


def test_converter_registers_through_the_public_hook_with_pillow_as_requirement():
    manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    manager.add_hookspecs(hookspecs)
    manager.register(image_media)
    registered = []

    manager.hook.register_converters(register=lambda converter, priority=0.0: registered.append(converter))

    [converter] = registered
    assert converter.name == "image"
    assert tuple(converter.requires) == ("PIL",)
    assert set(converter.extensions) == {".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff"}
    assert converter.install_hint == 'pip install "monkeyllm[ingest]"'


def test_unreadable_path_fails_instead_of_planting_as_corrupt(tmp_path):
    folder = tmp_path / "not-a-file.png"
    folder.mkdir()

    with pytest.raises(ConversionError, match=r"^not-a-file\.png: cannot read the file \(Is a directory\)$"):
        ImageConverter().convert(folder)
    with pytest.raises(ConversionError, match=r"^gone\.png: cannot read the file \(No such file or directory\)$"):
        ImageConverter().convert(tmp_path / "gone.png")
