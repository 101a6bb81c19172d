"""Issue 16 item 1: where an adopt's wall time goes, the critical path measured.

    .venv/bin/python bench/bench_adopt_critical_path.py EXPORT [--python .venv/bin/python] [--rounds 3]

Each round adopts EXPORT (default ``--jobs``) into a fresh forest, in a child
interpreter that runs the CLI's ``main`` in-process with timestamps around the
pipeline's stages (the plan, the pool's warm-up and batches, its first and last
result, the committer's close), and reads at the end:

- the writer's main thread: CPU time and time spent runnable but waiting for a
  core (``/proc/self/task/<tid>/schedstat``), so wall = CPU + run-queue wait +
  blocked (on a result, git, the disk);
- the writer's other threads (the pool's result and feeder threads; sampled every
  50 ms, so a thread's last moments may be missed);
- its children (pool workers and git processes: ``RUSAGE_CHILDREN``);
- how long the writer waited on results the workers had not finished.

On two cores the adopt is done when both cores have done its CPU time: the
"floor" column is (all CPU) / cores plus the serial start (before the first
result, one process runs), against which the wall is judged. Medians over rounds.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from bench_gardener import clean_env, set_aside

ROUND = r"""
import json, os, resource, sys, threading, time
T0 = time.perf_counter()
marks = {}
def mark(label):
    marks.setdefault(label, time.perf_counter() - T0)
def schedstat(tid):
    run, wait, _ = open(f"/proc/self/task/{tid}/schedstat").read().split()
    return int(run) / 1e9, int(wait) / 1e9
import monkeyllm_gardener.executors as ex
import monkeyllm_gardener.pipeline as pl
from monkeyllm_core.store import history
waited = [0.0]
def wrapped(owner, name, before=None, after=None, timed=False):
    original = getattr(owner, name)
    def call(*args, **kwargs):
        if before: mark(before)
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            if timed: waited[0] += time.perf_counter() - started
            if after: mark(after)
    setattr(owner, name, call)
wrapped(pl.Gardener, "_plan", "plan starts", "plan ends")
wrapped(ex.ProcessConversionPool, "batches", "warm-up starts", "warm-up ends")
wrapped(ex.ProcessConversionPool, "submit", after="first batch submitted")
wrapped(ex.ProcessConversionPool, "collect", after="first result in", timed=True)
wrapped(history.Committer, "close", "committer closes", "committer closed")
main_tid = threading.get_native_id()
run0, wait0 = schedstat(main_tid)
others = {}
def sample():
    me = threading.get_native_id()
    while True:
        for tid in os.listdir("/proc/self/task"):
            if int(tid) not in (main_tid, me):
                try: others[tid] = schedstat(tid)[0]
                except OSError: pass
        time.sleep(0.05)
threading.Thread(target=sample, daemon=True).start()
from monkeyllm_gardener.cli import main
try:
    main(["adopt", sys.argv[1], "--forest", sys.argv[2], "--json"])
except SystemExit:
    pass
wall = time.perf_counter() - T0
run1, wait1 = schedstat(main_tid)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "main_cpu": run1 - run0, "main_runq": wait1 - wait0,
                  "threads_cpu": sum(others.values()), "children_cpu": kids.ru_utime + kids.ru_stime,
                  "result_waits": waited[0], "marks": marks}), file=sys.__stderr__)
"""


def one_round(python: str, export: Path, work: Path) -> dict:
    forest = work / "forest"
    set_aside(forest)  # not deleted right before a timed adopt: bench_gardener.set_aside
    env = clean_env(work)
    vine = Path(python).parent / "vine"
    subprocess.run([str(vine), "init", "--forest", str(forest), "--title", "bench"], env=env, check=True,
                   capture_output=True, cwd=env["HOME"])
    proc = subprocess.run([python, "-c", ROUND, str(export), str(forest)], env=env, capture_output=True,
                          text=True, cwd=env["HOME"])
    lines = [line for line in proc.stderr.splitlines() if line.startswith("{")]
    if not lines:
        raise SystemExit(f"the round failed:\n{proc.stderr[-2000:]}")
    return json.loads(lines[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("export", type=Path)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path("/tmp/adopt-critical-path"))
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    cores = os.cpu_count() or 1
    rounds = [one_round(args.python, args.export.resolve(), args.work) for _ in range(args.rounds)]
    med = lambda key: statistics.median(r[key] for r in rounds)  # noqa: E731
    mark = lambda label: statistics.median(r["marks"].get(label, float("nan")) for r in rounds)  # noqa: E731
    total_cpu = med("main_cpu") + med("threads_cpu") + med("children_cpu")
    serial = mark("first result in")
    print(f"load average {os.getloadavg()[0]:.1f}; {args.rounds} rounds, medians; {cores} cores\n")
    print("| stage | at (s) |\n|---|---|")
    for label in ("plan starts", "plan ends", "warm-up starts", "warm-up ends", "first batch submitted",
                  "first result in", "committer closes", "committer closed"):
        print(f"| {label} | {mark(label):.3f} |")
    print(f"| end | {med('wall'):.3f} |\n")
    print("| wall | writer main thread CPU | its run-queue wait | blocked (rest) | waits on results "
          "| writer's other threads | workers + git | all CPU | floor: serial start + rest of CPU / cores |")
    print("|---|---|---|---|---|---|---|---|---|")
    blocked = med("wall") - med("main_cpu") - med("main_runq")
    floor = serial + (total_cpu - serial) / cores
    print(f"| {med('wall'):.2f} s | {med('main_cpu'):.2f} s | {med('main_runq'):.2f} s | {blocked:.2f} s "
          f"| {med('result_waits'):.3f} s | {med('threads_cpu'):.2f} s | {med('children_cpu'):.2f} s "
          f"| {total_cpu:.2f} s | {floor:.2f} s |")


if __name__ == "__main__":
    main()
