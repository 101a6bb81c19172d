#!/usr/bin/env python3
"""Benchmark: adopting one big CSV (issue 4), against a plain stdlib loop and sqlite-utils.

    /work/venv/bin/python bench/bench_csv.py [--sizes 10000,100000,1000000] [--repeats 3]
        [--big-repeats 3] [--workdir /tmp/bench-csv] [--readme bench/README.md] [--profile]

The 1,000,000-row, 10-column CSV comes from the shared generator (cached in
WORKDIR/big/orders_big.csv); the smaller sizes are its first N records, header
included. For every size, in the same run, each of these runs in a fresh
subprocess and is timed (wall clock) with the peak RSS of the process doing the
work (``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss`` read by a small parent
that runs nothing else):

- ``vine adopt`` of a folder holding just that CSV, into a fresh forest (``vine init``
  is not timed). This is the whole product path: hash, encoding check, delimiter
  sniff, type inference pass, load pass, sample map, payload hash, git commit.
- ``stdlib loop``: one streamed pass inferring INTEGER/REAL/TEXT per column, then
  ``csv.reader`` + ``executemany`` into SQLite in one transaction (values converted).
- ``sqlite-utils insert DB TABLE FILE --csv --detect-types`` (skipped with a note
  when sqlite-utils is not installed).

Medians of ``--repeats`` runs (``--big-repeats`` at 1,000,000 rows) are printed as a
markdown table and, with ``--readme``, written into the ``## Converters:
1,000,000-row CSV`` section of that file (only that section is touched).
``--profile`` adds a cProfile of ``Gardener(forest).adopt(src, jobs=1)`` in-process
at the largest size (top functions by cumulative and by own time).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve()
REPO = HERE.parents[1]
GENERATOR = Path("/work/shared/bench/make_exports.py")
SECTION = "## Converters: 1,000,000-row CSV"
BIG_ROWS = 1_000_000
VENV_BIN = Path(sys.executable).parent


@dataclass(frozen=True, kw_only=True)
class Sample:
    seconds: float
    peak_rss_mb: float


# -- inputs ---------------------------------------------------------------------------------
def big_csv(workdir: Path) -> Path:
    """The cached 1M-row CSV, generated once with the shared generator."""
    path = workdir / "big" / "orders_big.csv"
    if not path.exists():
        workdir.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(GENERATOR), str(workdir / "big"), "--csv-only", str(BIG_ROWS)], check=True)
    return path


def sized_csv(workdir: Path, rows: int) -> Path:
    """The first ``rows`` records of the big CSV (header kept), cached; records, not
    lines, so a quoted newline could never cut a row."""
    big = big_csv(workdir)
    if rows >= BIG_ROWS:
        return big
    path = workdir / f"orders_{rows}.csv"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        with big.open(newline="", encoding="utf-8") as source, tmp.open("w", newline="", encoding="utf-8") as out:
            reader, writer = csv.reader(source), csv.writer(out, lineterminator="\n")
            for index, record in enumerate(reader):
                if index > rows:
                    break
                writer.writerow(record)
        tmp.replace(path)
    return path


# -- measuring --------------------------------------------------------------------------------
_MEASURE = r"""
import json, resource, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
seconds = time.perf_counter() - start
if proc.returncode != 0:
    sys.stderr.write(proc.stderr.decode(errors="replace")); sys.exit(proc.returncode)
