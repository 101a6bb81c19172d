"""Node ids from source paths: safe, stable, unique and deterministic.

An id is the node's path in the forest without ``.md`` (FOREST-FORMAT.md), so every
segment must be safe as a file name on every OS, in a shell, in a URL and in YAML.
A segment slug holds only ``[a-z0-9-]``; ids join segments with ``/``, and the only
``_`` ever produced is the ``_index`` of a branch id. Because a slug never starts
with ``_`` (``_notes.md`` becomes ``notes``), a source file can never take a name
the forest reserves (``_index``, ``_meta/...``, ``_derived``, ``_assets``).

Collisions are settled by rules that do not depend on the order paths are given in:

- Files that share a name but not an extension (``test.docx``, ``test.jpg``,
  ``test.json``) each take their extension as a suffix (``test-docx``, ``test-jpg``,
  ``test-json``), so a person can tell them apart by id; so does a file whose plain
  slug an earlier adopt already gave to another file (``test.pdf`` added later
  becomes ``test-pdf``). Their titles name the file too (``pipeline``).
- Any remaining tie (``Report.md`` and ``report.md``, ``Q1 2023/`` and ``q1-2023/``, a
  name in NFC and the same name in NFD): among the paths that want the same id, the
  one whose relative path sorts first (plain ``str`` sort) gets it, and every other
  one gets ``-`` plus the first 6 hex digits of ``sha1(rel path, utf-8)``.

Ids recorded by an earlier adopt (``taken``) are never changed and never reused.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import Callable, Iterable, Mapping, Sequence

MAX_SEGMENT_LENGTH = 80  # leaves room for "-abcdef" and ".md"/".db" within a 255-byte name
UNTITLED = "untitled"
INDEX = "_index"

# Letters NFKD does not decompose into ASCII.
_FOLDS = {
    "ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "đ": "d", "ð": "d", "þ": "th",
    "ł": "l", "ı": "i", "ħ": "h", "ŀ": "l", "ŋ": "ng", "ſ": "s",
}
# A small transliteration so Cyrillic and Greek names keep a readable id instead of
# all collapsing to "untitled".
_CYRILLIC = dict(zip(
    "абвгдеёжзийклмнопрстуфхцчшщъыьэюяєіїґў",
    ["a", "b", "v", "g", "d", "e", "e", "zh", "z", "i", "i", "k", "l", "m", "n", "o", "p", "r",
     "s", "t", "u", "f", "h", "ts", "ch", "sh", "shch", "", "y", "", "e", "yu", "ya", "ye", "i",
     "yi", "g", "u"],
))
_GREEK = dict(zip(
    "αβγδεζηθικλμνξοπρσςτυφχψω",
    ["a", "v", "g", "d", "e", "z", "i", "th", "i", "k", "l", "m", "n", "x", "o", "p", "r", "s",
     "s", "t", "y", "f", "ch", "ps", "o"],
))
_TRANSLATE = str.maketrans({**_FOLDS, **_CYRILLIC, **_GREEK})
_NON_SLUG = re.compile(r"[^a-z0-9]+")
# Device names Windows reserves whatever the extension ("con.md", "aux/" cannot be
# checked out there): such a slug gets a suffix so the forest opens on every OS.
WINDOWS_RESERVED = frozenset(
    {"con", "prn", "aux", "nul", *(f"com{n}" for n in range(1, 10)), *(f"lpt{n}" for n in range(1, 10))}
)
RESERVED_SUFFIX = "-name"


def split_extension(name: str) -> str:
    """``name`` without its last extension; a dot-file (``.env``) keeps its name."""
    stem, dot, _ = name.rpartition(".")
    return stem if dot and stem.strip(".") else name


def slugify(name: str, *, is_file: bool = False) -> str:
    """Slug of one path segment: accents folded, lowercase, ``[a-z0-9-]`` only.

    ``is_file`` drops the extension first (``Meeting 2026-03.md`` -> ``meeting-2026-03``).
    NFC and NFD spellings of a name give the same slug. Never empty: a name with
    nothing sluggable becomes ``untitled``. At most ``MAX_SEGMENT_LENGTH`` characters,
    cut at a hyphen when there is one. A Windows device name (``con``, ``aux``,
    ``nul``, ``com1``...) gets ``-name`` appended (``CON.txt`` -> ``con-name``).
    """
    if is_file:
        name = split_extension(name)
    # Transliterate before and after decomposition: "ї" has its own entry, while an
    # accented Greek vowel only matches its table entry once the accent is split off.
    text = unicodedata.normalize("NFC", name.lower()).translate(_TRANSLATE)
    text = unicodedata.normalize("NFKD", text).translate(_TRANSLATE)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _NON_SLUG.sub("-", text.lower()).strip("-")
    if len(slug) > MAX_SEGMENT_LENGTH:
        cut = slug[:MAX_SEGMENT_LENGTH]
        slug = (cut.rsplit("-", 1)[0] if "-" in cut[MAX_SEGMENT_LENGTH // 2:] else cut).strip("-")
    if slug in WINDOWS_RESERVED:
        slug += RESERVED_SUFFIX
    return slug or UNTITLED


def node_id_for(rel: str, is_dir: bool = False) -> str:
    """The natural id of a source path, before collisions are settled.

    ``notes/Meeting 2026-03.md`` -> ``notes/meeting-2026-03``; a directory ``notes/Q1``
    -> ``notes/q1/_index``; the source root (``""``) -> ``_index``.
    """
    parts = [p for p in rel.strip("/").split("/") if p]
    if is_dir:
        return "/".join([slugify(p) for p in parts] + [INDEX])
    if not parts:
        raise ValueError("a file needs a non-empty relative path")
    return "/".join([slugify(p) for p in parts[:-1]] + [slugify(parts[-1], is_file=True)])


def collision_suffix(rel: str, length: int = 6) -> str:
    return hashlib.sha1(rel.encode("utf-8", "surrogatepass")).hexdigest()[:length]


def _parent(rel: str) -> str:
    return rel.rpartition("/")[0]


def _branch_prefix(branch_id: str) -> str:
    """``a/b/_index`` -> ``a/b``; ``_index`` -> ``""``."""
    return branch_id[: -len(INDEX)].rstrip("/")


def extension_slug(name: str) -> str:
    """``test.DOCX`` -> ``docx``; ``""`` for a name without an extension (``.env``, ``README``)."""
    if split_extension(name) == name:
        return ""
    return _NON_SLUG.sub("", name.rpartition(".")[2].lower())[:10]


def told_apart_by_extension(node_id: str, rel: str) -> bool:
    """True when ``node_id`` carries ``rel``'s extension because a namesake shares its
    name (``test.jpg`` -> ``test-jpg``, or ``test-jpg-<hash>``): its title then names
    the file too (``pipeline``)."""
    name = rel.rpartition("/")[2]
    ext = extension_slug(name)
    told_apart = f"{slugify(name, is_file=True)}-{ext}"
    last = node_id.rsplit("/", 1)[-1]
    return bool(ext) and (last == told_apart or last.startswith(told_apart + "-"))


def _with_extensions(candidates: Mapping[str, str], used: set[str],
                     adopted: Mapping[str, set[str]]) -> dict[str, str]:
    """Each file's preferred id: its extension appended when files that share its
    name (new ones, or ``adopted`` ones: natural id -> their extensions) differ in
    extension, or when its plain id is already taken."""
    groups: dict[str, list[str]] = {}
    for rel, candidate in candidates.items():
        groups.setdefault(candidate, []).append(rel)
    preferred = dict(candidates)
    for candidate, rels in groups.items():
        extensions = {extension_slug(rel.rpartition("/")[2]) for rel in rels} | adopted.get(candidate, set())
        if len(extensions) > 1 or candidate in used:
            for rel in rels:
                ext = extension_slug(rel.rpartition("/")[2])
                if ext:
                    preferred[rel] = f"{candidate}-{ext}"
    return preferred


def _settle(candidates: Mapping[str, str], used: set[str], suffixed: Callable[[str, str, int], str]) -> dict[str, str]:
    """Give each rel its candidate id or a suffixed one; see the module docstring.

    ``candidates`` maps rel -> natural id; ``used`` holds ids no one may take (and is
    updated). Deterministic: winners are chosen by sorted rel within each group, and
    suffixes are settled in sorted rel order after every plain winner is fixed, so a
    file literally named like another's suffixed id still keeps its plain slug.
    """
    groups: dict[str, list[str]] = {}
    for rel, candidate in candidates.items():
        groups.setdefault(candidate, []).append(rel)
    assigned: dict[str, str] = {}
    losers: list[str] = []
    for candidate in sorted(groups):
        rels = sorted(groups[candidate])
        if candidate in used:
            losers.extend(rels)
            continue
        assigned[rels[0]] = candidate
        used.add(candidate)
        losers.extend(rels[1:])
    for rel in sorted(losers):
        length = 6
        while True:
            new_id = suffixed(candidates[rel], rel, length)
            if new_id not in used:
                break
            length += 2  # a 40-hex sha1 collision is not a practical concern
        assigned[rel] = new_id
        used.add(new_id)
    return assigned


def _suffix_file_id(candidate: str, rel: str, length: int) -> str:
    return f"{candidate}-{collision_suffix(rel, length)}"


def _suffix_branch_id(candidate: str, rel: str, length: int) -> str:
    prefix = _branch_prefix(candidate)
    return f"{prefix}-{collision_suffix(rel, length)}/{INDEX}"


def assign_dir_ids(dirs: Iterable[str], taken_dirs: Mapping[str, str] | None = None) -> dict[str, str]:
    """Map each source directory (posix rel, no trailing ``/``) to its branch id.

    Branch ids end in ``/_index`` (``Q1 2023`` -> ``q1-2023/_index``). A directory sits
    under its parent's (possibly suffixed) slug path. ``taken_dirs`` (rel -> branch id
    from an earlier adopt) are kept and never reused. Parents missing from ``dirs``
    are added, so the mapping is always complete.
    """
    taken_dirs = dict(taken_dirs or {})
    all_dirs: set[str] = set()
    for rel in dirs:
        rel = rel.strip("/")
        while rel:
            all_dirs.add(rel)
            rel = _parent(rel)
    used = set(taken_dirs.values())
    assigned: dict[str, str] = {"": INDEX}
    by_depth: dict[int, list[str]] = {}
    for rel in all_dirs:
        by_depth.setdefault(rel.count("/"), []).append(rel)
    for depth in sorted(by_depth):
        candidates: dict[str, str] = {}
        for rel in by_depth[depth]:
            if rel in taken_dirs:
                assigned[rel] = taken_dirs[rel]
                continue
            prefix = _branch_prefix(assigned[_parent(rel)])
            slug = slugify(rel.rpartition("/")[2])
            candidates[rel] = f"{prefix}/{slug}/{INDEX}" if prefix else f"{slug}/{INDEX}"
        assigned.update(_settle(candidates, used, _suffix_branch_id))
    del assigned[""]
    return assigned


def assign_ids(
    rels: Sequence[str],
    taken: Mapping[str, str] | None = None,
    *,
    dir_ids: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Map each source file (posix rel) to a unique node id.

    ``taken`` (rel -> id from an earlier adopt) are kept as they are and no other
    file may take them. A file's id is built under its directory's branch path from
    ``dir_ids`` (the result of ``assign_dir_ids``; pass it so file ids agree with the
    branches when directories collide); without it the directories are assigned here.
    """
    taken = dict(taken or {})
    if dir_ids is None:
        dir_ids = assign_dir_ids({_parent(r) for r in rels if _parent(r)})
    else:
        # a directory the caller did not list is derived the natural way, in the order
        # the files name it (before any taken file's: FileIds derives those)
        dir_ids = dict(dir_ids)
        for rel in rels:
            parent = _parent(rel)
            if rel not in taken and parent and parent not in dir_ids:
                dir_ids.update(assign_dir_ids([parent], dir_ids))
    return FileIds(taken, dir_ids).of(rels)


