"""The in-process pack writer and git delta encoder, judged by real git.

Every pack is written into a fresh ``git init`` repo's ``.git/objects/pack`` and read
back with ``git cat-file --batch``, ``git verify-pack -v`` and ``git fsck --full
--strict``. Deltas are also checked by an independent applier written here from the
format description, so a delta bug shows up even where git would mask it.
"""
from __future__ import annotations

import hashlib
import json
import pickle
import random
import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from monkeyllm_core.store.delta import make_delta
from monkeyllm_core.store.packfile import (
    PackEntry,
    TEMP_PREFIX,
    PackWriter,
    build_pack_index,
    remove_stale_temp_packs,
)

from _git_runs import git_bytes  # tests/core is on sys.path

# ---------------------------------------------------------------- helpers


def pack_dir_of(root: Path) -> Path:
    return root / ".git" / "objects" / "pack"


def read_objects(root: Path, shas: list[str]) -> dict[str, tuple[str, bytes]]:
    """Each object's (type, content) as git reads it, via one `git cat-file --batch`."""
    out = git_bytes(root, "cat-file", "--batch", input="".join(f"{sha}\n" for sha in shas).encode())
    objects: dict[str, tuple[str, bytes]] = {}
    pos = 0
    for sha in shas:
        line_end = out.index(b"\n", pos)
        header = out[pos:line_end].decode().split()
        assert header[0] == sha and len(header) == 3, f"git cannot read {sha}: {header}"
        size = int(header[2])
        objects[sha] = (header[1], out[line_end + 1:line_end + 1 + size])
        pos = line_end + 1 + size + 1
    return objects


@dataclass(frozen=True, kw_only=True)
class PackedObject:
    kind: str
    depth: int


def verify_pack(root: Path, pack_sha: str) -> dict[str, PackedObject]:
    """`git verify-pack -v` must pass; returns each object's type and delta chain length."""
    idx = pack_dir_of(root) / f"pack-{pack_sha}.idx"
    out = git_bytes(root, "verify-pack", "-v", str(idx)).decode()
    objects = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 5 and len(fields[0]) == 40 and fields[1] in ("blob", "tree", "commit", "tag"):
            objects[fields[0]] = PackedObject(kind=fields[1], depth=int(fields[5]) if len(fields) >= 7 else 0)
    return objects


def object_id(kind: str, data: bytes) -> str:
    return hashlib.sha1(b"%s %d\0" % (kind.encode(), len(data)) + data).hexdigest()


def tree_bytes(entries: list[tuple[str, str, str]]) -> bytes:
    """A git tree from (mode, name, sha hex), sorted the way git sorts (folders as name + '/')."""
    def sort_key(entry):
        mode, name, _ = entry
        return name.encode() + (b"/" if mode == "40000" else b"")
    return b"".join(f"{mode} {name}".encode() + b"\0" + bytes.fromhex(sha)
                    for mode, name, sha in sorted(entries, key=sort_key))


def commit_bytes(tree: str, message: str) -> bytes:
    who = "vine <vine@monkeyllm.local> 1700000000 +0000"
    return f"tree {tree}\nauthor {who}\ncommitter {who}\n\n{message}\n".encode()


def apply_delta(base: bytes, delta: bytes) -> bytes:
    """Independent reading of git's delta format; asserts every instruction is well-formed."""
    pos = 0

    def varint() -> int:
        nonlocal pos
        value = shift = 0
        while True:
            byte = delta[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value

    assert varint() == len(base), "delta names the wrong base size"
    target_size = varint()
    out = bytearray()
    while pos < len(delta):
        op = delta[pos]
        pos += 1
        if op & 0x80:
            offset = size = 0
            for i in range(4):
                if op & (1 << i):
                    offset |= delta[pos] << (8 * i)
                    pos += 1
            for i in range(3):
                if op & (0x10 << i):
                    size |= delta[pos] << (8 * i)
                    pos += 1
            size = size or 0x10000
            assert size <= 0x10000 and offset + size <= len(base), "copy out of range"
            out += base[offset:offset + size]
        else:
            assert 1 <= op <= 127, "insert of 0 bytes is reserved"
            assert pos + op <= len(delta), "insert runs past the delta"
            out += delta[pos:pos + op]
            pos += op
    assert len(out) == target_size, "delta produced the wrong size"
    return bytes(out)


def markdown_text(rng: random.Random, lines: int) -> list[bytes]:
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 10)))
             for _ in range(2000)]
    return [("| %d | %s | %s |" % (i, " ".join(rng.choice(words) for _ in range(6)),
                                   rng.choice(words))).encode() for i in range(lines)]


