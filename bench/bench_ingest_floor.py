"""Issue 16: adopt and a no-change sync, the previous code against this one, in one run.

    .venv/bin/python bench/bench_ingest_floor.py --old /work/wt-ingest-base/.venv/bin/python \\
        [--new .venv/bin/python] [--exports /tmp/ingest-exports] [--files 1000 5000] [--repeat 3] \\
        [--work /tmp/ingest-floor] [--imports]

``--old`` is the interpreter of a checkout of the previous code (its own venv,
``pip install -e``), ``--new`` this one's. For each export (``make_exports.py
OUT --files N --large-csvs 0``, generated under --exports when missing) and each
of --repeat rounds, the two alternate (old first in odd rounds, new first in even
ones, so neither always runs on a warmer cache): `vine init`, `vine adopt`
(default ``--jobs``), then three no-change `vine sync`s. Wall time and CPU time
(user + system of the `vine` process and everything it waited for: its pool
workers and git children, from ``RUSAGE_CHILDREN``) are reported as medians. On
a shared machine CPU time is the honest figure; the load average is printed.
Each adopt's peak memory per kind of process (the writer, its largest pool worker,
its largest git child: ``VmHWM`` read every 50 ms, ``bench_gardener.watch_peaks``)
is reported as medians too.

Each round checks that the two forests are the same: ``git ls-tree -r HEAD``
(every path, mode and blob id), the commit subjects in order, and the SHA-256 of
every payload file outside git (datasets, media); the script stops if they differ.

``--syncs-only N`` skips the adopts: N no-change syncs per side, alternating, on
the forests an earlier run left in --work (a change that touches only the sync).

``--imports`` adds, per command, the modules imported and their summed
self-times (``python -X importtime``), and `vine --help`'s wall and CPU time
(median of 7).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_gardener import MAKE_EXPORTS, clean_env, set_aside, watch_peaks

SYNCS_PER_ROUND = 3
HELP_RUNS = 7


def run(python: str, args: list[str], env: dict[str, str], *, codes: tuple[int, ...] = (0, 1),
        watch: bool = False) -> dict[str, Any]:
    """One `vine` command: its wall time and the CPU time of its process tree; with
    ``watch``, each kind of process's peak memory too (``watch_peaks``)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    peaks = None
    # run from the bench's home, never from a checkout: `python -m` puts the working
    # directory first on sys.path, and from /work/main both sides would import main
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([*vine_of(python), *args], env=env, stdout=out, stderr=err, text=True,
                                cwd=env["HOME"])
        if watch:
            peaks = watch_peaks(proc)
        proc.wait()
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode not in codes:
        raise SystemExit(f"vine {' '.join(args)} exited {proc.returncode}:\n{stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "stdout": stdout, "peaks": peaks}


def vine_of(python: str) -> list[str]:
    """The venv's `vine` script, as a user runs it (else ``python -m``)."""
    script = Path(python).parent / "vine"
    return [str(script)] if script.exists() else [python, "-m", "monkeyllm_gardener.cli"]


def git(forest: Path, env: dict[str, str], *args: str) -> str:
    return subprocess.run(["git", *args], cwd=forest, env=env, capture_output=True, text=True, check=True).stdout


def forest_digest(forest: Path, env: dict[str, str]) -> dict[str, Any]:
    """What must be byte-identical: the committed tree, the commits in order, the payloads."""
    tracked = git(forest, env, "ls-tree", "-r", "HEAD")
    tracked_paths = {line.split("\t", 1)[1] for line in tracked.splitlines()}
    payloads = {}
    for path in sorted(forest.rglob("*")):
        rel = path.relative_to(forest).as_posix()
        if not path.is_file() or rel.split("/")[0] in (".git", "_derived") or rel == ".vine.lock":
            continue
        if rel not in tracked_paths:
            payloads[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return {"tree": tracked, "subjects": git(forest, env, "log", "--format=%s"), "payloads": payloads}


def differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    found = []
    if old["tree"] != new["tree"]:
        o, n = set(old["tree"].splitlines()), set(new["tree"].splitlines())
        found += [f"tree only old: {line}" for line in sorted(o - n)[:10]]
        found += [f"tree only new: {line}" for line in sorted(n - o)[:10]]
    if old["subjects"] != new["subjects"]:
        found.append("commit subjects differ")
    if old["payloads"] != new["payloads"]:
        keys = sorted(set(old["payloads"]) | set(new["payloads"]))
        found += [f"payload differs: {k}" for k in keys if old["payloads"].get(k) != new["payloads"].get(k)][:10]
    return found


def ensure_export(exports: Path, files: int) -> Path:
    out = exports / f"files-{files}"
    if not out.is_dir():
        exports.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(MAKE_EXPORTS), str(out), "--files", str(files), "--large-csvs", "0"],
                       check=True)
    return out


