"""Guards run on an office file's container before any library opens it.

An ``.xlsx`` or ``.docx`` is a zip. Before openpyxl or python-docx touch it we check:

- a zero-byte file: ``empty file``;
- an OLE2 compound file (magic ``D0 CF 11 E0 A1 B1 1A E1``) behind a zip name is either a
  password-protected OOXML file (Office wraps the encrypted package in OLE with
  ``EncryptionInfo`` and ``EncryptedPackage`` streams) or a legacy ``.doc``/``.xls``
  renamed: each gets its own message, never "corrupt";
- a zip whose end record is missing or whose members run past the end of the file:
  ``corrupt or truncated zip container``;
- a zip bomb, judged on the sizes the central directory *declares*: too many members,
  too many uncompressed bytes in total, or a compression ratio over the limit. Python's
  ``zipfile`` never inflates a member past its declared size (it stops at
  ``file_size``), so checking the declared sizes bounds what the libraries can read.

The OLE directory is parsed minimally (header, FAT, directory chain) to list stream
names; a malformed directory falls back to searching the raw bytes for the UTF-16LE
stream names. Every error is one line naming the file and the fix.
"""
from __future__ import annotations

import struct
import zipfile
from pathlib import Path

from monkeyllm_gardener import ConversionError, UnsupportedFile

OLE_MAGIC = bytes.fromhex("D0CF11E0A1B11AE1")
ENCRYPTION_STREAMS = ("EncryptionInfo", "EncryptedPackage")

_GIB = 1024**3
# A member smaller than this cannot do harm whatever its ratio, and small repetitive
# XML (an empty styles part) legitimately compresses far beyond 200:1.
_RATIO_FLOOR_BYTES = 1024 * 1024

_OLE_FREE, _OLE_END_OF_CHAIN = 0xFFFFFFFF, 0xFFFFFFFE
_OLE_MAX_SECTOR = 0xFFFFFFFA


def _document_word(path: Path) -> str:
    return "workbook" if path.suffix.lower() in (".xlsx", ".xlsm", ".xls") else "document"


def encrypted_message(path: Path) -> str:
    return (
        f"{path.name}: encrypted (password-protected) {_document_word(path)}: "
        "remove the password and export again"
    )


def check_not_empty(path: Path) -> None:
    if path.stat().st_size == 0:
        raise ConversionError(f"{path.name}: empty file (0 bytes): export it again")


def check_zip_container(
    path: Path,
    *,
    max_members: int = 10_000,
    max_total_uncompressed: int = _GIB,
    max_ratio: float = 200,
) -> None:
    """Raise ConversionError unless ``path`` is a sane zip container (see module doc)."""
    path = Path(path)
    check_not_empty(path)
    with path.open("rb") as handle:
        head = handle.read(8)
    if head == OLE_MAGIC:
        _raise_for_ole(path)
    if not zipfile.is_zipfile(path):
        if head.startswith(b"PK"):
            raise ConversionError(
                f"{path.name}: corrupt or truncated zip container: copy or export the file again"
            )
        raise UnsupportedFile(
            f"{path.name}: not a {path.suffix.lower() or 'zip'} file (no zip container): "
            "check the file type and export it again"
        )
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError) as exc:
        raise ConversionError(
            f"{path.name}: corrupt or truncated zip container ({type(exc).__name__}): "
            "copy or export the file again"
        ) from None
    _check_zip_bomb(path, members, max_members, max_total_uncompressed, max_ratio)
    file_size = path.stat().st_size
    for member in members:
        # A member whose data would run past the end of the file means bytes are missing.
        if member.header_offset + member.compress_size > file_size:
            raise ConversionError(
                f"{path.name}: corrupt or truncated zip container (a member runs past the end "
                "of the file): copy or export the file again"
            )


def _check_zip_bomb(
    path: Path,
    members: list[zipfile.ZipInfo],
    max_members: int,
    max_total_uncompressed: int,
    max_ratio: float,
) -> None:
    def refuse(reason: str) -> None:
        raise ConversionError(f"{path.name}: refused: looks like a zip bomb ({reason})")

    if len(members) > max_members:
        refuse(f"{len(members)} members, limit {max_members}")
    total = sum(member.file_size for member in members)
    if total > max_total_uncompressed:
        refuse(f"declares {total} bytes uncompressed, limit {max_total_uncompressed}")
    for member in members:
        if member.file_size >= _RATIO_FLOOR_BYTES:
            ratio = member.file_size / max(member.compress_size, 1)
            if ratio > max_ratio:
                refuse(f"a member compresses {ratio:.0f}:1, limit {max_ratio:g}:1")
    compressed = sum(member.compress_size for member in members)
    if total >= _RATIO_FLOOR_BYTES and total / max(compressed, 1) > max_ratio:
        refuse(f"compresses {total / max(compressed, 1):.0f}:1 overall, limit {max_ratio:g}:1")


