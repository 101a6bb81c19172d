"""A catalog rebuild, serial against parsing workers, in the same run (issue 12).

Each rebuild is `Vine.reindex` in a fresh child process over ROOT (a committed
forest whose catalog exists, e.g. bench_read.py's generated one): "serial" raises
``parallel_read.PARALLEL_FROM`` so the rebuilding process parses every file
itself, "parallel" is the default. They alternate, ROUNDS of each. Printed per
run, as JSON: wall and CPU of the rebuilding process, its parsing workers' CPU,
the peak RSS of each, the load average.

    .venv/bin/python bench/bench_reindex_ab.py ROOT [ROUNDS] [--make NODES]

``--make NODES``: first write bench_read.py's generated forest of NODES bananas at
ROOT (which must not exist) and build its catalog once, untimed.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

REPO = str(Path(__file__).resolve().parent.parent)
CHILD = r'''
import json, os, resource, sys, time
sys.path.insert(0, sys.argv[3])
from monkeyllm_core import Vine
from monkeyllm_core.forest import parallel_read
if sys.argv[2] == "serial":
    parallel_read.PARALLEL_FROM = 10**12
wall, cpu = time.perf_counter(), time.process_time()
with Vine(sys.argv[1]) as vine:
    nodes = vine.reindex()
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")) / 1024
workers = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"mode": sys.argv[2], "nodes": nodes, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
                  "workers_cpu_s": round(workers.ru_utime + workers.ru_stime, 1), "peak_mib": round(peak),
                  "worker_peak_mib": round(workers.ru_maxrss / 1024), "load": round(os.getloadavg()[0], 1)}))
'''


def make(root: Path, nodes: int) -> None:
    sys.path[:0] = [REPO, str(Path(__file__).resolve().parent)]
    import bench_read
    from monkeyllm_core import Vine, init_forest

    init_forest(root, f"Bench {nodes}")
    bench_read.generate(root, nodes)
    Vine(root).close()  # the catalog, built once: each timed run is then one rebuild


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("rounds", type=int, nargs="?", default=2)
    parser.add_argument("--make", type=int, metavar="NODES")
    args = parser.parse_args()
    if args.make:
        make(args.root, args.make)
    root, rounds = str(args.root), args.rounds
    for n in range(rounds):
        for mode in ("serial", "parallel") if n % 2 == 0 else ("parallel", "serial"):
            done = subprocess.run([sys.executable, "-c", CHILD, root, mode, REPO], capture_output=True, text=True)
            print(done.stdout.strip() or done.stderr[-500:], flush=True)


if __name__ == "__main__":
    main()
