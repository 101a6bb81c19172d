"""An in-process git pack writer: objects go straight into one pack per session.

Replaces ``git fast-import``, which re-hashes, re-compresses and tries to deltify
every object from scratch. Here the caller names a ``delta_key`` (say, the path of a
file) and the previous version added under that key is the delta base, so a commit
that adds one line to a 1 MB index costs one small delta.

The pack is built in ``pack_dir/vine_tmp_<pid>_<random>.pack`` and becomes visible to
git only at ``finalize``: the pack is renamed to ``pack-<sha>.pack`` first and its
``.idx`` last, since git ignores a pack without an index. A failed write (disk full,
file size limit) truncates the file back to where the entry began, so the objects
added before it stay valid and the writer stays usable.

Durability, and a user's ``git gc`` in the middle of a session:

- ``finalize`` fsyncs the pack and the index, and the folder after the renames,
  so once the caller moves a ref to these objects a power loss cannot leave the
  ref pointing at objects that never reached the disk.
- The temporary name does not start with ``tmp_``: ``git prune`` (run by ``git gc
  --prune=now``) deletes every ``tmp_*`` file in the pack folder, which would be
  the open pack of a live writer.
- ``finalize(keep=True)`` writes ``pack-<sha>.keep`` before the pack becomes
  visible: its objects are not reachable from any ref until the caller moves the
  ref, and ``git gc``/``repack`` leave a kept pack alone. The caller removes it
  with ``release_keep`` once the ref points at them; ``remove_stale_keeps`` sweeps
  the ones a killed writer left (only vine's own, recognised by their content,
  which names the writer's pid: the worktrees of a repository share its pack
  folder, so another worktree's live writer keeps its own).
"""
from __future__ import annotations

import hashlib
import os
import secrets
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

from .delta import make_delta
from ..writing.lineage import process_alive

try:
    # ISA-L's deflate (python-isal) writes zlib streams too, three times faster
    # than zlib at level 1 on a plant's objects, and about as small: ``_compress``
    from isal.isal_zlib import compress as _isal_compress
except ImportError:  # a platform without its wheels: zlib, as before
    _isal_compress = None

TEMP_PREFIX = "vine_tmp_"
LEGACY_TEMP_PREFIX = "tmp_vine_"  # what earlier versions named it; still swept
KEEP_MARK = b"vine: commits not yet on the branch\n"  # how vine's own .keep files start; the pid follows
MAX_DELTA_DEPTH = 50             # git's own default (pack.depth) for reading speed
MIN_DELTA_BASE = 4096            # smaller objects are not worth keeping in memory as bases
ZLIB_LEVEL = 1                   # git's for a new object (core.looseCompression): _compress
ISAL_LEVEL = 1                   # ISA-L's fastest that compresses as well as ZLIB_LEVEL: _compress
_OBJECT_TYPES = {"commit": 1, "tree": 2, "blob": 3, "tag": 4}
_OFS_DELTA = 6
_LARGE_OFFSET = 0x80000000
_READ_CHUNK = 1 << 20


@dataclass(frozen=True, kw_only=True)
class PackEntry:
    """Where one object sits in the pack, as the .idx records it."""
    sha: bytes                   # 20-byte binary object id
    offset: int
    crc32: int


@dataclass(frozen=True, kw_only=True)
class _DeltaBase:
    kind: str
    data: bytes
    offset: int
    depth: int


