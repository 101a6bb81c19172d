"""sniff's body index stays true: writes through any Vine, files edited by hand, a
rebuilt catalog, a lost or torn index file; and it never reaches git."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

from monkeyllm_core import Vine
from monkeyllm_core.read.body_index import INDEX_PATH, BodyIndex
from monkeyllm_core.read.sniff import sniff

HOUR = 3600.0  # a sweep interval no test waits for: only the catalog's log can tell


def plant_notes(vine: Vine) -> None:
    vine.plant({"id": "notes/_index", "type": "branch", "title": "Notes", "summary": "Notes."})
    vine.plant({"id": "notes/alpha", "type": "note", "title": "Alpha", "summary": "Alpha note.",
                "body": "# Alpha\n\nThe code is QX-1001 today.\n"})
    vine.plant({"id": "notes/beta", "type": "note", "title": "Beta", "summary": "Beta note.",
                "body": "# Beta\n\nNothing special here.\n"})


def found(index: BodyIndex, term: str) -> list[str]:
    return [r["id"] for r in sniff(index, [term])["results"]]


def edit_in_place(path, old: str, new: str, *, keep_mtime: bool = False) -> None:
    """What an editor saving over the file does (no rename), optionally restoring the mtime."""
    st = path.stat()
    text = path.read_text(encoding="utf-8")
    assert len(old) == len(new) and old in text
    with open(path, "r+", encoding="utf-8") as handle:
        handle.write(text.replace(old, new))
    if keep_mtime:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size


def settle(path) -> None:
    """Date a file or folder back, so no freshness check finds it racy."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 5_000_000_000))


def test_writes_through_the_vine_are_seen_at_once(vine):
    plant_notes(vine)
    with BodyIndex(vine.root, vine.catalog, sweep_seconds=HOUR) as index:
        assert found(index, "QX-1001") == ["notes/alpha"]
        vine.graft("notes/beta", {"body": "# Beta\n\nNow it names QX-1001 and QX-2002.\n"})
        vine.plant({"id": "notes/gamma", "type": "note", "title": "Gamma", "summary": "Gamma note.",
                    "body": "# Gamma\n\nQX-2002 again.\n"})
        vine.graft("notes/alpha", {"body": "# Alpha\n\nThe code is QX-1009 today.\n"})  # same length
        assert found(index, "QX-1001") == ["notes/beta"]
        assert found(index, "QX-2002") == ["notes/beta", "notes/gamma"]


def test_a_write_by_another_process_is_seen_at_once(vine):
    plant_notes(vine)
    vine.close()  # the writer's lock goes: the other process takes it
    with Vine(vine.root, writable=False) as reader, \
            BodyIndex(reader.root, reader.catalog, sweep_seconds=HOUR) as index:
        assert found(index, "QX-3003") == []
        script = ("import sys; from monkeyllm_core import Vine\n"
                  "with Vine(sys.argv[1]) as v:\n"
                  "    v.graft('notes/beta', {'body': '# Beta\\n\\nQX-3003 arrived.\\n'})\n")
        subprocess.run([sys.executable, "-c", script, str(reader.root)], check=True)
        assert found(index, "QX-3003") == ["notes/beta"]


def test_a_file_edited_by_hand_is_seen_by_the_next_sweep(vine):
    plant_notes(vine)
    with BodyIndex(vine.root, vine.catalog, sweep_seconds=HOUR) as index:
        assert found(index, "QX-1001") == ["notes/alpha"]
    edit_in_place(vine.root / "notes/beta.md", "special", "QX-1001")
    with BodyIndex(vine.root, vine.catalog, sweep_seconds=HOUR) as fresh:  # each process sweeps first
        assert found(fresh, "QX-1001") == ["notes/alpha", "notes/beta"]
    with BodyIndex(vine.root, vine.catalog, sweep_seconds=0) as eager:
        assert found(eager, "QX-1001") == ["notes/alpha", "notes/beta"]
        edit_in_place(vine.root / "notes/alpha.md", "QX-1001", "QX-1234")
        assert found(eager, "QX-1001") == ["notes/beta"]


