"""Is a writer at work on the forest? Told from the lock card, without taking the lock.

Readers never take ``.vine.lock`` (a reader holding it for a moment would make a
writer starting then fail with E_LOCKED), so a reader that must know whether files
are changing under it reads the card instead: a writer writes ``{pid, host, since}``
before it touches a file and empties it when it releases the lock. A card whose
pid is dead on this host is a killed writer's (its lock went with it). A card from
another host cannot be checked and counts as a writer at work.

``LockState`` also carries the lock file's identity and change time: any writer
taking or releasing the lock changes them, so two equal probes around a read mean
no writer came or went during it.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import NamedTuple

from .lineage import process_alive
from .lock import LOCK_NAME


class LockState(NamedTuple):
    stamp: tuple[int, int, int] | None  # (inode, size, mtime_ns) of .vine.lock; None: no lock file
    writer: str | None                  # who is writing, as the card names them; None: nobody

    @property
    def active(self) -> bool:
        return self.writer is not None


def probe(root: Path) -> LockState:
    path = Path(root) / LOCK_NAME
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            card = fh.read(4096)
    except FileNotFoundError:
        return LockState(stamp=None, writer=None)
    stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
    return LockState(stamp=stamp, writer=_live_writer(card))


def _live_writer(card: bytes) -> str | None:
    if not card.strip():
        return None  # released, or taken this instant and not yet signed: no file touched yet
    try:
        fields = json.loads(card)
        pid, host = int(fields["pid"]), str(fields.get("host", ""))
    except (ValueError, KeyError, TypeError):
        return "a writer (its lock card is unreadable)"
    who = f"pid {pid} on {host}" if host else f"pid {pid}"
    if fields.get("since"):
        who += f" since {fields['since']}"
    import socket  # only for a card: an idle forest's is empty
    if host and host != socket.gethostname():
        return who  # another machine's process: it cannot be checked from here
    return who if process_alive(pid) else None

