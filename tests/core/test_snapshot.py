"""Snapshots: a forest adopted for real (datasets and media) backed up as a git
bundle plus a payload sidecar, restored byte for byte, and every way a damaged or
hostile snapshot is refused without leaving anything behind. Also what a plain
``git clone`` (payloads absent) looks like to validate and query.

Real git, real SQLite, the real ``vine adopt`` and ``vine validate``; snapshots
are damaged the way a disk or a person would: a flipped byte, a cut file, an
archive made by hand.
"""
from __future__ import annotations

import io
import json
import shutil
import sqlite3
import tarfile
from pathlib import Path

import pytest

from monkeyllm_core import Vine, VineError
from monkeyllm_core.hashing import sha256_file
from monkeyllm_core.snapshot.create import create_snapshot, sidecar_path
from monkeyllm_core.snapshot.restore import restore_snapshot

from cli_helpers import VineRunner, git, git_status, make_rich_export, snapshot

DATASETS = ("data/crm", "data/customers", "data/invoices")
MEDIA = ("media/beep", "media/photo")
PAYLOAD_FILES = {"data/crm.db", "data/customers.db", "data/invoices.db", "media/_assets/beep.wav",
                 "media/_assets/photo.png"}
NEVER_COMMITTED = {"_meta/gardener.yaml"}  # the adopt's source paths: machine-local, never in git