def test_a_save_by_rename_is_seen_at_once_through_its_folder(vine):
    plant_notes(vine)
    with BodyIndex(vine.root, vine.catalog, sweep_seconds=HOUR) as index:
        assert found(index, "QX-1001") == ["notes/alpha"]
        path = vine.root / "notes/beta.md"
        spare = path.with_name(".beta.md.swp")
        spare.write_text(path.read_text(encoding="utf-8").replace("special", "QX-1001"), encoding="utf-8")
        os.replace(spare, path)  # what vim, and most editors' atomic save, do
        assert found(index, "QX-1001") == ["notes/alpha", "notes/beta"]


def test_a_racy_file_is_read_again_though_size_and_mtime_did_not_move(vine):
    plant_notes(vine)
    with BodyIndex(vine.root, vine.catalog, sweep_seconds=0) as index:
        assert found(index, "QX-1001") == ["notes/alpha"]  # indexed within a second of its write
        edit_in_place(vine.root / "notes/alpha.md", "QX-1001", "QX-7007", keep_mtime=True)
        assert found(index, "QX-7007") == ["notes/alpha"]
        assert found(index, "QX-1001") == []


def settled_alpha(vine):
    """The notes planted, and alpha's file and folder old enough not to be racy:
    an edit that keeps size and mtime is then one no stat can see."""
    plant_notes(vine)
    path = vine.root / "notes/alpha.md"
    settle(path)
    settle(path.parent)
    return path


def test_a_stale_copy_is_never_shown_and_is_read_again(vine):
    path = settled_alpha(vine)
    with BodyIndex(vine.root, vine.catalog, sweep_seconds=HOUR) as index:
        assert found(index, "QX-1001") == ["notes/alpha"]
        # the one edit no stat can see: in place, same size, mtime put back
        edit_in_place(path, "QX-1001", "QX-1002", keep_mtime=True)
        assert found(index, "QX-1001") == []  # the copy said yes, the file says no
        assert found(index, "QX-1002") == ["notes/alpha"]  # and the copy was read again


def test_one_call_of_several_sniffs_still_answers_as_a_plain_scan(vine):
    """harvest's sniffs share one refresh: what was written before the call is seen,
    and a copy one sniff finds out of date is read again for the next."""
    path = settled_alpha(vine)
    with BodyIndex(vine.root, vine.catalog, sweep_seconds=HOUR) as index:
        assert found(index, "QX-1001") == ["notes/alpha"]
        vine.graft("notes/beta", {"body": "# Beta\n\nNow it names QX-1001.\n"})
        with index.one_call():
            assert found(index, "QX-1001") == ["notes/alpha", "notes/beta"]
            edit_in_place(path, "QX-1001", "QX-1002", keep_mtime=True)  # no stat can see it
            assert found(index, "QX-1001") == ["notes/beta"]  # the copy said yes, the file says no
            assert found(index, "QX-1002") == ["notes/alpha"]  # so this sniff refreshed again


def test_a_reindex_after_hand_edits_is_seen_through_the_log(vine):
    plant_notes(vine)
    with BodyIndex(vine.root, vine.catalog, sweep_seconds=HOUR) as index:
        assert found(index, "QX-1001") == ["notes/alpha"]
        edit_in_place(vine.root / "notes/beta.md", "special", "QX-1001")
        vine.reindex()
        assert found(index, "QX-1001") == ["notes/alpha", "notes/beta"]


def test_a_node_whose_file_vanished_is_not_returned(vine):
    plant_notes(vine)
    (vine.root / "notes/alpha.md").unlink()
    with BodyIndex(vine.root, vine.catalog) as index:
        assert found(index, "QX-1001") == []


