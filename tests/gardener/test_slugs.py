from __future__ import annotations

import hashlib
import random
import re
import unicodedata

import pytest

from monkeyllm_gardener.slugs import (FileIds, _branch_prefix, _settle, _suffix_file_id, _with_extensions,
                                      assign_dir_ids, assign_ids, extension_slug, node_id_for, slugify,
                                      told_apart_by_extension)

SAFE_ID = re.compile(r"^[a-z0-9-]+(/[a-z0-9-]+)*(/_index)?$|^_index$")


def sha6(rel: str) -> str:
    return hashlib.sha1(rel.encode("utf-8")).hexdigest()[:6]


@pytest.mark.parametrize(
    ("name", "is_file", "expected"),
    [
        ("Meeting 2026-03.md", True, "meeting-2026-03"),
        ("Café Crème.md", True, "cafe-creme"),
        ("Ärger über Straße.txt", True, "arger-uber-strasse"),
        ("Q1 2023", False, "q1-2023"),
        ("report.tar.gz", True, "report-tar"),
        ("v1.2 notes", False, "v1-2-notes"),  # a folder keeps its dots as words
        ("--leading and trailing--.md", True, "leading-and-trailing"),
        ("....md", True, "md"),  # no stem: treated like a dot-file
        ("....md", True, "md"),  # no stem: treated like a dot-file
        ("Привет мир.md", True, "privet-mir"),
        (".env", True, "env"),
    ],
)
def test_slugify_vectors(name: str, is_file: bool, expected: str) -> None:
    assert slugify(name, is_file=is_file) == expected


def test_nfc_and_nfd_names_give_the_same_slug() -> None:
    name = "Résumé Équipe.md"
    nfc, nfd = unicodedata.normalize("NFC", name), unicodedata.normalize("NFD", name)
    assert nfc != nfd
    assert slugify(nfc, is_file=True) == slugify(nfd, is_file=True) == "resume-equipe"


@pytest.mark.parametrize(
    "name",
    [
        "$(rm -rf ~).md", "`whoami`.md", "a; ls | cat > x.md", "-rf.md", "--help.md", "it's \"quoted\".md",
        "100% done?.md", "#hashtag.md", "a&b<c>d.md", "../../etc/passwd", "C:\\Windows\\x.md", "~user.md",
        "name\nwith newline.md", "tab\there.md", "*glob*?.md", "{a,b}.md", "   .md", "🙂.md",
    ],
)
def test_hostile_names_become_safe_ids(name: str) -> None:
    node_id = node_id_for(name)
    assert SAFE_ID.match(node_id), node_id
    assert not node_id.startswith("-")
    assert ".." not in node_id


def test_segments_are_bounded_so_forest_file_names_fit() -> None:
    slug = slugify("word " * 200 + ".md", is_file=True)
    assert 0 < len(slug) <= 80
    assert not slug.endswith("-")


@pytest.mark.parametrize(
    ("rel", "is_dir", "expected"),
    [
        ("notes/Meeting 2026-03.md", False, "notes/meeting-2026-03"),
        ("notes/Q1 2023", True, "notes/q1-2023/_index"),
        ("", True, "_index"),
        ("_index.md", False, "index"),
        ("_meta/schema.md", False, "meta/schema"),
        ("_derived/x.md", False, "derived/x"),
    ],
)
def test_node_id_for(rel: str, is_dir: bool, expected: str) -> None:
    assert node_id_for(rel, is_dir=is_dir) == expected


def test_reserved_names_cannot_be_taken_by_a_file() -> None:
    ids = assign_ids(["_index.md", "_meta/schema.md", "_notes.md", "sub/_index.md"])
    for node_id in ids.values():
        assert not any(segment.startswith("_") for segment in node_id.split("/")), node_id


