"""What the worker stage hands the main process for one file, and the one place a
dataset's SQLite file is staged and its rows counted.

The worker stage (``worker.py``) makes ``Prepared`` values and, given the node's
``NodePlan``, the node's write request too (``nodes.build_node``, and a staged
dataset's sample map and hash): the writer, the one serial stage, then only
plants. Without a plan (a Dask worker, whose files live on another machine) the
main process builds the request from the ``Prepared``. Both sides import this
module and neither imports the other. A dataset (rows loaded with the engine's ``create_dataset``) or a SQLite
source (a rollback-journal snapshot) is staged under ``_derived/tmp`` by
``stage_dataset``, which counts the rows while it is at it: that count is the only
one the Gardener takes, handed to the engine in the node's ``PayloadSpec`` so the
sample map does not count again.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, NamedTuple

if TYPE_CHECKING:
    from monkeyllm_core import NodeWrite

    from .conversion import Conversion
    from .host import ConvertResult


class NodePlan(NamedTuple):
    """The node a file becomes, as the plan named it: what the worker stage needs to
    build the node's write request itself (``worker.with_request``)."""

    node_id: str
    source: str  # the export folder
    size: int  # the file's size and mtime, as walked (the passport records them)
    mtime: float


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
    # built by the worker stage when it was given the node's plan (``NodePlan``)
    request: NodeWrite | None = None
    build_error: str | None = None  # the error line of a request that could not be built


def stages_dataset(conv: Conversion) -> bool:
    """Whether the conversion becomes a dataset whose SQLite file is staged first."""
    return conv.kind == "dataset" or (conv.kind == "payload" and conv.payload_type == "sqlite")


def stage_dataset(conv: Conversion, source: str, db: str) -> Mapping[str, int] | None:
    """Make ``db``, the file the node's payload is moved in from, and count its rows.

    A dataset conversion's rows are loaded into it; a SQLite source is never opened
    (a WAL database would grow -wal/-shm beside it): a rollback-journal snapshot,
    -wal data included, becomes the payload. Returns the row counts, or None when
    SQLite cannot count them (the engine reports the unreadable database when it
    maps the file)."""
    if conv.kind == "dataset":
        from monkeyllm_core.data.dataset import create_dataset
        return create_dataset(db, conv.schema, conv.rows)
    from monkeyllm_core.data.sample_map import describe_tables
    from monkeyllm_core.data.sqlite_copy import snapshot_database
    snapshot_database(conv.payload_path or source, db)
    try:
        return describe_tables(db).get("row_counts", {})  # COUNT(*) is a scan: once, here
    except Exception:
        return None


def new_tmp_path(tmp_dir: str) -> str:
    """A fresh path under ``tmp_dir`` with no file at it (create_dataset refuses an
    existing file; snapshot_database expects none)."""
    import tempfile
    fd, name = tempfile.mkstemp(suffix=".db", dir=tmp_dir)
    os.close(fd)
    os.unlink(name)
    return name