# ---------------------------------------------------------------- delta vectors

_RNG = random.Random(20240601)
_TEXT = b"\n".join(markdown_text(_RNG, 160))               # ~8 KB of table rows
_MID = len(_TEXT) // 2
_BINARY = bytes(_RNG.choice((0, 0, 0, 1, 255, _RNG.randrange(256))) for _ in range(9000))
_BIG = b"\n".join(markdown_text(random.Random(7), 4000))   # ~200 KB: copies cross 0x10000
_NEW_LINE = b"\n| new | a line the writer just added | x |"


@dataclass(frozen=True, kw_only=True)
class DeltaVector:
    name: str
    base: bytes
    target: bytes
    max_delta: int | None          # None: no delta expected (stored whole)


DELTA_VECTORS = [
    DeltaVector(name="identical", base=_TEXT, target=_TEXT, max_delta=32),
    DeltaVector(name="insert_at_start", base=_TEXT, target=_NEW_LINE + _TEXT, max_delta=100),
    DeltaVector(name="insert_in_middle", base=_TEXT, target=_TEXT[:_MID] + _NEW_LINE + _TEXT[_MID:],
                max_delta=100),
    DeltaVector(name="insert_at_end", base=_TEXT, target=_TEXT + _NEW_LINE, max_delta=100),
    DeltaVector(name="delete_in_middle", base=_TEXT, target=_TEXT[:_MID] + _TEXT[_MID + 300:], max_delta=40),
    DeltaVector(name="delete_large_block", base=_TEXT, target=_TEXT[:1000] + _TEXT[6000:], max_delta=40),
    DeltaVector(name="replace_number_near_top", base=b"count: 41\n" + _TEXT, target=b"count: 42\n" + _TEXT,
                max_delta=40),
    DeltaVector(name="replace_longer_in_middle", base=_TEXT,
                target=_TEXT[:_MID] + b"2024-12-31T23:59" + _TEXT[_MID + 10:], max_delta=60),
    DeltaVector(name="several_edits",
                base=b"date: 2024-01-01\n" + _TEXT,
                target=b"date: 2024-01-02\n" + _TEXT[:2000] + _NEW_LINE + _TEXT[2000:5000]
                + _TEXT[5100:7000] + b"CHANGED" + _TEXT[7007:],
                max_delta=200),
    DeltaVector(name="insert_127_128_and_300_bytes", base=_TEXT,
                target=_TEXT[:1000] + b"a" * 127 + _TEXT[1000:3000] + b"b" * 128 + _TEXT[3000:5000]
                + bytes(range(256)) + b"c" * 44 + _TEXT[5000:],
                max_delta=700),
    DeltaVector(name="insert_10kb_block", base=_BIG,
                target=_BIG[:90_000] + random.Random(5).randbytes(10_000) + _BIG[90_000:], max_delta=10_200),
    DeltaVector(name="insert_larger_than_half_the_target", base=_TEXT,
                target=_TEXT[:_MID] + random.Random(5).randbytes(10_000) + _TEXT[_MID:], max_delta=None),
    DeltaVector(name="binary_with_nul_bytes", base=_BINARY,
                target=_BINARY[:4000] + b"\0\0\0\x01NUL\0" + _BINARY[4000:8000] + _BINARY[8050:],
                max_delta=80),
    DeltaVector(name="copies_cross_0x10000_chunks", base=_BIG,
                target=_BIG[:100_000] + _NEW_LINE + _BIG[100_000:], max_delta=150),
    DeltaVector(name="exact_0x10000_copy", base=_BIG[:0x10000 * 2 + 5],
                target=_BIG[:0x10000 * 2 + 5] + _NEW_LINE, max_delta=100),
    DeltaVector(name="completely_different", base=random.Random(1).randbytes(8000),
                target=random.Random(2).randbytes(8000), max_delta=None),
    DeltaVector(name="empty_base", base=b"", target=_TEXT, max_delta=None),
    DeltaVector(name="tiny_target", base=_TEXT, target=_TEXT[:40], max_delta=None),
]