class PackWriter:
    def __init__(self, pack_dir: Path) -> None:
        """Opens a new temporary pack file `pack_dir/vine_tmp_<pid>_<random>.pack` (raises OSError if it cannot)
        and writes the 12-byte header with a placeholder object count."""
        self._pack_dir = Path(pack_dir)
        self._stem = f"{TEMP_PREFIX}{os.getpid()}_{secrets.token_hex(8)}"
        self._temp_path = self._pack_dir / f"{self._stem}.pack"
        # Unbuffered on purpose: each entry is assembled in memory and written by one
        # call, so a failed write leaves no bytes in a hidden buffer that a later
        # flush could append after the truncation point.
        self._file = open(self._temp_path, "xb+", buffering=0)
        self._entries: dict[bytes, PackEntry] = {}
        self._depths: dict[bytes, int] = {}
        self._bases: dict[str, _DeltaBase] = {}
        self._end = 0
        self._closed = False
        try:
            self._write_entry(0, _pack_header(0))
        except OSError:
            self.abort()
            raise

    @property
    def path(self) -> Path:
        """The temporary pack file being written."""
        return self._temp_path

    @property
    def count(self) -> int:
        return len(self._entries)

    def add(self, kind: str, data: bytes, *, delta_key: str | None = None) -> str:
        """Append one object ('commit', 'tree' or 'blob'); return its 40-hex sha1 (git's object id).

        An object already in this pack is not written again. With delta_key, the previous
        object added under that key in this pack is the delta base (when a small delta
        exists and the chain stays within MAX_DELTA_DEPTH). On OSError the file is
        truncated back to the entry start, nothing is recorded, and the error propagates.
        """
        self._check_open()
        type_code = _OBJECT_TYPES.get(kind)
        if type_code is None:
            raise ValueError(f"git object kind must be one of {sorted(_OBJECT_TYPES)}, got {kind!r}")
        hasher = hashlib.sha1(b"%s %d\0" % (kind.encode(), len(data)))
        hasher.update(data)
        sha = hasher.digest()

        existing = self._entries.get(sha)
        if existing is not None:
            self._remember_base(delta_key, kind, data, existing.offset, self._depths[sha])
            return sha.hex()

        start = self._end
        base = self._bases.get(delta_key) if delta_key is not None else None
        delta = None
        if base is not None and base.kind == kind and base.depth < MAX_DELTA_DEPTH:
            delta = make_delta(base.data, data)
        if delta is not None:
            head = _entry_header(_OFS_DELTA, len(delta)) + _encode_base_distance(start - base.offset)
            body = _compress(delta)
            depth = base.depth + 1
        else:
            head = _entry_header(type_code, len(data))
            body = _compress(data)
            depth = 0
        entry = head + body
        self._write_entry(start, entry)
        self._entries[sha] = PackEntry(sha=sha, offset=start, crc32=zlib.crc32(entry))
        self._depths[sha] = depth
        self._remember_base(delta_key, kind, data, start, depth)
        return sha.hex()

    def finalize(self, *, keep: bool = False) -> str | None:
        """Make the pack visible to git; return its sha hex, or None (temp file deleted) when empty.

        Writes the object count and trailer, the v2 .idx, fsyncs both, chmods them 0o444,
        renames them to pack-<sha>.pack then pack-<sha>.idx and fsyncs the folder. With
        ``keep``, pack-<sha>.keep is written first, so no ``git gc`` drops the objects
        before a ref points at them (``release_keep`` removes it). On OSError the
        temporary files stay for abort() to delete; the writer cannot be used afterwards
        either way.
        """
        self._check_open()
        if not self._entries:
            self.abort()
            return None
        self._closed = True          # from here on only abort() may touch the temp files
        self._file.seek(0)
        _write_all(self._file, _pack_header(len(self._entries)))
        pack_sha = self._hash_file()
        self._file.seek(self._end)
        _write_all(self._file, pack_sha)
        os.fsync(self._file.fileno())
        self._file.close()

        index = build_pack_index(list(self._entries.values()), pack_sha)
        temp_index = self._pack_dir / f"{self._stem}.idx"
        with open(temp_index, "xb") as handle:
            handle.write(index)
            handle.flush()
            os.fsync(handle.fileno())
        name = f"pack-{pack_sha.hex()}"
        if keep:
            (self._pack_dir / f"{name}.keep").write_bytes(keep_content(os.getpid()))
        os.chmod(self._temp_path, 0o444)
        os.chmod(temp_index, 0o444)
        os.replace(self._temp_path, self._pack_dir / f"{name}.pack")
        os.replace(temp_index, self._pack_dir / f"{name}.idx")
        _fsync_folder(self._pack_dir)
        self._bases.clear()
        return pack_sha.hex()

    def abort(self) -> None:
        """Delete the temporary file (idempotent)."""
        if not self._file.closed:
            self._file.close()
        self._closed = True
        self._bases.clear()
        for path in (self._temp_path, self._pack_dir / f"{self._stem}.idx"):
            try:
                path.unlink()
            except FileNotFoundError:
                pass

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"pack writer for {self._temp_path.name} is already finalized or aborted")

    def _remember_base(self, delta_key: str | None, kind: str, data: bytes, offset: int, depth: int) -> None:
        if delta_key is None:
            return
        if len(data) >= MIN_DELTA_BASE:
            self._bases[delta_key] = _DeltaBase(kind=kind, data=data, offset=offset, depth=depth)
        else:
            # The latest version is the base; a small one is not kept, so the key has none.
            self._bases.pop(delta_key, None)

    def _write_entry(self, start: int, entry: bytes) -> None:
        try:
            _write_all(self._file, entry)
        except OSError:
            # Cut off the partial entry so the pack stays a valid sequence of entries.
            self._file.truncate(start)
            self._file.seek(start)
            raise
        self._end = start + len(entry)

    def _hash_file(self) -> bytes:
        hasher = hashlib.sha1()
        self._file.seek(0)
        remaining = self._end
        while remaining:
            chunk = self._file.read(min(_READ_CHUNK, remaining))
            if not chunk:
                raise OSError(f"{self._temp_path.name} is shorter than written; delete it and write again")
            hasher.update(chunk)
            remaining -= len(chunk)
        return hasher.digest()


