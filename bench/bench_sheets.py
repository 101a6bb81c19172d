"""The spreadsheet reader row: the .xlsx converter through openpyxl vs through
python-calamine, same workbooks, same run; then a whole `vine adopt` both ways.

    python bench/bench_sheets.py EXPORT [MORE_FOLDERS...] [--repeat 3] [--adopt]

Each workbook is converted and every row of every table iterated (what loading the
dataset costs in reading), once per reader per round, the readers alternating;
the figure is the median over rounds of the summed time, wall and CPU
(``time.process_time``: the machine is shared). ``--adopt`` then runs `vine adopt
EXPORT` into a fresh forest, alternating a run without calamine (a sitecustomize
that sets ``sys.modules['python_calamine'] = None`` in every process) and a run
with it, and prints the medians and a digest of each forest (``bench_ingest_floor``'s:
the committed tree, the commits, the payloads outside git, datasets included), which
must be equal (nothing changes but time).
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
import time
import warnings
from pathlib import Path

from bench_ingest_floor import forest_digest
from monkeyllm_plugins._sheets_calamine import plan_fast_read
from monkeyllm_plugins.xlsx_dataset import XlsxConverter

BLOCKER = "import sys\nsys.modules['python_calamine'] = None\n"


def read_all(paths: list[Path], *, use_calamine: bool) -> tuple[float, float, int]:
    converter = XlsxConverter(use_calamine=use_calamine)
    wall, cpu, rows = time.perf_counter(), time.process_time(), 0
    for path in paths:
        try:
            conversion = converter.convert(path)
        except Exception:  # a corrupt workbook costs its failure, both ways
            continue
        rows += sum(1 for table in conversion.rows.values() for _ in table)
    return time.perf_counter() - wall, time.process_time() - cpu, rows


def reader_row(folders: list[Path], repeat: int) -> None:
    paths = sorted(p for folder in folders for p in folder.rglob("*.xls[xm]"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = sum(plan_fast_read(p) is not None for p in paths)
    print(f"{len(paths)} workbooks, {fast} on the calamine path")
    results: dict[bool, list[tuple[float, float, int]]] = {False: [], True: []}
    for _ in range(repeat):
        for use_calamine in (False, True):
            results[use_calamine].append(read_all(paths, use_calamine=use_calamine))
    for use_calamine, runs in results.items():
        name = "calamine" if use_calamine else "openpyxl"
        print(f"{name:9} rows {runs[0][2]:>7}  wall {statistics.median(r[0] for r in runs):.3f} s  "
              f"cpu {statistics.median(r[1] for r in runs):.3f} s  (runs: "
              + ", ".join(f"{r[0]:.3f}" for r in runs) + ")")


def adopt_once(export: Path, work: Path, env: dict[str, str]) -> tuple[float, float, str]:
    forest = work / "forest"
    vine = [sys.executable, "-m", "monkeyllm_gardener.cli"]
    subprocess.run([*vine, "init", "--forest", str(forest), "--title", "Bench"], env=env, check=True,
                   capture_output=True)
    before = os.times()
    wall = time.perf_counter()
    subprocess.run([*vine, "adopt", str(export), "--forest", str(forest)], env=env, capture_output=True)
    wall = time.perf_counter() - wall
    after = os.times()
    cpu = (after.children_user + after.children_system) - (before.children_user + before.children_system)
    digest = json.dumps(forest_digest(forest, env), sort_keys=True).encode()
    return wall, cpu, hashlib.sha256(digest).hexdigest()[:16]


def adopt_row(export: Path, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        blocker = Path(scratch) / "blocker"
        blocker.mkdir()
        (blocker / "sitecustomize.py").write_text(BLOCKER)
        base = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        envs = {"openpyxl": {**base, "PYTHONPATH": str(blocker)}, "calamine": base}
        runs: dict[str, list[tuple[float, float, str]]] = {name: [] for name in envs}
        for round_ in range(repeat):
            for name, env in envs.items():
                work = Path(scratch) / f"{name}-{round_}"
                work.mkdir()
                runs[name].append(adopt_once(export, work, env))
        for name, found in runs.items():
            print(f"adopt {name:9} wall {statistics.median(r[0] for r in found):.2f} s  "
                  f"cpu {statistics.median(r[1] for r in found):.2f} s  (runs: "
                  + ", ".join(f"{r[0]:.2f}" for r in found) + f")  forest {sorted({r[2] for r in found})}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--adopt", action="store_true", help="also time `vine adopt` of the first folder both ways")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
    reader_row(args.folders, args.repeat)
    if args.adopt:
        adopt_row(args.folders[0], args.repeat)


if __name__ == "__main__":
    main()
