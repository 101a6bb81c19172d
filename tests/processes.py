"""Whether a process has ended, read from /proc, and a bounded wait for it to end.

A zombie (``Z``) or dead (``X``) process has ended: it only waits for its parent to
reap it. The kill and timeout tests use this to prove that nothing a killed writer,
worker or command hook started outlives it.
"""
from __future__ import annotations

import time
from pathlib import Path


def process_gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def alive(pid: int) -> bool:
    return not process_gone(pid)


def wait_gone(pid: int, seconds: float = 10.0) -> bool:
    """True once ``pid`` has ended, False if it still runs after ``seconds``."""
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return process_gone(pid)
