"""What ``_meta/gardener.yaml`` held when it was last parsed, so a command that
writes nothing (a no-change sync) reads it without importing PyYAML.

``_derived/gardener-config.json`` keeps the parsed mapping beside the file's
stat: size, mtime and ctime in nanoseconds, inode. It answers only while that
stat is unchanged, and only for a file that was already old when it was parsed:
an edit in the same clock tick as the parse could leave the stat as it was (git's
"racily clean" index entries), so a file changed less than ``SETTLED_SECONDS``
before its parse is parsed again next time. Only a mapping that JSON carries
unchanged is kept (a YAML date or a non-string key is parsed every time). Like the
catalog it is a cache: deleting it costs one parse, and a damaged one is ignored.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

CONFIG_MEMORY_PATH = "_derived/gardener-config.json"
SETTLED_SECONDS = 2.0


def stat_key(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def recall(forest: Path, st: os.stat_result) -> dict[str, Any] | None:
    """The mapping parsed from the file whose stat is ``st``, if it is remembered."""
    try:
        memory = json.loads((forest / CONFIG_MEMORY_PATH).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(memory, dict) or memory.get("stat") != stat_key(st) or not isinstance(memory.get("data"), dict):
        return None
    return memory["data"]


def remember(forest: Path, st: os.stat_result, data: dict[str, Any]) -> None:
    """Keep ``data`` for the file whose stat is ``st``, when it is safe to (above)."""
    if time.time_ns() - st.st_mtime_ns < SETTLED_SECONDS * 1e9 or time.time_ns() - st.st_ctime_ns < SETTLED_SECONDS * 1e9:
        return
    try:
        text = json.dumps({"stat": stat_key(st), "data": data}, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return
    if json.loads(text)["data"] != data:  # a key JSON turns into a string, a tuple into a list
        return
    path = forest / CONFIG_MEMORY_PATH
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)  # a read-only forest: parsed every time, as before