def test_colliding_files_with_the_same_extension_get_plain_slug_for_first_rel_and_sha_suffix_for_others() -> None:
    rels = ["report.md", "Report.md", "REPORT.md", "notes/a.md"]
    ids = assign_ids(rels)
    # "REPORT.md" < "Report.md" < "report.md" in plain str order
    assert ids["REPORT.md"] == "report"
    assert ids["Report.md"] == f"report-{sha6('Report.md')}"
    assert ids["report.md"] == f"report-{sha6('report.md')}"
    assert ids["notes/a.md"] == "notes/a"


def test_files_that_share_a_name_but_not_an_extension_are_told_apart_by_it() -> None:
    ids = assign_ids(["test.docx", "test.jpg", "test.JSON", "other/test.md", "Test.docx"])
    assert ids["test.jpg"] == "test-jpg" and ids["test.JSON"] == "test-json"
    # two .docx twins: the first in str order keeps the extension id, the other a hash on top
    assert ids["Test.docx"] == "test-docx"
    assert ids["test.docx"] == f"test-docx-{sha6('test.docx')}"
    assert ids["other/test.md"] == "other/test"  # another folder: no collision


def test_a_file_added_beside_adopted_namesakes_takes_its_extension() -> None:
    taken = {"test.docx": "test-docx", "test.jpg": "test-jpg"}
    ids = assign_ids(["test.docx", "test.jpg", "test.txt", "other.txt"], taken)
    assert ids["test.txt"] == "test-txt" and ids["other.txt"] == "other"


def test_a_file_whose_plain_id_was_taken_earlier_takes_its_extension() -> None:
    ids = assign_ids(["test.docx", "test.pdf"], {"test.docx": "test"})
    assert ids == {"test.docx": "test", "test.pdf": "test-pdf"}
    # and the extension id taken too: a hash, as before
    ids = assign_ids(["test.pdf"], {"test.docx": "test", "old.pdf": "test-pdf"})
    assert ids["test.pdf"] == f"test-pdf-{sha6('test.pdf')}"


def test_collisions_are_settled_the_same_whatever_the_order() -> None:
    rels = [
        "Report.md", "report.txt", "REPORT.md", "a/Note.md", "a/note.txt", "A/note.md",
        unicodedata.normalize("NFC", "café.md"), unicodedata.normalize("NFD", "café.md"), "cafe.md",
        "x.md", "x-" + sha6("X.md") + ".md", "X.md",
    ]
    expected = assign_ids(rels)
    rng = random.Random(7)
    for _ in range(25):
        shuffled = rels[:]
        rng.shuffle(shuffled)
        assert assign_ids(shuffled) == expected
    assert len(set(expected.values())) == len(rels)


def test_a_file_named_like_a_suffixed_id_keeps_its_plain_slug() -> None:
    squatter = f"x-{sha6('X.md')}.md"
    ids = assign_ids(["x.md", "X.md", squatter])
    assert ids[squatter] == f"x-{sha6('X.md')}"
    assert ids["X.md"] == "x"
    assert ids["x.md"] not in (ids[squatter], ids["X.md"])  # longer suffix, still unique
    assert ids["x.md"].startswith("x-")


def test_nfc_and_nfd_twins_both_get_ids() -> None:
    nfc, nfd = unicodedata.normalize("NFC", "Ré.md"), unicodedata.normalize("NFD", "Ré.md")
    ids = assign_ids([nfd, nfc])
    assert ids[min(nfc, nfd)] == "re"
    assert ids[max(nfc, nfd)] == f"re-{sha6(max(nfc, nfd))}"


def test_taken_ids_are_kept_and_never_reused() -> None:
    # An earlier adopt gave "report" to Report.md, which is now gone, and a custom id to b.md.
    taken = {"Report.md": "report", "b.md": "legacy/b-old"}
    ids = assign_ids(["report.txt", "b.md", "legacy/b-old.md"], taken)
    assert ids["b.md"] == "legacy/b-old"
    assert ids["report.txt"] == "report-txt"
    assert ids["legacy/b-old.md"] == "legacy/b-old-md"


