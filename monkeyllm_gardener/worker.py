"""The worker stage: hash, convert, describe, and load a dataset, for one file
(``prepare_file``) or for a few small ones in one pool task (``prepare_batch``).

``prepare_file`` is pure (no forest access beyond a temporary folder for a new
dataset file or a SQLite source's snapshot), picklable in and out, so it runs in
a ``ProcessPoolExecutor`` worker; the main process then plants in walk order.

A worker starts with ``init_worker``: it dies with the writer that forked it, so a
``kill -9`` of ``vine`` alone leaves no converter running (and a forked worker
never holds the forest's lock or the writer's git pipes: ``lineage``).
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from monkeyllm_core.writing import lineage
from monkeyllm_core.hashing import sha256_file

from .host import HostSpec, host_from_spec
from .error_lines import error_line
from .nodes import title_and_summary
from .prepared import NodePlan, Prepared, new_tmp_path, stage_dataset, stages_dataset

if TYPE_CHECKING:
    from monkeyllm_core import PayloadSpec

    from .executors import ConversionJob


def init_worker(writer_pid: int) -> None:
    """The pool's initializer: be killed when the writer (``writer_pid``) dies."""
    lineage.die_with_parent(writer_pid)


def prepare_file(spec: HostSpec, path: str, rel: str, known_hash: str | None,
                 tmp_dir: str | None = None, *, name_title: bool = False, node: NodePlan | None = None) -> Prepared:
    """Hash and convert one file, and stage a dataset's SQLite file under ``tmp_dir``
    (``stage_dataset``: rows loaded, or a SQLite source snapshotted, and counted), so
    the heavy work runs in a worker process and the main process only moves the
    file in place. With ``node`` (the node the file becomes) the write request is
    built here too (``with_request``)."""
    prep = _converted(spec, path, rel, known_hash, tmp_dir, name_title=name_title)
    if node is None or prep.result is None or prep.result.conversion is None:
        return prep
    if prep.result.unsupported or prep.result.error:
        return prep
    return with_request(prep, path, node, tmp_dir, name_title=name_title)


def _converted(spec: HostSpec, path: str, rel: str, known_hash: str | None,
               tmp_dir: str | None, *, name_title: bool) -> Prepared:
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
    if conv is not None and stages_dataset(conv) and tmp_dir is not None:
        staged = new_tmp_path(tmp_dir)
        try:
            counts = stage_dataset(conv, path, staged)
        except Exception as exc:
            reason = error_line(exc) if conv.kind == "dataset" else f"cannot copy the database ({error_line(exc)})"
            return Prepared(rel=rel, sha256=digest, read_error=f"{result.converter} failed: {reason}")
        if conv.kind == "dataset":  # the rows are in the file now: do not send the row sources back
            result = dataclasses.replace(result, conversion=dataclasses.replace(conv, rows=None))
        return Prepared(rel=rel, sha256=digest, result=result, description=description, problems=problems,
                        dataset_db=staged, row_counts=counts)
    if conv is not None and conv.kind == "markdown":
        # deriving a summary reads the whole text: do it here, on the pool
        return Prepared(rel=rel, sha256=digest, result=result, description=description, problems=problems,
                        derived=title_and_summary(conv, rel, name_title=name_title))
    return Prepared(rel=rel, sha256=digest, result=result, description=description, problems=problems)


def with_request(prep: Prepared, path: str, node: NodePlan, tmp_dir: str | None, *,
                 name_title: bool = False) -> Prepared:
    """``prep`` with the node's write request built (``nodes.build_node``), as the
    writer would build it, so the writer only plants: for a staged dataset the
    sample map is rendered from the staged file and the file hashed, here too. The
    conversion's text then stays behind: the request's body carries it.

    A request that cannot be built is an error line the writer reports
    (``build_error``); a map that cannot be rendered is left to the writer, whose
    error names the payload where it lies in the forest."""
    from .nodes import build_node
    from .walk import SourceFile
    assert prep.result is not None and prep.result.conversion is not None
    conv = prep.result.conversion
    try:
        request = build_node(node.node_id, SourceFile(prep.rel, path, node.size, node.mtime), prep, conv,
                             Path(node.source), lambda: Path(new_tmp_path(_staging(tmp_dir))),
                             name_title=name_title)
    except Exception as exc:  # noqa: BLE001 -- reported by the writer as the file's error
        return dataclasses.replace(prep, build_error=error_line(exc))
    payload = request.payload
    if payload is not None and payload.move and request.passport.get("payload_type") == "sqlite":
        request = dataclasses.replace(request, payload=_mapped(payload))
    result = prep.result
    if conv.markdown:  # no copies for a conversion without text (media): nothing to leave behind
        result = dataclasses.replace(result, conversion=dataclasses.replace(conv, markdown=""))
    return dataclasses.replace(prep, result=result, request=request)


def _staging(tmp_dir: str | None) -> str:
    if tmp_dir is None:  # every caller stages under the forest's _derived/tmp
        raise ValueError("a dataset conversion needs the staging folder (tmp_dir)")
    return tmp_dir


def _mapped(payload: PayloadSpec) -> PayloadSpec:
    """The staged dataset's hash and sample map, as the writer would make them on install."""
    from monkeyllm_core.data.sample_map import render_map
    try:
        sample_map = render_map(payload.source, payload.manual_notes, payload.row_counts)
        sha256 = sha256_file(str(payload.source))
    except Exception:  # noqa: BLE001 -- the writer does both again and reports what is wrong
        return payload
    return dataclasses.replace(payload, sha256=sha256, sample_map=sample_map)


def prepare_batch(spec: HostSpec, jobs: Sequence[ConversionJob], tmp_dir: str | None = None) -> list[Prepared]:
    """``prepare_file`` for each of ``jobs`` (``executors.ConversionJob``), in order: one
    pool task for several small files. A file whose conversion raised fails alone,
    as it would in a task of its own."""
    out = []
    for job in jobs:
        try:
            out.append(prepare_file(spec, job.path, job.rel, job.known_hash, tmp_dir, name_title=job.name_title,
                                    node=job.node))
        except Exception as exc:  # noqa: BLE001 -- the others of the batch still come back
            out.append(Prepared(rel=job.rel, read_error=f"worker failed: {exc}"))
    return out


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

