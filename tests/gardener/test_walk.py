from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest

from monkeyllm_gardener.walk import WalkError, walk_source


def make(root: Path, rel: str, content: bytes = b"x") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


def make_forest(root: Path) -> Path:
    make(root, "_index.md", b"---\nid: _index\n---\n")
    make(root, "_meta/schema.md", b"---\nid: _meta/schema\n---\n")
    return root


def rels(result) -> list[str]:
    return [f.rel for f in result.files]


def skipped_reasons(result) -> dict[str, str]:
    return dict(result.skipped)


def error_reasons(result) -> dict[str, str]:
    return dict(result.errors)


def unsupported_reasons(result) -> dict[str, str]:
    return dict(result.unsupported)


@pytest.mark.parametrize(
    "junk",
    [
        ".git/config", "__pycache__/m.cpython-311.pyc", "node_modules/x/index.js", "_derived/catalog.db",
        "_assets/a.png", ".DS_Store", "Thumbs.db", "thumbs.DB", "desktop.ini", "~$budget.xlsx",
        "scratch.tmp", ".notes.md.swp", "poetry.lock", ".~lock.report.odt#", "draft.md~", ".vine.lock",
        "sub/.DS_Store", ".hg/store", ".svn/entries",
    ],
)
def test_os_and_tool_junk_is_skipped_silently(tmp_path: Path, junk: str) -> None:
    make(tmp_path, "keep.md")
    make(tmp_path, junk)
    result = walk_source(tmp_path)
    assert rels(result) == ["keep.md"]
    assert all(junk.split("/")[0] not in rel for rel, _ in result.skipped)


def test_order_is_sorted_depth_first_files_before_subfolders(tmp_path: Path) -> None:
    for rel in ["b.md", "a/z.md", "a/b/c.md", "a/a.md", "c/x.txt", "A.md"]:
        make(tmp_path, rel)
    result = walk_source(tmp_path)
    assert rels(result) == ["A.md", "b.md", "a/a.md", "a/z.md", "a/b/c.md", "c/x.txt"]
    assert result.dirs == ["a", "a/b", "c"]


def test_same_tree_created_in_another_order_walks_identically(tmp_path: Path) -> None:
    names = [f"d{i % 7}/f{i:03d}.md" for i in range(60)]
    first, second = tmp_path / "one", tmp_path / "two"
    for rel in names:
        make(first, rel)
    for rel in reversed(names):
        make(second, rel)
    assert rels(walk_source(first)) == rels(walk_source(second))
    assert walk_source(first).dirs == walk_source(second).dirs


def test_files_carry_size_mtime_and_absolute_path(tmp_path: Path) -> None:
    path = make(tmp_path, "notes/a.md", b"hello")
    os.utime(path, (1_700_000_000.5, 1_700_000_000.5))
    (found,) = walk_source(tmp_path).files
    assert found.rel == "notes/a.md"
    assert found.path == path.absolute()
    assert found.size == 5
    assert found.mtime == pytest.approx(1_700_000_000.5)


def test_zero_byte_files_are_kept(tmp_path: Path) -> None:
    for name in ["empty.md", "empty.csv", "empty.docx", "empty.png"]:
        make(tmp_path, name, b"")
    result = walk_source(tmp_path)
    assert rels(result) == ["empty.csv", "empty.docx", "empty.md", "empty.png"]
    assert all(f.size == 0 for f in result.files)


def test_nested_forest_is_pruned_whole_and_reported(tmp_path: Path) -> None:
    make(tmp_path, "notes/a.md")
    make_forest(tmp_path / "old-brain")
    make(tmp_path, "old-brain/policies/expense.md")
    result = walk_source(tmp_path)
    assert rels(result) == ["notes/a.md"]
    assert "old-brain" not in result.dirs
    assert "nested forest" in skipped_reasons(result)["old-brain"]


def test_folder_with_only_an_index_is_not_a_forest(tmp_path: Path) -> None:
    make(tmp_path, "site/_index.md")
    assert rels(walk_source(tmp_path)) == ["site/_index.md"]


@pytest.mark.parametrize("where", ["same", "inside-source", "source-inside-forest"])
def test_source_overlapping_the_forest_is_refused(tmp_path: Path, where: str) -> None:
    if where == "same":
        source = forest = tmp_path
    elif where == "inside-source":
        source, forest = tmp_path, tmp_path / "brain"
    else:
        forest, source = tmp_path, tmp_path / "exports"
    make(source, "a.md")
    make_forest(forest)
    with pytest.raises(WalkError) as caught:
        walk_source(source, forest=forest)
    assert "forest" in str(caught.value)
    assert "\n" not in str(caught.value)
    assert caught.value.hint