@pytest.mark.parametrize("vector", DELTA_VECTORS, ids=lambda vector: vector.name)
def test_delta_rebuilds_target_exactly_and_stays_small(vector: DeltaVector):
    delta = make_delta(vector.base, vector.target)
    if vector.max_delta is None:
        assert delta is None
        return
    assert delta is not None
    assert len(delta) <= vector.max_delta
    assert apply_delta(vector.base, delta) == vector.target


def test_git_reads_every_delta_vector_from_an_ofs_delta_pack(repo: Path):
    writer = PackWriter(pack_dir_of(repo))
    targets = {}
    for vector in DELTA_VECTORS:
        if vector.base:
            writer.add("blob", vector.base, delta_key=vector.name)
        targets[writer.add("blob", vector.target, delta_key=vector.name)] = vector
    pack_sha = writer.finalize()

    packed = verify_pack(repo, pack_sha)
    objects = read_objects(repo, list(targets))
    for sha, vector in targets.items():
        assert objects[sha] == ("blob", vector.target), vector.name
        stored_as_delta = packed[sha].depth > 0
        expect_delta = vector.max_delta is not None and vector.base != vector.target
        assert stored_as_delta == expect_delta, vector.name


def test_delta_of_a_completely_rewritten_large_text_gives_up_quickly():
    base = b"\n".join(markdown_text(random.Random(11), 20_000))
    target = random.Random(12).randbytes(len(base))
    assert make_delta(base, target) is None


# ---------------------------------------------------------------- pack writer

def test_every_object_reads_back_identical_and_fsck_is_clean(repo: Path):
    blobs = {
        "readme.md": b"# Forest\n\nHello.\n",
        "empty.md": b"",
        "data.bin": bytes(range(256)) * 40 + b"\0\0\0",
        "big.md": b"\n".join(markdown_text(random.Random(3), 3000)),
    }
    writer = PackWriter(pack_dir_of(repo))
    written: dict[str, tuple[str, bytes]] = {}
    blob_shas = {}
    for name, data in blobs.items():
        blob_shas[name] = writer.add("blob", data)
        written[blob_shas[name]] = ("blob", data)
    sub = tree_bytes([("100644", "data.bin", blob_shas["data.bin"]), ("100644", "big.md", blob_shas["big.md"])])
    sub_sha = writer.add("tree", sub)
    root_tree = tree_bytes([("100644", "readme.md", blob_shas["readme.md"]),
                            ("100644", "empty.md", blob_shas["empty.md"]), ("40000", "branch", sub_sha)])
    root_sha = writer.add("tree", root_tree)
    commit = commit_bytes(root_sha, "plant: first nodes")
    commit_sha = writer.add("commit", commit)
    written.update({sub_sha: ("tree", sub), root_sha: ("tree", root_tree), commit_sha: ("commit", commit)})
    assert writer.count == len(written)
    pack_sha = writer.finalize()

    assert all(sha == object_id(kind, data) for sha, (kind, data) in written.items())
    assert read_objects(repo, list(written)) == written
    assert set(verify_pack(repo, pack_sha)) == set(written)
    assert git_bytes(repo, "cat-file", "-p", f"{commit_sha}:readme.md") == blobs["readme.md"]
    git_bytes(repo, "update-ref", "refs/heads/main", commit_sha)
    git_bytes(repo, "symbolic-ref", "HEAD", "refs/heads/main")
    fsck = subprocess.run(["git", "fsck", "--full", "--strict"], cwd=repo, capture_output=True, text=True)
    assert fsck.returncode == 0 and "error" not in fsck.stderr.lower(), fsck.stderr
    assert git_bytes(repo, "ls-tree", "-r", "--name-only", "HEAD").decode().split() == [
        "branch/big.md", "branch/data.bin", "empty.md", "readme.md"]


