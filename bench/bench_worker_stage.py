"""CPU (``time.process_time``) of the worker stage per kind of file, as an adopt's pool runs it.

    cd /tmp && VENV/bin/python /work/main/bench/bench_worker_stage.py EXPORT [--ext .csv --ext .json] \
        [--repeat 5] [--profile tottime]

Unlike ``bench_per_kind.py`` it gives ``prepare_file`` the node's plan, as the pool
does: conversion, dataset staging, and the write request (``with_request``: the node,
a staged dataset's sample map and hash). One warm-up round first, then ``--repeat``
rounds; per extension the median. ``--profile`` prints a cProfile of one round instead.
Run it from a folder that is not a checkout (``python`` puts the working directory
first on ``sys.path``), with the interpreter of the tree to measure.
"""
from __future__ import annotations

import argparse
import collections
import cProfile
import os
import pstats
import statistics
import tempfile
import time
from pathlib import Path

from monkeyllm_gardener.host import HostSpec
from monkeyllm_gardener.prepared import NodePlan
from monkeyllm_gardener.worker import prepare_file


def one_round(spec: HostSpec, export: Path, files: list[Path], plans: list[NodePlan],
              tmp: str) -> collections.Counter[str]:
    """CPU seconds per extension for one pass over ``files``."""
    spent: collections.Counter[str] = collections.Counter()
    for path, node in zip(files, plans):
        started = time.process_time()
        prepare_file(spec, str(path), str(path.relative_to(export)), None, tmp, node=node)
        spent[path.suffix.lower()] += time.process_time() - started
    for name in os.listdir(tmp):  # the staged datasets
        os.unlink(os.path.join(tmp, name))
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("export", type=Path)
    parser.add_argument("--ext", action="append", help="e.g. .csv (repeatable; default every kind)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", default=None, help="a pstats sort key, e.g. tottime")
    args = parser.parse_args()
    wanted = {ext.lower() for ext in args.ext} if args.ext else None
    files = sorted(p for p in args.export.rglob("*") if p.is_file() and (wanted is None or p.suffix.lower() in wanted))
    plans = [NodePlan(node_id=f"bench/n{i}", source=str(args.export), size=p.stat().st_size, mtime=p.stat().st_mtime)
             for i, p in enumerate(files)]
    spec = HostSpec()
    with tempfile.TemporaryDirectory() as tmp:
        one_round(spec, args.export, files, plans, tmp)  # imports and per-process caches warmed
        if args.profile:
            profile = cProfile.Profile()
            profile.runcall(one_round, spec, args.export, files, plans, tmp)
            pstats.Stats(profile).sort_stats(args.profile).print_stats(40)
            return
        rounds: dict[str, list[float]] = collections.defaultdict(list)
        for _ in range(args.repeat):
            for ext, seconds in one_round(spec, args.export, files, plans, tmp).items():
                rounds[ext].append(seconds)
    counts = collections.Counter(p.suffix.lower() for p in files)
    for ext in sorted(counts):
        median = statistics.median(rounds[ext])
        shown = " ".join(f"{x:.3f}" for x in rounds[ext])
        print(f"{ext:7} {counts[ext]:5} files  median {median:7.3f} s CPU  "
              f"{median / counts[ext] * 1000:6.2f} ms/file  rounds: {shown}")


if __name__ == "__main__":
    main()