def test_forest_next_to_the_source_is_fine(tmp_path: Path) -> None:
    make(tmp_path, "exports/a.md")
    make_forest(tmp_path / "brain")
    assert rels(walk_source(tmp_path / "exports", forest=tmp_path / "brain")) == ["a.md"]


def test_source_that_is_itself_a_forest_is_refused(tmp_path: Path) -> None:
    make_forest(tmp_path)
    with pytest.raises(WalkError, match="is a forest"):
        walk_source(tmp_path)


def test_missing_source_is_refused(tmp_path: Path) -> None:
    with pytest.raises(WalkError, match="not a directory"):
        walk_source(tmp_path / "nope")


def test_directory_symlink_is_not_followed_and_reported(tmp_path: Path) -> None:
    make(tmp_path, "real/a.md")
    (tmp_path / "alias").symlink_to(tmp_path / "real", target_is_directory=True)
    result = walk_source(tmp_path)
    assert rels(result) == ["real/a.md"]
    assert "directory" in unsupported_reasons(result)["alias"]


def test_symlink_loop_does_not_hang_and_is_reported(tmp_path: Path) -> None:
    make(tmp_path, "a.md")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up").symlink_to(tmp_path, target_is_directory=True)
    result = walk_source(tmp_path)
    assert rels(result) == ["a.md"]
    assert "loop" in error_reasons(result)["loop"]
    assert "directory" in unsupported_reasons(result)["sub/up"]
    assert result.skipped == []


def test_dangling_link_is_reported(tmp_path: Path) -> None:
    make(tmp_path, "a.md")
    (tmp_path / "gone.md").symlink_to(tmp_path / "deleted.md")
    result = walk_source(tmp_path)
    assert rels(result) == ["a.md"]
    assert "dangling" in error_reasons(result)["gone.md"]


def test_file_link_outside_the_source_is_not_followed(tmp_path: Path) -> None:
    secret = make(tmp_path, "outside/secret.txt", b"password")
    make(tmp_path, "src/a.md")
    (tmp_path / "src" / "secret.txt").symlink_to(secret)
    result = walk_source(tmp_path / "src")
    assert rels(result) == ["a.md"]
    assert "outside the source" in unsupported_reasons(result)["secret.txt"]


def test_file_link_inside_the_source_is_followed(tmp_path: Path) -> None:
    make(tmp_path, "docs/real.md", b"12345")
    (tmp_path / "shortcut.md").symlink_to(tmp_path / "docs" / "real.md")
    result = walk_source(tmp_path)
    assert rels(result) == ["shortcut.md", "docs/real.md"]
    assert result.files[0].size == 5
    assert result.files[0].path.read_bytes() == b"12345"


@pytest.mark.parametrize("target", [".git/config", "old-brain/notes/x.md", "drafts/d.md"])
def test_file_link_into_a_pruned_path_is_not_followed(tmp_path: Path, target: str) -> None:
    make_forest(tmp_path / "old-brain")
    make(tmp_path, target, b"secret")
    (tmp_path / "shortcut.md").symlink_to(tmp_path / target)
    result = walk_source(tmp_path, ignore=["drafts"])
    assert "shortcut.md" not in rels(result)
    assert "skipped or ignored" in unsupported_reasons(result)["shortcut.md"]