@pytest.fixture(scope="module")
def adopted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The rich export adopted by the real CLI, plus a second branch and a tag, so
    "every ref" means more than one."""
    root = tmp_path_factory.mktemp("adopted")
    runner = VineRunner(root)
    forest = runner.init(root / "forest")
    runner.adopt(make_rich_export(root / "export"), forest, expect=1)  # misc/broken.json fails, by design
    git(forest, "branch", "before-media", "HEAD~3")
    git(forest, "tag", "adopted")
    assert PAYLOAD_FILES <= set(snapshot(forest))
    return forest


@pytest.fixture
def made(adopted: Path, tmp_path: Path):
    """A snapshot with payloads of the adopted forest, in tmp_path/snapshots."""
    folder = tmp_path / "snapshots"
    folder.mkdir()
    return create_snapshot(adopted, folder / "brain.bundle", with_payloads=True)


def history(forest: Path) -> tuple[str, str, str]:
    """Every ref, every commit (with its tree, parents, author, date and subject), and where HEAD is."""
    return (git(forest, "for-each-ref", "--format=%(refname) %(objectname)"),
            git(forest, "log", "--all", "--format=%H %T %P %an %ae %at %s"),
            git(forest, "symbolic-ref", "HEAD"))


def committed_files(forest: Path) -> dict[str, bytes]:
    return {rel: data for rel, data in snapshot(forest).items() if rel not in NEVER_COMMITTED}


def entries(folder: Path) -> set[str]:
    """What a folder holds, hidden names included: a failed restore must leave none of its own."""
    return {path.name for path in folder.iterdir()}


def flip_byte(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


def pack_offset(bundle: Path) -> int:
    """Where the bundle's pack starts (after the header's blank line)."""
    return bundle.read_bytes().index(b"\n\n") + 2


def member_offset(sidecar: Path, name: str) -> int:
    with tarfile.open(sidecar) as tar:
        return tar.getmember(name).offset_data


def query_count(forest: Path, node_id: str, table: str) -> int:
    with Vine(forest, writable=False) as vine:
        return vine.query(node_id, f"SELECT COUNT(*) FROM {table}")["rows"][0][0]


def assert_refused(tmp_path: Path, bundle: Path, code: str, fragment: str, *,
                   payloads: Path | None = None) -> VineError:
    """The restore fails with one line naming what is wrong, and leaves nothing: no
    DEST, no temporary folder beside it."""
    before = entries(tmp_path)
    with pytest.raises(VineError) as caught:
        restore_snapshot(bundle, tmp_path / "restored", payloads)
    error = caught.value
    assert error.code == code, error.one_line()
    assert fragment in error.message, error.one_line()
    assert "\n" not in error.one_line() and error.hint
    assert entries(tmp_path) == before
    return error


# -- the round trip ----------------------------------------------------------------------
def test_a_restore_gives_back_every_file_and_the_whole_history_byte_for_byte(adopted, made, tmp_path, vine_cli):
    assert made.sidecar == sidecar_path(made.bundle) and made.sidecar.is_file()
    assert made.payloads == len(PAYLOAD_FILES) and made.refs == 3 and made.warnings == []

    restored = restore_snapshot(made.bundle, tmp_path / "restored", made.sidecar)

    dest = tmp_path / "restored"
    assert restored.forest == dest and restored.payloads == len(PAYLOAD_FILES) and restored.absent == []
    assert committed_files(dest) == committed_files(adopted)  # every node, index and payload, byte for byte
    assert set(snapshot(adopted)) - set(snapshot(dest)) == NEVER_COMMITTED
    assert history(dest) == history(adopted)
    assert restored.branch == history(adopted)[2].strip()
    for rel in PAYLOAD_FILES:  # a payload keeps its mtime too
        assert (dest / rel).stat().st_mtime == pytest.approx((adopted / rel).stat().st_mtime, abs=1e-6)
    assert not [name for name in entries(tmp_path) if "vine-restore" in name]
    vine_cli.assert_consistent(dest)  # git status clean, vine validate: 0 errors, 0 warnings
    assert (dest / "_derived" / "catalog.db").is_file()
    assert query_count(dest, "data/invoices", "invoices") == query_count(adopted, "data/invoices", "invoices") == 3


def test_a_snapshot_without_payloads_restores_the_history_and_says_what_is_absent(adopted, tmp_path):
    made = create_snapshot(adopted, tmp_path / "history.bundle")
    assert made.sidecar is None and not sidecar_path(made.bundle).exists()

    restored = restore_snapshot(made.bundle, tmp_path / "restored")

    dest = tmp_path / "restored"
    assert history(dest) == history(adopted)
    assert not PAYLOAD_FILES & set(snapshot(dest))
    assert restored.absent == sorted(DATASETS + MEDIA)
    assert [line.split(":")[0] for line in restored.warnings] == ["warning W_PAYLOADS_ABSENT"]


def test_create_refuses_a_file_that_exists_and_writes_nothing(adopted, tmp_path):
    target = tmp_path / "old.bundle"
    target.write_bytes(b"an older backup")
    with pytest.raises(VineError) as caught:
        create_snapshot(adopted, target, with_payloads=True)
    assert caught.value.code == "E_EXISTS"
    assert target.read_bytes() == b"an older backup" and entries(tmp_path) == {"old.bundle"}


# -- damaged bundles -----------------------------------------------------------------------
def test_a_bundle_with_one_flipped_byte_restores_nothing(made, tmp_path):
    size = made.bundle.stat().st_size
    flip_byte(made.bundle, (pack_offset(made.bundle) + size) // 2)
    error = assert_refused(tmp_path, made.bundle, "E_CORRUPT", "is not a whole forest snapshot")
    assert str(made.bundle) in error.message


def test_a_truncated_bundle_restores_nothing(made, tmp_path):
    data = made.bundle.read_bytes()
    made.bundle.write_bytes(data[:len(data) * 2 // 3])
    assert_refused(tmp_path, made.bundle, "E_CORRUPT", "is not a whole forest snapshot")


def test_a_file_that_is_no_bundle_restores_nothing(tmp_path):
    bogus = tmp_path / "notes.bundle"
    bogus.write_text("# just some notes\n")
    assert_refused(tmp_path, bogus, "E_CORRUPT", "is not a whole forest snapshot")


# -- damaged and hostile sidecars ----------------------------------------------------------------
def test_a_sidecar_member_with_one_flipped_byte_restores_nothing(made, tmp_path):
    flip_byte(made.sidecar, member_offset(made.sidecar, "payloads/data/invoices.db") + 100)
    error = assert_refused(tmp_path, made.bundle, "E_CORRUPT", "data/invoices.db altered", payloads=made.sidecar)
    assert str(made.sidecar) in error.message


@pytest.mark.parametrize("keep", ["half a member", "whole members"])
def test_a_truncated_sidecar_restores_nothing(made, tmp_path, keep):
    data = made.sidecar.read_bytes()
    if keep == "half a member":
        cut = member_offset(made.sidecar, "payloads/media/_assets/photo.png") + 20
        fragment = "cut short"
    else:  # cut exactly where the last member's header starts: a tar reader sees a clean end
        with tarfile.open(made.sidecar) as tar:
            cut = tar.getmembers()[-1].offset
        fragment = "ends before 1 payload(s) of its manifest"
    made.sidecar.write_bytes(data[:cut])
    assert_refused(tmp_path, made.bundle, "E_CORRUPT", fragment, payloads=made.sidecar)


def test_a_sidecar_of_another_snapshot_restores_nothing(own_copy, tmp_path):
    older = create_snapshot(own_copy, tmp_path / "older.bundle", with_payloads=True)
    git(own_copy, "tag", "later")  # the same payloads, but another bundle
    newer = create_snapshot(own_copy, tmp_path / "newer.bundle")
    assert_refused(tmp_path, newer.bundle, "E_CORRUPT", "was not made with", payloads=older.sidecar)


def hand_made_sidecar(made, tmp_path: Path, member: tarfile.TarInfo, data: bytes = b"",
                      manifest: bytes | None = None) -> Path:
    """A sidecar whose manifest is the real one (so it matches the bundle) followed by
    ``member``: what a person with tar and bad intentions could hand over."""
    with tarfile.open(made.sidecar) as real:
        manifest = manifest if manifest is not None else real.extractfile("manifest.json").read()
    path = tmp_path / "hand-made.payloads.tar"
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("manifest.json")
        info.size = len(manifest)
        tar.addfile(info, io.BytesIO(manifest))
        member.size = len(data) if member.isreg() else 0
        tar.addfile(member, io.BytesIO(data) if member.isreg() else None)
    return path


def link(name: str, kind: bytes, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


@pytest.mark.parametrize("member, fragment", [
    (tarfile.TarInfo("payloads/../../escape.db"), "which its manifest does not name"),
    (tarfile.TarInfo("/tmp/escape.db"), "which its manifest does not name"),
    (link("payloads/data/invoices.db", tarfile.SYMTYPE, "/etc/passwd"), "as a symlink to '/etc/passwd'"),
    (link("payloads/data/invoices.db", tarfile.LNKTYPE, "/etc/passwd"), "as a hard link to '/etc/passwd'"),
], ids=["dot-dot", "absolute", "symlink", "hardlink"])
def test_a_sidecar_member_outside_the_forest_or_a_link_is_refused(made, tmp_path, member, fragment):
    hostile = hand_made_sidecar(made, tmp_path, member, b"not a payload\n")
    assert_refused(tmp_path, made.bundle, "E_CORRUPT", fragment, payloads=hostile)
    assert not (tmp_path.parent / "escape.db").exists() and not (tmp_path / "escape.db").exists()


def test_a_manifest_naming_a_path_outside_the_forest_is_refused(made, tmp_path):
    with tarfile.open(made.sidecar) as real:
        manifest = json.loads(real.extractfile("manifest.json").read())
    manifest["payloads"][0]["path"] = "../escape.db"
    hostile = hand_made_sidecar(made, tmp_path, tarfile.TarInfo("payloads/../escape.db"), b"x",
                                manifest=json.dumps(manifest).encode())
    assert_refused(tmp_path, made.bundle, "E_CORRUPT", "'../escape.db' is not a relative path inside the forest",
                   payloads=hostile)


def test_a_link_in_the_history_where_payloads_go_is_never_written_through(own_copy, tmp_path):
    outside = tmp_path / "outside"
    shutil.move(own_copy / "media" / "_assets", outside)
    (own_copy / "media" / "_assets").symlink_to(outside)  # committed by hand: git keeps it as a link
    git(own_copy, "add", "-f", "media/_assets")
    git(own_copy, "-c", "user.name=someone", "-c", "user.email=someone@example.com", "commit", "-qm", "a link")
    made = create_snapshot(own_copy, tmp_path / "linked.bundle", with_payloads=True)
    for path in outside.iterdir():
        path.unlink()
    assert_refused(tmp_path, made.bundle, "E_CORRUPT", "would be written through media/_assets", payloads=made.sidecar)
    assert entries(outside) == set()


# -- DEST --------------------------------------------------------------------------------------
def test_a_dest_that_exists_is_refused_and_left_as_it_was(made, tmp_path):
    dest = tmp_path / "restored"
    dest.mkdir()
    (dest / "mine.txt").write_text("keep me\n")
    with pytest.raises(VineError) as caught:
        restore_snapshot(made.bundle, dest, made.sidecar)
    assert caught.value.code == "E_EXISTS" and str(dest) in caught.value.message
    assert entries(dest) == {"mine.txt"} and (dest / "mine.txt").read_text() == "keep me\n"
    assert not [name for name in entries(tmp_path) if "vine-restore" in name]


# -- what create refuses to carry -----------------------------------------------------------------
@pytest.fixture
def own_copy(adopted: Path, tmp_path: Path) -> Path:
    """A copy of the adopted forest this test may change."""
    copy = tmp_path / "copy"
    shutil.copytree(adopted, copy, symlinks=True)
    return copy


def test_create_refuses_a_drifted_payload_and_writes_nothing(own_copy, tmp_path):
    with sqlite3.connect(own_copy / "data" / "invoices.db") as db:  # changed outside tend
        db.execute("DELETE FROM invoices")
    folder = tmp_path / "snapshots"
    folder.mkdir()
    with pytest.raises(VineError) as caught:
        create_snapshot(own_copy, folder / "brain.bundle", with_payloads=True)
    assert caught.value.code == "E_CONFLICT"
    assert "payload data/invoices.db does not match the payload_hash of its passport" in caught.value.message
    assert entries(folder) == set()  # no bundle, no sidecar, no temporary file


def test_create_refuses_missing_payloads_in_one_line(own_copy, tmp_path):
    (own_copy / "media" / "_assets" / "beep.wav").unlink()
    with pytest.raises(VineError) as caught:
        create_snapshot(own_copy, tmp_path / "brain.bundle", with_payloads=True)
    assert caught.value.code == "E_NOT_FOUND"
    assert "1 payload not present (media/beep)" in caught.value.message
    assert "--with-payloads" in caught.value.hint
    assert not (tmp_path / "brain.bundle").exists()


def test_a_payload_changed_under_an_active_writer_says_so(own_copy, tmp_path):
    with Vine(own_copy) as writer:  # holds .vine.lock, as vine sync would
        with sqlite3.connect(own_copy / "data" / "crm.db") as db:
            db.execute("DELETE FROM customers")
        with pytest.raises(VineError) as caught:
            create_snapshot(own_copy, tmp_path / "brain.bundle", with_payloads=True)
        assert writer.writable
    assert caught.value.code == "E_CONFLICT"
    assert "changed while the snapshot read it (a writer is active: pid" in caught.value.message
    assert not (tmp_path / "brain.bundle").exists()


# -- a clone without payloads ---------------------------------------------------------------------
@pytest.fixture
def clone(adopted: Path, tmp_path: Path) -> Path:
    """``git clone`` of the forest: every passport, no payload."""
    git(tmp_path, "clone", "-q", str(adopted), "clone")
    return tmp_path / "clone"


def test_validate_on_a_clone_says_one_line_for_every_absent_payload(clone, vine_cli):
    result = vine_cli("validate", "--forest", clone)
    assert result.returncode == 0, result.describe()
    assert result.stdout.splitlines() == [
        "warning W_PAYLOADS_ABSENT: 5 payloads not present (data/crm, data/customers, data/invoices and 2 more): "
        "restore them with `vine snapshot restore SNAPSHOT --forest NEW_DIR --payloads SNAPSHOT.payloads.tar` "
        "(payloads never enter git), or re-adopt their sources",
        "validate: 12 node(s), 0 error(s), 1 warning(s)"]
    assert vine_cli("validate", "--strict", "--forest", clone).returncode == 1


def test_a_drifted_payload_in_a_clone_is_still_a_finding_of_its_own(adopted, clone, vine_cli):
    shutil.copy2(adopted / "data" / "crm.db", clone / "data" / "crm.db")
    with sqlite3.connect(clone / "data" / "crm.db") as db:
        db.execute("DELETE FROM customers")
    lines = vine_cli("validate", "--forest", clone).stdout.splitlines()
    drift = "warning W_PAYLOAD_DRIFT data/crm: payload crm.db does not match payload_hash (changed outside tend)"
    assert drift in lines
    absent = [line for line in lines if "W_PAYLOADS_ABSENT" in line]
    assert len(absent) == 1 and absent[0].startswith(
        "warning W_PAYLOADS_ABSENT: 4 payloads not present (data/customers, data/invoices, media/beep and 1 more)")


def test_query_on_a_clone_is_not_found_with_the_restore_hint_and_other_reads_work(clone, vine_cli):
    result = vine_cli("query", "data/invoices", "SELECT COUNT(*) FROM invoices", "--forest", clone)
    assert result.returncode == 2
    assert result.stderr == ("error E_NOT_FOUND: data/invoices: payload invoices.db is not present (Payloads never "
                             "enter git: restore it with `vine snapshot restore SNAPSHOT --forest NEW_DIR --payloads "
                             "SNAPSHOT.payloads.tar`, or re-adopt its source.)\n")
    look = vine_cli("look", "data/invoices", "--json", "--forest", clone)
    assert look.returncode == 0 and look.json()["query_manual"]["tables"], look.describe()
    assert vine_cli("pick", "media/photo", "--forest", clone).returncode == 0
    assert vine_cli("locate", "invoices", "--forest", clone).returncode == 0


def test_a_clone_snapshots_its_history_but_not_payloads_it_lacks(adopted, clone, tmp_path):
    with pytest.raises(VineError) as caught:
        create_snapshot(clone, tmp_path / "clone.bundle", with_payloads=True)
    assert caught.value.code == "E_NOT_FOUND" and "5 payloads not present" in caught.value.message
    made = create_snapshot(clone, tmp_path / "clone.bundle")
    restored = restore_snapshot(made.bundle, tmp_path / "restored")
    assert git(tmp_path / "restored", "log", "--format=%H") == git(adopted, "log", "--format=%H")
    assert len(restored.absent) == 5
    assert git_status(tmp_path / "restored") == ""
