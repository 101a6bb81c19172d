"""The writer lock: one writer per forest, readers never wait.

An exclusive, non-blocking ``flock`` on ``.vine.lock`` held for the writer's
lifetime. The kernel drops the lock when the holder dies, so a dead holder's
lock is reclaimed by simply taking it; the JSON card only names the holder.

A ``flock`` belongs to the open file, and a fork copies open files: a process
forked by the writer would keep the forest locked after the writer died. So the
descriptor is guarded (``lineage.guard``): no forked child ever holds it, and
the writer's converter workers die with it. A forest that is still found locked
is judged by its real holder, the process that took the lock (``/proc/locks``),
not by the card alone: when that process is dead, the error names the processes
that still hold the file open (left by an older vine or another tool), so a
person can end them. Vine does not kill them itself: they are not its own, and a
process holding the lock may be in the middle of a write.
"""
from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

from . import lineage
from ..errors import VineError

LOCK_NAME = ".vine.lock"


class ForestLock:
    def __init__(self, root: Path) -> None:
        self.path = root / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        lineage.guard(fd)  # before the lock is taken: no fork may ever copy a held lock
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            message, hint = _describe_holder(fd)
            lineage.unguard(fd)
            os.close(fd)
            raise VineError("E_LOCKED", message, hint) from None
        import datetime as dt  # here, not at import: a probe of the card (writer_probe) needs neither
        import socket
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
                lineage.unguard(self._fd)
                os.close(self._fd)
                self._fd = None


_BUSY_HINT = ("Another vine is writing to this forest; wait for it to finish, "
              "or open it read-only (writable=False).")


def _describe_holder(fd: int) -> tuple[str, str]:
    """The E_LOCKED message and hint, judged by the process that took the lock."""
    card = _read_card(fd)
    st = os.fstat(fd)
    taker = _lock_taker(st.st_dev, st.st_ino)
    if taker is None or lineage.process_alive(taker):
        return f"the forest is locked by {card}", _BUSY_HINT
    holders = [pid for pid in _processes_holding(st.st_dev, st.st_ino) if pid != os.getpid()]
    named = ", ".join(f"{pid} ({_command(pid)})" for pid in holders) or "a process of another user"
    return (f"the forest is locked, but the writer that took the lock (pid {taker}) is dead; "
            f"the lock is still held by process(es) {named} (card: {card})",
            f"Those processes outlived their writer and hold .vine.lock open; end them "
            f"(kill {' '.join(str(p) for p in holders) or 'PID'}) and run the command again.")


def _read_card(fd: int) -> str:
    try:
        card = json.loads(os.pread(fd, 4096, 0) or b"{}")
        return f"pid {card.get('pid')} on {card.get('host')} since {card.get('since')}"
    except (OSError, ValueError):
        return "another process"


def _lock_taker(dev: int, ino: int) -> int | None:
    """The pid that took the flock on (dev, ino), from ``/proc/locks``; None where unknown.
    The kernel keeps the taker's pid even when only an inherited copy still holds it."""
    wanted = f"{os.major(dev):02x}:{os.minor(dev):02x}:{ino}"
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            for line in fh:
                fields = line.split()
                # "1: FLOCK  ADVISORY  WRITE 2547 fe:00:2148494 0 EOF" ("->" marks a waiter)
                if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == wanted:
                    # 0: a taker outside this pid namespace (or gone): unknown, not dead
                    return int(fields[4]) or None
    except (OSError, ValueError):
        return None
    return None


def _processes_holding(dev: int, ino: int) -> list[int]:
    """Pids (of this user: others' /proc/PID/fd is unreadable) with (dev, ino) open."""
    found = []
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if not entry.name.isdigit():
            continue
        try:
            fds = os.scandir(f"/proc/{entry.name}/fd")
        except OSError:
            continue
        with fds:
            for fd in fds:
                try:
                    st = os.stat(fd.path)
                except OSError:
                    continue
                if st.st_ino == ino and st.st_dev == dev:
                    found.append(int(entry.name))
                    break
    return found


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace").strip()[:80] or "?"
    except OSError:
        return "?"
