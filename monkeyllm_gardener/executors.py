"""Where conversions run: the seam between the pipeline and its workers.

The conversion stage (hash, convert, describe, load a dataset:
``worker.prepare_file``) is the one heavy step of a reconcile that needs no
forest, so it runs elsewhere while the writer plants the results serially, in
walk order. "Elsewhere" is a ``concurrent.futures.Executor``: the pipeline
makes one ``ConversionJob`` per file, the pool groups them into batches
(consecutive files, converted by one task), and the pipeline submits each batch
and collects a ``Prepared`` per file, in order; this module chooses the executor
and decides how a result gets home.

- ``process`` (the default, ``--jobs`` workers): a ``ProcessPoolExecutor`` forked
  from the writer, which first imports the built-in converters' libraries the
  files need (``warm_up``), so the workers inherit them with the plugin host.
  A task costs the writer about what converting a short note
  costs a worker (a pickle each way, a wakeup of its result thread, switching
  threads), so up to ``BATCH_FILES`` consecutive small files (``SMALL_FILE``)
  travel as one task. Its workers share the writer's filesystem, so a dataset's
  SQLite file is built straight into the forest's ``_derived/tmp`` and only its
  path comes back. Each worker dies with the writer (``init_worker``:
  ``lineage``). A worker that dies mid-file breaks the whole pool: every file in
  flight fails with ``BrokenProcessPool`` and none says whose conversion killed
  it. So the pool is started afresh for the files to come, and each lost file is
  converted once more on its own, in a one-worker pool: a file that kills that
  worker too lands in errors, the others plant. (So is each file of a batch whose
  results could not come back, say one that would not pickle.)
- ``dask`` (``--executor dask --scheduler ADDR``): ``distributed.Client(ADDR)
  .get_executor()``, the workers of a Dask cluster, usually on other machines.
  They must read the source folder at the same path as the writer (the usual
  shared mount), but never the forest: a worker builds a dataset's file in its
  own temporary folder and the bytes travel back in the result (``Shipped``);
  the writer writes them into ``_derived/tmp`` and plants as usual. Each file is
  a task of its own (a batch of one: a cluster's tasks cost the writer little, and
  the scheduler spreads them). A task whose
  worker died is retried by the scheduler on another worker (its
  ``allowed-failures``) and then fails alone (``KilledWorker``): that file lands
  in errors and the run goes on.

Whichever executor ran, the same ``prepare_file`` made each result and the writer
planted them in the same order, so the forest is byte-identical.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Literal, Protocol

from .host.spec import HostSpec
from .error_lines import error_line
from .prepared import NodePlan, Prepared, new_tmp_path

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future, ProcessPoolExecutor

# ``worker`` (and with it the plugin host and the converters) is imported where a
# conversion is submitted: choosing an executor for a run that converts nothing
# must not load them; nor is ``concurrent.futures`` (and its logging) until a
# pool starts.

ExecutorKind = Literal["process", "dask"]
EXECUTOR_KINDS: tuple[ExecutorKind, ...] = ("process", "dask")
DASK_INSTALL_HINT = 'pip install "monkeyllm[dask]"'
SCHEDULER_HINT = "Pass the address `dask scheduler` prints, e.g. --scheduler tcp://HOST:8786, and check it runs."
# results in flight per worker: enough that no worker waits for the writer, few
# enough that the writer holds a bounded number of results in memory (and of staged
# datasets on disk). At 4 the workers ran out of work while the writer planted a run
# of notes (about 1 ms to convert, 5 to plant) and were then busy when it reached a
# workbook: it waited 0.5 s of a 1,000-file adopt; at 16, 0.3 s (at 32, 0.25 s).
WINDOW_PER_SLOT = 16
# files converted by one process-pool task: consecutive ones, each of at most
# SMALL_FILE bytes (a bigger one is a task of its own, which a worker may take while
# another converts a batch)
BATCH_FILES = 8
SMALL_FILE = 64 * 1024
# files to convert from which the writer warms the pool up before it forks (warm_up):
# each worker then saves what the writer spends once; below it, the workers' own
# imports, made in parallel, cost a short run less than the writer's made first
WARM_UP_FILES = 100

LOST_TWICE = "worker died while converting it, and again when it was converted on its own"


class ExecutorError(Exception):
    """The chosen executor cannot run: a missing extra, a scheduler out of reach."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message, self.hint = message, hint


