"""One pack from a session's packs, by copying their entries: no repack.

A writer finishes one pack per checkpoint (``history.py``), so a long session
leaves one a second or more: 131 for a 50,000-file adopt. Git reads them all,
but ``git gc --auto`` (which the writer runs at the end of a session, as ``git
commit`` does) then repacks the whole repository: a search for deltas over every
object, and the largest process of the run (489 MiB at 50,000 files, against the
writer's 193). Joining them costs a copy: the packs' entries are concatenated as
they are, so every object keeps its zlib stream and every delta its base, and only
the header, the trailer and the index are new.

Why a copy is enough: a pack entry's bytes do not depend on where it sits, except
an ``OFS_DELTA``'s base, which it names by its distance back in the same pack. A
session's packs never name a base in another pack (the writer keeps its delta bases
per pack), so each pack's entries keep their distances when copied in one piece,
and the index only shifts each pack's offsets by where its piece starts. The
entries' CRC-32s, recorded in the index, do not change either.

The join is made beside the packs under a temporary name (swept like the writer's
own if a kill interrupts it), fsynced and renamed into place, pack first and index
last, and only then are the old packs removed, index first: git finds every object
at every moment. It is not made when a pack folder has a multi-pack-index (it
names the packs; git's own repack keeps it true), or when an object sits in two of
the packs (an index lists each object once): then nothing changes and ``git gc
--auto`` decides as before. A kill between the two renames leaves the joined pack
without its index, as a kill inside git's own repack can: git ignores such a pack
(no object is lost, ``git fsck`` stays clean) and its next ``gc`` removes it; the
writer does not, since a pack without an index may be one git is writing.
"""
from __future__ import annotations

import hashlib
import heapq
import itertools
import os
import secrets
import struct
from pathlib import Path
from typing import Iterator

from .packfile import TEMP_PREFIX, _fsync_folder, _pack_header

_IDX_MAGIC = b"\377tOc\x00\x00\x00\x02"
_LARGE_OFFSET = 0x80000000
_HEADER = 12  # "PACK", version, object count
_TRAILER = 20  # the SHA-1 of everything before it
_CHUNK = 1 << 20
# the index records read from the packs at a time, over all of them: what a join holds
# of the packs' indexes, however many objects and packs the session wrote
_RECORDS_AT_ONCE = 1 << 16


class _Pack:
    """One pack's index, read a chunk at a time: 20-byte ids, 4-byte CRCs and 4-byte
    offsets (8-byte ones past 2 GiB), in id order."""

    def __init__(self, pack_dir: Path, sha: str) -> None:
        self.pack = pack_dir / f"pack-{sha}.pack"
        self.idx = pack_dir / f"pack-{sha}.idx"
        with open(self.idx, "rb") as handle:
            head = handle.read(1032)
            length = os.fstat(handle.fileno()).st_size
        if head[:8] != _IDX_MAGIC or length < 1032 + 40:
            raise ValueError(f"{self.idx.name} is not a version-2 pack index")
        self.fanout = struct.unpack(">256I", head[8:1032])  # objects whose id starts at or below each byte
        self.count = n = self.fanout[255]
        # the tables, then 8 bytes per offset past 2 GiB, then two checksums
        beyond = length - (1032 + 28 * n + 40)
        if beyond < 0 or beyond % 8:
            raise ValueError(f"{self.idx.name} is cut short or damaged (its length does not fit {n} objects)")
        self._large_at, self._large_length = 1032 + 28 * n, beyond
        self.size = self.pack.stat().st_size

    def _read(self, spans: list[tuple[int, int]]) -> list[bytes]:
        """The bytes at each (offset, length) of the index, from one open: a session
        of thousands of packs must not hold thousands of files open."""
        found = []
        with open(self.idx, "rb") as handle:
            for at, length in spans:
                handle.seek(at)
                found.append(handle.read(length))
                if len(found[-1]) != length:
                    raise ValueError(f"{self.idx.name} is cut short or damaged")
        return found

    def entries(self, shift: int, per_read: int = 4096) -> Iterator[tuple[bytes, bytes, int]]:
        """(id, CRC-32 as stored, offset in the joined pack), in the index's order (id
        order in a sound index), ``per_read`` records read at a time."""
        n = self.count
        (large,) = self._read([(self._large_at, self._large_length)])
        for first in range(0, n, per_read):
            count = min(per_read, n - first)
            ids, crcs, packed = self._read([(1032 + 20 * first, 20 * count), (1032 + 20 * n + 4 * first, 4 * count),
                                            (1032 + 24 * n + 4 * first, 4 * count)])
            for i, offset in enumerate(struct.unpack(f">{count}I", packed)):
                if offset & _LARGE_OFFSET:
                    (offset,) = struct.unpack_from(">Q", large, 8 * (offset & ~_LARGE_OFFSET))
                yield ids[20 * i:20 * i + 20], crcs[4 * i:4 * i + 4], offset + shift


