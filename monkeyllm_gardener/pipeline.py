"""The Gardener's pipeline: convert, curate, plant, rollup.

``adopt`` and ``sync`` share one reconcile: walk the source, read the forest's
state for that source from the catalog (no YAML parsing), decide per file
(unchanged / new / changed / vanished), convert what needs it in worker
processes, and plant in walk order in the main process, so the forest is the
same for any ``--jobs``. Nothing fails the batch: every file ends in exactly one
list of the report.
"""
from __future__ import annotations

import os
import shutil
import sys
import urllib.parse
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from monkeyllm_core import Vine, VineError
from monkeyllm_core.hashing import sha256_file
from monkeyllm_core.rules import check_new_id, check_summary, parent_of
from monkeyllm_core.sections import get_section, outline

from .config import GardenerConfig
from .conversion import Conversion
from .host import ALLOW_LIST_ENV, ConvertResult, HostSpec, extension_candidates, host_from_spec
from .report import Report
from .walk import SourceFile, walk_source

INGEST_CONFIDENCE = 0.7
CURATE_BATCH = 32
TMP_DIR = "_derived/tmp"


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
    dataset_db: str | None = None  # a dataset loaded by the worker, to be moved into place
    row_counts: Mapping[str, int] | None = None
    derived: tuple[str, str] | None = None  # (title, summary) of a markdown conversion


def prepare_file(spec: HostSpec, path: str, rel: str, known_hash: str | None,
                 tmp_dir: str | None = None) -> Prepared:
    """Hash and convert one file, and load a dataset's rows into a new SQLite file
    under ``tmp_dir`` (with the engine's own ``create_dataset``), so the heavy work
    runs in a worker process and the main process only moves the file in place."""
    try:
        digest = sha256_file(path)
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
        import tempfile
        from monkeyllm_core.dataset import create_dataset
        fd, name = tempfile.mkstemp(suffix=".db", dir=tmp_dir)
        os.close(fd)
        os.unlink(name)  # create_dataset refuses an existing file
        try:
            counts = create_dataset(name, conv.schema, conv.rows)
        except Exception as exc:
            return Prepared(rel=rel, sha256=digest, read_error=f"{result.converter} failed: {_one_line(exc)}")
        # the rows are in the file now: do not send the row sources back
        result = dataclasses.replace(result, conversion=dataclasses.replace(conv, rows=None))
        return Prepared(rel=rel, sha256=digest, result=result, description=description, problems=problems,
                        dataset_db=name, row_counts=counts)
    if conv is not None and conv.kind == "markdown":
        # deriving a summary reads the whole text: do it here, on the pool
        return Prepared(rel=rel, sha256=digest, result=result, description=description, problems=problems,
                        derived=_title_and_summary(conv, rel))
    if conv is not None and conv.payload_type == "sqlite":
        # count the rows here, in the worker: a big database's COUNT(*) is a scan
        from monkeyllm_core.sample_map import describe_tables
        try:
            counts = describe_tables(path).get("row_counts", {})
        except Exception:  # the engine reports an unreadable database when it maps the copy
            counts = None
        return Prepared(rel=rel, sha256=digest, result=result, description=description, problems=problems,
                        row_counts=counts)
    return Prepared(rel=rel, sha256=digest, result=result, description=description, problems=problems)


def _title_of(conv: Conversion, rel: str) -> str:
    """The source's own frontmatter title, else the converter's, else the file name."""
    stem = rel.rsplit("/", 1)[-1]
    stem = stem.rsplit(".", 1)[0] if "." in stem[1:] else stem
    own = dict(conv.frontmatter or {})
    return _clean_title(own.get("title")) or _clean_title(conv.title) or stem


def _title_and_summary(conv: Conversion, rel: str) -> tuple[str, str]:
    from .derive import derive_summary
    title = _title_of(conv, rel)
    return title, derive_summary(conv.markdown or "", title=title, kind_hint=conv.node_type or "note")


def file_uri(path: Path) -> str:
    return "file://" + urllib.parse.quote(path.as_posix())


