"""Executor benchmark (issue 11): the same adopt through the real `vine` CLI with the
local process pool and with a Dask cluster on this machine.

    .venv/bin/python bench/bench_executors.py [--exports /tmp/bench-exports] [--work /tmp/bench-executors]
                                              [--files 1000] [--repeat 3]

The export is the 1,000-file one of bench_gardener.py (``make_exports.py --files
1000 --large-csvs 0``, cached under --exports). The cluster is a
``distributed.LocalCluster`` started here on 127.0.0.1: two worker processes
with one thread each (as many as the process pool's default ``--jobs`` on 2
cores), no dashboard; `vine adopt --executor dask --scheduler ADDR` reaches it
as it would a remote one. The two executors alternate, a fresh forest each run;
the wall time is the median of --repeat runs. Every run must commit the same
tree (``HEAD^{tree}``), or the script stops.
"""
from __future__ import annotations

import argparse
import logging
import statistics
import sys
from pathlib import Path

from bench_gardener import assert_clean, clean_env, count_files, ensure_export, fmt_s, fresh_forest, git, run_vine


def adopt(source: Path, forest: Path, env: dict[str, str], extra: list[str]) -> tuple[float, str]:
    run = run_vine(["adopt", str(source), "--forest", str(forest), "--json", *extra], env)
    assert_clean(forest, env, f"adopt {' '.join(extra) or '(process pool)'}")
    return run["wall"], git(forest, env, "rev-parse", "HEAD^{tree}").strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exports", type=Path, default=Path("/tmp/bench-exports"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench-executors"))
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import distributed

    args.work.mkdir(parents=True, exist_ok=True)
    env = clean_env(args.work)
    source = ensure_export(args.exports, args.files, ["--large-csvs", "0"])
    files = count_files(source)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None, silence_logs=logging.ERROR)
    executors = {"process pool (--jobs 2)": ["--jobs", "2"],
                 "Dask LocalCluster (2 workers x 1 thread)": ["--executor", "dask", "--scheduler",
                                                               cluster.scheduler_address]}
    walls: dict[str, list[float]] = {name: [] for name in executors}
    trees = set()
    try:
        for i in range(args.repeat):
            for name, extra in executors.items():
                wall, tree = adopt(source, fresh_forest(args.work / "forest", env), env, extra)
                walls[name].append(wall)
                trees.add(tree)
                print(f"run {i + 1}: {name}: {wall:.2f} s", flush=True)
    finally:
        cluster.close()
    if len(trees) != 1:
        raise SystemExit(f"the executors committed different trees: {sorted(trees)}")

    print()
    print("| executor | adopt wall (median of %d) | rate | runs |" % args.repeat)
    print("|---|---|---|---|")
    for name, runs in walls.items():
        median = statistics.median(runs)
        print(f"| {name} | {fmt_s(median)} | {files / median:.0f} files/s | "
              f"{', '.join(f'{w:.2f}' for w in runs)} s |")
    print(f"\nsame tree every run: {trees.pop()}")


if __name__ == "__main__":
    sys.exit(main())
