from __future__ import annotations

import random
import struct
from pathlib import Path

import pluggy
import pytest
from mutagen.easyid3 import EasyID3

from monkeyllm_gardener import hookspecs
from monkeyllm_gardener.conversion import ConversionError, MediaInfo
from monkeyllm_gardener.media import SENTINEL, render_media_body
from monkeyllm_plugins import audio_media
from monkeyllm_plugins.audio_media import AudioConverter

from cli_helpers import write_wav

# MPEG-1 Layer III, 128 kbit/s, 44.1 kHz, no padding: every frame is 417 bytes and
# holds 1152 samples.
MP3_FRAME = bytes.fromhex("FFFB9064") + b"\x00" * 413
MP3_FRAME_SECONDS = 1152 / 44100


def set_declared_data_size(path: Path, declared: int) -> None:
    data = bytearray(path.read_bytes())
    struct.pack_into("<I", data, data.index(b"data") + 4, declared)
    path.write_bytes(bytes(data))


def append_info_list(path: Path, entries: dict[bytes, bytes]) -> None:
    body = b"INFO"
    for key, value in entries.items():
        text = value + b"\x00"
        body += key + struct.pack("<I", len(text)) + text + (b"\x00" if len(text) % 2 else b"")
    data = bytearray(path.read_bytes()) + b"LIST" + struct.pack("<I", len(body)) + body
    struct.pack_into("<I", data, 4, len(data) - 8)  # keep the RIFF size honest
    path.write_bytes(bytes(data))


def test_wav_plants_with_duration_and_exact_body(tmp_path):
    wav = write_wav(tmp_path / "standup_memo.wav", frames=20000, rate=8000)

    conversion = AudioConverter().convert(wav)

    assert conversion.kind == "payload"
    assert conversion.payload_type == "audio"
    assert conversion.payload_path == wav
    assert conversion.node_type == "media"
    assert conversion.title == "standup memo"
    assert conversion.warnings == ()
    assert conversion.media == MediaInfo(
        kind="audio", filename="standup_memo.wav", format="WAV", size_bytes=40044, duration_seconds=2.5
    )
    assert render_media_body(conversion.title, conversion.media) == (
        "# standup memo\n\n"
        "Media file `standup_memo.wav` (WAV format, 40044 bytes, 2.5 seconds).\n\n"
        f"{SENTINEL}\n"
    )


def test_wav_header_claiming_more_data_than_present_uses_the_real_size_and_warns(tmp_path):
    wav = write_wav(tmp_path / "crashed.wav", frames=16000, rate=16000)  # 1 second, 32000 data bytes
    set_declared_data_size(wav, 10_000_000)

    conversion = AudioConverter().convert(wav)

    assert conversion.media.duration_seconds == 1.0
    assert conversion.media.problem is None
    assert conversion.warnings == (
        "crashed.wav: the WAV header declares 10000000 bytes of audio but the file holds "
        "32000; the duration is computed from the bytes present",
    )


def test_wav_cut_mid_recording_measures_the_bytes_that_survived(tmp_path):
    wav = write_wav(tmp_path / "cut.wav", frames=16000, rate=8000, channels=2)  # 2 s stereo
    wav.write_bytes(wav.read_bytes()[: 44 + 8000 * 4])  # keep exactly 1 s of frames

    conversion = AudioConverter().convert(wav)

    assert conversion.media.duration_seconds == 1.0
    assert conversion.warnings == (
        "cut.wav: the WAV header declares 64000 bytes of audio but the file holds 32000; "
        "the duration is computed from the bytes present",
    )


def test_streaming_wav_with_zero_declared_data_size_is_measured(tmp_path):
    wav = write_wav(tmp_path / "stream.wav", frames=4000, rate=8000)
    set_declared_data_size(wav, 0)

    conversion = AudioConverter().convert(wav)

    assert conversion.media.duration_seconds == 0.5
    assert conversion.warnings == (
        "stream.wav: the WAV header declares 0 bytes of audio but the file holds 8000; "
        "the duration is computed from the bytes present",
    )


def test_wav_info_list_after_the_data_becomes_tags(tmp_path):
    wav = write_wav(tmp_path / "interview.wav", frames=8000, rate=8000)
    append_info_list(wav, {b"INAM": b"Interview 3", b"IART": b"Jos\xe9", b"IPRD": b"Research"})

    conversion = AudioConverter().convert(wav)

    assert conversion.warnings == ()
    assert conversion.media.duration_seconds == 1.0
    assert dict(conversion.media.tags) == {"title": "Interview 3", "artist": "José", "album": "Research"}
    assert "(WAV format, " in render_media_body("t", conversion.media)
    assert "1 second; title: Interview 3, artist: José, album: Research)." in render_media_body("t", conversion.media)


def test_wav_without_fmt_chunk_plants_with_the_problem(tmp_path):
    wav = tmp_path / "headless.wav"
    wav.write_bytes(b"RIFF" + struct.pack("<I", 12) + b"WAVE" + b"data" + struct.pack("<I", 4) + b"\x00" * 4)

    conversion = AudioConverter().convert(wav)

    assert conversion.media == MediaInfo(
        kind="audio",
        filename="headless.wav",
        format="WAV",
        size_bytes=24,
        problem="corrupt or unreadable audio: the WAV file has no usable fmt chunk",
    )
    assert len(conversion.warnings) == 1