def release_keep(pack_dir: Path, pack_sha: str) -> None:
    """A ref now reaches the pack's objects: git may repack them like any other."""
    (Path(pack_dir) / f"pack-{pack_sha}.keep").unlink(missing_ok=True)


def keep_content(pid: int) -> bytes:
    """What vine writes in a .keep: its mark, then the pid of the writer it protects."""
    return KEEP_MARK + b"pid %d\n" % pid


def remove_stale_keeps(pack_dir: Path) -> int:
    """Delete the .keep files a killed writer left (only vine's own, by their content;
    a person's .keep stays, and so does one whose writer is alive: another worktree's
    forest shares this folder); return how many. The caller holds the forest's lock."""
    removed = 0
    for path in Path(pack_dir).glob("pack-*.keep"):
        try:
            content = path.read_bytes()
            if not content.startswith(KEEP_MARK) or _keep_writer_alive(content[len(KEEP_MARK):]):
                continue
            path.unlink()
        except FileNotFoundError:
            continue
        removed += 1
    return removed


def _fsync_folder(folder: Path) -> None:
    """Make the renames in ``folder`` durable (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on a folder; the renames are then as safe as they get
    finally:
        os.close(fd)


def remove_stale_temp_packs(pack_dir: Path) -> int:
    """Delete vine_tmp_*.pack (and their half-written vine_tmp_*.idx) files left by a killed
    writer (the caller holds the forest's lock), and those of earlier versions
    (tmp_vine_*); return how many files were deleted. A file whose writer process is
    alive is kept: the worktrees of one repository share its pack dir, and each is a
    forest with a lock of its own."""
    removed = 0
    patterns = [f"{prefix}*{ext}" for prefix in (TEMP_PREFIX, LEGACY_TEMP_PREFIX) for ext in (".pack", ".idx")]
    for pattern in patterns:
        for path in Path(pack_dir).glob(pattern):
            if _writer_alive(path.name):
                continue
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            removed += 1
    return removed


def _keep_writer_alive(rest: bytes) -> bool:
    """Whether the writer a .keep names (``pid N``) runs; one of an earlier version
    names none and is swept."""
    pid = rest.strip().removeprefix(b"pid ")
    return pid.isdigit() and process_alive(int(pid))


def _writer_alive(name: str) -> bool:
    """Whether the process named in ``vine_tmp_<pid>_<random>`` (or the legacy
    ``tmp_vine_<pid>_<random>``, the same length) is running."""
    assert len(TEMP_PREFIX) == len(LEGACY_TEMP_PREFIX)
    pid = name[len(TEMP_PREFIX):].split("_", 1)[0]
    return pid.isdigit() and process_alive(int(pid))


def build_pack_index(entries: list[PackEntry], pack_sha: bytes) -> bytes:
    """The version-2 .idx for a pack: fanout, sorted ids, crc32s, offsets (with the 8-byte
    table for offsets >= 2**31), the pack checksum and the index's own checksum."""
    ordered = sorted(entries, key=lambda entry: entry.sha)
    fanout = [0] * 256
    for entry in ordered:
        fanout[entry.sha[0]] += 1
    running = 0
    for first_byte in range(256):
        running += fanout[first_byte]
        fanout[first_byte] = running

    small_offsets = bytearray()
    large_offsets = bytearray()
    for entry in ordered:
        if entry.offset < _LARGE_OFFSET:
            small_offsets += struct.pack(">I", entry.offset)
        else:
            small_offsets += struct.pack(">I", _LARGE_OFFSET | (len(large_offsets) // 8))
            large_offsets += struct.pack(">Q", entry.offset)

    index = b"".join((
        b"\377tOc", struct.pack(">I", 2),
        struct.pack(">256I", *fanout),
        b"".join(entry.sha for entry in ordered),
        b"".join(struct.pack(">I", entry.crc32 & 0xFFFFFFFF) for entry in ordered),
        bytes(small_offsets),
        bytes(large_offsets),
        pack_sha,
    ))
    return index + hashlib.sha1(index).digest()


def _pack_header(count: int) -> bytes:
    return b"PACK" + struct.pack(">II", 2, count)


def _entry_header(type_code: int, size: int) -> bytes:
    """Type in bits 4-6 of the first byte, size in 4 bits then 7 bits per byte, MSB = more."""
    out = bytearray()
    byte = (type_code << 4) | (size & 0x0F)
    size >>= 4
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


def _encode_base_distance(distance: int) -> bytes:
    """Git's OFS_DELTA offset: big-endian 7-bit groups, each continuation adding 1."""
    out = [distance & 0x7F]
    distance >>= 7
    while distance:
        distance -= 1
        out.append(0x80 | (distance & 0x7F))
        distance >>= 7
    return bytes(reversed(out))


def _compress(data: bytes) -> bytes:
    """The object's zlib stream (its id is the SHA-1 of the uncompressed bytes, so the
    stream's bytes are free: any inflater, git's included, reads any valid stream).

    ISA-L at level 1 when python-isal is installed: on an adopt's objects (most of
    them 1-4 KB: nodes, index deltas, trees) it takes a third of zlib's level-1 time,
    and its streams are about as small (1% smaller on the 1,000-file bench export's
    objects, the packs of a 9,000-note export 0.7% larger; ``bench/README.md``, "Packs:
    ISA-L"); zlib was the writer's largest single cost. Otherwise zlib at level 1, as git writes a
    new object (``core.looseCompression``): a session's packs stand where git's loose
    objects would, until a repack. For those small objects zlib's setup (allocating
    and clearing its state for the default 32 KB window, about 256 KB) costs more than
    the compressing, so a window just larger than the object is used: it sees every
    match the default one would, and any inflater reads a stream with a smaller
    window (the zlib header names it)."""
    if _isal_compress is not None:
        return _isal_compress(data, ISAL_LEVEL)
    # deflate looks back at most the window less MIN_LOOKAHEAD (262) bytes
    window_bits = max(9, (len(data) + 261).bit_length())
    if window_bits >= 15:
        return zlib.compress(data, ZLIB_LEVEL)
    compressor = zlib.compressobj(ZLIB_LEVEL, zlib.DEFLATED, window_bits, window_bits - 7)  # hash table sized to match
    return compressor.compress(data) + compressor.flush()


def _write_all(handle, data: bytes) -> None:
    # A raw file may accept only part of the bytes (e.g. up to a size limit) before the
    # next call raises; keep writing until all are in or an OSError says why not.
    view = memoryview(data)
    while view:
        written = handle.write(view)
        if written is None or written <= 0:
            raise OSError(f"could not write to {getattr(handle, 'name', 'pack file')}")
        view = view[written:]
