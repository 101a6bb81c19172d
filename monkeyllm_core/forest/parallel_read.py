"""Reading every node file of a rebuild on every core: ``read_entries(root, ids)``.

A catalog rebuild is mostly YAML parsing (about 60% of its CPU at 10,000 nodes,
bench/README.md), and parsing one file does not depend on another, so past
``PARALLEL_FROM`` files the ids are cut into chunks and worker processes parse
them (``catalog_entry.read_entry``) while this process writes the rows. The
entries come back in the order of ``ids``, so the catalog's rows (and the rowids
that break ranking ties) are the ones a serial rebuild writes.

The workers are plain ``python -m`` subprocesses, not ``multiprocessing``: a spawn
pool re-imports the caller's ``__main__`` (a script without a main guard would run
again in every worker) and a fork pool is unsafe in a threaded server (``vine
serve`` rebuilds on its forest thread). Worker k parses chunks k, k+W, k+2W, ...
and writes each one, pickled, to its stdout as it finishes; this process reads
the chunks in order, so a pipe's buffer is all that waits on either side. A
worker that cannot start or dies leaves its chunks to this process: the rebuild
is slower, never different.
"""
from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
from pathlib import Path
from typing import BinaryIO, Iterator, Sequence

from .catalog_entry import CatalogEntry, read_entry

PARALLEL_FROM = 2000  # below it a worker's start (~0.1 s) costs more than it saves
CHUNK = 500
MAX_WORKERS = 4
_LENGTH = struct.Struct("<Q")


def workers_for(count: int) -> int:
    """How many worker processes a rebuild of ``count`` files gets (0: none)."""
    if count < PARALLEL_FROM:
        return 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return min(cores, MAX_WORKERS) if cores > 1 else 0


def read_entries(root: Path, ids: Sequence[str], *,
                 workers: int | None = None) -> Iterator[tuple[str, CatalogEntry | None]]:
    """(id, entry or None) for every id, in order (see the module doc)."""
    workers = workers_for(len(ids)) if workers is None else workers
    chunks = [list(ids[at:at + CHUNK]) for at in range(0, len(ids), CHUNK)]
    if workers < 1 or len(chunks) < 2:
        for node_id in ids:
            yield node_id, read_entry(root, node_id)
        return
    procs = [_start(root, chunks[k::workers]) for k in range(workers)]
    try:
        for number, chunk in enumerate(chunks):
            proc = procs[number % workers]
            entries = _next_chunk(proc) if proc is not None else None
            if entries is None or len(entries) != len(chunk):
                procs[number % workers] = _stop(proc)  # its later chunks are read here too
                entries = [read_entry(root, node_id) for node_id in chunk]
            yield from zip(chunk, entries)
    finally:
        for proc in procs:
            _stop(proc)


def _start(root: Path, chunks: list[list[str]]) -> subprocess.Popen | None:
    env = dict(os.environ)
    # the workers import this very package, wherever it was imported from
    package_parent = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH")) if p)
    try:
        proc = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    except OSError:
        return None
    try:
        assert proc.stdin is not None
        proc.stdin.write(pickle.dumps((str(root), chunks), protocol=pickle.HIGHEST_PROTOCOL))
        proc.stdin.close()
    except OSError:
        return _stop(proc)
    return proc


def _next_chunk(proc: subprocess.Popen) -> list[CatalogEntry | None] | None:
    assert proc.stdout is not None
    try:
        head = _read_exactly(proc.stdout, _LENGTH.size)
        if head is None:
            return None
        data = _read_exactly(proc.stdout, _LENGTH.unpack(head)[0])
        return None if data is None else pickle.loads(data)
    except (OSError, pickle.UnpicklingError, EOFError, ValueError):
        return None


def _read_exactly(stream: BinaryIO, size: int) -> bytes | None:
    data = stream.read(size)
    return data if data is not None and len(data) == size else None


def _stop(proc: subprocess.Popen | None) -> None:
    if proc is None:
        return None
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()
    return None


def _work() -> None:
    """The worker: its chunks from stdin, each one's entries to stdout, length-prefixed."""
    root, chunks = pickle.load(sys.stdin.buffer)
    out = sys.stdout.buffer
    for chunk in chunks:
        data = pickle.dumps([read_entry(root, node_id) for node_id in chunk], protocol=pickle.HIGHEST_PROTOCOL)
        out.write(_LENGTH.pack(len(data)))
        out.write(data)
        out.flush()


if __name__ == "__main__":
    _work()