def objects_around_the_compression_windows() -> list[bytes]:
    """Objects of each size where zlib's window changes (and past the 64 KB level
    switch): text, noise and one repeated line."""
    rng = random.Random(11)
    sizes = sorted({0, 1, 2, 249, 250, 251, 252, 253, 262, 263, 511, 763, 764, 765, 1786, 1787, 3834, 3835,
                    7930, 7931, 16122, 16123, 16124, 32506, 32507, 65536, 65537, 200_000})
    out = []
    for size in sizes:
        text = b"\n".join(markdown_text(rng, size // 20 + 2))[:size].ljust(size, b"x")
        noise = rng.randbytes(size)
        repeated = (b"- [[a/b]] \xe2\x80\x94 summary line\n" * (size // 30 + 1))[:size]
        out += [text, noise, repeated]
    return out


# the same objects written by a writer that cannot import python-isal: zlib's streams
_ZLIB_ONLY_SCRIPT = """
import pickle, sys
sys.modules["isal"] = None  # as on a platform without its wheels
from monkeyllm_core.store.packfile import PackWriter
writer = PackWriter(sys.argv[1])
for data in pickle.load(sys.stdin.buffer):
    writer.add("blob", data)
print(writer.finalize())
"""


@pytest.mark.parametrize("compressor", ["isal", "zlib"])
def test_objects_of_every_size_around_the_compression_windows_read_back_in_git(repo: Path, compressor: str):
    """Objects are compressed by ISA-L, or by zlib with a window just larger than
    themselves where python-isal is missing: each size where the window changes (and
    past the 64 KB level switch) must read back, from either."""
    objects = objects_around_the_compression_windows()
    written = {object_id("blob", data): ("blob", data) for data in objects}
    if compressor == "isal":
        writer = PackWriter(pack_dir_of(repo))
        assert [writer.add("blob", data) for data in objects] == [object_id("blob", d) for d in objects]
        pack_sha = writer.finalize()
    else:
        proc = subprocess.run([sys.executable, "-c", _ZLIB_ONLY_SCRIPT, str(pack_dir_of(repo))],
                              input=pickle.dumps(objects), capture_output=True, check=True)
        pack_sha = proc.stdout.decode().strip()
    assert read_objects(repo, list(written)) == written
    assert set(verify_pack(repo, pack_sha)) == set(written)
    fsck = subprocess.run(["git", "fsck", "--full", "--strict"], cwd=repo, capture_output=True, text=True)
    assert fsck.returncode == 0 and "error" not in fsck.stderr.lower(), fsck.stderr


def test_isal_streams_are_about_as_small_as_zlibs_on_markdown(repo: Path):
    """ISA-L is taken for speed, not at the cost of the packs: its level-1 streams of
    markdown nodes stay within a few percent of zlib's level-1 size (measured: 1%
    smaller on the bench export, 0.7% larger on another)."""
    import zlib

    from monkeyllm_core.store.packfile import _compress
    rng = random.Random(5)
    notes = [b"\n".join(markdown_text(rng, rng.randrange(20, 200))) for _ in range(50)]
    assert sum(len(_compress(n)) for n in notes) <= 1.05 * sum(len(zlib.compress(n, 1)) for n in notes)
    assert all(zlib.decompress(_compress(n)) == n for n in notes)


def test_finalized_pack_is_read_only_and_named_after_its_checksum(repo: Path):
    writer = PackWriter(pack_dir_of(repo))
    writer.add("blob", b"one node\n")
    pack_sha = writer.finalize()
    pack = pack_dir_of(repo) / f"pack-{pack_sha}.pack"
    idx = pack.with_suffix(".idx")
    content = pack.read_bytes()
    assert hashlib.sha1(content[:-20]).hexdigest() == pack_sha == content[-20:].hex()
    assert pack.stat().st_mode & 0o777 == 0o444 and idx.stat().st_mode & 0o777 == 0o444
    assert sorted(p.name for p in pack_dir_of(repo).iterdir()) == [idx.name, pack.name]


def test_850kb_index_in_120_versions_is_stored_as_short_delta_chains(repo: Path):
    rng = random.Random(850)
    lines = markdown_text(rng, 14_000)
    writer = PackWriter(pack_dir_of(repo))
    versions: dict[str, bytes] = {}
    total = 0
    for counter in range(120):
        lines.insert(rng.randrange(1, len(lines)), b"| added | line %d | %d |" % (counter, rng.randrange(10**9)))
        text = b"nodes: %d\n" % (counter + 1000) + b"\n".join(lines)
        versions[writer.add("blob", text, delta_key="branch/_index.md")] = text
        total += len(text)
    assert len(versions) == 120 and len(text) > 850_000
    pack_sha = writer.finalize()

    pack_size = (pack_dir_of(repo) / f"pack-{pack_sha}.pack").stat().st_size
    assert pack_size < total * 0.05
    depths = [entry.depth for entry in verify_pack(repo, pack_sha).values()]
    assert max(depths) == 50 and sum(depth == 0 for depth in depths) == 3
    assert read_objects(repo, list(versions)) == {sha: ("blob", text) for sha, text in versions.items()}


def test_delta_key_never_makes_an_object_of_another_kind(repo: Path):
    text = b"\n".join(markdown_text(random.Random(4), 200))
    writer = PackWriter(pack_dir_of(repo))
    writer.add("blob", text, delta_key="same")
    commit = commit_bytes("4b825dc642cb6eb9a060e54bf8d69288fbee4904", "x") + text[:-10]
    commit_sha = writer.add("commit", commit, delta_key="same")
    pack_sha = writer.finalize()
    assert verify_pack(repo, pack_sha)[commit_sha] == PackedObject(kind="commit", depth=0)
    assert read_objects(repo, [commit_sha])[commit_sha] == ("commit", commit)


def test_small_versions_are_not_kept_as_delta_bases(repo: Path):
    big = b"\n".join(markdown_text(random.Random(6), 300))
    writer = PackWriter(pack_dir_of(repo))
    writer.add("blob", big, delta_key="k")
    writer.add("blob", b"small version\n" * 10, delta_key="k")     # < 4096: the key loses its base
    after_small = writer.add("blob", big + b"\nmore\n", delta_key="k")
    pack_sha = writer.finalize()
    assert verify_pack(repo, pack_sha)[after_small].depth == 0
    assert read_objects(repo, [after_small])[after_small] == ("blob", big + b"\nmore\n")


def test_duplicate_add_returns_same_sha_and_writes_once(repo: Path):
    writer = PackWriter(pack_dir_of(repo))
    first = writer.add("blob", b"same content\n")
    size = writer.path.stat().st_size
    second = writer.add("blob", b"same content\n")
    assert first == second == object_id("blob", b"same content\n")
    assert writer.count == 1 and writer.path.stat().st_size == size
    pack_sha = writer.finalize()
    assert list(verify_pack(repo, pack_sha)) == [first]


def test_unknown_object_kind_is_refused(repo: Path):
    writer = PackWriter(pack_dir_of(repo))
    with pytest.raises(ValueError, match="kind"):
        writer.add("symlink", b"target")
    assert writer.count == 0
    writer.abort()


def test_finalize_without_objects_returns_none_and_leaves_no_file(repo: Path):
    writer = PackWriter(pack_dir_of(repo))
    assert writer.path.exists()
    assert writer.finalize() is None
    assert list(pack_dir_of(repo).iterdir()) == []


def test_abort_removes_the_temporary_pack_and_can_repeat(repo: Path):
    writer = PackWriter(pack_dir_of(repo))
    writer.add("blob", b"never published\n")
    writer.abort()
    writer.abort()
    assert list(pack_dir_of(repo).iterdir()) == []
    with pytest.raises(RuntimeError):
        writer.add("blob", b"too late\n")


def test_writer_in_a_missing_folder_raises_oserror(tmp_path: Path):
    with pytest.raises(OSError):
        PackWriter(tmp_path / "no" / "such" / "pack")


def test_remove_stale_temp_packs_deletes_only_a_killed_writers_files(repo: Path):
    pack_dir = pack_dir_of(repo)
    kept = PackWriter(pack_dir)
    kept.add("blob", b"published\n")
    published = kept.finalize()
    killed = (f"from pathlib import Path; import os; from monkeyllm_core.store.packfile import PackWriter\n"
              f"w = PackWriter(Path({str(pack_dir)!r})); w.add('blob', b'lost\\n'); os._exit(9)\n")
    subprocess.run([sys.executable, "-c", killed], check=False)
    assert len(list(pack_dir.glob(f"{TEMP_PREFIX}*.pack"))) == 1

    assert remove_stale_temp_packs(pack_dir) == 1
    assert sorted(p.name for p in pack_dir.iterdir()) == [f"pack-{published}.idx", f"pack-{published}.pack"]
    assert remove_stale_temp_packs(pack_dir) == 0


_FILE_SIZE_LIMIT_SCRIPT = r"""
import errno, json, os, random, resource, signal, sys
from pathlib import Path
from monkeyllm_core.store.packfile import PackWriter

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)      # EFBIG instead of death at the limit
writer = PackWriter(Path(sys.argv[1]))
added = {}
for i in range(3):
    data = b"node %d before the limit\n" % i * 20
    added[writer.add("blob", data, delta_key="k")] = data.hex()
size_before = writer.path.stat().st_size
resource.setrlimit(resource.RLIMIT_FSIZE, (size_before + 100_000, resource.RLIM_INFINITY))
big = random.Random(9).randbytes(1_000_000)         # incompressible: the write stops half-way
try:
    big_sha = writer.add("blob", big, delta_key="k")
    error = None
except OSError as exc:
    error = exc.errno
    big_sha = None
size_after_failure = writer.path.stat().st_size
for i in range(3):
    data = b"node %d after the limit\n" % i * 300
    added[writer.add("blob", data, delta_key="k")] = data.hex()
print(json.dumps({"error": error, "big_sha": big_sha, "count": writer.count, "size_before": size_before,
                  "size_after_failure": size_after_failure, "pack": writer.finalize(), "added": added}))
"""


def test_write_failing_at_the_file_size_limit_leaves_a_usable_pack(repo: Path, tmp_path: Path):
    script = tmp_path / "limit.py"
    script.write_text(_FILE_SIZE_LIMIT_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), str(pack_dir_of(repo))], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)

    assert report["error"] == 27                       # EFBIG
    assert report["big_sha"] is None
    assert report["size_after_failure"] == report["size_before"]
    assert report["count"] == 6
    added = {sha: ("blob", bytes.fromhex(data)) for sha, data in report["added"].items()}
    assert set(verify_pack(repo, report["pack"])) == set(added)
    assert read_objects(repo, list(added)) == added
    big = random.Random(9).randbytes(1_000_000)
    missing = subprocess.run(["git", "cat-file", "-e", object_id("blob", big)], cwd=repo)
    assert missing.returncode != 0


def test_index_with_offsets_beyond_2gb_is_read_by_git(tmp_path: Path):
    # A real pack past 2 GiB is too big for a unit test; the .idx layout (large offset
    # table) is checked with `git show-index`, which reads an index without its pack.
    rng = random.Random(31)
    offsets = [12, 5000, 2**31 - 1, 2**31, 2**31 + 77, 5 * 2**32 + 3]
    entries = [PackEntry(sha=rng.randbytes(20), offset=offset, crc32=rng.getrandbits(32)) for offset in offsets]
    index = build_pack_index(entries, pack_sha=rng.randbytes(20))

    shown = subprocess.run(["git", "show-index"], input=index, capture_output=True, check=True).stdout.decode()
    parsed = set()
    for line in shown.splitlines():
        offset, sha, crc = line.split()
        parsed.add((int(offset), sha, int(crc.strip("()"), 16)))
    assert parsed == {(e.offset, e.sha.hex(), e.crc32) for e in entries}
    large_table_entries = (len(index) - 8 - 1024 - 6 * (20 + 4 + 4) - 40) // 8
    assert large_table_entries == 3
    assert hashlib.sha1(index[:-20]).digest() == index[-20:]
    assert struct.unpack(">I", index[8 + 255 * 4:8 + 256 * 4])[0] == 6
