"""Walk a source folder: the list of directories and files the Gardener will adopt.

The walk needs no forest and converts nothing. It decides four things:

- what is noise (skipped silently: VCS folders, caches, OS junk, lock and temp files,
  a SQLite database's ``-wal``/``-shm``/``-journal`` beside it (a file with SQLite's
  header, or empty), which are part of that database, plus the ``ignore`` globs of the Gardener config). A database's
  ``mtime`` is the later of its own and its ``-wal``'s: an application that keeps
  it open commits into the ``-wal`` only, and sync must see those rows;
- what is set aside on purpose (``WalkResult.skipped``, with a reason, shown by
  ``--verbose`` and in ``--json``): nested forests and hidden entries (a name
  starting with ``.``: ``.obsidian/``, ``.trash/``, ``.env``), which are tool
  settings and deleted notes, not documents;
- which entries are files a user would expect to see adopted but that cannot be:
  ``WalkResult.errors`` (something is broken: a link loop, a dangling link, an
  unreadable file or folder, a name that is not UTF-8, a file that vanished) and
  ``WalkResult.unsupported`` (something the walk will not follow: a link to a folder
  or outside the source, a FIFO). The pipeline puts them in the report's lists of
  the same names, so no file disappears from the report;
- the order, which is deterministic: at every level entries are sorted by their
  NFC-normalised name (plain ``str`` sort) and directories are walked depth-first,
  so the same tree gives the same list on every machine and file system. Within a
  folder, its files come first (sorted), then each subfolder's tree in turn; ``dirs``
  lists parents before children in the same order.

Names are kept exactly as they are on disk (``rel`` is the on-disk name, original
case and original Unicode normalisation, joined with ``/``) so that ``source_path``
always leads back to the file. NFC/NFD differences are handled where they matter:
in the sort key here and in the slugs (``slugs.slugify`` gives both forms one slug).

Links. Directory links are never followed (a link loop cannot hang the walk, and a
link cannot pull a foreign tree into the forest): ``unsupported``. A file link is
followed only when its target is a regular file inside the source that the walk
would not prune (not under ``.git``, an ignored path or a nested forest); ``path`` is
then the link and size/mtime are the target's. A link pointing outside or to a pruned
path is ``unsupported``; a dangling link and a link loop are ``errors``. Special files
(FIFOs, sockets, devices) are ``unsupported`` and never opened: reading a FIFO blocks.
A name that is not valid UTF-8 is an error (it could not be written to YAML or git).
Zero-byte files are included: converters decide what an empty file becomes.

Ignore globs (``ignore``): ``fnmatch`` patterns, case-sensitive, matched against the
whole relative path (posix) and against each of its segments. A match on a
directory prunes it whole. So ``drafts`` ignores every folder or file named
``drafts`` anywhere, ``*.bak`` every ``.bak`` file, ``notes/old/*`` everything
directly inside ``notes/old`` (``*`` also crosses ``/`` in the whole-path match).
Ignored entries are the user's own choice, so they are not recorded in ``skipped``.

The forest and the source. A forest found inside the source (a folder holding
``_meta/schema.md`` and ``_index.md``) is another forest: pruned whole and recorded.
The forest being adopted INTO is different: ``forest == source``, a forest inside
the source, or a source inside the forest raise ``WalkError`` (the CLI reports it as
a usage error): a forest that ingests its own passports feeds on itself. A source
that is itself a forest is refused for the same reason.
"""
from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
import unicodedata
from pathlib import Path
from typing import NamedTuple, Sequence

from .walked_files import SourceFile, WalkedFiles  # SourceFile: imported from here, where it was made

# Skipped silently, matched case-insensitively against one name (Windows and macOS
# write these names in varying case).
NOISE_DIR_NAMES = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules", "_derived", "_assets"})
NOISE_FILE_NAMES = frozenset({".ds_store", "thumbs.db", "desktop.ini", ".vine.lock"})
NOISE_FILE_GLOBS = ("~$*", "*.tmp", "*.swp", "*.lock", ".~lock.*#", "*~")
_NOISE_FILE_RE = re.compile("|".join(fnmatch.translate(g) for g in NOISE_FILE_GLOBS))
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")
_SQLITE_MAGIC = b"SQLite format 3\x00"


