"""Issue 16: an adopt's per-file cost and peak memory as the export grows.

    .venv/bin/python bench/bench_adopt_scale.py EXPORT [EXPORT ...] [--vine .venv/bin/vine] [--work /tmp/adopt-scale]

For each export (``make_exports.py OUT --files N --large-csvs 0``): `vine init`, one
`vine adopt` (default ``--jobs``), then three no-change `vine sync`s. Printed per
export: wall and CPU time (user + system of `vine` and everything it waited for:
pool workers, git), both per planted file, and the peak resident memory of each
kind of process: the writer (the `vine` process), its largest pool worker and its
largest git child, each its own ``VmHWM`` read from ``/proc`` every 50 ms while it
runs (a process that lives less than that can be missed: ``ru_maxrss`` of the
largest descendant, the last column, catches every one). Each export runs in its
own `python` child, so one export's peak is not another's. The load average is
printed beside each row.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_gardener import clean_env, set_aside, watch_peaks


def one_export(vine: str, export: Path, forest: Path) -> dict:
    env = clean_env(forest.parent)
    set_aside(forest)  # not deleted right before a timed adopt: bench_gardener.set_aside
    subprocess.run([vine, "init", "--forest", str(forest), "--title", "bench"], check=True, env=env,
                   capture_output=True)
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([vine, "adopt", str(export), "--forest", str(forest), "--json"], env=env,
                                stdout=out, stderr=err, text=True)
        peaks = watch_peaks(proc)
        wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"vine adopt {export} exited {proc.returncode}:\n{stderr[-2000:]}")
    report = json.loads(stdout)
    syncs = []
    for _ in range(3):
        sync_before, sync_started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        subprocess.run([vine, "sync", str(export), "--forest", str(forest)], env=env, capture_output=True)
        sync_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        syncs.append((time.perf_counter() - sync_started, _cpu(sync_after) - _cpu(sync_before)))
    return {"planted": len(report["planted"]), "errors": len(report["errors"]), "wall": wall,
            "cpu": _cpu(after) - _cpu(before), "peak_mib": after.ru_maxrss / 1024, "peaks": peaks, "syncs": syncs,
            "load": os.getloadavg()[0]}


def _cpu(usage: resource.struct_rusage) -> float:
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("exports", nargs="+", type=Path)
    parser.add_argument("--vine", default=str(Path(sys.executable).parent / "vine"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/adopt-scale"))
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # the child's mode
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one_export(args.vine, args.exports[0], args.work / f"forest-{args.exports[0].name}")))
        return 0
    args.work.mkdir(parents=True, exist_ok=True)
    for export in args.exports:  # here, where the delete waits for this process's exit, not a child's
        set_aside(args.work / f"forest-{export.name}")
    print("| export | planted | adopt wall | per file | CPU | per file | peak RSS: writer / worker / git "
          "| largest process | no-change sync wall / CPU (median of 3) | load |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for export in args.exports:
        child = subprocess.run([sys.executable, __file__, str(export), "--vine", args.vine, "--work",
                                str(args.work), "--one"], capture_output=True, text=True)
        if child.returncode != 0:
            raise SystemExit(f"{export}: {child.stderr[-2000:]}")
        row = json.loads(child.stdout)
        n = max(row["planted"], 1)
        wall, cpu = sorted(row["syncs"])[1]
        print(f"| {export.name} | {row['planted']:,} | {row['wall']:.1f} s | {row['wall'] / n * 1000:.1f} ms | "
              f"{row['cpu']:.1f} s | {row['cpu'] / n * 1000:.1f} ms | "
              f"{row['peaks']['writer']} / {row['peaks']['worker']} / {row['peaks']['git']} MiB | "
              f"{row['peak_mib']:.0f} MiB | "
              f"{wall:.3f} / {cpu:.3f} s | {row['load']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
