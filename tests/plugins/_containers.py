"""Builders of binary office containers for the plugin tests (shared, not a test module)."""
from __future__ import annotations

import struct

OLE_MAGIC = bytes.fromhex("D0CF11E0A1B11AE1")
FREE, END_OF_CHAIN, FAT_SECTOR = 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD


def ole_container(stream_names: list[str]) -> bytes:
    """A minimal valid OLE2 compound file (512-byte sectors): a FAT sector, then the
    directory sectors holding a root entry and one empty stream per name."""
    entries = ["Root Entry", *stream_names]
    dir_sectors = (len(entries) + 3) // 4
    header = bytearray(512)
    header[0:8] = OLE_MAGIC
    struct.pack_into("<HHHHH", header, 0x18, 0x3E, 3, 0xFFFE, 9, 6)
    struct.pack_into("<IIII", header, 0x2C, 1, 1, 0, 4096)  # 1 FAT sector, directory at sector 1
    struct.pack_into("<IIII", header, 0x3C, END_OF_CHAIN, 0, END_OF_CHAIN, 0)
    difat = [0] + [FREE] * 108
    struct.pack_into("<109I", header, 0x4C, *difat)
    fat = [FAT_SECTOR] + [s + 1 for s in range(1, dir_sectors)] + [END_OF_CHAIN]
    fat += [FREE] * (128 - len(fat))
    fat_sector = struct.pack("<128I", *fat)
    directory = bytearray()
    for index, name in enumerate(entries):
        encoded = name.encode("utf-16-le")
        entry = bytearray(128)
        entry[: len(encoded)] = encoded
        struct.pack_into("<HBB", entry, 64, len(encoded) + 2, 5 if index == 0 else 2, 1)
        struct.pack_into("<III", entry, 68, FREE, FREE, 1 if index == 0 and len(entries) > 1 else FREE)
        struct.pack_into("<II", entry, 116, END_OF_CHAIN, 0)
        directory += entry
    directory += bytes(512 * dir_sectors - len(directory))
    return bytes(header) + fat_sector + bytes(directory)
