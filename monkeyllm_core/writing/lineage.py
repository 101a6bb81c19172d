"""What a process forked from the writer may hold, and how long it may live.

The Gardener converts files in worker processes forked from the writer. A fork
copies every open descriptor, so without care a worker holds what only the
writer may hold: the forest's lock (a ``flock`` belongs to the open file, so a
live copy keeps the forest locked after the writer died) and the pipe into the
writer's ``git cat-file`` (which then never sees the end of its input). A ``kill
-9`` of the writer alone, as the OOM killer does it, then left workers and git
children alive for good, holding the lock (issue 10).

Two rules, applied here so that no fork path can forget them:

- ``guard(fd)``: a descriptor only this process may hold. In every forked child
  it is pointed at ``/dev/null`` at once (``os.register_at_fork``), before any
  other code runs; the number stays valid, so an object in the child that still
  owns it closes nothing else by mistake.
- ``die_with_parent(parent_pid)``: called first thing in a worker, so it is
  killed when the process that forked it dies (Linux ``PR_SET_PDEATHSIG``), and
  exits at once if that process is already gone (it may die before ``prctl``).

``process_alive(pid)`` is the one "does that process still run" test the core
uses (the lock's holder, a lock card's writer, a temporary pack's or a
``.keep``'s writer).

So a writable ``Vine`` belongs to the process that opened it: a forked child
cannot go on writing through it (open the forest again in the child).
Processes started with ``subprocess`` never see these descriptors anyway: they
are opened non-inheritable, and exec closes them.
"""
from __future__ import annotations

import os
import signal
import sys

_PR_SET_PDEATHSIG = 1
_guarded: set[int] = set()


def guard(fd: int) -> None:
    """Keep ``fd`` out of every process forked from now on."""
    _guarded.add(fd)


def unguard(fd: int) -> None:
    """``fd`` is about to be closed: forget it (its number will be reused)."""
    _guarded.discard(fd)


def _drop_guarded_in_child() -> None:
    if not _guarded:
        return
    null = os.open(os.devnull, os.O_RDWR)
    try:
        for fd in _guarded:
            try:
                os.dup2(null, fd, inheritable=False)
            except OSError:
                pass  # already closed: nothing held
    finally:
        os.close(null)
    _guarded.clear()


os.register_at_fork(after_in_child=_drop_guarded_in_child)


def _prctl():  # pragma: no cover - platform probing
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here, in the worker that asks: ctypes.util costs every writer ~10 ms to import
    import ctypes.util
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def die_with_parent(parent_pid: int) -> None:
    """Be killed when ``parent_pid`` (the process that forked this one) dies.

    Where ``prctl`` is missing (not Linux) the check of the parent still runs;
    the pool's own broken-pipe handling then ends an orphaned worker."""
    prctl = _prctl()
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine (a zombie counts until reaped)."""
    if pid <= 0:
        return False  # kill(0) and kill(-1) would signal a whole group
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    except (OverflowError, OSError):
        return False
    return True