def test_a_missing_or_torn_index_is_rebuilt(vine):
    plant_notes(vine)
    path = vine.root / INDEX_PATH
    with BodyIndex(vine.root, vine.catalog) as index:
        assert found(index, "QX-1001") == ["notes/alpha"]
    path.unlink()
    with BodyIndex(vine.root, vine.catalog) as index:
        assert found(index, "QX-1001") == ["notes/alpha"]
    path.write_bytes(b"not a database, a torn copy" * 100)
    with BodyIndex(vine.root, vine.catalog) as index:
        assert found(index, "QX-1001") == ["notes/alpha"]
    assert path.read_bytes()[:16] == b"SQLite format 3\x00"


def test_an_index_of_another_format_is_rebuilt(vine):
    plant_notes(vine)
    with BodyIndex(vine.root, vine.catalog) as index:
        found(index, "QX-1001")
    with sqlite3.connect(vine.root / INDEX_PATH) as db:
        db.execute("UPDATE meta SET value = 'old' WHERE key = 'format'")
        db.execute("DELETE FROM body_words")  # an old layout that would now answer nothing
    with BodyIndex(vine.root, vine.catalog) as index:
        assert found(index, "QX-1001") == ["notes/alpha"]


def test_a_second_process_reuses_the_index_without_reading_bodies_again(vine):
    plant_notes(vine)
    settle(vine.root / "notes/alpha.md")
    with BodyIndex(vine.root, vine.catalog) as index:
        found(index, "QX-1001")
    rows = lambda: sqlite3.connect(vine.root / INDEX_PATH).execute(
        "SELECT id, rowid FROM bodies ORDER BY id").fetchall()
    before = rows()
    with BodyIndex(vine.root, vine.catalog) as index:
        assert found(index, "QX-1001") == ["notes/alpha"]
    assert rows() == before


def test_a_read_only_vine_sniffs_and_keeps_the_index(vine):
    plant_notes(vine)
    vine.close()
    with Vine(vine.root, writable=False) as reader, BodyIndex(reader.root, reader.catalog) as index:
        assert found(index, "QX-1001") == ["notes/alpha"]
    assert (vine.root / INDEX_PATH).is_file()


def test_the_index_never_reaches_git(vine):
    plant_notes(vine)
    with BodyIndex(vine.root, vine.catalog) as index:
        found(index, "QX-1001")
    vine.close()
    git = lambda *args: subprocess.run(["git", *args], cwd=vine.root, capture_output=True, text=True,
                                       check=True).stdout
    assert (vine.root / INDEX_PATH).is_file()
    assert git("status", "--porcelain", "--untracked-files=all") == ""
    assert not any(path.startswith("_derived") for path in git("ls-files").splitlines())


def test_answers_are_the_same_whether_the_copies_are_kept_in_memory_or_not(vine, monkeypatch):
    """A forest past COPIES_IN_MEMORY reads the copies with the candidates: the same answers."""
    plant_notes(vine)
    vine.plant({"id": "notes/gamma", "type": "note", "title": "Gamma", "summary": "Gamma note.",
                "body": "# Gamma\n\n## Codes\n\nQX-1001 and qx-1001 again.\nThe code, once more: QX-1001.\n"})
    queries = [["QX-1001"], ["code"], ["special", "code"], ["no such thing"], ["co"]]
    with BodyIndex(vine.root, vine.catalog, sweep_seconds=HOUR) as index:
        kept = [sniff(index, terms, k=10) for terms in queries]
        assert index._copies is not None  # this small forest's copies are in memory
    monkeypatch.setattr("monkeyllm_core.read.body_index.COPIES_IN_MEMORY", 0)
    with BodyIndex(vine.root, vine.catalog, sweep_seconds=HOUR) as index:
        read = [sniff(index, terms, k=10) for terms in queries]
        assert index._copies is None
    assert read == kept
    assert [r["id"] for r in kept[0]["results"]] == ["notes/gamma", "notes/alpha"]
    assert kept[0]["results"][0]["match_count"] == 2