@dataclass
class _Task:
    file: SourceFile
    node_id: str
    existing: dict[str, Any] | None
    known_hash: str | None


@dataclass
class _Ready:
    task: _Task
    prepared: Prepared
    fields: dict[str, Any] = field(default_factory=dict)
    body_text: str = ""


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
            allow_list=self.environ.get(ALLOW_LIST_ENV),
        )
        self.host = host_from_spec(self.spec)
        self.progress = progress

    # -- verbs ------------------------------------------------------------------
    def adopt(self, source: Path, *, dest: str = "", curator: Any = None, dry_run: bool = False,
              jobs: int | None = None) -> Report:
        source = Path(source).resolve()
        dest = dest.strip("/")
        _check_dest(dest)  # before anything is recorded: a refused dest must not break later syncs
        self._check_new_source(source, dest)
        report = Report(dry_run=dry_run)
        # recorded once the walk has accepted the source and before the first file: an
        # interrupted adopt is finished by sync, and a refused source (the forest inside
        # it) is never recorded, so it cannot break every later `vine sync`
        record = None if dry_run else (lambda: self.config.record_source(source, dest))
        with Vine(self.forest, writable=not dry_run, commit_ids=False) as vine:
            self._reconcile(vine, source, dest, report, curator=curator, dry_run=dry_run, jobs=jobs,
                            on_walked=record)
            if curator is not None and not dry_run:
                from .rollup import rollup_forest
                report.rollup = rollup_forest(vine, curator=curator, only_ingest=True,
                                              problems=report.warnings)
        self._finish_curation(report, curator)
        return report

    def sync(self, source: Path | None = None, *, path: str | None = None, curator: Any = None,
             dry_run: bool = False, jobs: int | None = None) -> Report:
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
        report = Report(dry_run=dry_run)
        with Vine(self.forest, writable=not dry_run, commit_ids=False) as vine:
            for entry in sources:
                self._reconcile(vine, Path(entry["root"]), entry.get("dest", ""), report,
                                curator=curator, dry_run=dry_run, jobs=jobs, only_path=path)
            if curator is not None and not dry_run:
                from .rollup import rollup_forest
                report.rollup = rollup_forest(vine, curator=curator, only_ingest=True,
                                              problems=report.warnings)
        self._finish_curation(report, curator)
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

    def _finish_curation(self, report: Report, curator: Any) -> None:
        if curator is not None:
            report.curation_model = curator.model
            report.curation = curator.stats()
            report.warnings += [f"curation: {p}" for p in curator.problems]

    # -- reconcile ----------------------------------------------------------------
    def _reconcile(self, vine: Vine, source: Path, dest: str, report: Report, *, curator: Any,
                   dry_run: bool, jobs: int | None, only_path: str | None = None,
                   on_walked: Callable[[], None] | None = None) -> None:
        from .slugs import assign_dir_ids, assign_ids
        if not source.is_dir():
            raise VineError("E_NOT_FOUND", f"source {source} is not a folder",
                            "Pass the export folder to adopt.")
        walk = walk_source(source, forest=self.forest, ignore=self.config.ignore)
        if on_walked is not None:
            on_walked()
        report.skipped += [f"{rel}: {reason}" for rel, reason in walk.skipped]
        scope = (only_path or "").strip("/")
        in_scope = (lambda rel: not scope or rel == scope or rel.startswith(scope + "/"))
        files = [f for f in walk.files if in_scope(f.rel)]

        prefix = file_uri(source) + "/"
        existing = vine.catalog.provenance(prefix)
        # exactly this source's nodes (defence in depth: a nested source, which adopt
        # refuses, would share the prefix with different source paths)
        by_rel = {row["source_path"]: row for row in existing.values()
                  if row.get("source_path") is not None and row["origin"] == file_uri(source / row["source_path"])}
        taken_dirs = {rel: row["id"] for rel, row in by_rel.items() if row["type"] == "branch"}
        taken_files = {rel: row["id"] for rel, row in by_rel.items() if row["type"] != "branch"}
        unprefix = (lambda node_id: node_id[len(dest) + 1:] if dest else node_id)
        dir_ids = assign_dir_ids(walk.dirs, {r: unprefix(i) for r, i in taken_dirs.items()})
        file_ids = assign_ids([f.rel for f in walk.files], {r: unprefix(i) for r, i in taken_files.items()},
                              dir_ids=dir_ids)
        add_dest = (lambda node_id: f"{dest}/{node_id}" if dest else node_id)

        self._plant_branches(vine, source, dest, walk.dirs, {d: add_dest(i) for d, i in dir_ids.items()},
                             report, dry_run=dry_run, in_scope=in_scope, scope=scope)

        tasks: list[_Task] = []
        for f in files:
            row = by_rel.get(f.rel) if by_rel.get(f.rel, {}).get("type") != "branch" else None
            node_id = row["id"] if row else add_dest(file_ids[f.rel])
            if row and not row["stale"] and row["source_size"] == f.size and row["source_mtime"] == round(f.mtime, 3):
                report.unchanged.append(node_id)
                continue
            unsupported = self._unsupported(f)
            if unsupported is not None:
                # decided from the name alone: a folder of videos is not hashed on every sync
                report.unsupported.append(f"{f.rel}: {unsupported}")
                if dry_run:
                    report.plan.append(f"unsupported {f.rel}: {unsupported}")
                continue
            tasks.append(_Task(f, node_id, row, row["source_hash"] if row and not row["stale"] else None))

        walked = {f.rel for f in walk.files}
        for rel, row in sorted(by_rel.items()):
            if row["type"] == "branch" or rel in walked or not in_scope(rel):
                continue
            if not row["stale"] and not dry_run:
                try:
                    vine.replace(row["id"], {"stale": True}, message=f"gardener(sync): {row['id']}")
                except VineError as exc:  # one unwritable passport must not abort the batch
                    report.errors.append(f"{rel}: vanished, but {row['id']} cannot be marked stale: "
                                         f"{_one_line(exc)}")
                    continue
            elif not row["stale"]:
                report.plan.append(f"mark stale {row['id']}")
            report.stale.append(row["id"])

        if dry_run:
            for task in tasks:
                verb = "refresh" if task.existing else "plant"
                report.plan.append(f"{verb} {task.node_id} <- {task.file.rel}")
            return
        batch: list[_Ready] = []
        for ready in self._prepared(tasks, jobs):
            if not self._classify(vine, ready, source, report):
                continue
            batch.append(ready)
            if curator is None or len(batch) >= CURATE_BATCH:
                self._plant_batch(vine, batch, report, curator)
                batch = []
        if batch:
            self._plant_batch(vine, batch, report, curator)

    def _unsupported(self, f: SourceFile) -> str | None:
        """Why no converter can take this file, or None when one can."""
        candidates = extension_candidates(f.path.name)
        if any(self.host.claimants(ext) for ext in candidates):
            return None
        return self.host._unsupported_reason(candidates)

    def _plant_branches(self, vine: Vine, source: Path, dest: str, dirs: Sequence[str],
                        dir_ids: Mapping[str, str], report: Report, *, dry_run: bool,
                        in_scope: Callable[[str], bool], scope: str = "") -> None:
        from .derive import cut_at_word

        def in_scope_parent(rel: str) -> bool:
            return bool(scope) and scope.startswith(rel + "/")

        chain = []
        parts = dest.split("/") if dest else []
        for i in range(len(parts)):
            chain.append(("/".join(parts[:i + 1]) + "/_index", None))
        # with --path, the folders above the scope are needed too (as parents)
        chain += [(dir_ids[d], d) for d in dirs if in_scope(d) or in_scope_parent(d)]
        for branch_id, rel in chain:
            if vine.exists(branch_id):
                continue
            name = rel.rsplit("/", 1)[-1] if rel else branch_id.rsplit("/", 2)[-2]
            if dry_run:
                report.plan.append(f"plant branch {branch_id}")
                continue
            summary = cut_at_word(f"Documents adopted from source folder '{name}'." if rel is not None
                                  else f"Branch holding the sources adopted under '{name}'.")
            fields: dict[str, Any] = {"id": branch_id, "type": "branch", "title": name, "summary": summary,
                                      "source": "ingest"}
            if rel is not None:
                fields.update(origin=file_uri(source / rel), source_path=rel)
            vine.plant(fields)
            report.branches.append(branch_id)

    def _prepared(self, tasks: list[_Task], jobs: int | None) -> Iterator[_Ready]:
        """Worker results in walk order, with a bounded number in flight."""
        jobs = jobs or os.cpu_count() or 1
        total = len(tasks)
        tmp_dir = str(self.forest / TMP_DIR)
        # leftovers of a killed run (we hold the writer lock, so nobody else uses them)
        shutil.rmtree(tmp_dir, ignore_errors=True)
        os.makedirs(tmp_dir, exist_ok=True)
        if jobs <= 1 or total <= 1:
            for i, task in enumerate(tasks):
                self._tick(i, total)
                yield _Ready(task, prepare_file(self.spec, str(task.file.path), task.file.rel, task.known_hash,
                                                tmp_dir))
            return
        import multiprocessing
        ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        window = jobs * 4
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            futures: list[Future[Prepared]] = []
            nxt = 0
            for i, task in enumerate(tasks):
                while nxt < total and nxt < i + window:
                    t = tasks[nxt]
                    futures.append(pool.submit(prepare_file, self.spec, str(t.file.path), t.file.rel, t.known_hash,
                                               tmp_dir))
                    nxt += 1
                self._tick(i, total)
                try:
                    prepared = futures[i].result()
                except Exception as exc:  # a worker that died: that file fails, the batch goes on
                    prepared = Prepared(rel=task.file.rel, read_error=f"worker failed: {exc}")
                futures[i] = None  # type: ignore[call-overload]  # free the result
                yield _Ready(task, prepared)

    def _tick(self, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress("convert", done, total)

    # -- per file -------------------------------------------------------------------
    def _classify(self, vine: Vine, ready: _Ready, source: Path, report: Report) -> bool:
        """Sort a prepared file into the report; True when it still needs a plant."""
        task, prep = ready.task, ready.prepared
        rel = task.file.rel
        if prep.read_error:
            report.errors.append(f"{rel}: {prep.read_error}")
            return False
        if prep.unchanged:
            # same bytes, new mtime: re-arm the fast path in the catalog (no commit)
            vine.catalog.db.execute("UPDATE nodes SET source_size = ?, source_mtime = ? WHERE id = ?",
                                    (task.file.size, round(task.file.mtime, 3), task.node_id))
            report.unchanged.append(task.node_id)
            return False
        result = prep.result
        assert result is not None
        name = task.file.path.name
        for line in result.fallbacks:
            report.warnings.append(f"{rel}: {_tidy(line, name)}")
        if result.unsupported:
            report.unsupported.append(f"{rel}: {result.unsupported}")
            return False
        if result.error or result.conversion is None:
            report.errors.append(f"{rel}: {_tidy(str(result.error), name)}")
            return False
        report.warnings += [f"{rel}: {_tidy(w, name)}" for w in result.conversion.warnings]
        report.warnings += [f"{rel}: {p}" for p in prep.problems]
        try:
            ready.fields, ready.body_text = self._node_fields(vine, task, prep, result.conversion, source)
        except Exception as exc:
            report.errors.append(f"{rel}: {_one_line(exc)}")
            if prep.dataset_db:
                Path(prep.dataset_db).unlink(missing_ok=True)
            return False
        return True

    def _node_fields(self, vine: Vine, task: _Task, prep: Prepared, conv: Conversion,
                     source: Path) -> tuple[dict[str, Any], str]:
        from .derive import derive_summary, summary_for_dataset, summary_for_media, title_sentence
        from .media import media_asset_name, media_line, render_media_body
        f = task.file
        own = dict(conv.frontmatter or {})
        title = _title_of(conv, f.rel)
        fields: dict[str, Any] = {"id": task.node_id, "title": title}
        body = conv.markdown or ""
        if conv.kind == "markdown":
            fields["type"] = conv.node_type or "note"
            title, summary = prep.derived or _title_and_summary(conv, f.rel)
            # the sections the source produced: on sync, any other section is a person's and stays
            produced = outline(body)
            if produced:
                fields["source_sections"] = produced
        elif conv.kind == "dataset":
            fields["type"] = "dataset"
            if prep.dataset_db is not None:
                tmp, counts = Path(prep.dataset_db), dict(prep.row_counts or {})
            else:  # a conversion made without a worker stage: load it here
                from monkeyllm_core.dataset import create_dataset
                tmp = self._tmp_path(vine, ".db")
                counts = create_dataset(tmp, conv.schema, conv.rows)
            columns = {t: list((spec.get("columns") or {}).keys()) for t, spec in (conv.schema or {}).items()}
            summary = summary_for_dataset(title, counts, columns)
            fields.update(payload_source=str(tmp), payload_move=True, payload_type="sqlite",
                          manual_notes=list(conv.manual_notes))
            body = f"# {title}\n\n{body}".rstrip() + "\n"
        elif conv.payload_type == "sqlite":
            fields["type"] = "dataset"
            tables = dict((conv.structure or {}).get("tables") or {})
            if prep.row_counts is None and not tables:
                from monkeyllm_core.sample_map import describe_tables
                info = describe_tables(f.path)  # a conversion made without the worker stage
                tables, counts = info.get("tables", {}), info.get("row_counts", {})
            else:
                counts = dict(prep.row_counts or {})
            summary = summary_for_dataset(title, counts, tables)
            fields.update(payload_source=str(conv.payload_path), payload_type="sqlite",
                          manual_notes=list(conv.manual_notes))
            body = f"# {title}\n\n{body}".rstrip() + "\n"
        elif conv.media is not None:
            fields["type"] = conv.node_type or "media"
            body = render_media_body(title, conv.media, prep.description)
            line = media_line(conv.media)
            # the summary carries the facts in the line's parentheses, not its "Media file" preamble
            facts = line[line.find("(") + 1:line.rfind(")")] if "(" in line else line
            summary = summary_for_media(title, facts, kind=conv.media.kind)
            slug = task.node_id.rsplit("/", 1)[-1]
            fields.update(payload=f"_assets/{media_asset_name(slug, f.path.name)}",
                          payload_type=conv.payload_type, payload_source=str(conv.payload_path or f.path))
        else:
            fields["type"] = conv.node_type or "document"
            # a payload that is not a database lives in _assets/ beside the node, like media:
            # gitignored, so it can never be committed by accident
            slug = task.node_id.rsplit("/", 1)[-1]
            fields.update(payload=f"_assets/{media_asset_name(slug, f.path.name)}", payload_type=conv.payload_type,
                          payload_source=str(conv.payload_path or f.path))
            summary = derive_summary(body, title=title, kind_hint="document") if body else title_sentence(title, "document")
        if conv.kind == "dataset" or conv.payload_type == "sqlite":
            fields.setdefault("payload", f"{task.node_id.rsplit('/', 1)[-1]}.db")
        fields["summary"] = summary
        fields["summary_source"] = "derived"
        tags = _string_list(own.get("tags"))
        aliases = _string_list(own.get("aliases"))
        if tags:
            fields["tags"] = tags
        if aliases:
            fields["aliases"] = aliases
        fields.update(
            confidence=INGEST_CONFIDENCE, source="ingest", origin=file_uri(f.path if not f.path.is_symlink() else source / f.rel),
            source_path=f.rel, source_hash=prep.sha256, source_size=f.size,
            source_mtime=round(f.mtime, 3),
        )
        return fields, body

    def _tmp_path(self, vine: Vine, suffix: str) -> Path:
        tmp_dir = vine.root / TMP_DIR
        tmp_dir.mkdir(parents=True, exist_ok=True)
        import tempfile
        fd, name = tempfile.mkstemp(suffix=suffix, dir=tmp_dir)
        os.close(fd)
        os.unlink(name)  # create_dataset refuses an existing file
        return Path(name)

    # -- curate + plant ---------------------------------------------------------------
    def _plant_batch(self, vine: Vine, batch: list[_Ready], report: Report, curator: Any) -> None:
        outcomes: dict[str, Any] = {}
        if curator is not None:
            outcomes = self._curate(vine, batch, curator, report)
        for ready in batch:
            self._plant_one(vine, ready, report, outcomes.get(ready.task.node_id))

    def _curate(self, vine: Vine, batch: list[_Ready], curator: Any, report: Report) -> dict[str, Any]:
        from .curator import Candidate, CurationRequest
        requests = []
        for ready in batch:
            fields = ready.fields
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

    def _plant_one(self, vine: Vine, ready: _Ready, report: Report, outcome: Any) -> None:
        task = ready.task
        fields = dict(ready.fields)
        body = ready.body_text
        if self.config.default_tags:
            fields["tags"] = _merge_tags(fields.get("tags"), self.config.default_tags)
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
            if task.existing is None:
                vine.plant({**fields, "body": body})
                report.planted.append(task.node_id)
            else:
                self._refresh(vine, task, fields, body)
                report.updated.append(task.node_id)
        except Exception as exc:
            report.errors.append(f"{task.file.rel}: {_one_line(exc)}")
        finally:
            source = fields.get("payload_source")
            if fields.get("payload_move") and source and Path(source).exists():
                Path(source).unlink()

    def _refresh(self, vine: Vine, task: _Task, fields: dict[str, Any], body: str) -> None:
        """A changed source: body and payload replaced together; curated fields kept."""
        current = vine.read(task.node_id)
        old = current.frontmatter
        was, now = _payload_family(old), _payload_family(fields)
        if was != now:
            # a node's type is fixed (graft refuses to change it): refreshing a dataset
            # with prose would leave its old rows posing as current, so say so instead
            raise VineError("E_CONFLICT", f"{task.node_id} is a {was} node but {task.file.rel} now converts "
                            f"to a {now} node; the node is left unchanged",
                            "Rename the source file to plant a new node, or remove the old node by hand.")
        payload_source = fields.pop("payload_source", None)
        payload_move = fields.pop("payload_move", False)
        manual_notes = fields.pop("manual_notes", ())
        keep_summary = old.get("summary_source") != "derived" and fields.get("summary_source") != "curated"
        if keep_summary:
            fields["summary"] = old["summary"]
            fields["summary_source"] = old.get("summary_source")
        fields["tags"] = _merge_tags(old.get("tags"), fields.get("tags"))
        fields["links"] = _merge_links(old.get("links"), fields.get("links"))
        fields["stale"] = None
        fields.pop("id", None)
        if fields.get("type") == "dataset":
            # only the generated sections change; ## Notes and the rest belong to people
            new_body = current.body
        else:
            new_body = _keep_human_sections(current.body, body, old.get("source_sections"))
            if "source_sections" not in fields:
                fields["source_sections"] = None  # the source has no sections any more
        vine.replace(task.node_id, fields, new_body, payload_source=payload_source,
                     payload_move=payload_move, manual_notes=manual_notes,
                     message=f"gardener(sync): {task.node_id}")

    def _run_hooks(self, vine: Vine, fields: dict[str, Any], report: Report, rel: str) -> dict[str, Any]:
        """on_curate hooks see passport fields only; their result is validated here."""
        draft_keys = ("id", "type", "title", "summary", "tags", "aliases", "links")
        draft = {k: fields[k] for k in draft_keys if k in fields}
        if not self.host._ordered_impls("on_curate"):
            return fields
        result, problems = self.host.run_on_curate(draft)
        report.warnings += [f"{rel}: {p}" for p in problems]
        try:
            check_summary(result.get("summary"), where=f"on_curate result for {fields['id']}")
            for key in ("tags", "aliases"):
                if key in result and not (isinstance(result[key], list) and all(isinstance(t, str) for t in result[key])):
                    raise VineError("E_FRONTMATTER", f"on_curate result for {fields['id']}: {key} must be a list of strings", "")
            # a bad link costs only that link, not the other hooks' edits
            links = []
            for link in result.get("links") or []:
                if isinstance(link, dict) and vine.dialect.knows_rel(str(link.get("rel"))) \
                        and vine.exists(str(link.get("target"))) and link.get("target") != fields["id"]:
                    links.append(link)
                else:
                    report.warnings.append(f"{rel}: on_curate link {link!r} dropped: unknown rel or target")
            if "links" in result:
                result["links"] = links
            if not isinstance(result.get("title"), str) or not result["title"].strip():
                raise VineError("E_FRONTMATTER", f"on_curate result for {fields['id']}: title must be a string", "")
        except VineError as exc:
            report.warnings.append(f"{rel}: {exc.message}; hook edits discarded")
            return fields
        merged = dict(fields)
        for key in draft_keys[2:]:
            if key in result:
                merged[key] = result[key]
            else:
                merged.pop(key, None)
        if merged.get("summary") != fields.get("summary"):
            merged["summary_source"] = "hook"
        return merged


# -- helpers -----------------------------------------------------------------------------
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


def _tidy(line: str, name: str) -> str:
    """Report lines already start with the file's path: drop the file name that
    converters and the host repeat (``xlsx failed on a.xlsx: a.xlsx: corrupt``)."""
    line = line.replace(f" failed on {name}: ", " failed: ", 1)
    for lead in (f"{name}: ", f"failed: {name}: "):
        if line.startswith(lead):
            line = line[len(lead):] if lead == f"{name}: " else "failed: " + line[len(lead):]
    return line.replace(f" failed: {name}: ", " failed: ", 1)


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, VineError):
        return exc.one_line()
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip()


