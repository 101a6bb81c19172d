"""The forest's text files as one ``Vine`` sees them.

Reads go through a cache checked against each file's stat: a sync or a reindex
reads thousands of passports, and a branch index is read again by every write
beneath it. Writes replace a file atomically (``atomic``) and record the text they
wrote, so the next read of it costs one ``stat``. The cache holds the most recently
used texts up to ``CACHE_CHARS`` characters: an adopt writes every node of the
forest through one ``Vine``, and keeping each text it wrote made the writer grow
by the forest's size (430 MiB at 50,000 files); the branch indexes each write
reads again are the recently used ones. Each replacement leaves a hidden
spare copy beside the file; the spares are dropped at the next checkpoint, never
later than the journal that names their files, so a crash never leaves one that
the next recovery would not clean up.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import VineError
from .atomic import remove_spare, write_atomically

# the texts kept, in characters: the branch indexes a session writes in, read again by
# each write beneath them (a node's own text is rarely read again in the session)
CACHE_CHARS = 2 * 2**20


class TextFiles:
    def __init__(self, root: Path, *, cache_chars: int = CACHE_CHARS) -> None:
        self.root = root
        self._cache_chars = cache_chars  # the most text the cache keeps
        self._prefix = f"{os.fspath(root)}/"  # rel paths joined as strings: a write is a few syscalls
        self._cache: dict[str, tuple[int, int, str]] = {}  # rel -> (mtime_ns, size, text), least recent first
        self._cached_chars = 0
        self._spares: set[str] = set()  # files whose spare copy goes at the next checkpoint

    def read(self, rel: str) -> str | None:
        """The file's text, or None when there is no such file. (A rebuild reads its
        files elsewhere, ``forest.parallel_read``, so the whole forest's text is never
        held here.)"""
        path = self._prefix + rel
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None
        cached = self._cache.get(rel)
        if cached and cached[0] == st.st_mtime_ns and cached[1] == st.st_size:
            self._cache[rel] = self._cache.pop(rel)  # the most recent now
            return cached[2]
        try:
            with open(path, encoding="utf-8") as handle:  # universal newlines, as Path.read_text
                text = handle.read()
        except UnicodeDecodeError as exc:
            raise VineError("E_FRONTMATTER", f"{rel}: not UTF-8 text (byte {exc.start})",
                            "Re-save the file as UTF-8.") from None
        self._remember(rel, st, text)
        return text

    def write(self, rel: str, text: str, data: bytes | None = None) -> None:
        """Replace the file atomically with ``text`` (``data``: its UTF-8 bytes, when
        the caller has them already)."""
        st = write_atomically(self._prefix + rel, text.encode("utf-8") if data is None else data)
        self._spares.add(rel)
        self._remember(rel, st, text)

    def forget(self, rel: str) -> None:
        """The file was changed behind the cache's back (a write undone, a recovery)."""
        dropped = self._cache.pop(rel, None)
        if dropped is not None:
            self._cached_chars -= len(dropped[2])

    def _remember(self, rel: str, st: os.stat_result, text: str) -> None:
        """Cache ``text`` as the file's, the least recently used texts going past the bound."""
        self.forget(rel)
        self._cache[rel] = (st.st_mtime_ns, st.st_size, text)
        self._cached_chars += len(text)
        while self._cached_chars > self._cache_chars and len(self._cache) > 1:
            oldest = next(iter(self._cache))
            self._cached_chars -= len(self._cache.pop(oldest)[2])

    @property
    def cached_chars(self) -> int:
        """How many characters of text the cache holds now."""
        return self._cached_chars

    def drop_spare(self, rel: str) -> None:
        """The spare copy of one file goes now (a write that was undone)."""
        remove_spare(self.root / rel)
        self._spares.discard(rel)

    def drop_spares(self) -> None:
        """At a checkpoint: the spare copies of every file written since the last one go."""
        for rel in self._spares:
            remove_spare(self.root / rel)
        self._spares.clear()
