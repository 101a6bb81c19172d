"""The writer's write-ahead journal, ``vine-journal`` in the git dir.

Before a write touches a file or a payload it appends one JSON line naming them;
a checkpoint (the moment git's branch ref moves) empties the journal. So after a
killed process the journal lists exactly what may differ from HEAD, and the next
writable open puts those paths back (``recovery.recover``). It lives in the git dir so it
is never committed and survives the deletion of ``_derived/``: the per-worktree one
(``gitrepo.py``), since each worktree of a repository is a forest of its own.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

JOURNAL = ".git/vine-journal"  # where it is when .git is a directory


class Journal:
    def __init__(self, root: Path, git_dir: Path | None = None) -> None:
        self.path = root / JOURNAL if git_dir is None else git_dir / "vine-journal"
        self._fh: IO[str] | None = None  # kept open for the session: one open per write is costly

    def append(self, entry: dict[str, Any]) -> int:
        """Append an entry; returns its offset (to forget it if the write is undone).
        Flushed to the OS, not fsynced: it guards against a killed process."""
        if self._fh is None:
            self._fh = open(self.path, "a", encoding="utf-8")
        offset = self._fh.tell()
        self._fh.write(json.dumps(entry) + "\n")
        self._fh.flush()
        return offset

    def truncate(self, offset: int = 0) -> None:
        """Forget every entry from ``offset`` on (0: all, after a checkpoint)."""
        if self._fh is not None:
            self._fh.truncate(offset)
            self._fh.seek(offset)
        elif self.path.exists():
            with open(self.path, "r+", encoding="utf-8") as fh:
                fh.truncate(offset)

    def entries(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue  # a half-written last line: the files it named were never touched
        return out

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