@dataclass(frozen=True, kw_only=True)
class ExecutorChoice:
    """Which executor converts the files (``vine adopt/sync --executor``)."""

    kind: ExecutorKind = "process"
    scheduler: str | None = None  # the Dask scheduler's address, e.g. tcp://10.0.0.5:8786

    def __post_init__(self) -> None:
        if self.kind not in EXECUTOR_KINDS:
            raise ExecutorError(f"unknown executor {self.kind!r}", "Use --executor process or --executor dask.")
        if self.kind == "dask" and not self.scheduler:
            raise ExecutorError("--executor dask needs --scheduler ADDR", SCHEDULER_HINT)
        if self.kind == "process" and self.scheduler:
            raise ExecutorError("--scheduler is only used with --executor dask",
                                "Add --executor dask, or drop --scheduler to convert in local processes.")


@dataclass(frozen=True, kw_only=True)
class ConversionJob:
    """One file to convert, as it crosses to a worker (with the host's ``HostSpec``):
    plain strings, so it pickles; ``path`` is the source file as the writer sees it."""

    path: str
    rel: str
    known_hash: str | None
    name_title: bool = False
    size: int = 0  # the file's size in bytes, as walked: what batches are made by
    node: NodePlan | None = None  # the node it becomes: a local worker builds the write request too


class ConversionPool(Protocol):
    """What the pipeline's conversion stage needs from an executor."""

    slots: int  # conversions that run at once

    def converts_in_writer(self, total: int) -> bool:
        """True when ``total`` files are better converted in the writer itself."""

    def batches(self, jobs: Iterable[ConversionJob], *, count: int,
                names: Iterable[str]) -> Iterator[list[ConversionJob]]:
        """``jobs`` (``count`` of them) cut into consecutive batches, each converted by
        one task, made as they are asked for; ``names`` are the files' names, read only
        by a pool that prepares for them before the first submit."""

    def submit(self, batch: list[ConversionJob]) -> Future[Any]:
        """Start converting ``batch``; the future is handed back to ``collect``."""

    def collect(self, future: Future[Any], batch: list[ConversionJob]) -> list[Prepared]:
        """The batch's results, one per job and in order, waiting for them; a lost
        worker is a failed file, never an exception."""


@contextlib.contextmanager
def conversion_pool(choice: ExecutorChoice | None, *, spec: HostSpec, tmp_dir: Path,
                    jobs: int | None) -> Iterator[ConversionPool]:
    """The pool ``choice`` names, open for one verb (a Dask scheduler is reached
    here, before any file is touched) and shut down when the block ends."""
    choice = choice or ExecutorChoice()
    pool: ProcessConversionPool | DaskConversionPool
    if choice.kind == "dask":
        assert choice.scheduler is not None
        pool = DaskConversionPool(choice.scheduler, spec=spec, tmp_dir=tmp_dir, jobs=jobs)
    else:
        pool = ProcessConversionPool(spec=spec, tmp_dir=tmp_dir, jobs=jobs)
    try:
        yield pool
    finally:
        pool.close()