def test_colliding_directories_get_suffixed_and_files_follow_their_directory() -> None:
    dirs = ["q1-2023", "Q1 2023", "Q1 2023/sub"]
    dir_ids = assign_dir_ids(dirs)
    assert dir_ids["Q1 2023"] == "q1-2023/_index"
    assert dir_ids["q1-2023"] == f"q1-2023-{sha6('q1-2023')}/_index"
    assert dir_ids["Q1 2023/sub"] == "q1-2023/sub/_index"
    ids = assign_ids(["q1-2023/a.md", "Q1 2023/a.md"], dir_ids=dir_ids)
    assert ids == {"Q1 2023/a.md": "q1-2023/a", "q1-2023/a.md": f"q1-2023-{sha6('q1-2023')}/a"}


def test_directory_ids_do_not_depend_on_order_and_keep_taken() -> None:
    dirs = ["B", "b", "b/C", "b/c", "B/c", "x y/z"]
    expected = assign_dir_ids(dirs)
    assert assign_dir_ids(list(reversed(dirs))) == expected
    assert set(expected) == set(dirs) | {"x y"}  # missing parents are filled in
    kept = assign_dir_ids(dirs, {"b": "bee/_index"})
    assert kept["b"] == "bee/_index"
    assert kept["b/C"] == "bee/c/_index"
    assert kept["B"] == "b/_index"  # "b" now lives elsewhere, so "B" gets the plain slug


def settled_all_at_once(rels: list[str], taken: dict[str, str], dir_ids: dict[str, str]) -> dict[str, str]:
    """The reference: ``assign_ids`` as it was before it settled a folder at a time
    (``8ba0ffe``), every file's candidate against every taken id in one settle."""
    dir_ids = dict(dir_ids)
    used = set(taken.values())

    def branch_prefix(rel: str) -> str:
        parent = rel.rpartition("/")[0]
        if parent and parent not in dir_ids:
            dir_ids.update(assign_dir_ids([parent], dir_ids))
        return _branch_prefix(dir_ids[parent]) if parent else ""

    def natural(rel: str) -> str:
        prefix, slug = branch_prefix(rel), slugify(rel.rpartition("/")[2], is_file=True)
        return f"{prefix}/{slug}" if prefix else slug

    assigned = {rel: taken[rel] for rel in rels if rel in taken}
    candidates = {rel: natural(rel) for rel in rels if rel not in taken}
    new_prefixes = {candidate.rpartition("/")[0] for candidate in candidates.values()}
    adopted: dict[str, set[str]] = {}
    for rel in taken:
        if branch_prefix(rel) in new_prefixes:
            adopted.setdefault(natural(rel), set()).add(extension_slug(rel.rpartition("/")[2]))
    assigned.update(_settle(_with_extensions(candidates, used, adopted), used, _suffix_file_id))
    return assigned