def one_round(python: str, source: Path, forest: Path, env: dict[str, str]) -> dict[str, Any]:
    set_aside(forest)  # not deleted right before a timed adopt: bench_gardener.set_aside
    run(python, ["init", "--forest", str(forest), "--title", "bench"], env, codes=(0,))
    adopt = run(python, ["adopt", str(source), "--forest", str(forest), "--json"], env, watch=True)
    syncs = [run(python, ["sync", "--forest", str(forest), "--json"], env) for _ in range(SYNCS_PER_ROUND)]
    reports = {s["stdout"] for s in syncs}
    if len(reports) != 1:
        raise SystemExit(f"{python}: the no-change syncs reported differently")
    sync_report = json.loads(syncs[0]["stdout"])
    if sync_report["planted"] or sync_report["updated"]:
        raise SystemExit(f"{python}: a sync right after the adopt changed something")
    return {"adopt": adopt, "syncs": syncs, "sync_report": syncs[0]["stdout"],
            "planted": len(json.loads(adopt["stdout"])["planted"]), "digest": forest_digest(forest, env)}


def median(values: list[float]) -> float:
    return statistics.median(values)


def import_profile(python: str, args: list[str], env: dict[str, str]) -> tuple[int, float]:
    """Modules imported and the sum of their self-times (s) for one command."""
    proc = subprocess.run([python, "-X", "importtime", "-m", "monkeyllm_gardener.cli", *args], env=env,
                          capture_output=True, text=True, cwd=env["HOME"])
    selfs = [int(m.group(1)) for m in re.finditer(r"^import time:\s+(\d+) \|", proc.stderr, re.M)]
    return len(selfs), sum(selfs) / 1e6


def help_time(python: str, env: dict[str, str]) -> tuple[float, float]:
    runs = [run(python, ["--help"], env, codes=(0,)) for _ in range(HELP_RUNS)]
    return median([r["wall"] for r in runs]), median([r["cpu"] for r in runs])


