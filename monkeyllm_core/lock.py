"""The writer lock: one writer per forest, readers never wait.

An exclusive, non-blocking ``flock`` on ``.vine.lock`` held for the writer's
lifetime. The kernel drops the lock when the holder dies, so a dead holder's
lock is reclaimed by simply taking it; the JSON card only names the holder.
"""
from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import socket
from pathlib import Path

from .errors import VineError

LOCK_NAME = ".vine.lock"


class ForestLock:
    def __init__(self, root: Path) -> None:
        self.path = root / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_card(fd)
            os.close(fd)
            raise VineError(
                "E_LOCKED",
                f"the forest is locked by {holder}",
                "Another vine is writing to this forest; wait for it to finish, "
                "or open it read-only (writable=False).",
            ) from None
        card = {"pid": os.getpid(), "host": socket.gethostname(),
                "since": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(card).encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            try:
                os.ftruncate(self._fd, 0)
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            finally:
                os.close(self._fd)
                self._fd = None


def _read_card(fd: int) -> str:
    try:
        card = json.loads(os.pread(fd, 4096, 0) or b"{}")
        return f"pid {card.get('pid')} on {card.get('host')} since {card.get('since')}"
    except (OSError, ValueError):
        return "another process"
