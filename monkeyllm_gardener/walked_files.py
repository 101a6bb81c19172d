"""The walk's files, kept compact: a file costs its name and 16 bytes, not a tuple
of two path strings.

A reconcile needs every walked file before it plants the first one (ids are settled
among a folder's files, vanished nodes are marked first, the progress bar shows a
total), and an adopt keeps that list from the walk to the last plant, in the writer
and in every worker forked from it. As ``SourceFile`` tuples it cost about 400 bytes
a file, 20 MB for a 50,000-file export; here one folder's names are one string and
sizes and mtimes two arrays, and ``SourceFile``s are made again when read, one folder
at a time.
"""
from __future__ import annotations

import bisect
from array import array
from pathlib import Path
from typing import Iterator, NamedTuple, Sequence, overload

# a file name never holds NUL (POSIX and Windows both refuse it), so it can join them
_SEP = "\0"


class SourceFile(NamedTuple):
    """One walked file. A tuple, its ``Path`` made when asked for: a sync walks
    every file and needs only ``rel``, ``size`` and ``mtime`` of the unchanged ones
    (a ``Path`` and a frozen dataclass per file were a third of a walk's time)."""

    rel: str  # posix path relative to the source root, exactly as named on disk
    location: str  # absolute path (for a followed file link: the link itself)
    size: int  # bytes (of the link's target for a followed link)
    mtime: float  # seconds since the epoch (of the link's target for a followed link)

    @property
    def path(self) -> Path:
        return Path(self.location)


class _Folder(NamedTuple):
    rel: str  # the folder, relative to the source root ("" for the root itself)
    names: str  # its files' names in walk order, each followed by _SEP
    sizes: array  # bytes, one per file
    mtimes: array  # seconds since the epoch, one per file (doubles: exactly the walk's floats)


class WalkedFiles(Sequence[SourceFile]):
    """The walked files in walk order: a read-only sequence of ``SourceFile`` that the
    walk fills with ``add``. The files of one folder are consecutive (the walk lists a
    folder's files before it enters its subfolders), so they share one ``_Folder``."""

    def __init__(self, root: str) -> None:
        self._base = root if root.endswith("/") else root + "/"  # root + "/" + rel is the file's location
        self._folders: list[_Folder] = []
        self._starts: list[int] = []  # the walk index of each folder's first file
        self._by_rel: dict[str, list[int]] = {}  # folder rel -> its chunks in _folders
        self._open: tuple[str, list[str], array, array] | None = None  # the folder being filled
        self._count = 0

    # -- filled by the walk ------------------------------------------------------------
    def add(self, rel: str, size: int, mtime: float) -> None:
        """Append the file ``rel`` (posix, relative to the root) to the walk order."""
        folder, _, name = rel.rpartition("/")
        if self._open is None or self._open[0] != folder:
            self._seal()
            self._open = (folder, [], array("q"), array("d"))
        self._open[1].append(name)
        self._open[2].append(size)
        self._open[3].append(mtime)
        self._count += 1

    def _seal(self) -> None:
        """Fold the folder being filled into its compact form."""
        if self._open is None:
            return
        folder, names, sizes, mtimes = self._open
        self._open = None
        self._by_rel.setdefault(folder, []).append(len(self._folders))
        self._starts.append(self._count - len(names))
        self._folders.append(_Folder(folder, _SEP.join(names) + _SEP, sizes, mtimes))

    # -- read ----------------------------------------------------------------------------
    def by_folder(self) -> Iterator[tuple[str, list[SourceFile]]]:
        """``(folder rel, its files)`` in walk order, one folder's files made at a time."""
        self._seal()
        for folder in self._folders:
            yield folder.rel, self._files_of(folder)

    def names(self) -> Iterator[str]:
        """Each file's name (its rel's last segment), in walk order, no ``SourceFile`` made."""
        self._seal()
        for folder in self._folders:
            yield from folder.names.split(_SEP)[:-1]

    def _files_of(self, folder: _Folder) -> list[SourceFile]:
        prefix = f"{folder.rel}/" if folder.rel else ""
        base = self._base + prefix
        names = folder.names.split(_SEP)
        return [SourceFile(prefix + name, base + name, size, mtime)
                for name, size, mtime in zip(names, folder.sizes, folder.mtimes)]

    def __iter__(self) -> Iterator[SourceFile]:
        for _, files in self.by_folder():
            yield from files

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> SourceFile: ...
    @overload
    def __getitem__(self, index: slice) -> list[SourceFile]: ...

    def __getitem__(self, index: int | slice) -> SourceFile | list[SourceFile]:
        # makes the whole folder's SourceFiles for one of them: iterate, don't index, in a loop
        if isinstance(index, slice):
            return list(self)[index]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("walked file index out of range")
        self._seal()
        chunk = bisect.bisect_right(self._starts, index) - 1
        return self._files_of(self._folders[chunk])[index - self._starts[chunk]]

    def has_rel(self, rel: str) -> bool:
        """Whether ``rel`` (a posix path relative to the root, as ``SourceFile.rel``)
        was walked as a file."""
        if not rel or rel.startswith("/") or _SEP in rel:
            return False
        self._seal()
        folder, _, name = rel.rpartition("/")
        needle = name + _SEP
        for chunk in self._by_rel.get(folder, ()):
            names = self._folders[chunk].names
            # a name is one between separators: match at the start, or right after one
            if names.startswith(needle) or _SEP + needle in names:
                return True
        return False