class FileIds:
    """``assign_ids`` one folder at a time: ``of(rels)`` gives files the ids that one
    ``assign_ids`` call over every file of the source gives them, so a reconcile can
    settle a folder's ids when it reaches the folder instead of holding every file's.

    A file's id lies under its folder's branch prefix (a slug has no ``/``, and a
    suffix or an extension only lengthens the slug), and each folder has its own
    prefix, so files of two folders never compete for an id: a folder's files settle
    among themselves, against the taken ids under their prefix alone. ``dir_ids`` must
    hold the folder of every new file (``assign_ids`` derives the missing ones first),
    so ``of`` keeps nothing between calls: asked twice, it answers twice the same."""

    def __init__(self, taken: Mapping[str, str], dir_ids: Mapping[str, str]) -> None:
        self._taken = taken
        self._dir_ids = dict(dir_ids)
        self._used: dict[str, set[str]] = {}  # id prefix -> the taken ids under it
        for node_id in taken.values():
            self._used.setdefault(node_id.rpartition("/")[0], set()).add(node_id)
        # branch prefix -> the taken files of that folder: a new file shares a natural
        # id with an adopted one only there (their extensions then tell them apart)
        self._adopted: dict[str, list[str]] = {}
        for rel in taken:
            self._adopted.setdefault(self._branch_prefix(rel), []).append(rel)

    def _branch_prefix(self, rel: str) -> str:
        parent = _parent(rel)
        if parent and parent not in self._dir_ids:
            # a directory the caller did not list (a taken file's, gone): derive it the natural way
            self._dir_ids.update(assign_dir_ids([parent], self._dir_ids))
        return _branch_prefix(self._dir_ids[parent]) if parent else ""

    def _natural(self, rel: str) -> str:
        prefix = self._branch_prefix(rel)
        slug = slugify(rel.rpartition("/")[2], is_file=True)
        return f"{prefix}/{slug}" if prefix else slug

    def of(self, rels: Iterable[str]) -> dict[str, str]:
        """The id of each of ``rels`` (usually one folder's files)."""
        assigned: dict[str, str] = {}
        by_prefix: dict[str, dict[str, str]] = {}  # id prefix -> {rel: natural id}
        for rel in rels:
            if rel in self._taken:
                assigned[rel] = self._taken[rel]
            else:
                if _parent(rel) and _parent(rel) not in self._dir_ids:
                    # derived here, its id would depend on which folder was asked for first
                    raise ValueError(f"{rel}: its folder has no branch id; pass dir_ids that hold it")
                candidate = self._natural(rel)
                by_prefix.setdefault(candidate.rpartition("/")[0], {})[rel] = candidate
        for prefix, candidates in by_prefix.items():
            used = set(self._used.get(prefix, ()))
            adopted: dict[str, set[str]] = {}
            for rel in self._adopted.get(prefix, ()):
                adopted.setdefault(self._natural(rel), set()).add(extension_slug(rel.rpartition("/")[2]))
            assigned.update(_settle(_with_extensions(candidates, used, adopted), used, _suffix_file_id))
        return assigned