def test_fifo_is_reported_not_read(tmp_path: Path) -> None:
    make(tmp_path, "a.md")
    os.mkfifo(tmp_path / "pipe.md")
    result = walk_source(tmp_path)  # reading a FIFO would block forever
    assert rels(result) == ["a.md"]
    assert "not a regular file" in unsupported_reasons(result)["pipe.md"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every directory")
def test_unreadable_directory_is_reported_and_walk_continues(tmp_path: Path) -> None:
    make(tmp_path, "locked/a.md")
    make(tmp_path, "open/b.md")
    (tmp_path / "locked").chmod(0)
    try:
        result = walk_source(tmp_path)
    finally:
        (tmp_path / "locked").chmod(0o755)
    assert rels(result) == ["open/b.md"]
    assert "unreadable" in error_reasons(result)["locked"]


def test_unicode_names_keep_their_on_disk_form_and_sort_as_nfc(tmp_path: Path) -> None:
    nfd = unicodedata.normalize("NFD", "é.md")  # as macOS writes it: "e" + U+0301
    for name in (nfd, "e.md", "f.md"):
        make(tmp_path, name)
    result = walk_source(tmp_path)
    # NFC "é" (U+00E9) sorts after "f"; the raw NFD name would sort between "e" and "f".
    assert rels(result) == ["e.md", "f.md", nfd]  # the exact on-disk name, so source_path leads back
    assert result.files[2].path.exists()


@pytest.mark.parametrize(
    "name", ["my notes #1.md", "100% done?.md", "it's \"quoted\".md", "-rf.md", "$(touch pwned); ls.md", "a b`c`.md"]
)
def test_odd_names_are_walked_as_they_are(tmp_path: Path, name: str) -> None:
    make(tmp_path, name)
    assert rels(walk_source(tmp_path)) == [name]


def test_name_that_is_not_utf8_is_reported(tmp_path: Path) -> None:
    make(tmp_path, "ok.md")
    bad = os.fsencode(tmp_path) + b"/caf\xe9.md"
    with open(bad, "wb") as handle:
        handle.write(b"x")
    result = walk_source(tmp_path)
    assert rels(result) == ["ok.md"]
    assert any("not valid UTF-8" in reason for _, reason in result.errors)


@pytest.mark.parametrize(
    ("patterns", "expected"),
    [
        (["drafts"], ["keep.md", "notes/a.md", "old.bak"]),  # a segment anywhere
        (["*.bak"], ["keep.md", "notes/a.md", "notes/drafts/d.md"]),
        (["notes/drafts/*"], ["keep.md", "notes/a.md", "old.bak"]),  # drafts dir itself stays
        (["notes"], ["keep.md", "old.bak"]),  # a directory match prunes it whole
        (["NOTES"], ["keep.md", "notes/a.md", "notes/drafts/d.md", "old.bak"]),  # case-sensitive
        ([], ["keep.md", "notes/a.md", "notes/drafts/d.md", "old.bak"]),
    ],
)
def test_ignore_globs_match_the_path_or_any_segment(tmp_path: Path, patterns: list[str], expected: list[str]) -> None:
    for rel in ["keep.md", "old.bak", "notes/a.md", "notes/drafts/d.md"]:
        make(tmp_path, rel)
    result = walk_source(tmp_path, ignore=patterns)
    assert sorted(rels(result)) == sorted(expected)
    assert result.skipped == []  # the user's own ignores are not reported


def test_five_thousand_files_walk_whole_and_in_order(tmp_path: Path) -> None:
    # speed is measured in bench/ (the no-change sync rows), not asserted here
    for d in range(50):
        folder = tmp_path / f"dir{d:02d}" / "sub"
        folder.mkdir(parents=True)
        for f in range(100):
            (folder / f"note {f:03d}.md").write_bytes(b"")
    result = walk_source(tmp_path, ignore=["*.bak", "drafts"])
    assert len(result.files) == 5000
    assert rels(result)[:2] == ["dir00/sub/note 000.md", "dir00/sub/note 001.md"]
    assert rels(result)[-1] == "dir49/sub/note 099.md"


def test_the_walked_files_are_kept_compact_and_read_back_exactly(tmp_path: Path) -> None:
    # the walk keeps one string of names and two arrays per folder (walked_files): every
    # file reads back as the SourceFile the walk saw, by index, in order and by folder
    names = ["b.md", "a b.txt", "é\u0301.md", "x\ny.md", "z"]
    for folder in ("", "one", "one/two", "three"):
        for name in names:
            make(tmp_path / folder if folder else tmp_path, name, name.encode())
    os.utime(tmp_path / "one" / "z", (0, 1_700_000_000.123456789))
    result = walk_source(tmp_path)
    seen = []
    for dirpath, _, files in os.walk(tmp_path):
        for name in files:
            path = os.path.join(dirpath, name)
            seen.append((os.path.relpath(path, tmp_path).replace(os.sep, "/"), path, os.stat(path)))
    assert len(result.files) == len(seen) == 20
    by_rel = {f.rel: f for f in result.files}
    for rel, path, info in seen:
        f = by_rel[rel]
        assert (f.location, f.size, f.mtime) == (path, info.st_size, info.st_mtime)  # the float, exactly
        assert result.files.has_rel(rel)
    assert list(result.files) == [result.files[i] for i in range(20)] == result.files[:]
    assert result.files[-1] == result.files[19]
    assert list(result.files.names()) == [f.rel.rpartition("/")[2] for f in result.files]
    assert [(folder, [f.rel for f in files]) for folder, files in result.files.by_folder()] == [
        (folder, [f.rel for f in result.files if f.rel.rpartition("/")[0] == folder])
        for folder in ("", "one", "one/two", "three")]
    for absent in ("one/b", "b", "one/two/b.md/x", "four/b.md", "one/.md", "", "\0", "/b.md", "one//b.md"):
        assert not result.files.has_rel(absent)
    assert result.files[0] in result.files  # a Sequence of SourceFile: ``in`` takes one
    with pytest.raises(IndexError):
        result.files[20]


# --------------------------------------------------------------- the bundled fixtures

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def test_fixture_export_walks_to_its_documents_without_the_junk() -> None:
    result = walk_source(FIXTURES / "export")
    assert rels(result) == [
        "contracts/master-agreement.pdf",
        "data/customers.json",
        "docs/refund-policy.docx",
        "finance/broken.xlsx",
        "finance/budget-2026.xlsx",
        "finance/crm.db",
        "finance/invoices-2026-q1.csv",
        "media/standup.wav",
        "media/whiteboard-pricing.png",
        "notes/falcon-launch.md",
        "notes/phone-log.txt",
        "notes/archive/2025-plans.md",
        "notes/meetings/2026-01-kickoff.md",
        "notes/meetings/2026-03-board.md",
    ]
    assert result.skipped == []
    assert sum(f.size for f in result.files) < 200_000


def test_fixture_generator_is_deterministic(tmp_path: Path) -> None:
    import subprocess
    import sys

    out = tmp_path / "export"
    subprocess.run([sys.executable, str(FIXTURES / "make_fixtures.py"), str(out)], check=True, capture_output=True)
    committed = {f.rel: f.path.read_bytes() for f in walk_source(FIXTURES / "export").files}
    regenerated = {f.rel: f.path.read_bytes() for f in walk_source(out).files}
    assert regenerated == committed


def test_fixture_pdf_tool_converts_the_contract(tmp_path: Path) -> None:
    import subprocess
    import sys

    output = tmp_path / "out.md"
    tool = FIXTURES / "tools" / "pdf2md.py"
    subprocess.run([sys.executable, str(tool), str(FIXTURES / "export/contracts/master-agreement.pdf"), str(output)],
                   check=True, capture_output=True)
    markdown = output.read_text(encoding="utf-8")
    assert markdown.startswith("# Master Services Agreement\n\n")
    assert "Acme Corp and Northwind, effective 2026-01-01" in markdown
    failed = subprocess.run([sys.executable, str(tool), str(FIXTURES / "export/finance/broken.xlsx"), str(output)],
                            capture_output=True, text=True)
    assert failed.returncode == 1 and "not a PDF" in failed.stderr


@pytest.mark.parametrize("hidden", [".hidden.md", ".obsidian/workspace.json", "notes/.trash/old.md", ".env"])
def test_hidden_entries_are_set_aside_and_recorded(tmp_path: Path, hidden: str) -> None:
    make(tmp_path, "a.md")
    make(tmp_path, hidden)
    result = walk_source(tmp_path)
    assert [r for r in rels(result) if r != "a.md" and not r.startswith("notes/")] == []
    top = hidden.split("/")[0] if not hidden.startswith("notes/") else "notes/.trash"
    assert "hidden" in skipped_reasons(result)[top]
    assert result.errors == [] and result.unsupported == []


def test_a_file_link_to_a_hidden_file_is_not_followed(tmp_path: Path) -> None:
    make(tmp_path, ".private/keys.md", b"secret")
    (tmp_path / "keys.md").symlink_to(tmp_path / ".private" / "keys.md")
    result = walk_source(tmp_path)
    assert rels(result) == []
    assert "skipped or ignored" in unsupported_reasons(result)["keys.md"]


def test_a_databases_sqlite_side_files_are_part_of_it(tmp_path: Path) -> None:
    make(tmp_path, "crm.db", b"SQLite format 3\x00" + bytes(84))
    for name in ("crm.db-wal", "crm.db-shm", "old.sqlite-journal", "notes.md-wal"):
        make(tmp_path, name)
    result = walk_source(tmp_path)
    # old.sqlite-journal and notes.md-wal have no database beside them: ordinary files
    assert rels(result) == ["crm.db", "notes.md-wal", "old.sqlite-journal"]
    assert result.skipped == [] and result.errors == [] and result.unsupported == []
