"""sniff, the same run, old against new: a committed engine (``--ref``, default HEAD)
against the working tree's, over one forest, alternating which goes first per query,
every answer compared. CPU ms (``time.process_time``) p50/p95 per kind of query. The
forest is bench_sniff.py's (``--work`` of an earlier run).

    .venv/bin/python bench/bench_sniff_ab.py --work DIR [--queries 270] [--ref HEAD] [--rebuild]

The ref's whole ``monkeyllm_core`` is taken (``git archive``) and imported under
another name, so its sniff runs with its own body index, kept in its own file
(``_derived/bodies-ref.db``: the two formats would otherwise rebuild each other's);
each side's index is built, and swept, before the first query is timed: with
``--rebuild`` both files are deleted first, so that first sniff, timed and printed
with each file's size, is the build of each format in the same run.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_sniff  # noqa: E402
from monkeyllm_core import Vine  # noqa: E402
from monkeyllm_core.read import sniff as current  # noqa: E402
from monkeyllm_core.read.body_index import BodyIndex  # noqa: E402


def committed_engine(ref: str, into: Path) -> types.ModuleType:
    """The ref's ``monkeyllm_core``, imported as ``monkeyllm_core_at_ref`` (its imports
    of itself are all relative, so they stay inside the copy)."""
    repo = Path(__file__).resolve().parent.parent
    archive = subprocess.run(["git", "-C", str(repo), "archive", ref, "monkeyllm_core"],
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    package = into / "monkeyllm_core"
    spec = importlib.util.spec_from_file_location("monkeyllm_core_at_ref", package / "__init__.py",
                                                  submodule_search_locations=[str(package)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="a bench_sniff.py --work folder")
    parser.add_argument("--queries", type=int, default=270)
    parser.add_argument("--ref", default="HEAD")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--rebuild", action="store_true", help="delete both indexes first and time their builds")
    args = parser.parse_args()
    os.environ.update(HOME=str(args.work / "home"))
    root = args.work / "sniff-forest"
    if not (root / "_index.md").exists():
        sys.exit(f"{root}: no forest; run bench/bench_sniff.py --work {args.work} first")
    committed_engine(args.ref, Path(tempfile.mkdtemp(prefix="sniff-ab-")))
    old = importlib.import_module("monkeyllm_core_at_ref.read.sniff")
    old_bodies = importlib.import_module("monkeyllm_core_at_ref.read.body_index")
    vine = Vine(root, writable=False)
    corpus = bench_sniff.Corpus(args.seed, vine.catalog.db.execute(
        "SELECT count(*) FROM nodes WHERE kind = 'banana'").fetchone()[0])
    for i in range(corpus.nodes):
        corpus.body(i)  # the seeded codes, as on disk
    plan = bench_sniff.queries(corpus, args.queries)
    cpu: dict[str, dict[str, list[float]]] = {"old": {}, "new": {}}
    wall: dict[str, list[float]] = {"old": [], "new": []}
    differing = 0
    with BodyIndex(root, vine.catalog) as index, old_bodies.BodyIndex(root, vine.catalog) as old_index:
        old_index.path = root / "_derived" / "bodies-ref.db"
        indexes = {"old": old_index, "new": index}
        modules = {"old": old, "new": current}
        for name in ("old", "new"):
            if args.rebuild:
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{indexes[name].path}{suffix}").unlink(missing_ok=True)
            started, cpu_started = time.perf_counter(), time.process_time()
            modules[name].sniff(indexes[name], ["warm-up"])
            print(f"{name}: first sniff ({'the index build' if args.rebuild else 'its sweep'}) "
                  f"{time.process_time() - cpu_started:.2f} s CPU, {time.perf_counter() - started:.2f} s wall; "
                  f"{indexes[name].path.name} {indexes[name].path.stat().st_size / 1e6:.1f} MB")
        for n, (kind, terms, scope) in enumerate(plan):
            sides = ("old", "new") if n % 2 else ("new", "old")
            answers = {}
            for name in sides:
                started, cpu_started = time.perf_counter(), time.process_time()
                answers[name] = modules[name].sniff(indexes[name], terms, scope=scope, k=10_000)
                cpu[name].setdefault(kind, []).append((time.process_time() - cpu_started) * 1000)
                wall[name].append((time.perf_counter() - started) * 1000)
            differing += answers["old"] != answers["new"]
    print(f"{len(plan)} queries, answers differing: {differing}; load {os.getloadavg()[0]:.1f}; ref {args.ref}")
    print(f"{'kind':16s} {'old p50':>8s} {'old p95':>8s} {'new p50':>8s} {'new p95':>8s}  (CPU ms)")
    for kind in [*cpu["old"], "all"]:
        old_ms = [t for ts in cpu["old"].values() for t in ts] if kind == "all" else cpu["old"][kind]
        new_ms = [t for ts in cpu["new"].values() for t in ts] if kind == "all" else cpu["new"][kind]
        print(f"{kind:16s} {statistics.median(old_ms):8.1f} {bench_sniff.percentile(old_ms, .95):8.1f} "
              f"{statistics.median(new_ms):8.1f} {bench_sniff.percentile(new_ms, .95):8.1f}")
    print(f"{'all, wall ms':16s} {statistics.median(wall['old']):8.1f} {bench_sniff.percentile(wall['old'], .95):8.1f} "
          f"{statistics.median(wall['new']):8.1f} {bench_sniff.percentile(wall['new'], .95):8.1f}")


if __name__ == "__main__":
    main()
