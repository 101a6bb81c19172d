"""The worker stage: hash, convert, describe, and load a dataset, for one file.

``prepare_file`` is pure (no forest access beyond a temporary folder for a new
dataset file or a SQLite source's snapshot), picklable in and out, so it runs in
a ``ProcessPoolExecutor`` worker; the main process then plants in walk order.

A worker starts with ``init_worker``: it dies with the writer that forked it, so a
``kill -9`` of ``vine`` alone leaves no converter running (and a forked worker
never holds the forest's lock or the writer's git pipes: ``lineage``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping

from monkeyllm_core.writing import lineage
from monkeyllm_core.hashing import sha256_file

from .error_lines import error_line
from .host import ConvertResult, HostSpec, host_from_spec
from .nodes import title_and_summary


@dataclass(frozen=True, kw_only=True)
class Prepared:
    """The worker stage's answer for one file (picklable)."""

    rel: str
    sha256: str | None = None
    result: ConvertResult | None = None
    description: str | None = None
    problems: tuple[str, ...] = ()
    read_error: str | None = None
    unchanged: bool = False  # the hash matched the forest's: nothing to convert
    # a dataset loaded, or a SQLite source's snapshot made, by the worker: moved into place
    dataset_db: str | None = None
    row_counts: Mapping[str, int] | None = None
    derived: tuple[str, str] | None = None  # (title, summary) of a markdown conversion


def init_worker(writer_pid: int) -> None:
    """The pool's initializer: be killed when the writer (``writer_pid``) dies."""
    lineage.die_with_parent(writer_pid)


def prepare_file(spec: HostSpec, path: str, rel: str, known_hash: str | None,
                 tmp_dir: str | None = None, *, name_title: bool = False) -> Prepared:
    """Hash and convert one file, and load a dataset's rows into a new SQLite file
    under ``tmp_dir`` (with the engine's own ``create_dataset``), so the heavy work
    runs in a worker process and the main process only moves the file in place."""
    try:
        digest = source_digest(path)
    except OSError as exc:
        return Prepared(rel=rel, read_error=f"cannot read: {exc.strerror or exc}")
    if known_hash is not None and digest == known_hash:
        return Prepared(rel=rel, sha256=digest, unchanged=True)
    host = host_from_spec(spec)
    result = host.convert(path)
    description = None
    problems: tuple[str, ...] = ()
    conv = result.conversion
    if conv is not None and conv.media is not None and host.describers(conv.media.kind):
        description, found = host.describe(path, conv.media)
        problems = tuple(found)
    if conv is not None and conv.kind == "dataset" and tmp_dir is not None:
        import dataclasses

        from monkeyllm_core.data.dataset import create_dataset
        name = new_tmp_path(tmp_dir)
        try:
            counts = create_dataset(name, conv.schema, conv.rows)
        except Exception as exc:
            return Prepared(rel=rel, sha256=digest, read_error=f"{result.converter} failed: {error_line(exc)}")
        # the rows are in the file now: do not send the row sources back
        result = dataclasses.replace(result, conversion=dataclasses.replace(conv, rows=None))
        return Prepared(rel=rel, sha256=digest, result=result, description=description, problems=problems,
                        dataset_db=name, row_counts=counts)
    if conv is not None and conv.kind == "markdown":
        # deriving a summary reads the whole text: do it here, on the pool
        return Prepared(rel=rel, sha256=digest, result=result, description=description, problems=problems,
                        derived=title_and_summary(conv, rel, name_title=name_title))
    if conv is not None and conv.payload_type == "sqlite" and tmp_dir is not None:
        # The source is never opened (a WAL database would grow -wal/-shm beside it):
        # a rollback-journal snapshot, -wal data included, becomes the payload, and
        # the rows are counted on it here, in the worker (COUNT(*) is a scan).
        from monkeyllm_core.data.sample_map import describe_tables
        from monkeyllm_core.data.sqlite_copy import snapshot_database
        snapshot = new_tmp_path(tmp_dir)
        try:
            snapshot_database(conv.payload_path or path, snapshot)
        except Exception as exc:
            return Prepared(rel=rel, sha256=digest,
                            read_error=f"{result.converter} failed: cannot copy the database ({error_line(exc)})")
        try:
            counts = describe_tables(snapshot).get("row_counts", {})
        except Exception:  # the engine reports an unreadable database when it maps the copy
            counts = None
        return Prepared(rel=rel, sha256=digest, result=result, description=description, problems=problems,
                        dataset_db=snapshot, row_counts=counts)
    return Prepared(rel=rel, sha256=digest, result=result, description=description, problems=problems)


def source_digest(path: str) -> str:
    """The file's SHA-256; for a SQLite database with a non-empty ``-wal`` beside it,
    the hash of both (committed rows may live in the ``-wal`` only, and the payload
    is made from both: ``snapshot_database``)."""
    from .walk import is_sqlite_main_file
    digest = sha256_file(path)
    wal = path + "-wal"
    try:
        has_wal = os.path.getsize(wal) > 0 and is_sqlite_main_file(path)
    except OSError:
        return digest
    if not has_wal:
        return digest
    import hashlib
    return hashlib.sha256(f"{digest}\n{sha256_file(wal)}".encode()).hexdigest()


def new_tmp_path(tmp_dir: str) -> str:
    """A fresh path under ``tmp_dir`` with no file at it (create_dataset refuses an
    existing file; snapshot_database expects none)."""
    import tempfile
    fd, name = tempfile.mkstemp(suffix=".db", dir=tmp_dir)
    os.close(fd)
    os.unlink(name)
    return name