def _curation_text(ready: _Ready) -> str:
    """What the model reads: the body, plus for a dataset its tables and columns
    (its map is generated at plant time, after curation)."""
    fields = ready.fields
    text = ready.body_text
    if fields.get("type") == "dataset":
        text = f"{text.rstrip()}\n\n{fields['summary']}\n"
        notes = fields.get("manual_notes") or []
        if notes:
            text += "\n".join(notes) + "\n"
    return text


def _clean_title(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    return text or None


def _string_list(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [v for v in value.replace(",", " ").split()]
    if not isinstance(value, list):
        return []
    return [str(v) for v in value if isinstance(v, (str, int, float)) and str(v).strip()]


def _merge_tags(first: Any, second: Any) -> list[str]:
    out: list[str] = []
    for tag in list(first or []) + list(second or []):
        if tag not in out:
            out.append(tag)
    return out


def _merge_links(old: Any, new: Any) -> list[dict[str, Any]]:
    out = [dict(link) for link in (old or [])]
    for link in new or []:
        if not any(l.get("rel") == link.get("rel") and l.get("target") == link.get("target") for l in out):
            out.append(dict(link))
    return out


def _keep_human_sections(old_body: str, new_body: str, produced: Any) -> str:
    """The refreshed body: the new conversion, then every section of the old body a
    person wrote, i.e. that the previous conversion did not produce
    (``source_sections``; without that record, ``## Notes``). A person's section
    named like a new source section is kept too, after it: nothing a person wrote
    is dropped."""
    old_produced = set(produced) if isinstance(produced, list) else None
    new_headers = set(outline(new_body))
    kept = []
    for header in outline(old_body):
        if old_produced is not None:
            written_by_person = header not in old_produced
        else:  # a node planted without the record: only ## Notes is known to be a person's
            written_by_person = header == "Notes" and header not in new_headers
        if written_by_person:
            text = get_section(old_body, header)
            if text and text.strip("\n") not in new_body:
                kept.append(text.strip("\n"))
    if not kept:
        return new_body
    return new_body.rstrip("\n") + "\n\n" + "\n\n".join(kept) + "\n"
