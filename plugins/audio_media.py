"""Built-in converter: an audio file plants as a media node with its bytes as the payload.

mutagen gives the duration and the title/artist/album tags. WAV is measured here
from its chunks instead, because a WAV header often lies about its length (a
recorder that crashed before finalising it): mutagen and the stdlib ``wave`` module
both trust the declared data size, we count the bytes actually present and warn.
A file mutagen cannot read (a zero-length or non-syncing MP3) still plants, with the
problem stated in its body and in a warning.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from monkeyllm_gardener import Conversion, ConversionError, MediaInfo, hookimpl
from monkeyllm_gardener.kit import clean_tag, media_conversion

from ._extras import INGEST_HINT

_TAG_KEYS = ("title", "artist", "album")
_ID3_FRAMES = {"title": "TIT2", "artist": "TPE1", "album": "TALB"}
# RIFF INFO list ids (Microsoft RIFF spec): name, artist, product (the album).
_WAV_INFO_IDS = {b"INAM": "title", b"IART": "artist", b"IPRD": "album"}
_MAX_INFO_LIST_BYTES = 64 * 1024
# mutagen's class names (with the Easy prefix removed) -> the format we show.
_FORMAT_NAMES = {
    "MP3": "MP3",
    "FLAC": "FLAC",
    "OggVorbis": "OGG",
    "OggFLAC": "OGG",
    "OggSpeex": "OGG",
    "OggOpus": "OPUS",
    "MP4": "M4A",
    "AAC": "AAC",
    "WAVE": "WAV",
    "AIFF": "AIFF",
}


class AudioConverter:
    name = "audio"
    extensions = (".mp3", ".wav", ".flac", ".ogg", ".m4a", ".aac", ".opus")
    requires = ("mutagen",)
    install_hint = INGEST_HINT

    def convert(self, path: Path) -> Conversion:
        try:
            info, notes = read_audio_info(path)
        except OSError as error:
            # Unreadable (permissions, a directory, deleted since the walk): a failure,
            # never mistaken for corrupt audio.
            raise ConversionError(f"{path.name}: cannot read the file ({error.strerror})") from error
        return media_conversion(path, info, payload_type="audio", warnings=tuple(notes))


@hookimpl
def register_converters(register) -> None:
    register(AudioConverter(), priority=0.0)


@dataclass(frozen=True, kw_only=True)
class WavMeasure:
    duration_seconds: float | None = None
    tags: dict[str, str] = field(default_factory=dict)
    problem: str | None = None
    warning: str | None = None


def read_audio_info(path: Path) -> tuple[MediaInfo, list[str]]:
    """What is known about an audio file, plus warnings about repairs made."""
    size_bytes = _file_size(path)
    base = dict(kind="audio", filename=path.name, size_bytes=size_bytes)
    if size_bytes == 0:
        empty = "corrupt or unreadable audio: the file is empty"
        return MediaInfo(**base, format="unknown", problem=empty), []
    sniffed = _sniff_format(path)
    audio, mutagen_problem = _open_with_mutagen(path)
    audio_format = _format_name(audio) or sniffed
    tags = _mutagen_tags(audio)
    if sniffed == "WAV":
        wav = measure_wav(path, size_bytes)
        for key, value in wav.tags.items():
            tags.setdefault(key, value)
        info = MediaInfo(
            **base,
            format="WAV",
            duration_seconds=wav.duration_seconds,
            tags=_ordered(tags),
            problem=wav.problem,
        )
        return info, [f"{path.name}: {wav.warning}"] if wav.warning else []
    if audio is None:
        return MediaInfo(**base, format=audio_format, problem=mutagen_problem), []
    length = getattr(audio.info, "length", None)
    duration = round(float(length), 3) if length else None
    return MediaInfo(**base, format=audio_format, duration_seconds=duration, tags=_ordered(tags)), []


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError as error:
        raise ConversionError(f"{path.name}: cannot read the file ({error.strerror})") from error


def _open_with_mutagen(path: Path) -> tuple[Any, str | None]:
    import mutagen

    try:
        audio = mutagen.File(path, easy=True)
    except mutagen.MutagenError as error:
        return None, f"corrupt or unreadable audio: {_reason(error, path)}"
    except Exception as error:  # noqa: BLE001 - third-party parser on untrusted bytes
        return None, f"corrupt or unreadable audio: {type(error).__name__}: {_reason(error, path)}"
    if audio is None:
        return None, "corrupt or unreadable audio: mutagen does not recognise the format"
    return audio, None


def _reason(error: BaseException, path: Path) -> str:
    text = str(error).replace(str(path), path.name).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _format_name(audio: Any) -> str | None:
    if audio is None:
        return None
    class_name = type(audio).__name__.removeprefix("Easy")
    return _FORMAT_NAMES.get(class_name, class_name.upper())


def _mutagen_tags(audio: Any) -> dict[str, str]:
    """title/artist/album from easy tags, or from raw ID3 frames (mutagen has no easy
    interface for ID3 inside WAV/AIFF)."""
    if audio is None or audio.tags is None:
        return {}
    from mutagen.id3 import ID3

    tags: dict[str, str] = {}
    for key in _TAG_KEYS:
        if isinstance(audio.tags, ID3):
            frame = audio.tags.get(_ID3_FRAMES[key])
            values = list(frame.text) if frame is not None else []
        else:
            try:
                values = audio.tags.get(key) or []
            except (KeyError, ValueError):
                values = []
            if isinstance(values, str):
                values = [values]
        text = clean_tag(", ".join(str(value) for value in values))
        if text:
            tags[key] = text
    return tags


def _ordered(tags: dict[str, str]) -> dict[str, str]:
    return {key: tags[key] for key in _TAG_KEYS if key in tags}


def _sniff_format(path: Path) -> str:
    with path.open("rb") as handle:
        prefix = handle.read(64)
    if prefix[:4] == b"RIFF" and prefix[8:12] == b"WAVE":
        return "WAV"
    if prefix.startswith(b"fLaC"):
        return "FLAC"
    if prefix.startswith(b"OggS"):
        return "OPUS" if b"OpusHead" in prefix else "OGG"
    if prefix[4:8] == b"ftyp":
        return "M4A"
    if prefix.startswith(b"ID3"):
        return "MP3"
    if len(prefix) >= 2 and prefix[0] == 0xFF and prefix[1] & 0xF6 == 0xF0:
        return "AAC"  # ADTS sync word with layer bits 00
    if len(prefix) >= 2 and prefix[0] == 0xFF and prefix[1] & 0xE0 == 0xE0:
        return "MP3"
    return "unknown"


def measure_wav(path: Path, file_size: int) -> WavMeasure:
    """Duration from the fmt chunk and the data bytes actually present; when the
    header declares more data than the file holds, the real size wins, with a warning."""
    block_align = sample_rate = 0
    data_bytes: int | None = None
    warning = None
    tags: dict[str, str] = {}
    with path.open("rb") as handle:
        position = 12
        while position + 8 <= file_size:
            handle.seek(position)
            chunk_id, declared = struct.unpack("<4sI", handle.read(8))
            body_start = position + 8
            available = file_size - body_start
            if chunk_id == b"fmt " and declared >= 14 and available >= 14:
                _, _, sample_rate, _, block_align = struct.unpack("<HHIIH", handle.read(14))
            elif chunk_id == b"data":
                data_bytes = declared
                # Streaming recorders leave the size at 0 (or 0xFFFFFFFF) until they
                # finalise; a crash leaves it claiming bytes that never arrived.
                unfinalised = declared == 0 and available > 0 and not _next_is_chunk(handle, body_start)
                if declared > available or unfinalised:
                    data_bytes = available
                    warning = (
                        f"the WAV header declares {declared} bytes of audio but the file holds "
                        f"{available}; the duration is computed from the bytes present"
                    )
                    break
            elif chunk_id == b"LIST":
                handle.seek(body_start)
                _read_info_list(handle.read(min(declared, available, _MAX_INFO_LIST_BYTES)), tags)
            position = body_start + declared + (declared & 1)
    if not block_align or not sample_rate:
        problem = "corrupt or unreadable audio: the WAV file has no usable fmt chunk"
        return WavMeasure(tags=tags, warning=warning, problem=problem)
    if data_bytes is None:
        problem = "corrupt or unreadable audio: the WAV file has no data chunk"
        return WavMeasure(tags=tags, warning=warning, problem=problem)
    duration = round((data_bytes // block_align) / sample_rate, 3)
    return WavMeasure(duration_seconds=duration, tags=tags, warning=warning)


def _next_is_chunk(handle: Any, position: int) -> bool:
    """A data chunk declaring 0 bytes is honest only if a chunk header follows it."""
    handle.seek(position)
    chunk_id = handle.read(4)
    return len(chunk_id) == 4 and all(0x20 <= byte <= 0x7E for byte in chunk_id)


def _read_info_list(body: bytes, tags: dict[str, str]) -> None:
    if not body.startswith(b"INFO"):
        return
    position = 4
    while position + 8 <= len(body):
        sub_id, size = struct.unpack_from("<4sI", body, position)
        value = body[position + 8 : position + 8 + size].split(b"\x00", 1)[0]
        key = _WAV_INFO_IDS.get(sub_id)
        if key and value:
            try:
                text = value.decode("utf-8")
            except UnicodeDecodeError:
                text = value.decode("latin-1")  # RIFF INFO predates UTF-8; latin-1 never fails
            cleaned = clean_tag(text)
            if cleaned:
                tags.setdefault(key, cleaned)
        position += 8 + size + (size & 1)
