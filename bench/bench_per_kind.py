"""CPU of ``prepare_file`` (conversion, summary, SQLite row load) per kind of file.

    python bench_per_kind.py EXPORT [--ext .csv --ext .docx ...] [--repeat 3] [--with-request] [--profile tottime]

Runs every file of the chosen extensions through ``prepare_file`` in this process
(imports warmed by one file first), ``--repeat`` times, and prints per extension the
median CPU seconds (``time.process_time``) over the rounds. ``--with-request`` gives
each file its node's plan, as the adopt's pool does: the worker stage then builds the
write request too (``with_request``: the node, a staged dataset's sample map and
hash), and the first round only warms imports and per-process caches.
``--profile`` prints a cProfile of one more round instead. Run it with another
checkout's interpreter to measure that checkout, from a folder that is not a checkout
(``python`` puts the working directory first on ``sys.path``).
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


def one_round(spec: HostSpec, export: Path, files: list[Path], plans: list[NodePlan | None],
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
    parser.add_argument("--ext", action="append", default=None, help="e.g. .csv (repeatable; default all)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--with-request", action="store_true", help="build the write request too, as the pool does")
    parser.add_argument("--profile", default=None, help="a pstats sort key, e.g. tottime")
    args = parser.parse_args()
    wanted = {e.lower() for e in args.ext} if args.ext else None
    files = sorted(p for p in args.export.rglob("*") if p.is_file()
                   and (wanted is None or p.suffix.lower() in wanted))
    plans: list[NodePlan | None] = [
        NodePlan(node_id=f"bench/n{i}", source=str(args.export), size=p.stat().st_size, mtime=p.stat().st_mtime)
        if args.with_request else None for i, p in enumerate(files)]
    spec = HostSpec()
    counts: collections.Counter[str] = collections.Counter(p.suffix.lower() for p in files)
    rounds: dict[str, list[float]] = collections.defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        if args.with_request:
            one_round(spec, args.export, files, plans, tmp)
        else:
            for path in files[:1]:  # warm the imports
                prepare_file(spec, str(path), path.name, None, tmp)
        if args.profile:
            profile = cProfile.Profile()
            profile.runcall(one_round, spec, args.export, files, plans, tmp)
            pstats.Stats(profile).sort_stats(args.profile).print_stats(40)
            return
        for _ in range(args.repeat):
            for ext, seconds in one_round(spec, args.export, files, plans, tmp).items():
                rounds[ext].append(seconds)
    for ext in sorted(counts):
        median = statistics.median(rounds[ext])
        shown = " ".join(f"{s:.3f}" for s in rounds[ext])
        print(f"{ext:8} {counts[ext]:5} files  median {median:7.3f} s CPU  "
              f"{median / counts[ext] * 1000:6.1f} ms/file  rounds: {shown}")


if __name__ == "__main__":
    main()