def test_one_folder_at_a_time_gives_every_file_the_id_one_call_over_all_gives() -> None:
    # a reconcile settles a folder's ids when it reaches the folder (FileIds.of); the
    # exports here are made of every kind of tie: case, NFC/NFD, extensions, a squatter
    # on a suffixed id, colliding folders, ids taken by files still there or gone
    rng = random.Random(11)
    names = ["Report.md", "report.md", "report.txt", "Report.docx", "a.md", "A.md", f"x-{sha6('d1/X.md')}.md",
             "X.md", "x.md", "con.txt", unicodedata.normalize("NFC", "Ré.md"), unicodedata.normalize("NFD", "Ré.md"),
             "q1.csv", "Q1.xlsx", "notes", ".env", "data.json", "data.csv"]
    folders = ["", "d1", "D1", "d1/sub", "d-1", "Q1 2023", "q1-2023", "x/y", "x"]

    def export(low: int, high: int) -> list[str]:
        return sorted({"/".join(filter(None, (rng.choice(folders), rng.choice(names))))
                       for _ in range(rng.randint(low, high))})

    told_apart = 0
    for _ in range(400):
        earlier = export(0, 12)
        earlier_dirs = assign_dir_ids(sorted({r.rpartition("/")[0] for r in earlier} - {""}))
        taken = {r: i for r, i in assign_ids(earlier, dir_ids=earlier_dirs).items() if rng.random() < 0.7}
        rels = export(1, 30)
        dirs = sorted({r.rpartition("/")[0] for r in rels} - {""})
        dir_ids = assign_dir_ids(dirs, {d: i for d, i in earlier_dirs.items() if rng.random() < 0.5})
        everything = settled_all_at_once(rels, taken, dir_ids)
        assert assign_ids(rels, taken, dir_ids=dir_ids) == everything
        partial = {d: i for d, i in dir_ids.items() if rng.random() < 0.5}  # the rest derived
        assert assign_ids(rels, taken, dir_ids=partial) == settled_all_at_once(rels, taken, partial)
        ids = FileIds(taken, dir_ids)
        by_folder: dict[str, list[str]] = {}
        for rel in rels:
            by_folder.setdefault(rel.rpartition("/")[0], []).append(rel)
        one_at_a_time = {}
        for folder_rels in by_folder.values():
            one_at_a_time.update(ids.of(folder_rels))
        assert one_at_a_time == everything
        assert ids.of(rels) == everything  # asked again, the same answers
        new_ids = [everything[r] for r in rels if r not in taken]
        assert len(set(new_ids)) == len(new_ids) and not set(new_ids) & set(taken.values())
        told_apart += sum(told_apart_by_extension(everything[r], r) for r in rels)
    assert told_apart > 100  # the ties really happened


def test_one_folder_at_a_time_needs_the_folders_of_new_files() -> None:
    # derived on the fly, a missing folder's id would depend on which folder came first
    ids = FileIds({}, assign_dir_ids(["a"]))
    assert ids.of(["a/x.md"]) == {"a/x.md": "a/x"}
    with pytest.raises(ValueError, match="ZZ/b.md: its folder has no branch id"):
        ids.of(["ZZ/b.md"])


def test_files_in_unlisted_directories_still_get_ids() -> None:
    ids = assign_ids(["deep/er/file.md"], dir_ids={})
    assert ids == {"deep/er/file.md": "deep/er/file"}


RESERVED = ["con", "prn", "aux", "nul", "com1", "com9", "lpt1", "lpt9"]


@pytest.mark.parametrize("device", RESERVED)
@pytest.mark.parametrize("spelling", [str.lower, str.upper, str.title])
def test_windows_device_names_never_become_a_file_or_folder_name(device: str, spelling) -> None:
    name = spelling(device)
    file_id = assign_ids([f"{name}.txt"])[f"{name}.txt"]
    assert file_id == f"{device}-name"
    branch_id = assign_dir_ids([name])[name]
    assert branch_id == f"{device}-name/_index"


@pytest.mark.parametrize("ordinary", ["console", "auxiliary", "null", "com10", "lpt", "com"])
def test_names_that_only_contain_a_device_name_keep_their_slug(ordinary: str) -> None:
    assert slugify(f"{ordinary}.md", is_file=True) == ordinary


def test_a_reserved_name_and_its_suffixed_twin_get_distinct_ids() -> None:
    ids = assign_ids(["CON.md", "con-name.md"])
    assert len(set(ids.values())) == 2


def test_an_id_told_apart_by_its_extension_is_recognised_and_no_other() -> None:
    ids = assign_ids(["test.docx", "test.jpg", "Test.jpg", "plain.md", "photo-jpg.jpg"])
    assert [rel for rel, node_id in sorted(ids.items()) if told_apart_by_extension(node_id, rel)] == [
        "Test.jpg", "test.docx", "test.jpg"]
    assert not told_apart_by_extension("test-ab12cd", "test.ab")  # a hash that begins like an extension
