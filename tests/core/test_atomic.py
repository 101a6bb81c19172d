"""Files are replaced atomically, and the hidden spare copies never outlive a checkpoint."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from monkeyllm_core import Vine
from monkeyllm_core.writing.atomic import spare_path, write_atomically


def test_a_replaced_file_holds_the_new_bytes_and_its_inode_is_reused(tmp_path: Path) -> None:
    path = tmp_path / "index.md"
    write_atomically(path, b"first")
    write_atomically(path, b"second")
    assert path.read_bytes() == b"second"
    if sys.platform.startswith("linux"):
        # RENAME_EXCHANGE left the old content behind, to be overwritten by the next write
        assert spare_path(path).read_bytes() == b"first"
        spare_inode = spare_path(path).stat().st_ino
        write_atomically(path, b"third")
        assert path.read_bytes() == b"third" and path.stat().st_ino == spare_inode


def test_a_shorter_text_leaves_no_tail_and_the_stat_returned_is_the_files(tmp_path: Path) -> None:
    path = tmp_path / "index.md"
    write_atomically(path, b"a long first version\n" * 100)
    write_atomically(path, b"x" * 5000)
    returned = write_atomically(path, "short é\n".encode())  # overwrites the spare of 2,100 bytes in place
    assert path.read_bytes() == "short é\n".encode()
    after = path.stat()
    assert (returned.st_ino, returned.st_size, returned.st_mtime_ns) == (after.st_ino, after.st_size, after.st_mtime_ns)


def test_a_write_into_a_missing_folder_makes_it_with_the_usual_modes(tmp_path: Path) -> None:
    path = tmp_path / "new" / "deeper" / "_index.md"
    write_atomically(path, b"# Branch\n")
    assert path.read_bytes() == b"# Branch\n"
    (tmp_path / "made.md").write_bytes(b"")
    (tmp_path / "made").mkdir()
    assert path.stat().st_mode == (tmp_path / "made.md").stat().st_mode
    assert path.parent.stat().st_mode == (tmp_path / "made").stat().st_mode


def test_no_spare_file_is_left_after_close(brain) -> None:
    with Vine(brain.root) as vine:
        vine.plant({"id": "notes/_index", "title": "Notes", "summary": "Notes of the team."})
        for i in range(5):
            vine.plant({"id": f"notes/n{i}", "type": "note", "title": f"N{i}", "summary": f"Note {i}."})
    assert list(brain.root.rglob("*.vine-tmp")) == []
    brain.assert_clean()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RENAME_EXCHANGE is Linux-only")
def test_spares_go_at_each_checkpoint(brain) -> None:
    vine = Vine(brain.root)
    try:
        with vine.bulk(seconds=3600):  # checkpoints only when asked
            vine.plant({"id": "notes/_index", "title": "Notes", "summary": "Notes of the team."})
            vine.plant({"id": "notes/a", "type": "note", "title": "A", "summary": "Note a."})
            assert list(brain.root.rglob("*.vine-tmp"))  # the index files were swapped, not recreated
            vine.flush()
            assert list(brain.root.rglob("*.vine-tmp")) == []
    finally:
        vine.close()
