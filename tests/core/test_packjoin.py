"""A session's packs joined into one by copying their entries, judged by real git:
``git verify-pack``, ``git fsck --full --strict`` and every object read back."""
from __future__ import annotations

import random
import struct
import subprocess
from pathlib import Path

import pytest

from monkeyllm_core.store.packfile import PackEntry, PackWriter, build_pack_index
from monkeyllm_core.store.history import JOIN_FROM_PACKS
from monkeyllm_core.store.packjoin import _Pack, _write_index, join_packs

from _git_runs import git_bytes  # tests/core is on sys.path
from test_packfile import markdown_text, object_id, pack_dir_of, read_objects, verify_pack


def session_packs(repo: Path, packs: int, per_pack: int, seed: int = 3) -> tuple[list[str], dict]:
    """``packs`` packs as a writer's checkpoints leave them: a growing index stored as
    deltas against its previous version (within each pack), and new notes."""
    rng = random.Random(seed)
    index = b"\n".join(markdown_text(rng, 200))
    shas, written = [], {}
    for p in range(packs):
        writer = PackWriter(pack_dir_of(repo))
        for i in range(per_pack):
            note = b"\n".join(markdown_text(rng, rng.randrange(5, 60))) + f"\n{p}-{i}\n".encode()
            index += f"\n- [[notes/{p}-{i}]] \u2014 a note\n".encode()
            for kind, data, key in (("blob", note, None), ("blob", index, "_index.md")):
                written[writer.add(kind, data, delta_key=key)] = (kind, data)
        shas.append(writer.finalize())
    return shas, written


def fsck(repo: Path) -> None:
    proc = subprocess.run(["git", "fsck", "--full", "--strict"], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 0 and "error" not in proc.stderr.lower(), proc.stderr


def test_joined_pack_holds_every_object_with_its_deltas_and_the_old_packs_go(repo: Path):
    shas, written = session_packs(repo, packs=5, per_pack=40)
    deltas_before = sum(1 for sha in shas for obj in verify_pack(repo, sha).values() if obj.depth)
    assert deltas_before >= 5 * 30  # the index's versions, as deltas
    joined = join_packs(pack_dir_of(repo), shas)
    assert joined is not None
    assert sorted(p.name for p in pack_dir_of(repo).iterdir()) == [f"pack-{joined}.idx", f"pack-{joined}.pack"]
    objects = verify_pack(repo, joined)  # git checks the trailer, the index and every CRC
    assert set(objects) == set(written)
    assert sum(1 for obj in objects.values() if obj.depth) == deltas_before  # copied, not recompressed
    assert read_objects(repo, list(written)) == written
    fsck(repo)


def test_one_pack_or_none_is_left_as_it_is(repo: Path):
    shas, _ = session_packs(repo, packs=1, per_pack=3)
    assert join_packs(pack_dir_of(repo), shas) is None
    assert join_packs(pack_dir_of(repo), []) is None
    assert (pack_dir_of(repo) / f"pack-{shas[0]}.pack").exists()


def test_a_cut_index_is_refused_and_the_packs_stay(repo: Path):
    shas, written = session_packs(repo, packs=3, per_pack=5)
    idx = pack_dir_of(repo) / f"pack-{shas[1]}.idx"
    idx.chmod(0o644)
    idx.write_bytes(idx.read_bytes()[:-30])  # a disk that lost the end of a write
    before = sorted(p.name for p in pack_dir_of(repo).iterdir())
    with pytest.raises(ValueError, match="cut short or damaged"):
        join_packs(pack_dir_of(repo), shas)
    assert sorted(p.name for p in pack_dir_of(repo).iterdir()) == before


def damage(idx: Path, edit) -> None:
    idx.chmod(0o644)
    data = bytearray(idx.read_bytes())
    edit(data)
    idx.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["fanout one short", "ids out of order"])
def test_an_index_that_does_not_hold_what_it_says_is_not_joined(repo: Path, how: str):
    # a damaged index (a bucket of its fanout off by one, two ids swapped) must not be
    # copied into the joined one, which would then replace the packs: they stay as they are
    shas, written = session_packs(repo, packs=3, per_pack=8)
    idx = pack_dir_of(repo) / f"pack-{shas[1]}.idx"

    def edit(data: bytearray) -> None:
        if how == "fanout one short":
            fanout = list(struct.unpack(">256I", data[8:1032]))
            first = next(b for b in range(255) if fanout[b])  # fanout[255], the count, stays right
            fanout[first] -= 1
            data[8:1032] = struct.pack(">256I", *fanout)
        else:
            data[1032:1052], data[1052:1072] = data[1052:1072], data[1032:1052]

    damage(idx, edit)
    before = {p.name: p.read_bytes() for p in pack_dir_of(repo).iterdir()}
    assert join_packs(pack_dir_of(repo), shas) is None
    assert {p.name: p.read_bytes() for p in pack_dir_of(repo).iterdir()} == before