def _raise_for_ole(path: Path) -> None:
    names = ole_stream_names(path)
    if any(name in names for name in ENCRYPTION_STREAMS):
        raise UnsupportedFile(encrypted_message(path))
    suffix = path.suffix.lower()
    if "WordDocument" in names or (suffix == ".docx" and not names & {"Workbook", "Book"}):
        raise UnsupportedFile(
            f"{path.name}: this is a legacy Word .doc renamed {suffix}: "
            "open it in Word and save it as .docx"
        )
    if "Workbook" in names or "Book" in names or suffix in (".xlsx", ".xlsm"):
        raise UnsupportedFile(
            f"{path.name}: this is a legacy Excel .xls renamed {suffix}: "
            "rename it to .xls, or open it in Excel and save it as .xlsx"
        )
    raise UnsupportedFile(
        f"{path.name}: an OLE compound file, not a {suffix} zip container: "
        "open it in Office and save it in the current format"
    )


def is_ole_file(path: Path) -> bool:
    with Path(path).open("rb") as handle:
        return handle.read(8) == OLE_MAGIC


def ole_stream_names(path: Path) -> set[str]:
    """Names of the storages and streams in an OLE2 compound file.

    Parses the header, the FAT (through the DIFAT) and the directory chain; a malformed
    container falls back to a byte search for the few names this module cares about.
    """
    data = Path(path).read_bytes()
    try:
        return _parse_ole_directory(data)
    except (struct.error, ValueError, IndexError):
        wanted = (*ENCRYPTION_STREAMS, "WordDocument", "Workbook", "Book")
        return {name for name in wanted if name.encode("utf-16-le") in data}


def _parse_ole_directory(data: bytes) -> set[str]:
    if len(data) < 512 or data[:8] != OLE_MAGIC:
        raise ValueError("not an OLE file")
    sector_shift = struct.unpack_from("<H", data, 0x1E)[0]
    if sector_shift not in (9, 12):
        raise ValueError("bad sector size")
    sector_size = 1 << sector_shift
    num_fat_sectors, first_dir_sector = struct.unpack_from("<II", data, 0x2C)
    first_difat, num_difat = struct.unpack_from("<II", data, 0x44)
    max_sectors = len(data) // sector_size + 1

    def sector(index: int) -> bytes:
        start = (index + 1) * sector_size
        if index > _OLE_MAX_SECTOR or start >= len(data):
            raise ValueError("sector out of range")
        return data[start : start + sector_size]

    fat_sector_ids = [s for s in struct.unpack_from("<109I", data, 0x4C) if s <= _OLE_MAX_SECTOR]
    difat, hops = first_difat, 0
    while difat <= _OLE_MAX_SECTOR and hops < min(num_difat, max_sectors):
        entries = struct.unpack(f"<{sector_size // 4}I", sector(difat))
        fat_sector_ids.extend(s for s in entries[:-1] if s <= _OLE_MAX_SECTOR)
        difat, hops = entries[-1], hops + 1
    fat_sector_ids = fat_sector_ids[: max(num_fat_sectors, 1)]
    fat: list[int] = []
    for fat_sector in fat_sector_ids:
        fat.extend(struct.unpack(f"<{sector_size // 4}I", sector(fat_sector)))

    names: set[str] = set()
    current, visited = first_dir_sector, set()
    while current <= _OLE_MAX_SECTOR:
        if current in visited or len(visited) > max_sectors:
            raise ValueError("directory chain loops")
        visited.add(current)
        block = sector(current)
        for offset in range(0, sector_size, 128):
            entry = block[offset : offset + 128]
            if len(entry) < 128:
                break
            name_length = struct.unpack_from("<H", entry, 64)[0]
            entry_type = entry[66]
            if entry_type in (1, 2, 5) and 2 <= name_length <= 64:
                names.add(entry[: name_length - 2].decode("utf-16-le", errors="replace"))
        current = fat[current] if current < len(fat) else _OLE_END_OF_CHAIN
    if not names:
        raise ValueError("empty directory")
    return names