# -- the process pool -------------------------------------------------------------------
class ProcessConversionPool:
    """``--jobs`` worker processes forked from the writer, started on the first
    submit (a run with nothing to convert forks nothing)."""

    def __init__(self, *, spec: HostSpec, tmp_dir: Path, jobs: int | None) -> None:
        self.spec = spec
        self.tmp_dir = str(tmp_dir)
        self.slots = jobs or os.cpu_count() or 1
        self._pool: ProcessPoolExecutor | None = None
        self._alone: ProcessPoolExecutor | None = None  # one worker, for files a dead worker took along
        self._pool_of: dict[Future[Any], ProcessPoolExecutor] = {}

    def converts_in_writer(self, total: int) -> bool:
        return self.slots <= 1 or total <= 1

    def batches(self, jobs: Iterable[ConversionJob], *, count: int,
                names: Iterable[str]) -> Iterator[list[ConversionJob]]:
        if self._pool is None and count >= WARM_UP_FILES:  # the fork is at the first submit
            warm_up(self.spec, names)
        # a short run still spreads over every worker (its small files may be slow ones)
        per_batch = max(1, min(BATCH_FILES, -(-count // self.slots)))
        return batched(jobs, files=per_batch, small=SMALL_FILE)

    def submit(self, batch: list[ConversionJob]) -> Future[Any]:
        from concurrent.futures import BrokenExecutor
        if self._pool is None:
            self._pool = _forked_pool(self.slots)
        try:
            future = self._submit_to(self._pool, batch)
        except BrokenExecutor:  # a worker died since the last submit: the files to come get a fresh pool
            self._retire(self._pool)
            self._pool = _forked_pool(self.slots)
            future = self._submit_to(self._pool, batch)
        self._pool_of[future] = self._pool
        return future

    def collect(self, future: Future[Any], batch: list[ConversionJob]) -> list[Prepared]:
        from concurrent.futures import BrokenExecutor
        pool = self._pool_of.pop(future, None)
        try:
            return future.result()
        except BrokenExecutor:
            pass
        except Exception as exc:  # e.g. a result that would not pickle: that file fails, the batch goes on
            if len(batch) == 1:
                return [Prepared(rel=batch[0].rel, read_error=f"worker failed: {exc}")]
            return [self._convert_alone(job) for job in batch]  # which file it was is found out alone
        # a worker died with these files in flight, maybe on another file: the pool is
        # broken for every file it held. A fresh one takes the files to come; each
        # file is converted again on its own, so a second death is its own.
        if pool is not None and pool is self._pool:
            self._retire(pool)
            self._pool = None
        return [self._convert_alone(job) for job in batch]

    def _convert_alone(self, job: ConversionJob) -> Prepared:
        from concurrent.futures import BrokenExecutor
        if self._alone is None:
            self._alone = _forked_pool(1)
        try:
            return self._submit_to(self._alone, [job]).result()[0]
        except BrokenExecutor:
            self._retire(self._alone)
            self._alone = None
            return Prepared(rel=job.rel, read_error=LOST_TWICE)
        except Exception as exc:
            return Prepared(rel=job.rel, read_error=f"worker failed: {exc}")

    def _submit_to(self, pool: ProcessPoolExecutor, batch: list[ConversionJob]) -> Future[Any]:
        from .worker import prepare_batch
        return pool.submit(prepare_batch, self.spec, batch, self.tmp_dir)

    @staticmethod
    def _retire(pool: ProcessPoolExecutor) -> None:
        pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        for pool in (self._pool, self._alone):
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        self._pool = self._alone = None
        self._pool_of.clear()


def warm_up(spec: HostSpec, names: Iterable[str]) -> None:
    """Before the pool forks: import the libraries the built-in converters of files
    named ``names`` need (their ``requires``), once, here, so that every worker
    forked after starts with them instead of importing openpyxl, python-docx and the
    rest itself (the plugin host, cached per process, the pipeline has built before
    already). Only the built-in converters' libraries: one a third party names might
    start threads when imported, and a forked child must not inherit those."""
    import importlib

    from .extensions import extension_candidates
    from .host import host_from_spec
    host = host_from_spec(spec)
    extensions = {ext for name in names for ext in extension_candidates(name)}
    modules: dict[str, None] = {}
    for extension in extensions:
        for registered in host.claimants(extension):
            if registered.source == "builtin":
                modules.update(dict.fromkeys(getattr(registered.converter, "requires", None) or ()))
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception:  # noqa: BLE001 -- a worker that needs it reports the failure for its file
            pass


def batched(jobs: Iterable[ConversionJob], *, files: int, small: int) -> Iterator[list[ConversionJob]]:
    """Consecutive runs of at most ``files`` jobs of at most ``small`` bytes each; any
    other job a batch of its own. Lazy: a batch is made when asked for."""
    run: list[ConversionJob] = []
    for job in jobs:
        if job.size > small:
            if run:
                yield run
                run = []
            yield [job]
            continue
        run.append(job)
        if len(run) == files:
            yield run
            run = []
    if run:
        yield run


def _forked_pool(workers: int) -> ProcessPoolExecutor:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from .worker import init_worker
    ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=init_worker,
                               initargs=(os.getpid(),))


# -- a Dask cluster -----------------------------------------------------------------------
class DaskConversionPool:
    """The workers of the Dask cluster whose scheduler is at ``scheduler``.

    ``slots``: ``--jobs`` when given, else the cluster's threads when the run starts."""

    def __init__(self, scheduler: str, *, spec: HostSpec, tmp_dir: Path, jobs: int | None) -> None:
        distributed = import_distributed()
        self.spec = spec
        self.tmp_dir = str(tmp_dir)
        try:
            # checked first: a Client refused its address leaves a half-made object
            # that stalls the interpreter's exit trying to close itself
            distributed.comm.get_address_host_port(scheduler)
        except ValueError as exc:
            raise ExecutorError(f"--scheduler {scheduler!r} is not a scheduler address ({exc})",
                                SCHEDULER_HINT) from None
        try:
            # the connect timeout is Dask's own setting (distributed.comm.timeouts.connect)
            self.client = distributed.Client(scheduler, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise ExecutorError(f"cannot reach the Dask scheduler at {scheduler}: {error_line(exc)}",
                                SCHEDULER_HINT) from None
        # pure=False: a file converted again (a retry, the next sync) is a new task, not a cached result
        self._executor: Executor = self.client.get_executor(pure=False)
        self._killed_worker: type[BaseException] = distributed.KilledWorker
        self.slots = jobs or max(1, sum(self.client.nthreads().values()))

    def converts_in_writer(self, total: int) -> bool:
        return False  # the user asked for the cluster: never convert on the writer's machine

    def batches(self, jobs: Iterable[ConversionJob], *, count: int,
                names: Iterable[str]) -> Iterator[list[ConversionJob]]:
        return ([job] for job in jobs)

    def submit(self, batch: list[ConversionJob]) -> Future[Any]:
        (job,) = batch
        return self._executor.submit(convert_on_worker, self.spec, job)

    def collect(self, future: Future[Any], batch: list[ConversionJob]) -> list[Prepared]:
        (job,) = batch
        try:
            shipped: Shipped = future.result()
        except self._killed_worker as exc:
            tries = getattr(exc, "allowed_failures", None)
            on = f" (tried on {tries + 1} Dask workers)" if isinstance(tries, int) else ""
            return [Prepared(rel=job.rel, read_error=f"worker died while converting it{on}")]
        except Exception as exc:
            return [Prepared(rel=job.rel, read_error=f"worker failed: {error_line(exc)}")]
        return [shipped.received(self.tmp_dir)]

    def close(self) -> None:
        self._executor.shutdown(wait=False)
        self.client.close()


def import_distributed() -> Any:
    """The ``distributed`` package, or an ``ExecutorError`` naming the extra to install."""
    try:
        import distributed
    except ImportError:
        raise ExecutorError("--executor dask needs the distributed package, which is not installed",
                            DASK_INSTALL_HINT) from None
    return distributed


@dataclass(frozen=True, kw_only=True)
class Shipped:
    """A worker's result as it travels back from a machine that does not share the
    forest's filesystem: the ``Prepared``, plus the bytes of the dataset file the
    worker built (a loaded dataset, or a SQLite source's snapshot)."""

    prepared: Prepared
    dataset_bytes: bytes | None = None

    def received(self, tmp_dir: str) -> Prepared:
        """The ``Prepared`` as the process pool would have made it: the dataset file
        written under the forest's ``tmp_dir``, where the plant moves it from."""
        if self.dataset_bytes is None:
            return self.prepared
        path = new_tmp_path(tmp_dir)
        with open(path, "xb") as out:
            out.write(self.dataset_bytes)
        return dataclasses.replace(self.prepared, dataset_db=path)


# Converters run with what libraries print and warn captured (``chatter``), and
# that capture swaps ``sys.stdout`` and the warning filters for the whole process:
# two conversions on two threads of one Dask worker would mix up (or lose) each
# other's. So a worker process converts one file at a time, as a pool worker does;
# run Dask workers with ``--nthreads 1`` and as many ``--nworkers`` as cores.
_ONE_CONVERSION_AT_A_TIME = threading.Lock()


def convert_on_worker(spec: HostSpec, job: ConversionJob) -> Shipped:
    """The Dask task for one file (runs on a worker): ``prepare_file`` into a
    temporary folder of the worker's own, the dataset file read back as bytes."""
    import socket
    import tempfile
    from .worker import prepare_file
    with _ONE_CONVERSION_AT_A_TIME, tempfile.TemporaryDirectory(prefix="monkeyllm-worker-") as tmp_dir:
        prepared = prepare_file(spec, job.path, job.rel, job.known_hash, tmp_dir, name_title=job.name_title)
        if prepared.read_error and not os.path.exists(job.path):
            return Shipped(prepared=dataclasses.replace(
                prepared, read_error=f"{prepared.read_error} (on Dask worker {socket.gethostname()}: "
                                     "mount the source folder at the same path on every worker)"))
        if prepared.dataset_db is None:
            return Shipped(prepared=prepared)
        data = Path(prepared.dataset_db).read_bytes()
        return Shipped(prepared=dataclasses.replace(prepared, dataset_db=None), dataset_bytes=data)
