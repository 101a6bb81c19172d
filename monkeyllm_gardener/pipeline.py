"""The Gardener's pipeline: convert, curate, plant, rollup.

``adopt`` and ``sync`` share one reconcile: walk the source, read the forest's
state for that source from the catalog (no YAML parsing), decide per file
(unchanged / new / changed / vanished), convert what needs it on workers (local
processes, or a Dask cluster: ``executors``), and plant in walk order in the
main process, so the forest is the same for any ``--jobs`` and any executor.
Nothing fails the batch: every file ends in exactly one list of the report.
"""
from __future__ import annotations

import contextlib
import os
import shutil
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, NamedTuple
from urllib.parse import unquote

from monkeyllm_core import VineError
from monkeyllm_core.forest.rules import check_new_id, parent_of

from .config import GardenerConfig
from .error_lines import error_line
from .failures import NOT_RETRIED, Failure, FailureMemory
from .host.remembered import RememberedHost
from .host.spec import ALLOW_LIST_ENV, HostSpec
from .origins import file_uri, origins_under
from .report import Report
from .slugs import told_apart_by_extension
from .walk import SourceFile, walk_source

if TYPE_CHECKING:
    from concurrent.futures import Future

    from monkeyllm_core import NodeWrite, PayloadSpec, Vine
    from monkeyllm_core.forest.catalog import Catalog

    from .executors import ConversionPool, ExecutorChoice
    from .host.plugin_host import PluginHost
    from .prepared import Prepared
    from .slugs import FileIds
    from .walked_files import WalkedFiles

# Only what a sync that finds nothing to do runs is imported above: the writer
# (``Vine``), the executors, the node builder, the plugin host, the converters
# and the worker stage load in the methods that plant or convert, so a no-change
# sync never imports them (``host.remembered`` answers for its unsupported and
# failed files).

CURATE_BATCH = 32
SCHEMA_ID = "_meta/schema"
TMP_DIR = "_derived/tmp"


class _Task(NamedTuple):
    file: SourceFile
    node_id: str
    existing: dict[str, Any] | None
    known_hash: str | None
    name_title: bool = False  # shares its name with another file: the title names the file


class _Branches:
    """The branches a reconcile may plant, planted only when a file first needs
    one: a folder whose files are all unsupported, ignored or failed gets none."""

    def __init__(self, source: Path, dest: str, dir_ids: Mapping[str, str]) -> None:
        self.source = source
        self.dest = dest
        self.dir_ids = dir_ids  # source folder rel -> branch id (dest applied)
        self.known: set[str] = set()  # branch ids that exist (or are in a dry run's plan)


class _Tasks:
    """The files a reconcile converts, as ``_Task``s in walk order, made one folder at
    a time when iterated (each time the same): a 50,000-file adopt holds the compact
    walk and a byte per file, not a task, an id and a job per file from the first
    conversion to the last plant, in the writer and in every worker forked from it.
    One folder's files and ids are held while its tasks are in flight, so a single
    folder of 50,000 files still costs about 30 MiB while it is planted."""

    def __init__(self, files: WalkedFiles, chosen: bytearray, count: int, by_rel: Mapping[str, dict[str, Any]],
                 file_ids: Callable[[], FileIds], add_dest: Callable[[str], str]) -> None:
        self._files = files
        self._chosen = chosen  # one byte per walked file: 1 when it is converted
        self._count = count
        self._by_rel = by_rel  # source path -> its node's catalog row (not a branch's)
        self._file_ids = file_ids  # made on first use: a sync with nothing to convert settles no id
        self._add_dest = add_dest

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[_Task]:
        if not self._count:
            return
        ids = self._file_ids()
        start = 0
        for _, files in self._files.by_folder():
            end = start + len(files)
            if self._chosen.find(1, start, end) != -1:
                # a folder's ids are settled among all its files, converted or not, as before
                folder_ids = ids.of([f.rel for f in files])
                for f, chosen in zip(files, self._chosen[start:end]):
                    if chosen:
                        row = self._by_rel.get(f.rel)
                        node_id = row["id"] if row else self._add_dest(folder_ids[f.rel])
                        yield _Task(f, node_id, row, row["source_hash"] if row and not row["stale"] else None,
                                    name_title=told_apart_by_extension(node_id, f.rel))
            start = end

    def names(self) -> Iterator[str]:
        """The converted files' names, in walk order (no id is settled for them)."""
        for name, chosen in zip(self._files.names(), self._chosen):
            if chosen:
                yield name


