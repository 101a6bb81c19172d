"""What a workbook costs the worker: ``prepare_file`` (conversion, sheet survey, the
SQLite row load) per .xlsx and per .xls, old code against new in the same run.

    python bench/bench_workbooks.py EXPORT --old OLD_PYTHON --new NEW_PYTHON [--repeat 5]

Each round runs both interpreters (the order alternating) as child processes on the
same files; a child warms up on one pass over the workbooks (imports, the page cache)
and then times a second pass, file by file: CPU (``time.process_time``: the machine
is shared) and wall, summed per kind. The figures are the medians over rounds. A
child also prints a digest of every staged dataset's rows and schema, which must be
the same for both interpreters (nothing changes but time).

    python bench/bench_workbooks.py EXPORT --child     # one measured pass, JSON on stdout
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

KINDS = (".xlsx", ".xls")


def workbooks(export: Path) -> list[Path]:
    return sorted(p for p in export.rglob("*") if p.is_file() and p.suffix.lower() in KINDS)


def staged_digest(db: str) -> str:
    with sqlite3.connect(db) as connection:
        tables = [row[0] for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        digest = hashlib.sha256()
        for table in tables:
            schema = connection.execute(f'PRAGMA table_info("{table}")').fetchall()
            digest.update(repr((table, schema)).encode())
            types = ", ".join(f'typeof("{column[1]}")' for column in schema)
            for row in connection.execute(f'SELECT *, {types} FROM "{table}" ORDER BY rowid'):
                digest.update(repr(row).encode())
    return digest.hexdigest()


def child(export: Path) -> None:
    from monkeyllm_gardener.host import HostSpec
    from monkeyllm_gardener.worker import prepare_file

    spec, files = HostSpec(), workbooks(export)
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:  # warm-up: imports, the page cache
            prepare_file(spec, str(path), str(path.relative_to(export)), None, tmp)
        cpu = dict.fromkeys(KINDS, 0.0)
        wall = dict.fromkeys(KINDS, 0.0)
        count = dict.fromkeys(KINDS, 0)
        digest = hashlib.sha256()
        for path in files:
            kind = path.suffix.lower()
            started_cpu, started_wall = time.process_time(), time.perf_counter()
            prepared = prepare_file(spec, str(path), str(path.relative_to(export)), None, tmp)
            cpu[kind] += time.process_time() - started_cpu
            wall[kind] += time.perf_counter() - started_wall
            count[kind] += 1
            outcome = staged_digest(prepared.dataset_db) if prepared.dataset_db else prepared.read_error
            conversion = prepared.result.conversion if prepared.result else None
            said = (conversion.manual_notes, conversion.warnings) if conversion else None
            digest.update(repr((str(path.relative_to(export)), outcome, said, prepared.row_counts)).encode())
    print(json.dumps({"cpu": cpu, "wall": wall, "count": count, "digest": digest.hexdigest()[:16]}))


def run_child(python: str, export: Path) -> dict:
    proc = subprocess.run([python, __file__, str(export), "--child"], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("export", type=Path)
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--old")
    parser.add_argument("--new")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if args.child:
        child(args.export)
        return
    sides = {"old": args.old, "new": args.new}
    runs: dict[str, list[dict]] = {"old": [], "new": []}
    for round_number in range(args.repeat):
        order = ("old", "new") if round_number % 2 == 0 else ("new", "old")
        for side in order:
            runs[side].append(run_child(sides[side], args.export))
    digests = {side: {r["digest"] for r in results} for side, results in runs.items()}
    print(f"datasets digest: old {sorted(digests['old'])} new {sorted(digests['new'])} "
          f"({'identical' if digests['old'] == digests['new'] and len(digests['old']) == 1 else 'DIFFERENT'})")
    for kind in KINDS:
        n = runs["old"][0]["count"][kind]
        line = [f"{kind:5} {n:3} files"]
        medians = {}
        for side in ("old", "new"):
            cpu = statistics.median(r["cpu"][kind] for r in runs[side])
            wall = statistics.median(r["wall"][kind] for r in runs[side])
            medians[side] = cpu
            line.append(f"{side} cpu {cpu:.3f} s ({cpu / n * 1000:.1f} ms/file) wall {wall:.3f} s")
        line.append(f"cpu ratio {medians['old'] / medians['new']:.2f}x")
        print("  ".join(line))
        for side in ("old", "new"):
            print(f"      {side} cpu per round: " + ", ".join(f"{r['cpu'][kind]:.3f}" for r in runs[side]))


if __name__ == "__main__":
    main()