print(json.dumps({"seconds": seconds, "maxrss_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def measure(argv: list[str], env: dict[str, str] | None = None) -> Sample:
    """Run ``argv`` under a fresh parent that reports its wall time and peak RSS."""
    out = subprocess.run([sys.executable, "-c", _MEASURE, *argv], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({out.returncode}): {out.stderr.strip()[-2000:]}")
    data = json.loads(out.stdout)
    return Sample(seconds=data["seconds"], peak_rss_mb=data["maxrss_kb"] / 1024)


def clean_env(home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").touch()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "MONKEYLLM_"))}
    env.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), GIT_CONFIG_NOSYSTEM="1")
    return env


def run_vine(csv_path: Path, scratch: Path) -> Sample:
    """`vine adopt` of a folder holding only this CSV, into a new forest."""
    shutil.rmtree(scratch, ignore_errors=True)
    source, forest = scratch / "export", scratch / "forest"
    source.mkdir(parents=True)
    os.link(csv_path, source / "orders.csv") if _same_device(csv_path, source) else shutil.copy(csv_path, source)
    env = clean_env(scratch / "home")
    vine = [sys.executable, "-m", "monkeyllm_gardener.cli"]
    subprocess.run([*vine, "init", "--forest", str(forest), "--title", "bench"], check=True, env=env,
                   capture_output=True)
    sample = measure([*vine, "adopt", str(source), "--forest", str(forest), "--json"], env=env)
    payload = forest / "orders.db"
    assert payload.exists(), "vine adopt planted no payload"
    return sample


def _same_device(a: Path, b: Path) -> bool:
    return a.stat().st_dev == b.stat().st_dev


def run_baseline(csv_path: Path, scratch: Path) -> Sample:
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    return measure([sys.executable, str(HERE), "_baseline", str(csv_path), str(scratch / "baseline.db")])


def sqlite_utils_bin() -> Path | None:
    found = VENV_BIN / "sqlite-utils"
    if found.exists():
        return found
    which = shutil.which("sqlite-utils")
    return Path(which) if which else None


def run_sqlite_utils(csv_path: Path, scratch: Path) -> Sample:
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    tool = sqlite_utils_bin()
    assert tool is not None
    return measure([str(tool), "insert", str(scratch / "su.db"), "orders", str(csv_path), "--csv",
                    *sqlite_utils_type_flag()])


def sqlite_utils_type_flag() -> list[str]:
    """``--detect-types`` on sqlite-utils 3; version 4 detects types by default and
    dropped the flag (it has ``--no-detect-types`` instead)."""
    tool = sqlite_utils_bin()
    help_text = subprocess.run([str(tool), "insert", "--help"], capture_output=True, text=True).stdout
    return ["--detect-types"] if "--detect-types" in help_text.replace("--no-detect-types", "") else []


def sqlite_utils_version() -> str:
    tool = sqlite_utils_bin()
    return subprocess.run([str(tool), "--version"], capture_output=True, text=True).stdout.strip() if tool else ""


# -- the stdlib baseline (runs in its own process) -------------------------------------------------
_INT = re.compile(r"[+-]?(?:0|[1-9][0-9]*)\Z")
_REAL = re.compile(r"[+-]?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")


def baseline(csv_path: Path, db_path: Path) -> int:
    """Infer types in one streamed pass, then csv + executemany in one transaction."""
    import sqlite3
    with csv_path.open(newline="", encoding="utf-8") as stream:
        reader = csv.reader(stream)
        header = next(reader)
        kinds = [set() for _ in header]
        for record in reader:
            for index, cell in enumerate(record):
                if not cell:
                    continue
                kind = kinds[index]
                if "TEXT" in kind:
                    continue
                if _INT.match(cell):
                    kind.add("INTEGER")
                elif _REAL.match(cell):
                    kind.add("REAL")
                else:
                    kind.add("TEXT")
    types = ["TEXT" if (not k or "TEXT" in k) else "REAL" if "REAL" in k else "INTEGER" for k in kinds]
    cast = {"INTEGER": int, "REAL": float, "TEXT": str}
    casts = [cast[t] for t in types]
    db = sqlite3.connect(db_path, isolation_level=None)
    columns = ", ".join(f'"{name}" {kind}' for name, kind in zip(header, types))
    db.execute(f"CREATE TABLE orders ({columns})")
    marks = ", ".join("?" * len(header))
    with csv_path.open(newline="", encoding="utf-8") as stream:
        reader = csv.reader(stream)
        next(reader)
        rows = (tuple(f(c) if c else None for f, c in zip(casts, record)) for record in reader)
        db.execute("BEGIN")
        db.executemany(f"INSERT INTO orders VALUES ({marks})", rows)
        db.execute("COMMIT")
    count = db.execute("SELECT COUNT(*) FROM orders").fetchone()[0]
    db.close()
    return count


# -- profile ----------------------------------------------------------------------------------
def profile_adopt(csv_path: Path, scratch: Path, top: int = 25) -> tuple[str, str]:
    import cProfile
    import io
    import pstats
    from monkeyllm_core import init_forest
    from monkeyllm_gardener.pipeline import Gardener
    shutil.rmtree(scratch, ignore_errors=True)
    source, forest = scratch / "export", scratch / "forest"
    source.mkdir(parents=True)
    shutil.copy(csv_path, source / "orders.csv")
    os.environ.update(clean_env(scratch / "home"))
    init_forest(forest, "bench")
    profiler = cProfile.Profile()
    profiler.enable()
    report = Gardener(forest).adopt(source, jobs=1)
    profiler.disable()
    assert report.planted == ["orders"], report.as_dict()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue(), profile_summary(stats)


def profile_summary(stats: object, top: int = 12) -> str:
    """The functions with the most own time, as a markdown table (paths shortened)."""
    total = sum(entry[2] for entry in stats.stats.values())  # type: ignore[attr-defined]
    rows = sorted(stats.stats.items(), key=lambda item: item[1][2], reverse=True)[:top]  # type: ignore[attr-defined]
    lines = ["| function | calls | own s | cumulative s |", "| --- | ---: | ---: | ---: |"]
    for (filename, line, name), (_, calls, own, cumulative, _) in rows:
        where = filename.split("/work/main/")[-1] if filename.startswith("/") else filename
        lines.append(f"| `{where}:{line}({name})` | {calls:,} | {own:.2f} | {cumulative:.2f} |")
    return f"Total profiled: {total:.2f} s (cProfile roughly doubles the wall time).\n\n" + "\n".join(lines)


# -- report -----------------------------------------------------------------------------------
def median(samples: list[Sample], attr: str) -> float:
    return statistics.median(getattr(s, attr) for s in samples)


def table(results: dict[int, dict[str, list[Sample]]]) -> str:
    lines = ["| rows | runs | vine adopt (s) | stdlib loop (s) | sqlite-utils (s) | vine / loop | "
             "vine peak RSS (MB) | loop peak RSS (MB) | sqlite-utils peak RSS (MB) |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for rows, by_tool in sorted(results.items()):
        vine, loop, su = by_tool["vine"], by_tool["loop"], by_tool.get("sqlite-utils") or []
        ratio = median(vine, "seconds") / median(loop, "seconds")
        su_time = f"{median(su, 'seconds'):.2f}" if su else "n/a"
        su_rss = f"{median(su, 'peak_rss_mb'):.0f}" if su else "n/a"
        lines.append(f"| {rows:,} | {len(vine)} | {median(vine, 'seconds'):.2f} | {median(loop, 'seconds'):.2f} | "
                     f"{su_time} | {ratio:.2f}x | {median(vine, 'peak_rss_mb'):.0f} | "
                     f"{median(loop, 'peak_rss_mb'):.0f} | {su_rss} |")
    return "\n".join(lines)


def write_section(readme: Path, body: str) -> None:
    """Replace (or append) only this benchmark's section; other sections are left as they are."""
    text = readme.read_text(encoding="utf-8") if readme.exists() else "# Benchmarks\n"
    section = f"{SECTION}\n\n{body.strip()}\n"
    pattern = re.compile(rf"^{re.escape(SECTION)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text, count=1).rstrip("\n") + "\n"
    else:
        text = text.rstrip("\n") + "\n\n" + section
    readme.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_baseline"]:
        baseline(Path(argv[1]), Path(argv[2]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--big-repeats", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bench-csv"))
    parser.add_argument("--readme", type=Path, help="write the results into this file's section")
    parser.add_argument("--profile", action="store_true", help="cProfile the adopt at the largest size")
    args = parser.parse_args(argv)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",")]
    have_su = sqlite_utils_bin() is not None
    results: dict[int, dict[str, list[Sample]]] = {}
    scratch = Path(tempfile.mkdtemp(prefix="bench-csv-run-"))
    try:
        for rows in sizes:
            path = sized_csv(args.workdir, rows)
            repeats = args.big_repeats if rows >= BIG_ROWS else args.repeats
            by_tool: dict[str, list[Sample]] = {"vine": [], "loop": []}
            if have_su:
                by_tool["sqlite-utils"] = []
            for run in range(repeats):  # interleaved, so drift hits every tool alike
                by_tool["vine"].append(run_vine(path, scratch / "vine"))
                by_tool["loop"].append(run_baseline(path, scratch / "loop"))
                if have_su:
                    by_tool["sqlite-utils"].append(run_sqlite_utils(path, scratch / "su"))
                done = ", ".join(f"{tool} {samples[-1].seconds:.2f}s/{samples[-1].peak_rss_mb:.0f}MB"
                                 for tool, samples in by_tool.items())
                print(f"{rows:>9,} rows run {run + 1}/{repeats}: {done}", file=sys.stderr, flush=True)
            results[rows] = by_tool
        profile, summary = ("", "")
        if args.profile:
            profile, summary = profile_adopt(sized_csv(args.workdir, max(sizes)), scratch / "profile")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    result_table = table(results)
    print(result_table)
    if profile:
        print(profile)
    if not have_su:
        print("sqlite-utils is not installed: its column is n/a", file=sys.stderr)
    if args.readme:
        write_section(args.readme, readme_body(result_table, have_su, argv, summary, max(sizes)))
    return 0


def readme_body(result_table: str, have_su: bool, argv: list[str], summary: str = "", profiled_rows: int = 0) -> str:
    command = " ".join(["/work/venv/bin/python", "bench/bench_csv.py", *argv])
    if have_su:
        flags = " ".join(sqlite_utils_type_flag()) or "(types detected by default; the flag is gone in 4.x)"
        note = f"\nsqlite-utils: `{sqlite_utils_version()}`, run as `sqlite-utils insert DB orders FILE --csv` {flags}.\n"
    else:
        note = "\nsqlite-utils was not installed for this run: its columns are n/a.\n"
    return f"""Command (from the repository root):

    {command}

Input: `make_exports.py --csv-only 1000000` (10 columns: integer id, ISO date, names,
city, SKU, integer qty, decimal price, a mostly empty decimal discount, status, ref);
the 10k and 100k files are its first records. Medians of the runs shown, wall clock,
peak RSS of the process doing the work, each run in a fresh process.
{note}
{result_table}
""" + (f"""
Where vine's time goes: cProfile of `Gardener(forest).adopt(src, jobs=1)` in-process at
{profiled_rows:,} rows, functions by own time.

{summary}
""" if summary else "")


if __name__ == "__main__":
    sys.exit(main())