class WalkError(Exception):
    """The source cannot be walked as asked. ``str()`` is one line naming the folder;
    ``hint`` says how to fix it."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class WalkResult(NamedTuple):
    dirs: list[str]  # parents before children; the root is not listed
    files: WalkedFiles  # in walk order; compact (walked_files)
    skipped: list[tuple[str, str]]  # (rel, reason): set aside on purpose
    errors: list[tuple[str, str]]  # (rel, reason): broken entries
    unsupported: list[tuple[str, str]]  # (rel, reason): not followed


def is_forest_dir(path: Path | str) -> bool:
    """A forest is a folder holding both ``_meta/schema.md`` and ``_index.md``."""
    return os.path.isfile(os.path.join(path, "_meta", "schema.md")) and os.path.isfile(
        os.path.join(path, "_index.md")
    )


def is_hidden_name(name: str) -> bool:
    """A dot-name (``.obsidian``, ``.env``): set aside and recorded in ``skipped``."""
    return name.startswith(".")


def is_noise_name(name: str, *, is_dir: bool) -> bool:
    """True for names the walk skips silently (see the module docstring)."""
    lowered = name.lower()
    if is_dir:
        return lowered in NOISE_DIR_NAMES
    return lowered in NOISE_FILE_NAMES or _NOISE_FILE_RE.match(lowered) is not None


def compile_ignore(patterns: Sequence[str]) -> re.Pattern[str] | None:
    """One regex for all user ignore globs (None when there are none)."""
    cleaned = [p.strip().strip("/") for p in patterns]
    cleaned = [p for p in cleaned if p]
    if not cleaned:
        return None
    return re.compile("|".join(fnmatch.translate(p) for p in cleaned))


def is_ignored(rel: str, patterns: Sequence[str] | re.Pattern[str] | None) -> bool:
    """True when a user ignore glob matches the whole ``rel`` or one of its segments."""
    regex = patterns if isinstance(patterns, re.Pattern) or patterns is None else compile_ignore(patterns)
    if regex is None:
        return False
    return regex.match(rel) is not None or any(regex.match(part) for part in rel.split("/"))


def _inside(path: str, root: str) -> bool:
    """``path`` equals or lies under ``root`` (both already resolved)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _check_forest_placement(source_real: str, forest: Path | None) -> None:
    if forest is None:
        return
    forest_real = os.path.realpath(forest)
    if forest_real == source_real:
        raise WalkError(
            f"source {source_real} is the forest itself",
            "adopt a separate export folder into the forest, not the forest into itself",
        )
    if _inside(forest_real, source_real):
        raise WalkError(
            f"source {source_real} contains the forest {forest_real}",
            "move the forest outside the source folder, or adopt a subfolder that does not hold it",
        )
    if _inside(source_real, forest_real):
        raise WalkError(
            f"source {source_real} lies inside the forest {forest_real}",
            "keep export folders outside the forest; the forest's own files are already nodes",
        )


def _sort_key(entry: os.DirEntry[str]) -> tuple[str, str]:
    # NFC so that a name written NFD (macOS) sorts like the same name written NFC;
    # the raw name breaks ties so two distinct on-disk names never compare equal.
    return (unicodedata.normalize("NFC", entry.name), entry.name)


def walk_source(source: Path, *, forest: Path | None = None, ignore: Sequence[str] = ()) -> WalkResult:
    """Walk ``source`` (see the module docstring for every rule).

    Raises ``WalkError`` when the source is not a readable directory, is itself a
    forest, or overlaps the ``forest`` being adopted into.
    """
    source = Path(source)
    if not source.is_dir():
        raise WalkError(f"source {source} is not a directory", "name an existing export folder")
    source_real = os.path.realpath(source)
    _check_forest_placement(source_real, forest)
    if is_forest_dir(source):
        raise WalkError(
            f"source {source} is a forest",
            "a forest's passports are curated nodes, not documents; adopt the export folder it was built from",
        )
    root = Path(os.path.abspath(source))
    ignore_regex = compile_ignore(ignore)
    result = WalkResult(dirs=[], files=WalkedFiles(str(root)), skipped=[], errors=[], unsupported=[])
    # An explicit stack (not recursion) so a very deep tree cannot hit the recursion limit.
    # Each item is (absolute dir path, rel prefix + "/"); subfolders are pushed in
    # reverse so they pop in sorted order: depth-first and sorted.
    stack: list[tuple[str, str]] = [(str(root), "")]
    while stack:
        dir_path, prefix = stack.pop()
        try:
            with os.scandir(dir_path) as scan:
                entries = sorted(scan, key=_sort_key)
        except OSError as exc:
            if not prefix:
                raise WalkError(f"source {source} cannot be read ({exc.strerror or exc})",
                                "check the folder's permissions") from None
            result.errors.append((prefix.rstrip("/"), f"unreadable folder, its files were not adopted "
                                                      f"({exc.strerror or exc}): check its permissions"))
            continue
        if prefix:
            result.dirs.append(prefix.rstrip("/"))
        subdirs: list[tuple[str, str]] = []
        names = {entry.name for entry in entries}
        for entry in entries:
            rel = f"{prefix}{entry.name}"
            if _is_sqlite_side_file(entry.name, names, dir_path):
                continue
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError as exc:
                result.errors.append((rel, f"cannot be read ({exc.strerror or exc})"))
                continue
            if is_noise_name(entry.name, is_dir=is_dir):
                continue
            if is_ignored(rel, ignore_regex):
                continue
            if not _is_utf8_name(entry.name):
                # Undecodable bytes survive as surrogates and would break every YAML
                # and git write later; say so now, naming the fix.
                result.errors.append((rel.encode("utf-8", "backslashreplace").decode("utf-8"),
                                      "name is not valid UTF-8: rename it"))
                continue
            if is_hidden_name(entry.name):
                what = "folder" if is_dir else "file"
                result.skipped.append((rel, f"hidden {what} (name starts with '.'): not adopted; "
                                            "rename it to adopt it"))
                continue
            if is_link:
                _visit_link(entry, rel, source_real, ignore_regex, result)
            elif is_dir:
                if is_forest_dir(entry.path):
                    result.skipped.append((rel, "nested forest pruned (its passports are another forest's nodes)"))
                    continue
                subdirs.append((entry.path, rel + "/"))
            else:
                _visit_file(entry, rel, result,
                            has_wal=entry.name + "-wal" in names and is_sqlite_main_file(entry.path))
        for sub_path, sub_prefix in reversed(subdirs):
            stack.append((sub_path, sub_prefix))
    return result