def test_mp3_with_id3_tags_gives_duration_and_tags(tmp_path):
    mp3 = tmp_path / "morning-standup.mp3"
    mp3.write_bytes(MP3_FRAME * 40)
    tags = EasyID3()
    tags.update({"title": "Morning Standup", "artist": "Ana Silva", "album": "Q1 Meetings"})
    tags.save(mp3)

    conversion = AudioConverter().convert(mp3)

    info = conversion.media
    assert conversion.warnings == ()
    assert (info.format, info.size_bytes, info.problem) == ("MP3", mp3.stat().st_size, None)
    assert info.duration_seconds == pytest.approx(40 * MP3_FRAME_SECONDS, abs=0.01)
    assert list(info.tags.items()) == [("title", "Morning Standup"), ("artist", "Ana Silva"), ("album", "Q1 Meetings")]
    assert render_media_body(conversion.title, info).startswith(
        "# morning standup\n\nMedia file `morning-standup.mp3` (MP3 format, "
    )


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("noise.mp3", random.Random(7).randbytes(3000).replace(b"\xff", b"\x00"), "corrupt or unreadable audio: can't sync to MPEG frame"),
        ("empty.mp3", b"", "corrupt or unreadable audio: the file is empty"),
        ("empty.wav", b"", "corrupt or unreadable audio: the file is empty"),
    ],
)
def test_unreadable_audio_still_plants_with_the_problem_stated(tmp_path, name, content, problem):
    path = tmp_path / name
    path.write_bytes(content)

    conversion = AudioConverter().convert(path)

    assert conversion.media == MediaInfo(
        kind="audio", filename=name, format="unknown", size_bytes=len(content), problem=problem
    )
    assert conversion.warnings == (
        f"{name}: {problem}; planted as a media node with its original bytes; "
        "re-export the file to read it fully",
    )
    assert f"The file could not be fully read: {problem}." in render_media_body("t", conversion.media)


def test_converter_registers_through_the_public_hook_with_mutagen_as_requirement():
    manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    manager.add_hookspecs(hookspecs)
    manager.register(audio_media)
    registered = []

    manager.hook.register_converters(register=lambda converter, priority=0.0: registered.append(converter))

    [converter] = registered
    assert converter.name == "audio"
    assert tuple(converter.requires) == ("mutagen",)
    assert set(converter.extensions) == {".mp3", ".wav", ".flac", ".ogg", ".m4a", ".aac", ".opus"}
    assert converter.install_hint == 'pip install "monkeyllm[ingest]"'


def test_unreadable_path_fails_instead_of_planting_as_corrupt(tmp_path):
    folder = tmp_path / "not-a-file.mp3"
    folder.mkdir()

    with pytest.raises(ConversionError, match=r"^not-a-file\.mp3: cannot read the file \(Is a directory\)$"):
        AudioConverter().convert(folder)
    with pytest.raises(ConversionError, match=r"^gone\.wav: cannot read the file \(No such file or directory\)$"):
        AudioConverter().convert(tmp_path / "gone.wav")


def write_flac(path: Path, *, rate: int, channels: int, seconds: int) -> Path:
    """A FLAC stream header as encoders write it (STREAMINFO only, no audio frames):
    enough for a reader to know the format, the length and to hold tags."""
    total = rate * seconds
    packed = (rate << 44) | ((channels - 1) << 41) | ((16 - 1) << 36) | total  # 20+3+5+36 bits
    streaminfo = struct.pack(">HH", 4096, 4096) + b"\x00" * 6 + packed.to_bytes(8, "big") + b"\x00" * 16
    path.write_bytes(b"fLaC" + bytes([0x80]) + len(streaminfo).to_bytes(3, "big") + streaminfo)
    return path


def test_flac_gives_duration_and_vorbis_comment_tags(tmp_path):
    from mutagen.flac import FLAC

    path = write_flac(tmp_path / "board-call.flac", rate=48000, channels=2, seconds=90)
    tags = FLAC(path)
    tags["title"] = "Board call"
    tags["artist"] = "Ana Silva"
    tags.save()

    info = AudioConverter().convert(path).media

    assert (info.format, info.problem) == ("FLAC", None)
    assert info.duration_seconds == pytest.approx(90.0)
    assert info.tags["title"] == "Board call" and info.tags["artist"] == "Ana Silva"


def test_ogg_that_is_not_really_ogg_plants_with_the_problem_stated(tmp_path):
    path = tmp_path / "memo.ogg"
    path.write_bytes(b"OggS" + random.Random(3).randbytes(500))
    conversion = AudioConverter().convert(path)
    assert conversion.media.problem and conversion.media.problem.startswith("corrupt or unreadable audio")
    assert any("memo.ogg" in warning and "re-export" in warning for warning in conversion.warnings)
