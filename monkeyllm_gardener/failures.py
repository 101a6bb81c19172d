"""What failed last time: a file that failed and has not changed since is listed
again without being converted again.

A failure has no node, so the forest (the sync state of every planted file) cannot
remember it. This memory lives in ``_derived/gardener-failures.json``: derived and
disposable like the catalog (deleting it costs one more conversion per failed
file, nothing else). Each entry is keyed by the file's ``origin`` URI and holds its
size and mtime when it failed, the report list it went to (``errors`` or
``unsupported``) and the line. An entry counts only while the file's size and mtime
are unchanged AND the converters are the ones that failed on it (``fingerprint``:
installing a plugin or an extra, or changing a command hook or its bounds, retries
every file).
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable, NamedTuple

MEMORY_PATH = "_derived/gardener-failures.json"
NOT_RETRIED = " (unchanged since it failed: not converted again until the file changes)"


class Failure(NamedTuple):
    list_name: str  # "errors" | "unsupported"
    line: str  # the report line without the "rel: " prefix


def converters_fingerprint(converters: Any, spec: Any) -> str:
    """A digest of what could convert a file: every registered converter (name,
    plugin, priority, availability), every command hook template and the hooks'
    time and output bounds (``spec``: the host's ``HostSpec``)."""
    described = sorted(
        (c.name, c.plugin, str(c.source), list(c.extensions), c.priority, c.available) for c in converters
    )
    hooks = [sorted(list(map(list, spec.command_converters))), spec.command_timeout, spec.command_output_limit_mb]
    text = json.dumps([described, hooks], default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class FailureMemory:
    """Load once per run, ``recall``/``remember``/``forget`` per file, ``save`` at the end.

    ``fingerprint`` is asked only when an entry is first needed: a run whose files
    are all unchanged, and have no entry, never needs the converters' fingerprint
    (nor the plugin host that makes it)."""

    def __init__(self, forest: Path, fingerprint: Callable[[], str]) -> None:
        self.path = Path(forest) / MEMORY_PATH
        self._fingerprint_of = fingerprint
        self._stored: dict[str, Any] = {}
        self._checked: dict[str, dict[str, Any]] | None = None  # the entries, once the fingerprint was compared
        self._dirty = False
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return  # none yet, or damaged: start afresh (it is only a cache)
        if isinstance(data, dict) and isinstance(data.get("files"), dict):
            self._stored = data

    @property
    def fingerprint(self) -> str:
        return self._fingerprint_of()

    @property
    def _entries(self) -> dict[str, dict[str, Any]]:
        if self._checked is None:
            same = bool(self._stored) and self._stored.get("fingerprint") == self.fingerprint
            self._checked = self._stored["files"] if same else {}
        return self._checked

    def recall(self, origin: str, size: int, mtime: float) -> Failure | None:
        entry = self._entries.get(origin)
        if not isinstance(entry, dict) or entry.get("size") != size or entry.get("mtime") != round(mtime, 3):
            return None
        if entry.get("list") not in ("errors", "unsupported") or not isinstance(entry.get("line"), str):
            return None
        return Failure(list_name=entry["list"], line=entry["line"])

    def remember(self, origin: str, size: int, mtime: float, failure: Failure) -> None:
        self._entries[origin] = {"size": size, "mtime": round(mtime, 3), "list": failure.list_name,
                                 "line": failure.line}
        self._dirty = True

    def forget(self, origin: str) -> None:
        if self._entries.pop(origin, None) is not None:
            self._dirty = True

    def keep_only(self, prefix: str, still_there: Callable[[str], bool]) -> None:
        """Forget the files under ``prefix`` (one source) for which ``still_there(origin)`` is false."""
        known = self._checked if self._checked is not None else self._stored.get("files", {})
        if not any(origin.startswith(prefix) for origin in known):
            return  # nothing remembered under this source: the fingerprint is not needed
        gone = [origin for origin in self._entries if origin.startswith(prefix) and not still_there(origin)]
        for origin in gone:
            self.forget(origin)

    @property
    def unsaved(self) -> bool:
        """Whether ``save`` would write: something was remembered or forgotten."""
        return self._dirty

    def save(self) -> None:
        """Write the memory atomically (a kill leaves the old file or the new one)."""
        if not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps({"fingerprint": self.fingerprint, "files": self._entries}, ensure_ascii=False),
                       encoding="utf-8")
        os.replace(tmp, self.path)
        self._dirty = False