def syncs_only(sides: dict[str, str], work: Path, rounds: int, env: dict[str, str]) -> None:
    runs: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
    for i in range(rounds):
        for side in (["old", "new"] if i % 2 == 0 else ["new", "old"]):
            runs[side].append(run(sides[side], ["sync", "--forest", str(work / f"forest-{side}"), "--json"], env))
    if {r["stdout"] for r in runs["old"]} != {r["stdout"] for r in runs["new"]} or len({r["stdout"] for r in runs["old"]}) != 1:
        raise SystemExit("the no-change sync reports differ")
    cells = {side: (median([r["wall"] for r in rs]), median([r["cpu"] for r in rs])) for side, rs in runs.items()}
    (ow, oc), (nw, nc) = cells["old"], cells["new"]
    print(f"no-change sync (median of {rounds}): old {ow:.3f} s wall {oc:.3f} s CPU, new {nw:.3f} s wall "
          f"{nc:.3f} s CPU ({oc / nc:.1f}x CPU); reports identical", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", required=True, help="the previous code's python")
    parser.add_argument("--new", default=sys.executable, help="this code's python (default: this one)")
    parser.add_argument("--exports", type=Path, default=Path("/tmp/ingest-exports"))
    parser.add_argument("--files", type=int, nargs="+", default=[1000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path("/tmp/ingest-floor"))
    parser.add_argument("--imports", action="store_true")
    parser.add_argument("--syncs-only", type=int, metavar="N", help="only N no-change syncs per side, on the "
                        "forests an earlier run left in --work")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    env = clean_env(args.work)
    sides = {"old": args.old, "new": args.new}
    for python in sides.values():
        run(python, ["--help"], env, codes=(0,))  # bytecode compiled before anything is timed
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    if args.syncs_only:
        syncs_only(sides, args.work, args.syncs_only, env)
        args.files = []
    for files in args.files:
        source = ensure_export(args.exports, files)
        results: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
        for i in range(args.repeat):
            order = ["old", "new"] if i % 2 == 0 else ["new", "old"]
            for side in order:
                results[side].append(one_round(sides[side], source, args.work / f"forest-{side}", env))
                r = results[side][-1]
                peaks = r["adopt"]["peaks"]
                print(f"{files} files, round {i + 1}, {side}: adopt {r['adopt']['wall']:.2f} s wall "
                      f"{r['adopt']['cpu']:.2f} s CPU, peak memory {peaks['writer']} / {peaks['worker']} / "
                      f"{peaks['git']} MiB (writer / worker / git); no-change sync "
                      + ", ".join(f"{s['wall']:.3f}/{s['cpu']:.3f}" for s in r["syncs"]) + " s wall/CPU",
                      flush=True)
            diff = differences(results["old"][-1]["digest"], results["new"][-1]["digest"])
            if diff:
                raise SystemExit("the forests differ:\n" + "\n".join(diff))
            if results["old"][-1]["sync_report"] != results["new"][-1]["sync_report"]:
                raise SystemExit("the no-change sync reports differ")
        print(f"\n{files} files: forests byte-identical in every round "
              f"({results['new'][-1]['planted']} nodes planted, same tree, commits and payloads); "
              "no-change sync reports identical")
        print("| measurement | old wall | old CPU | new wall | new CPU | CPU ratio |")
        print("|---|---|---|---|---|---|")
        for label, pick in (("adopt", lambda r: [r["adopt"]]), ("no-change sync", lambda r: r["syncs"])):
            cells = []
            for side in ("old", "new"):
                runs = [x for r in results[side] for x in pick(r)]
                cells.append((median([x["wall"] for x in runs]), median([x["cpu"] for x in runs])))
            (ow, oc), (nw, nc) = cells
            print(f"| {label}, {files:,} files (median of {len(runs)}) | {ow:.3f} s | {oc:.3f} s | "
                  f"{nw:.3f} s | {nc:.3f} s | {oc / nc:.1f}x |")
        print(f"\n| adopt, {files:,} files: peak memory (median of {args.repeat}) | old | new |\n|---|---|---|")
        for role in ("writer", "worker", "git"):
            old_peak, new_peak = (median([r["adopt"]["peaks"][role] for r in results[side]]) for side in ("old", "new"))
            print(f"| {role} | {old_peak:.0f} MiB | {new_peak:.0f} MiB |")
    if args.imports:
        forest = args.work / "forest-new"
        commands = {"--help": ["--help"], "sync (no change)": ["sync", "--forest", str(forest)],
                    "locate": ["locate", "invoice", "--forest", str(forest)],
                    "look": ["look", "_index", "--forest", str(forest)],
                    "validate": ["validate", "--forest", str(forest)]}
        print("\n| command | old modules | old import s | new modules | new import s |")
        print("|---|---|---|---|---|")
        for label, command in commands.items():
            old_n, old_s = import_profile(args.old, command, env)
            new_n, new_s = import_profile(args.new, command, env)
            print(f"| `vine {label}` | {old_n} | {old_s:.3f} | {new_n} | {new_s:.3f} |")
        (ow, oc), (nw, nc) = help_time(args.old, env), help_time(args.new, env)
        print(f"\n`vine --help` (median of {HELP_RUNS}): old {ow * 1000:.0f} ms wall {oc * 1000:.0f} ms CPU, "
              f"new {nw * 1000:.0f} ms wall {nc * 1000:.0f} ms CPU")
    print(f"load average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
