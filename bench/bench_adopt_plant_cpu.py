"""The main process's planting CPU in a `vine adopt --jobs 1`, two trees in one run (issue 16 item 1).

With ``--jobs 1`` every conversion runs in the writer too; this bench separates the
writer's own share: the CPU time spent inside ``Vine.plant`` (the node, its parent
index and grandparent, the catalog rows, the commit, the checkpoints it triggers)
and in the session's closing flush, counted once however the calls nest, plus the
git children those calls waited for. The adopt runs in-process, through the CLI's
``main`` (``--json``), in each tree's own interpreter, alternating sides (old first in
odd rounds) on a fresh forest each round; the figures are medians over rounds.
Both sides must write the same forest (``git ls-tree -r HEAD`` and the commit
subjects), or the script stops.

    .venv/bin/python bench/bench_adopt_plant_cpu.py --old /work/wt-base21/.venv/bin/python \\
        --new .venv/bin/python [--export /tmp/ingest-exports/files-1000] [--rounds 3] [--work DIR]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_gardener import clean_env

ROUND = r"""
import contextlib, functools, hashlib, io, json, resource, subprocess, sys, time
from monkeyllm_core.vine import Vine
from monkeyllm_gardener.cli import main

spent = {"self": 0.0, "children": 0.0, "calls": 0}
depth = [0]

def counted(method):
    @functools.wraps(method)
    def timed(*args, **kwargs):
        depth[0] += 1
        if depth[0] == 1:
            cpu, kids = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            return method(*args, **kwargs)
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                spent["self"] += time.process_time() - cpu
                spent["children"] += after.ru_utime + after.ru_stime - kids.ru_utime - kids.ru_stime
                spent["calls"] += 1
    return timed

for name in ("plant", "flush", "close"):
    setattr(Vine, name, counted(getattr(Vine, name)))

source, forest = sys.argv[1], sys.argv[2]
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(["init", "--forest", forest, "--title", "bench"])
    except SystemExit:
        pass
spent.update({"self": 0.0, "children": 0.0, "calls": 0})
start, kids = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(["adopt", source, "--forest", forest, "--jobs", "1", "--json"])
    except SystemExit as exc:
        if exc.code not in (0, 1, None):
            raise
after = resource.getrusage(resource.RUSAGE_CHILDREN)
tree = subprocess.run(["git", "ls-tree", "-r", "HEAD"], cwd=forest, capture_output=True, text=True).stdout
log = subprocess.run(["git", "log", "--format=%s"], cwd=forest, capture_output=True, text=True).stdout
print(json.dumps({"plant_self": spent["self"], "plant_children": spent["children"], "calls": spent["calls"],
                  "adopt_self": time.process_time() - start,
                  "adopt_children": after.ru_utime + after.ru_stime - kids.ru_utime - kids.ru_stime,
                  "nodes": tree.count("\n"),
                  "digest": hashlib.sha256((tree + log).encode()).hexdigest()[:16]}))
"""


def one_round(python: str, source: Path, forest: Path, env: dict[str, str]) -> dict:
    # from the bench's home, not a checkout: `-c` puts the working directory first on sys.path
    proc = subprocess.run([python, "-c", ROUND, str(source), str(forest)], env=env,
                          capture_output=True, text=True, cwd=env["HOME"])
    if proc.returncode != 0:
        raise SystemExit(f"{python}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", required=True, help="the previous code's python")
    parser.add_argument("--new", default=sys.executable, help="this code's python (default: this one)")
    parser.add_argument("--export", type=Path, default=Path("/tmp/ingest-exports/files-1000"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="plant-cpu-"))
    work.mkdir(parents=True, exist_ok=True)
    env = clean_env(work)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    sides = {"old": args.old, "new": args.new}
    results: dict[str, list[dict]] = {"old": [], "new": []}
    print(f"load average at start: {os.getloadavg()}")
    for round_no in range(1, args.rounds + 1):
        order = ["old", "new"] if round_no % 2 else ["new", "old"]
        digests = {}
        for side in order:
            forest = work / f"forest-{side}"
            subprocess.run(["rm", "-rf", str(forest)], check=True)
            result = one_round(sides[side], args.export, forest, env)
            results[side].append(result)
            digests[side] = result["digest"]
            print(f"round {round_no} {side}: planting {result['plant_self']:.3f} s + git {result['plant_children']:.3f} s"
                  f" in {result['calls']} calls; whole adopt {result['adopt_self']:.3f} s"
                  f" + children {result['adopt_children']:.3f} s; {result['nodes']} files", flush=True)
        if digests["old"] != digests["new"]:
            raise SystemExit(f"round {round_no}: the forests differ ({digests})")
    print(f"load average at end: {os.getloadavg()}")
    print("| measurement (median) | old | new |\n|---|---|---|")
    for key, label in (("plant_self", "planting, main process CPU"), ("plant_children", "git children of planting"),
                       ("adopt_self", "whole adopt --jobs 1, process CPU")):
        old = statistics.median(r[key] for r in results["old"])
        new = statistics.median(r[key] for r in results["new"])
        print(f"| {label} | {old:.3f} s | {new:.3f} s |")
    calls = results["new"][0]["calls"]
    old = statistics.median(r["plant_self"] for r in results["old"]) / calls * 1000
    new = statistics.median(r["plant_self"] for r in results["new"]) / calls * 1000
    print(f"| per counted call | {old:.2f} ms | {new:.2f} ms |")


if __name__ == "__main__":
    main()