def _is_sqlite_side_file(name: str, names: set[str], dir_path: str) -> bool:
    """``crm.db-wal`` beside the database ``crm.db``: SQLite's own file, read with the
    database. Beside anything else (the folder ``2024`` and ``2024-journal``, a note
    and ``notes.md-wal``) it is an ordinary file, adopted or reported like any other."""
    if not name.endswith(SQLITE_SIDE_FILES):  # the common case: one C call
        return False
    return any(name.endswith(suffix) and name[: -len(suffix)] in names
               and is_sqlite_main_file(os.path.join(dir_path, name[: -len(suffix)]))
               for suffix in SQLITE_SIDE_FILES)


def is_sqlite_main_file(path: str) -> bool:
    """A regular file with SQLite's header, or empty (a new WAL database whose first
    pages are still in its ``-wal``). Never opens a FIFO."""
    try:
        info = os.stat(path, follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode):
            return False
        if info.st_size == 0:
            return True
        with open(path, "rb") as handle:
            return handle.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError:
        return False


def _is_utf8_name(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _visit_file(entry: os.DirEntry[str], rel: str, result: WalkResult, *, has_wal: bool = False) -> None:
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError as exc:  # deleted between listing and stat
        result.errors.append((rel, f"vanished during the walk ({exc.strerror or exc}): run sync again"))
        return
    if not stat.S_ISREG(info.st_mode):
        # A FIFO would block the converter forever; devices and sockets are not documents.
        result.unsupported.append((rel, "not a regular file (fifo, socket or device)"))
        return
    mtime = info.st_mtime
    if has_wal:
        try:
            mtime = max(mtime, os.stat(entry.path + "-wal").st_mtime)
        except OSError:  # checkpointed away meanwhile: the main file holds every row
            pass
    result.files.add(rel, info.st_size, mtime)  # entry.path, its location, is the root joined with rel


def _visit_link(
    entry: os.DirEntry[str], rel: str, source_real: str, ignore_regex: re.Pattern[str] | None, result: WalkResult
) -> None:
    target_real = os.path.realpath(entry.path)
    try:
        info = os.stat(entry.path)  # follows the link; ELOOP / ENOENT land below
    except OSError as exc:
        reason = "symlink loop" if exc.errno == errno.ELOOP else "dangling link"
        result.errors.append((rel, f"{reason}: not followed; fix or remove the link"))
        return
    if stat.S_ISDIR(info.st_mode):
        result.unsupported.append((rel, "link to a directory: not followed; adopt the folder it points to"))
        return
    if not _inside(target_real, source_real):
        result.unsupported.append((rel, "link pointing outside the source: not followed"))
        return
    if not stat.S_ISREG(info.st_mode):
        result.unsupported.append((rel, "link to something that is not a regular file: not followed"))
        return
    if _is_skipped_target(target_real, source_real, ignore_regex):
        # A link must not smuggle in what the walk prunes (.git/config, a nested forest).
        result.unsupported.append((rel, "link to a skipped or ignored path: not followed"))
        return
    result.files.add(rel, info.st_size, info.st_mtime)


def _is_skipped_target(target_real: str, source_real: str, ignore_regex: re.Pattern[str] | None) -> bool:
    target_rel = os.path.relpath(target_real, source_real).replace(os.sep, "/")
    parts = target_rel.split("/")
    if any(is_noise_name(part, is_dir=True) for part in parts[:-1]) or is_noise_name(parts[-1], is_dir=False):
        return True
    if any(is_hidden_name(part) for part in parts):
        return True
    if is_ignored(target_rel, ignore_regex):
        return True
    folder = os.path.dirname(target_real)
    while _inside(folder, source_real) and folder != source_real:
        if is_forest_dir(folder):
            return True
        folder = os.path.dirname(folder)
    return False