def join_packs(pack_dir: Path, shas: list[str]) -> str | None:
    """Join the packs named ``shas`` (finished, in the order they were written) into
    one and remove them; return the new pack's sha, or None when they are left as
    they are (fewer than two, a multi-pack-index, an object in two of them). Raises
    OSError when the join cannot be written; the packs are then untouched."""
    pack_dir = Path(pack_dir)
    if len(shas) < 2 or any((pack_dir / name).exists() for name in ("multi-pack-index", "multi-pack-index.d")):
        return None
    packs = [_Pack(pack_dir, sha) for sha in shas]
    stem = f"{TEMP_PREFIX}{os.getpid()}_{secrets.token_hex(8)}"
    temp_pack, temp_idx = pack_dir / f"{stem}.pack", pack_dir / f"{stem}.idx"
    try:
        pack_sha, shifts = _write_pack(temp_pack, packs)
        if not _write_index(temp_idx, packs, shifts, pack_sha):
            temp_pack.unlink()
            temp_idx.unlink()
            return None
        name = f"pack-{pack_sha.hex()}"
        os.chmod(temp_pack, 0o444)
        os.chmod(temp_idx, 0o444)
        os.replace(temp_pack, pack_dir / f"{name}.pack")
        os.replace(temp_idx, pack_dir / f"{name}.idx")
        _fsync_folder(pack_dir)
    except BaseException:
        temp_pack.unlink(missing_ok=True)
        temp_idx.unlink(missing_ok=True)
        raise
    for pack in packs:  # the index first: git never finds an index whose pack is gone
        pack.idx.unlink(missing_ok=True)
        pack.pack.unlink(missing_ok=True)
    return pack_sha.hex()


def _write_pack(path: Path, packs: list[_Pack]) -> tuple[bytes, list[int]]:
    """Write the joined pack; return its checksum and, per pack, how far its entries moved."""
    hasher = hashlib.sha1()
    shifts = []
    with open(path, "xb") as out:
        header = _pack_header(sum(pack.count for pack in packs))
        out.write(header)
        hasher.update(header)
        position = _HEADER
        for pack in packs:
            shifts.append(position - _HEADER)
            with open(pack.pack, "rb") as source:
                source.seek(_HEADER)
                remaining = pack.size - _HEADER - _TRAILER
                while remaining:
                    chunk = source.read(min(_CHUNK, remaining))
                    if not chunk:
                        raise OSError(f"{pack.pack.name} is shorter than its index says")
                    out.write(chunk)
                    hasher.update(chunk)
                    remaining -= len(chunk)
            position += pack.size - _HEADER - _TRAILER
        pack_sha = hasher.digest()
        out.write(pack_sha)
        out.flush()
        os.fsync(out.fileno())
    return pack_sha, shifts


def _write_index(path: Path, packs: list[_Pack], shifts: list[int], pack_sha: bytes) -> bool:
    """Write the version-2 index of the joined pack, merged from the packs' own (each
    in id order already), and fsync it; False (the file left to remove) when an
    object is in two of them, or when a pack's index does not hold what its fanout
    says or lists ids out of order (a damaged index: git's gc is left to judge it).
    The ids go straight to the file; only the CRCs and offsets, 8 bytes an object,
    wait in memory for their place after them."""
    hasher = hashlib.sha1()
    per_read = max(64, _RECORDS_AT_ONCE // len(packs))
    crcs, small, large = bytearray(), bytearray(), bytearray()
    ids = bytearray()
    last = b""
    counted = [0] * 256  # the merged ids by first byte: must give the fanout written first
    with open(path, "xb") as out:
        def write(data: bytes | bytearray) -> None:
            out.write(data)
            hasher.update(data)

        # written before the ids, so taken from the packs' fanouts and checked against them below
        fanout = [sum(column) for column in zip(*(pack.fanout for pack in packs))]
        write(_IDX_MAGIC + struct.pack(">256I", *fanout))
        for object_id, crc, offset in heapq.merge(*(p.entries(s, per_read) for p, s in zip(packs, shifts))):
            if object_id <= last:  # in two packs, or a pack's ids out of order
                return False
            last = object_id
            counted[object_id[0]] += 1
            ids += object_id
            if len(ids) >= _CHUNK:
                write(ids)
                ids.clear()
            crcs += crc
            if offset < _LARGE_OFFSET:
                small += struct.pack(">I", offset)
            else:
                small += struct.pack(">I", _LARGE_OFFSET | (len(large) // 8))
                large += struct.pack(">Q", offset)
        if list(itertools.accumulate(counted)) != fanout:
            return False
        for part in (ids, crcs, small, large, pack_sha):
            write(part)
        out.write(hasher.digest())
        out.flush()
        os.fsync(out.fileno())
    return True