def test_an_object_in_two_packs_leaves_them_as_they_are(repo: Path):
    # an index lists each object once: such packs are git gc's to repack
    same = b"# The same note\n\nwritten in two sessions' packs\n"
    shas = []
    for extra in (b"first\n", b"second\n"):
        writer = PackWriter(pack_dir_of(repo))
        writer.add("blob", same)
        writer.add("blob", extra)
        shas.append(writer.finalize())
    before = sorted(p.name for p in pack_dir_of(repo).iterdir())
    assert join_packs(pack_dir_of(repo), shas) is None
    assert sorted(p.name for p in pack_dir_of(repo).iterdir()) == before
    fsck(repo)


def test_a_multi_pack_index_leaves_the_packs_to_git(repo: Path):
    shas, written = session_packs(repo, packs=3, per_pack=5)
    git_bytes(repo, "multi-pack-index", "write")
    assert join_packs(pack_dir_of(repo), shas) is None
    assert read_objects(repo, list(written)) == written


def test_an_index_read_a_few_records_at_a_time_gives_every_record_once(repo: Path):
    # a join reads each pack's index in chunks (a session's thousands of packs are never
    # held whole): any chunk size gives the same records, in id order
    shas, written = session_packs(repo, packs=1, per_pack=25)
    pack = _Pack(pack_dir_of(repo), shas[0])
    whole = list(pack.entries(100))
    assert len(whole) == len(written) == 50 and [e[0] for e in whole] == sorted(e[0] for e in whole)
    for per_read in (1, 3, 7, 49, 50):
        assert list(pack.entries(100, per_read)) == whole


def test_offsets_past_2gb_are_read_and_written_in_the_large_offset_table(tmp_path: Path):
    # a real pack past 2 GiB is too big for a test: an index with large offsets is
    # read back, shifted past 2 GiB and written, and `git show-index` reads the result
    rng = random.Random(8)
    offsets = [12, 4000, 2**31 + 5, 3 * 2**32]
    entries = [PackEntry(sha=rng.randbytes(20), offset=o, crc32=rng.getrandbits(32)) for o in offsets]
    (tmp_path / "pack-ab.idx").write_bytes(build_pack_index(entries, pack_sha=rng.randbytes(20)))
    (tmp_path / "pack-ab.pack").write_bytes(b"")
    pack = _Pack(tmp_path, "ab")
    assert [(sha, offset) for sha, _, offset in pack.entries(0)] == sorted((e.sha, e.offset) for e in entries)
    shift = 2**31
    assert _write_index(tmp_path / "joined.idx", [pack], [shift], rng.randbytes(20))
    index = (tmp_path / "joined.idx").read_bytes()
    shown = subprocess.run(["git", "show-index"], input=index, capture_output=True, check=True).stdout.decode()
    parsed = {(int(line.split()[0]), line.split()[1]) for line in shown.splitlines()}
    assert parsed == {(e.offset + shift, e.sha.hex()) for e in entries}


def checkpoints(brain) -> int:
    reflog = subprocess.run(["git", "reflog", "--format=%gs"], cwd=brain.root, capture_output=True, text=True,
                            check=True).stdout
    return reflog.count("vine: checkpoint")


def test_a_long_bulk_session_leaves_one_pack_however_many_checkpoints(brain, make_note):
    packs = brain.root / ".git" / "objects" / "pack"
    before, checkpoints_before = set(packs.glob("*.pack")), checkpoints(brain)
    with brain.open() as vine, vine.bulk():
        for i in range(JOIN_FROM_PACKS):
            vine.plant(make_note(f"n{i}"))
            vine.flush()  # a checkpoint: one pack each
    assert checkpoints(brain) - checkpoints_before == JOIN_FROM_PACKS
    assert len(set(packs.glob("*.pack")) - before) == 1
    fsck(brain.root)
    assert len(brain.subjects()) == JOIN_FROM_PACKS + 1
    brain.assert_clean()


def test_a_short_bulk_session_leaves_its_few_packs_to_git(brain, make_note):
    packs = brain.root / ".git" / "objects" / "pack"
    before = set(packs.glob("*.pack"))
    with brain.open() as vine, vine.bulk():
        for i in range(3):
            vine.plant(make_note(f"n{i}"))
            vine.flush()
    assert len(set(packs.glob("*.pack")) - before) == 3
    brain.assert_clean()
