"""Core benchmark (issue 2): the per-plant cost of a small note as a forest grows.

Every node is its own commit. Two layouts: every note in ONE branch (its index
file grows with every plant) and notes spread round-robin over 200 branches.
One run per layout plants up to the largest size; the median ms/plant is
reported per stretch (the first 100 plants, and the last 100 before 1,000,
5,000 and 10,000 nodes), so "flat" is visible as equal medians. The baseline,
measured in the same run, is what a naive engine does: write the file, then one
`git add` + `git commit` subprocess pair per file (no index upkeep at all).

    /work/venv/bin/python bench/bench_core.py [--sizes 100,1000,5000,10000] [--baseline-files 1000]

At the end of each run: `git status --porcelain` must be empty and validate must
report no errors (the one-branch layout warns needs_split, as it should).
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from monkeyllm_core import Vine, init_forest
from monkeyllm_core.forest.validate import validate_forest

BRANCHES = 200


def isolated_git_env(home: Path) -> None:
    """No machine git config: the benchmark measures vine's own identity path."""
    os.environ["HOME"] = str(home)
    os.environ["GIT_CONFIG_GLOBAL"] = str(home / ".gitconfig")
    os.environ["GIT_CONFIG_NOSYSTEM"] = "1"


def note(node_id: str, i: int) -> dict:
    return {"id": node_id, "type": "note", "title": f"Fact {i}",
            "summary": f"Fact number {i}: one short sentence of scent for the index.",
            "body": f"# Fact {i}\n\nA small note, number {i}, planted by the benchmark.\n"}


def stretches(size: int) -> list[tuple[str, int, int]]:
    """(label, first plant, last plant) 1-based, inclusive."""
    out = [("1-100", 1, min(100, size))]
    for mark in (1000, 5000, 10000):
        if size >= mark:
            out.append((f"{mark - 99:,}-{mark:,}", mark - 99, mark))
    return out


def median_ms(samples: list[float], first: int, last: int) -> float:
    return statistics.median(samples[first - 1:last]) * 1000


def run_vine(size: int, layout: str, work: Path) -> dict:
    root = init_forest(work / f"vine-{layout}-{size}", f"bench {layout}")
    vine = Vine(root)
    with vine.bulk():  # as adopt plants: the branch catches up once a second (bench_checkpoint.py)
        if layout == "one branch":
            vine.plant({"id": "notes/_index", "title": "Notes", "summary": "Every note of the benchmark."})
            place = lambda i: f"notes/n{i:05d}"  # noqa: E731
        else:
            for b in range(BRANCHES):
                vine.plant({"id": f"b{b:03d}/_index", "title": f"Branch {b}", "summary": f"Branch number {b}."})
            place = lambda i: f"b{i % BRANCHES:03d}/n{i:05d}"  # noqa: E731
        samples = []
        started = time.perf_counter()
        for i in range(size):
            t0 = time.perf_counter()
            vine.plant(note(place(i), i))
            samples.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
    vine.close()
    close_s = time.perf_counter() - t0
    total_s = time.perf_counter() - started
    status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True).stdout
    with Vine(root, writable=False) as reader:
        findings = validate_forest(reader)
    commits = int(subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=root,
                                 capture_output=True, text=True).stdout)
    # vine writes its own packs: git itself must find every object and delta sound
    fsck = subprocess.run(["git", "fsck", "--full", "--strict", "--no-progress"], cwd=root,
                          capture_output=True, text=True)
    pack_mib = sum(p.stat().st_size for p in (root / ".git" / "objects" / "pack").glob("*.pack")) / 2**20
    return {"samples": samples, "close_s": close_s, "total_s": total_s, "status": status,
            "fsck": "ok" if fsck.returncode == 0 and not fsck.stdout.strip() else f"FAILED {fsck.stdout[:200]}",
            "pack_mib": pack_mib,
            "errors": [f.line() for f in findings if f.level == "error"],
            "warnings": sorted({f.code for f in findings if f.level == "warning"}),
            "commits": commits}


def run_baseline(files: int, work: Path) -> dict:
    root = work / "baseline"
    (root / "notes").mkdir(parents=True)
    ident = ["-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    samples = []
    for i in range(files):
        t0 = time.perf_counter()
        rel = f"notes/n{i:05d}.md"
        (root / rel).write_text(f"---\nid: notes/n{i:05d}\n---\n\n# Fact {i}\n")
        subprocess.run(["git", *ident, "add", rel], cwd=root, check=True)
        subprocess.run(["git", *ident, "commit", "-q", "-m", f"plant(notes/n{i:05d})"], cwd=root, check=True)
        samples.append(time.perf_counter() - t0)
    return {"samples": samples}


def machine() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    return (f"{os.cpu_count()} cores ({model or platform.machine()}), {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}, {git}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000,5000,10000",
                        help="forest sizes in nodes; one run per layout plants up to the largest")
    parser.add_argument("--baseline-files", type=int, default=1000)
    args = parser.parse_args()
    size = max(int(s) for s in args.sizes.split(","))
    with tempfile.TemporaryDirectory(prefix="bench-core-") as tmp:
        work = Path(tmp)
        (work / "home").mkdir()
        isolated_git_env(work / "home")
        print(f"machine: {machine()}")
        print(f"command: {Path(sys.executable).as_posix()} bench/bench_core.py --sizes {args.sizes} "
              f"--baseline-files {args.baseline_files}\n")
        results = {layout: run_vine(size, layout, work) for layout in ("one branch", f"{BRANCHES} branches")}
        baseline = run_baseline(args.baseline_files, work) if args.baseline_files else None

    print("| layout | " + " | ".join(f"plants {label}" for label, _, _ in stretches(size)) + " | mean incl. close | close | commits | packs | git fsck | git status | validate |")
    print("|---|" + "---|" * (len(stretches(size)) + 7))
    for layout, r in results.items():
        cells = [f"{median_ms(r['samples'], a, b):.2f}" for _, a, b in stretches(size)]
        mean = (sum(r["samples"]) + r["close_s"]) / len(r["samples"]) * 1000
        clean = "clean" if r["status"] == "" else f"DIRTY ({len(r['status'].splitlines())} lines)"
        valid = (f"{len(r['errors'])} errors" + (f", warnings: {', '.join(r['warnings'])}" if r["warnings"] else ""))
        print(f"| vine, {layout} | " + " | ".join(cells)
              + f" | {mean:.2f} | {r['close_s'] * 1000:.0f} ms | {r['commits']:,} | {r['pack_mib']:.1f} MiB"
              + f" | {r['fsck']} | {clean} | {valid} |")
    if baseline:
        n = len(baseline["samples"])
        cells = []
        for _, a, b in stretches(size):
            cells.append(f"{median_ms(baseline['samples'], a, b):.2f}" if b <= n else "not run")
        mean = sum(baseline["samples"]) / n * 1000
        print(f"| baseline: git add + git commit per file (first {n:,} files) | " + " | ".join(cells)
              + f" | {mean:.2f} | - | {n:,} | - | - | - | - |")
    print("\nmedian ms per plant over each stretch of plants (1-based plant numbers)")
    for layout, r in results.items():
        if r["errors"] or r["status"] or r["fsck"] != "ok":
            print(f"FAILED: {layout}: {r['errors'][:3]} {r['status'][:200]} {r['fsck']}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