class _Plan(NamedTuple):
    """What one source's reconcile must do (``Gardener._plan``)."""

    tasks: _Tasks  # the files to convert, in walk order
    vanished: list[tuple[str, dict[str, Any]]]  # (source path, catalog row) of the nodes whose file is gone
    branches: _Branches
    prefix: str  # the origin URI every file of the source starts with
    origin_of: Callable[[str], str]
    walked: WalkedFiles  # every walked file (in scope or not): ``walked.has_rel(rel)``
    scoped: bool  # --path limited the reconcile to one folder


class _Ready:
    def __init__(self, task: _Task, prepared: Prepared) -> None:
        self.task = task
        self.prepared = prepared
        self.request: NodeWrite | None = None  # built once the file is classified as needing a plant


class Gardener:
    """One forest's ingestion host: config, plugin host and pipeline."""

    def __init__(self, forest: Path, *, environ: Mapping[str, str] | None = None,
                 progress: Callable[[str, int, int], None] | None = None) -> None:
        self.forest = Path(forest).resolve()
        self.environ = dict(os.environ if environ is None else environ)
        self.config = GardenerConfig.load(self.forest)
        self.spec = HostSpec(
            command_converters=tuple(sorted(self.config.converters.items())),
            command_timeout=self.config.command_timeout,
            command_output_limit_mb=self.config.command_output_limit_mb,
            allow_list=self.environ.get(ALLOW_LIST_ENV),
        )
        # built when a file first needs it; until then its last answers (``remembered``)
        self.remembered = RememberedHost(self.forest, self.spec)
        self.progress = progress
        self._conventions_checked = False
        self.failures = FailureMemory(self.forest, lambda: self.remembered.fingerprint)

    @property
    def host(self) -> PluginHost:
        """The plugin host (discovery runs on first use)."""
        return self.remembered.host

    # -- verbs ------------------------------------------------------------------
    def adopt(self, source: Path, *, dest: str = "", curator: Any = None, dry_run: bool = False,
              jobs: int | None = None, executor: ExecutorChoice | None = None) -> Report:
        source = Path(source).resolve()
        dest = dest.strip("/")
        _check_dest(dest)  # before anything is recorded: a refused dest must not break later syncs
        self._check_new_source(source, dest)
        report = Report(dry_run=dry_run, warnings=self.config.problems())
        # recorded once the walk has accepted the source and before the first file: an
        # interrupted adopt is finished by sync, and a refused source (the forest inside
        # it) is never recorded, so it cannot break every later `vine sync`
        record = None if dry_run else (lambda: self.config.record_source(source, dest))
        from monkeyllm_core import Vine
        # one bulk session for the whole verb: marking stale, branches and the rollup
        # reach the branch once a second, not one checkpoint per write (gitstore)
        with self._conversions(executor, jobs, dry_run) as pool, \
                Vine(self.forest, writable=not dry_run) as vine, vine.bulk():
            self._reconcile(vine, source, dest, report, curator=curator, dry_run=dry_run, pool=pool,
                            on_walked=record)
            if curator is not None and not dry_run:
                from .rollup import rollup_forest
                report.rollup = rollup_forest(vine, curator=curator, only_ingest=True,
                                              problems=report.warnings)
        self._finish_curation(report, curator)
        return report

    def sync(self, source: Path | None = None, *, path: str | None = None, curator: Any = None,
             dry_run: bool = False, jobs: int | None = None, executor: ExecutorChoice | None = None) -> Report:
        sources = self.config.sources
        if source is not None:
            source = Path(source).resolve()
            entry = self.config.source_for(source)
            if entry is None:
                raise VineError("E_NOT_FOUND", f"{source} was never adopted into this forest",
                                "Run `vine adopt SOURCE` first.")
            sources = [entry]
        if not sources:
            raise VineError("E_NOT_FOUND", "this forest has no adopted source",
                            "Run `vine adopt SOURCE --forest FOREST` first.")
        if not dry_run and curator is None:
            quiet = self._sync_without_writer(sources, path)
            if quiet is not None:
                return quiet
        from monkeyllm_core import Vine
        report = Report(dry_run=dry_run, warnings=self.config.problems())
        # one bulk session for the whole verb: marking stale, branches and the rollup
        # reach the branch once a second, not one checkpoint per write (gitstore)
        with self._conversions(executor, jobs, dry_run) as pool, \
                Vine(self.forest, writable=not dry_run) as vine, vine.bulk():
            for entry in sources:
                self._reconcile(vine, Path(entry["root"]), entry.get("dest", ""), report,
                                curator=curator, dry_run=dry_run, pool=pool, only_path=path)
            if curator is not None and not dry_run:
                from .rollup import rollup_forest
                report.rollup = rollup_forest(vine, curator=curator, only_ingest=True,
                                              problems=report.warnings)
        self._finish_curation(report, curator)
        return report

    def _sync_without_writer(self, sources: list[dict[str, Any]], path: str | None) -> Report | None:
        """The report of a sync that finds nothing to write, told without opening the
        writer (no lock, no git process); None when there is work, or when the forest
        needs a writable open first (``writing.idle``): then the writer's sync decides
        it all again under the lock, so nothing decided here can race another writer."""
        from monkeyllm_core.forest.catalog import CATALOG_PATH, Catalog
        from monkeyllm_core.writing.idle import catalog_is_current, idle_forest, still_idle
        idle = idle_forest(self.forest)
        # a killed run's conversions: the writer's sync sweeps them (``_prepared``)
        if idle is None or _holds_files(self.forest / TMP_DIR) or not (self.forest / CATALOG_PATH).is_file():
            return None
        report = Report(dry_run=False, warnings=self.config.problems())
        try:
            catalog = Catalog(self.forest, readonly=True)
        except Exception:
            return None
        try:
            if not catalog_is_current(catalog, idle.head):
                return None  # the writer rebuilds it first
            for entry in sources:
                plan = self._plan(catalog, Path(entry["root"]), entry.get("dest", ""), report, only_path=path)
                if plan.tasks or any(not row["stale"] for _, row in plan.vanished):
                    return None
                self._forget_vanished_failures(plan)
                report.stale += [row["id"] for _, row in plan.vanished]
        except Exception:
            # whatever failed here (a source gone, an unreadable folder) fails the
            # writer's sync too, which says it as it always has, after its own checks
            return None
        finally:
            catalog.close()
        if self.failures.unsaved or self.remembered.unsaved or not still_idle(self.forest, idle):
            return None
        return report

    def _check_new_source(self, source: Path, dest: str) -> None:
        """A source keeps the dest it was adopted under, and sources never nest: a
        file must belong to exactly one source, or syncing one would touch the other."""
        for entry in self.config.sources:
            root = Path(entry["root"])
            if root == source:
                if entry.get("dest", "") != dest:
                    raise VineError("E_CONFLICT", f"{source} was adopted under --dest '{entry.get('dest', '')}'",
                                    "Adopt it again with that --dest, or into another forest.")
            elif root in source.parents or source in root.parents:
                raise VineError("E_CONFLICT", f"{source} overlaps the adopted source {root}",
                                "Adopt folders that do not contain each other, or sync the adopted one.")

    def _conversions(self, executor: ExecutorChoice | None, jobs: int | None,
                     dry_run: bool) -> contextlib.AbstractContextManager[ConversionPool | None]:
        """The verb's conversion pool (a dry run converts nothing and needs none)."""
        if dry_run:
            return contextlib.nullcontext()
        from .executors import conversion_pool
        return conversion_pool(executor, spec=self.spec, tmp_dir=self.forest / TMP_DIR, jobs=jobs)

    def _finish_curation(self, report: Report, curator: Any) -> None:
        if curator is not None:
            report.curation_model = curator.model
            report.curation = curator.stats()
            report.warnings += [f"curation: {p}" for p in curator.problems]

    # -- reconcile ----------------------------------------------------------------
    def _reconcile(self, vine: Vine, source: Path, dest: str, report: Report, *, curator: Any,
                   dry_run: bool, pool: ConversionPool | None, only_path: str | None = None,
                   on_walked: Callable[[], None] | None = None) -> None:
        plan = self._plan(vine.catalog, source, dest, report, only_path=only_path, on_walked=on_walked)
        tasks, branches = plan.tasks, plan.branches
        self._forget_vanished_failures(plan)
        for rel, row in plan.vanished:
            if not row["stale"] and not dry_run:
                try:
                    vine.replace(row["id"], {"stale": True}, message=f"gardener(sync): {row['id']}")
                except VineError as exc:  # one unwritable passport must not abort the batch
                    report.errors.append(f"{rel}: vanished, but {row['id']} cannot be marked stale: "
                                         f"{error_line(exc)}")
                    continue
            elif not row["stale"]:
                report.plan.append(f"mark stale {row['id']}")
            report.stale.append(row["id"])

        if dry_run:
            for task in tasks:
                if task.existing is None:
                    self._ensure_branches(vine, branches, task.file.rel, report, dry_run=True)
                verb = "refresh" if task.existing else "plant"
                report.plan.append(f"{verb} {task.node_id} <- {task.file.rel}")
            return
        assert pool is not None  # only a dry run has none, and it returned above
        if tasks:
            # built before the pool forks, so every worker inherits it, and the
            # plants ask it for on_curate hooks
            self.remembered.host  # noqa: B018
        batch: list[_Ready] = []
        try:
            with vine.bulk():  # planted nodes reach the branch within a second (gitstore)
                for ready in self._prepared(vine, tasks, pool, source):
                    if not self._classify(vine, ready, source, report):
                        continue
                    batch.append(ready)
                    if curator is None or len(batch) >= CURATE_BATCH:
                        self._plant_batch(vine, batch, report, curator, branches)
                        batch = []
                if batch:
                    self._plant_batch(vine, batch, report, curator, branches)
        finally:
            self.failures.save()
            self.remembered.save()

    def _plan(self, catalog: Catalog, source: Path, dest: str, report: Report, *, only_path: str | None = None,
              on_walked: Callable[[], None] | None = None) -> _Plan:
        """What a reconcile of ``source`` must do, decided from the walk and the
        catalog alone (nothing written): the files it reports as they are (unchanged,
        unsupported, failed before, set aside) go into ``report``; the ones to convert
        and the nodes whose file vanished are returned."""
        from .slugs import FileIds, assign_dir_ids
        if not source.is_dir():
            raise VineError("E_NOT_FOUND", f"source {source} is not a folder",
                            "Pass the export folder to adopt.")
        walk = walk_source(source, forest=self.forest, ignore=self.config.ignore)
        if on_walked is not None:
            on_walked()
        scope = (only_path or "").strip("/")
        in_scope = (lambda rel: not scope or rel == scope or rel.startswith(scope + "/"))
        report.skipped += [f"{rel}: {reason}" for rel, reason in walk.skipped if in_scope(rel)]
        report.errors += [f"{rel}: {reason}" for rel, reason in walk.errors if in_scope(rel)]
        report.unsupported += [f"{rel}: {reason}" for rel, reason in walk.unsupported if in_scope(rel)]

        prefix = file_uri(source) + "/"
        origin_of = origins_under(source)
        existing = catalog.provenance(prefix)
        # exactly this source's nodes (defence in depth: a nested source, which adopt
        # refuses, would share the prefix with different source paths)
        by_rel = {row["source_path"]: row for row in existing.values()
                  if row.get("source_path") is not None and row["origin"] == origin_of(row["source_path"])}
        taken_dirs = {rel: row["id"] for rel, row in by_rel.items() if row["type"] == "branch"}
        file_rows = {rel: row for rel, row in by_rel.items() if row["type"] != "branch"}
        unprefix = (lambda node_id: node_id[len(dest) + 1:] if dest else node_id)
        dir_ids = assign_dir_ids(walk.dirs, {r: unprefix(i) for r, i in taken_dirs.items()})
        add_dest = (lambda node_id: f"{dest}/{node_id}" if dest else node_id)
        branches = _Branches(source, dest, {d: add_dest(i) for d, i in dir_ids.items()})

        # one pass decides every file; the tasks are made from its verdicts when planted
        chosen = bytearray(len(walk.files))
        count = 0
        unwalked = set(file_rows)
        for index, f in enumerate(walk.files):
            unwalked.discard(f.rel)
            if not in_scope(f.rel):
                continue
            row = file_rows.get(f.rel)
            if row and not row["stale"] and row["source_size"] == f.size and row["source_mtime"] == round(f.mtime, 3):
                report.unchanged.append(row["id"])
                continue
            unsupported = self.remembered.unsupported_reason(f.rel.rpartition("/")[2])
            if unsupported is not None:
                # decided from the name alone: a folder of videos is not hashed on every sync
                report.unsupported.append(f"{f.rel}: {unsupported}")
                if report.dry_run:
                    report.plan.append(f"unsupported {f.rel}: {unsupported}")
                continue
            failed = self.failures.recall(origin_of(f.rel), f.size, f.mtime)
            if failed is not None:
                getattr(report, failed.list_name).append(f"{f.rel}: {failed.line}{NOT_RETRIED}")
                continue
            chosen[index] = 1
            count += 1

        def file_ids() -> FileIds:
            return FileIds({r: unprefix(row["id"]) for r, row in file_rows.items()}, dir_ids)

        tasks = _Tasks(walk.files, chosen, count, file_rows, file_ids, add_dest)
        vanished = [(rel, file_rows[rel]) for rel in sorted(unwalked) if in_scope(rel)]
        return _Plan(tasks=tasks, vanished=vanished, branches=branches, prefix=prefix, origin_of=origin_of,
                     walked=walk.files, scoped=bool(scope))

    def _forget_vanished_failures(self, plan: _Plan) -> None:
        if not plan.scoped:  # a file gone from the source has nothing left to retry
            self.failures.keep_only(plan.prefix,
                                    lambda origin: _walked_origin(origin, plan.prefix, plan.walked, plan.origin_of))

    def _ensure_branches(self, vine: Vine, branches: _Branches, rel: str, report: Report, *,
                         dry_run: bool = False) -> None:
        """Plant the branches above the file ``rel`` that do not exist yet, outermost
        first: the ``--dest`` chain, then each source folder on the way down."""
        from .derive import cut_at_word
        from .nodes import clean_title
        parts = branches.dest.split("/") if branches.dest else []
        chain: list[tuple[str, str | None]] = [("/".join(parts[:i + 1]) + "/_index", None) for i in range(len(parts))]
        folders = rel.split("/")[:-1]
        chain += [(branches.dir_ids["/".join(folders[:i + 1])], "/".join(folders[:i + 1])) for i in range(len(folders))]
        for branch_id, folder in chain:
            if branch_id in branches.known:  # asked once per branch, not once per file
                continue
            if vine.exists(branch_id):
                branches.known.add(branch_id)
                continue
            name = folder.rsplit("/", 1)[-1] if folder is not None else branch_id.rsplit("/", 2)[-2]
            name = clean_title(name) or branch_id  # a folder name is the title: no escape sequences
            if dry_run:
                branches.known.add(branch_id)
                report.plan.append(f"plant branch {branch_id}")
                continue
            summary = cut_at_word(f"Documents adopted from source folder '{name}'." if folder is not None
                                  else f"Branch holding the sources adopted under '{name}'.")
            fields: dict[str, Any] = {"id": branch_id, "type": "branch", "title": name, "summary": summary,
                                      "source": "ingest"}
            if folder is not None:
                fields.update(origin=file_uri(branches.source / folder), source_path=folder)
            vine.plant(fields)
            branches.known.add(branch_id)
            report.branches.append(branch_id)

    def _prepared(self, vine: Vine, tasks: _Tasks, pool: ConversionPool, source: Path) -> Iterator[_Ready]:
        """Worker results in walk order, with a bounded number in flight.

        Local workers die with this process (``init_worker``). Before waiting for a
        result that is not ready, the writer checkpoints: what it planted meanwhile
        reaches the branch instead of waiting on a conversion. Tasks, jobs and batches
        are made as the window moves: only the files in flight are held."""
        total = len(tasks)
        tmp_dir = str(self.forest / TMP_DIR)
        # leftovers of a killed run (we hold the writer lock, so nobody else uses them)
        shutil.rmtree(tmp_dir, ignore_errors=True)
        os.makedirs(tmp_dir, exist_ok=True)
        if not tasks:
            return
        from .prepared import NodePlan

        def plan_of(task: _Task) -> NodePlan:
            return NodePlan(task.node_id, str(source), task.file.size, task.file.mtime)

        if pool.converts_in_writer(total):
            from .worker import prepare_file
            for i, task in enumerate(tasks):
                self._tick(i, total)
                # the conversion runs here, in the writer: let the branch catch up first if due
                # (one conversion longer than a second still holds it back: use --jobs 2+)
                vine.checkpoint_if_due()
                yield _Ready(task, prepare_file(self.spec, task.file.location, task.file.rel, task.known_hash,
                                                tmp_dir, name_title=task.name_title, node=plan_of(task)))
            return
        from .executors import WINDOW_PER_SLOT, ConversionJob
        window = pool.slots * WINDOW_PER_SLOT  # files in flight
        queued: deque[_Task] = deque()  # the tasks whose jobs were made, in order: results pair with them

        def jobs() -> Iterator[ConversionJob]:
            for t in tasks:
                queued.append(t)
                yield ConversionJob(path=t.file.location, rel=t.file.rel, known_hash=t.known_hash,
                                    name_title=t.name_title, size=t.file.size, node=plan_of(t))

        # consecutive files, one task each: results come in walk order
        batches = pool.batches(jobs(), count=total, names=tasks.names())
        next_batch = next(batches, None)
        in_flight: deque[tuple[Future[Any], list[ConversionJob]]] = deque()
        submitted = 0  # files in the batches submitted so far
        results: deque[Prepared] = deque()  # the current batch's results not yet yielded
        for i in range(total):
            while next_batch is not None and submitted < i + window:
                in_flight.append((pool.submit(next_batch), next_batch))
                submitted += len(next_batch)
                next_batch = next(batches, None)
            self._tick(i, total)
            if not results:  # this task's file opens the next batch
                future, batch = in_flight.popleft()
                if not future.done() and not _ready_soon(future):
                    vine.flush()
                # a worker that died: those files fail, the run goes on
                results.extend(pool.collect(future, batch))
            yield _Ready(queued.popleft(), results.popleft())

    def _tick(self, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress("convert", done, total)

    # -- per file -------------------------------------------------------------------
    def _classify(self, vine: Vine, ready: _Ready, source: Path, report: Report) -> bool:
        """Sort a prepared file into the report; True when it still needs a plant."""
        from .nodes import build_node, tidy
        task, prep = ready.task, ready.prepared
        rel = task.file.rel
        if prep.read_error:
            report.errors.append(f"{rel}: {prep.read_error}")
            return False
        if prep.unchanged:
            # same bytes, new mtime: re-arm the fast path in the catalog (no commit)
            vine.catalog.touch_source_stat(task.node_id, task.file.size, round(task.file.mtime, 3))
            report.unchanged.append(task.node_id)
            return False
        result = prep.result
        assert result is not None
        name = task.file.path.name
        origin = origins_under(source)(rel)
        if result.unsupported:
            report.unsupported.append(f"{rel}: {result.unsupported}")
            self.failures.remember(origin, task.file.size, task.file.mtime,
                                   Failure(list_name="unsupported", line=result.unsupported))
            return False
        # a converter that failed before another one converted the file is an error
        # too, naming who failed on what (ingestion.md); the file itself plants
        fell_back = [tidy(line, name) for line in result.fallbacks]
        if result.error or result.conversion is None:
            line = "; ".join([*fell_back, tidy(str(result.error), name)])
            report.errors.append(f"{rel}: {line}")
            self.failures.remember(origin, task.file.size, task.file.mtime, Failure(list_name="errors", line=line))
            return False
        self.failures.forget(origin)
        for line in fell_back:
            report.errors.append(f"{rel}: {line}; converted by {result.converter} instead")
            report.recovered += 1
        report.warnings += [f"{rel}: {tidy(w, name)}" for w in result.conversion.warnings]
        report.warnings += [f"{rel}: {p}" for p in prep.problems]
        problem = prep.build_error
        if prep.request is not None:  # built by the worker stage
            ready.request = prep.request
        elif problem is None:
            try:
                ready.request = build_node(task.node_id, task.file, prep, result.conversion, source,
                                           lambda: self._tmp_path(vine), name_title=task.name_title)
            except Exception as exc:
                problem = error_line(exc)
        if problem is not None:
            report.errors.append(f"{rel}: {problem}")
            if prep.dataset_db:
                Path(prep.dataset_db).unlink(missing_ok=True)
            return False
        return True

    def _tmp_path(self, vine: Vine) -> Path:
        tmp_dir = vine.root / TMP_DIR
        tmp_dir.mkdir(parents=True, exist_ok=True)
        from .prepared import new_tmp_path
        return Path(new_tmp_path(str(tmp_dir)))

    # -- curate + plant ---------------------------------------------------------------
    def _plant_batch(self, vine: Vine, batch: list[_Ready], report: Report, curator: Any,
                     branches: _Branches) -> None:
        outcomes: dict[str, Any] = {}
        if curator is not None:
            outcomes = self._curate(vine, batch, curator, report)
        for ready in batch:
            self._plant_one(vine, ready, report, outcomes.get(ready.task.node_id), branches)

    def _curate(self, vine: Vine, batch: list[_Ready], curator: Any, report: Report) -> dict[str, Any]:
        from .curator import Candidate, CurationRequest
        vine.flush()  # the model may take a while: what is planted reaches the branch first
        requests = []
        for ready in batch:
            assert ready.request is not None
            fields = ready.request.passport
            if ready.task.existing and (vine.read(ready.task.node_id).frontmatter.get("summary_source") != "derived"):
                continue  # a curated or hand-written summary is kept on sync
            parent = parent_of(fields["id"])
            found = vine.search(f"{fields['title']} {fields['summary']}", k=12, kind="banana",
                                exclude=[fields["id"], parent or ""])
            candidates = [Candidate(id=c["id"], title=c["title"], summary=c["summary"])
                          for c in found if not c["id"].startswith("_meta/")][:8]
            requests.append(CurationRequest(
                node_id=fields["id"], node_type=fields["type"], title=fields["title"],
                text=_curation_text(ready), derived_summary=fields["summary"],
                tags=list(fields.get("tags") or []), candidates=candidates))
        outcomes = {}
        for outcome in curator.curate_many(requests):
            outcomes[outcome.node_id] = outcome
            report.warnings += [f"{outcome.node_id}: {p}" for p in outcome.problems]
        return outcomes

    def _plant_one(self, vine: Vine, ready: _Ready, report: Report, outcome: Any, branches: _Branches) -> None:
        from monkeyllm_core import NodeWrite
        from monkeyllm_core.store.history import GitError

        from .nodes import merge_tags
        task, request = ready.task, ready.request
        assert request is not None
        fields = dict(request.passport)
        body = request.body or ""
        if self.config.default_tags:
            fields["tags"] = merge_tags(fields.get("tags"), self.config.default_tags)
        if outcome is not None:
            if outcome.summary_source == "llm":
                fields["summary"] = outcome.summary
                fields["summary_source"] = "curated"
            # the Curator's tags already hold the source's and the default ones, folded, at most five
            fields["tags"] = list(outcome.tags)
            if outcome.links:
                fields["links"] = [dict(link) for link in outcome.links if vine.exists(link["target"])]
        fields = self._run_hooks(vine, fields, report, task.file.rel)
        if not fields.get("tags"):
            fields.pop("tags", None)
        try:
            if fields.get("type") == "dataset":
                self._ensure_dataset_conventions(vine)
            if task.existing is None:
                self._ensure_branches(vine, branches, task.file.rel, report)
                vine.plant(NodeWrite(passport=fields, body=body, payload=request.payload))
                report.planted.append(task.node_id)
            else:
                self._refresh(vine, task, fields, body, request.payload)
                report.updated.append(task.node_id)
        except GitError:
            raise  # the repository cannot take any write: one line for the run, not one per file
        except Exception as exc:
            report.errors.append(f"{task.file.rel}: {error_line(exc)}")
        finally:
            payload = request.payload
            if payload is not None and payload.move and payload.source.exists():
                payload.source.unlink()

    def _ensure_dataset_conventions(self, vine: Vine) -> None:
        """A forest made before the dialect stated the dataset conventions gets them
        (one graft of ``_meta/schema``) before its first dataset: its manuals no longer
        repeat them."""
        if self._conventions_checked:
            return
        from monkeyllm_core.forest.dialect import CONVENTIONS_HEADER, DATASET_CONVENTIONS
        from monkeyllm_core.forest.sections import outline
        self._conventions_checked = True
        schema = vine.read(SCHEMA_ID)
        if CONVENTIONS_HEADER not in outline(schema.body):
            vine.graft(SCHEMA_ID, {"append_section": {"header": CONVENTIONS_HEADER, "body": DATASET_CONVENTIONS}})

    def _refresh(self, vine: Vine, task: _Task, fields: dict[str, Any], body: str,
                 payload: PayloadSpec | None) -> None:
        """A changed source: body and payload replaced together; curated fields kept."""
        from monkeyllm_core import NodeWrite

        from .nodes import keep_human_sections, merge_links, merge_tags
        current = vine.read(task.node_id)
        old = current.frontmatter
        was, now = _payload_family(old), _payload_family(fields)
        if was != now:
            # a node's type is fixed (graft refuses to change it): refreshing a dataset
            # with prose would leave its old rows posing as current, so say so instead
            raise VineError("E_CONFLICT", f"{task.node_id} is a {was} node but {task.file.rel} now converts "
                            f"to a {now} node; the node is left unchanged",
                            "Rename the source file to plant a new node, or remove the old node by hand.")
        keep_summary = old.get("summary_source") != "derived" and fields.get("summary_source") != "curated"
        if keep_summary:
            fields["summary"] = old["summary"]
            fields["summary_source"] = old.get("summary_source")
        fields["tags"] = merge_tags(old.get("tags"), fields.get("tags"))
        fields["links"] = merge_links(old.get("links"), fields.get("links"))
        fields["stale"] = None
        fields.pop("id", None)
        if fields.get("type") == "dataset":
            # only the generated sections change; ## Notes and the rest belong to people
            new_body = current.body
        else:
            new_body = keep_human_sections(current.body, body, old.get("source_sections"))
            if "source_sections" not in fields:
                fields["source_sections"] = None  # the source has no sections any more
        vine.replace(task.node_id, NodeWrite(passport=fields, body=new_body, payload=payload),
                     message=f"gardener(sync): {task.node_id}")

    def _run_hooks(self, vine: Vine, fields: dict[str, Any], report: Report, rel: str) -> dict[str, Any]:
        """on_curate hooks see passport fields only; ``on_curate_policy`` judges and merges what they return."""
        if not self.host.has_hook("on_curate"):
            return fields
        from .on_curate_policy import draft_for_hooks, merge_hook_result
        result, problems = self.host.run_on_curate(draft_for_hooks(fields))
        merged, dropped = merge_hook_result(vine, fields, result)
        report.warnings += [f"{rel}: {p}" for p in (*problems, *dropped)]
        return merged


# -- helpers -----------------------------------------------------------------------------
WAIT_BEFORE_CHECKPOINT = 0.02  # a result this close costs less to wait for than a checkpoint


def _ready_soon(future: Future[Any]) -> bool:
    """True when ``future`` is done within a moment: a short wait is not worth a
    checkpoint, a real one (a big conversion) is."""
    from concurrent.futures import TimeoutError as FutureTimeout  # not the builtin before 3.11
    try:
        future.exception(timeout=WAIT_BEFORE_CHECKPOINT)
    except FutureTimeout:
        return False
    except BaseException:  # cancelled, or the pool broke: result() reports it
        return True
    return True


def _holds_files(folder: Path) -> bool:
    """Whether ``folder`` exists and is not empty (or cannot be listed)."""
    try:
        with os.scandir(folder) as entries:
            return next(entries, None) is not None
    except FileNotFoundError:
        return False
    except OSError:
        return True


def _walked_origin(origin: str, prefix: str, walked: WalkedFiles, origin_of: Callable[[str], str]) -> bool:
    """True when ``origin`` (under ``prefix``) is the URI of a walked file."""
    rel = unquote(origin[len(prefix):])
    return walked.has_rel(rel) and origin_of(rel) == origin


def _payload_family(fm: Mapping[str, Any]) -> str:
    if fm.get("payload_type") == "sqlite" or fm.get("type") == "dataset":
        return "dataset"
    return "payload-backed" if fm.get("payload") else "text"


def _check_dest(dest: str) -> None:
    """A --dest names branches the Gardener will plant: each segment must make a valid
    id, and none may take a name the forest reserves (``_index``, ``_meta``, ...)."""
    if not dest:
        return
    try:
        check_new_id(f"{dest}/_index")
    except VineError:
        reason = True
    else:
        reason = any(seg.startswith("_") for seg in dest.split("/"))
    if reason:
        raise VineError("E_FRONTMATTER", f"--dest {dest!r} is not a branch path",
                        "Use folder names joined by '/', e.g. --dest docs/exports; no '..', no empty "
                        "segments, no segment starting with '_' or '.'.")


def _curation_text(ready: _Ready) -> str:
    """What the model reads: the body, plus for a dataset its tables and columns
    (its map is generated at plant time, after curation)."""
    assert ready.request is not None
    fields, payload = ready.request.passport, ready.request.payload
    text = ready.request.body or ""
    if fields.get("type") == "dataset":
        text = f"{text.rstrip()}\n\n{fields['summary']}\n"
        notes = payload.manual_notes if payload is not None else ()
        if notes:
            text += "\n".join(notes) + "\n"
    return text


