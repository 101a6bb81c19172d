"""The writer's view of the forest's text files: what it wrote reads back at once,
an edit behind its back is seen, and the texts it keeps are bounded however many
files one ``Vine`` writes (an adopt writes the whole forest through one)."""
from __future__ import annotations

import os

from monkeyllm_core.writing.files import TextFiles


def test_a_written_file_reads_back_and_an_edit_behind_the_cache_is_seen(tmp_path):
    files = TextFiles(tmp_path)
    files.write("note.md", "first\n")
    assert files.read("note.md") == "first\n"
    (tmp_path / "note.md").write_text("edited by hand, longer\n", encoding="utf-8")
    assert files.read("note.md") == "edited by hand, longer\n"
    assert files.read("missing.md") is None


def test_the_cache_keeps_the_recently_used_texts_within_its_bound(tmp_path):
    files = TextFiles(tmp_path, cache_chars=10_000)
    files.write("_index.md", "branch index\n" * 10)
    for n in range(500):  # 500 nodes of 1,000 characters: 50 times what the cache may hold
        files.write(f"node-{n}.md", f"{n:04d}" + "x" * 995 + "\n")
        assert files.read("_index.md") == "branch index\n" * 10  # read again by each write, as upkeep does
    assert files.cached_chars <= 10_000
    # every file still reads back right, kept or not
    for n in (0, 250, 499):
        assert files.read(f"node-{n}.md") == f"{n:04d}" + "x" * 995 + "\n"
    # the index is still cached: other bytes of the same size under the same mtime are not read
    index = tmp_path / "_index.md"
    seen = os.stat(index)
    index.write_text("BRANCH INDEX\n" * 10, encoding="utf-8")
    os.utime(index, ns=(seen.st_atime_ns, seen.st_mtime_ns))
    assert files.read("_index.md") == "branch index\n" * 10
    os.utime(index, ns=(1, 1))  # changed behind its back: read from disk again
    assert files.read("_index.md") == "BRANCH INDEX\n" * 10
    assert files.cached_chars <= 10_000


def test_a_forgotten_file_gives_back_its_share_of_the_bound(tmp_path):
    files = TextFiles(tmp_path)
    files.write("a.md", "a" * 100)
    files.write("b.md", "b" * 50)
    assert files.cached_chars == 150
    files.forget("a.md")
    assert files.cached_chars == 50
    files.write("b.md", "c" * 10)  # rewritten: its old text no longer counts
    assert files.cached_chars == 10
