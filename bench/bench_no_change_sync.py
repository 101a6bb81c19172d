"""Issue 16 item 2: a no-change `vine sync` and `vine --help`, the previous code against this one.

    .venv/bin/python bench/bench_no_change_sync.py --old /work/wt-base20/.venv/bin/vine \\
        [--new .venv/bin/vine] --forest 1001=/tmp/f1k --forest 5001=/tmp/f5k [--runs 9] [--work /tmp/ncs]

Each ``--forest LABEL=DIR`` is a forest that already adopted its export (any
code: the forest format is the same); it is copied once per side into --work, so
each side syncs its own copy and keeps its own ``_derived`` memories. Then, in one
run, alternating old and new (old first in odd rounds), --runs times each: the
no-change `vine sync --forest COPY --json` of every forest, `vine --help` and
`vine sync --help`. Reported: medians of wall time and of CPU time (user + system
of `vine` and the git processes it waited for, ``RUSAGE_CHILDREN``); the sync
reports of both sides must be identical and nothing committed (HEAD unchanged).

``--imports`` adds, per command and side, the modules it imported (``python -X
importtime``, run as the `vine` script runs: same interpreter, same ``sys.path``).

Bytecode is cached under ``--work``/pycache (``PYTHONPYCACHEPREFIX``) for both
sides, written by one untimed run of each command first: neither checkout gets
``__pycache__`` folders, and no timed run compiles.
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench_gardener import clean_env


def run(argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    """One command: its wall time, the CPU time of its process tree, its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "stdout": proc.stdout}


def head(forest: Path, env: dict[str, str]) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=forest, env=env, capture_output=True, text=True,
                          check=True).stdout.strip()


def modules_imported(vine: str, args: list[str], env: dict[str, str]) -> int:
    """What `python -X importtime` lists for the `vine` script (the interpreter of its shebang)."""
    script = Path(vine)
    python = script.read_text(encoding="utf-8").splitlines()[0].removeprefix("#!").strip()
    proc = subprocess.run([python, "-X", "importtime", str(script), *args], env=env, capture_output=True, text=True)
    return len(re.findall(r"^import time:\s+\d+ \|", proc.stderr, re.M))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", required=True, help="the previous code's `vine` script")
    parser.add_argument("--new", default=str(Path(sys.executable).parent / "vine"), help="this code's `vine`")
    parser.add_argument("--forest", action="append", required=True, metavar="LABEL=DIR")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench-no-change-sync"))
    parser.add_argument("--imports", action="store_true")
    args = parser.parse_args()
    sides = {"old": args.old, "new": args.new}
    args.work.mkdir(parents=True, exist_ok=True)
    env = {**clean_env(args.work), "COLUMNS": "100", "PYTHONPYCACHEPREFIX": str(args.work / "pycache")}
    commands: dict[str, dict[str, list[str]]] = {side: {} for side in sides}
    forests: dict[str, dict[str, Path]] = {side: {} for side in sides}
    for spec in args.forest:
        label, _, folder = spec.partition("=")
        for side, vine in sides.items():
            copy = args.work / f"{side}-{label}"
            if not copy.exists():
                shutil.copytree(folder, copy, symlinks=True)
            forests[side][label] = copy
            commands[side][f"no-change sync, {label} files"] = [vine, "sync", "--forest", str(copy), "--json"]
    for side, vine in sides.items():
        commands[side]["`vine --help`"] = [vine, "--help"]
        commands[side]["`vine sync --help`"] = [vine, "sync", "--help"]
    # a copy's ctime is new, and a config changed under 2 s ago is parsed, not remembered
    # (monkeyllm_gardener.config_memory): the untimed runs below see it settled
    time.sleep(2.5)
    for side in sides:  # untimed: bytecode written, the host and config remembered
        for argv in commands[side].values():
            run(argv, env)
    heads = {side: {label: head(f, env) for label, f in fs.items()} for side, fs in forests.items()}
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {side: {name: [] for name in commands[side]} for side in sides}
    for i in range(args.runs):
        for side in (["old", "new"] if i % 2 == 0 else ["new", "old"]):
            for name, argv in commands[side].items():
                runs[side][name].append(run(argv, env))
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n", flush=True)
    for name in commands["new"]:
        outputs = {r["stdout"] for side in sides for r in runs[side][name]}
        if len(outputs) != 1:
            raise SystemExit(f"{name}: the two sides (or two runs) printed differently")
    for side, fs in forests.items():
        for label, forest in fs.items():
            if head(forest, env) != heads[side][label]:
                raise SystemExit(f"{side}: a no-change sync of {label} files committed")
    print(f"| measurement (median of {args.runs}) | old wall | old CPU | new wall | new CPU | CPU ratio |")
    print("|---|---|---|---|---|---|")
    for name in commands["new"]:
        cells = []
        for side in sides:
            rs = runs[side][name]
            cells.append((statistics.median(r["wall"] for r in rs), statistics.median(r["cpu"] for r in rs)))
        (ow, oc), (nw, nc) = cells
        print(f"| {name} | {ow * 1000:.0f} ms | {oc * 1000:.0f} ms | {nw * 1000:.0f} ms | {nc * 1000:.0f} ms | "
              f"{oc / nc:.2f}x |")
    print("\noutputs identical on both sides in every run; no sync committed")
    if args.imports:
        print("\n| command | old modules | new modules |\n|---|---|---|")
        for name in commands["new"]:
            old_n = modules_imported(sides["old"], commands["old"][name][1:], env)
            new_n = modules_imported(sides["new"], commands["new"][name][1:], env)
            print(f"| {name} | {old_n} | {new_n} |")


if __name__ == "__main__":
    main()
