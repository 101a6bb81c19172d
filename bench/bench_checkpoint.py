"""What durability costs per plant: three checkpoint policies side by side (issue 10).

    python bench/bench_checkpoint.py [--plants 300] [--rounds 5]

Each round plants ``--plants`` small notes into a fresh forest under each policy,
in a rotating order (so a change of load on the machine hits all three alike), and
takes the wall time from the first plant to the last checkpoint:

- ``every write``: plain ``Vine.plant`` calls, each on the branch when it returns
  (the policy outside a bulk session);
- ``1 s``: inside ``with vine.bulk():`` (what adopt and sync use);
- ``1,000 commits``: the policy before issue 10, a checkpoint every 1,000 commits
  and at the end (a bulk session with no timed checkpoint, flushed by hand).

Printed: the median over rounds of milliseconds per plant for each policy, and
the median cost of one checkpoint (``flush`` after one plant). After every forest
``git status`` must be empty and ``git fsck --full --strict`` clean.

With ``--adopt EXPORT --before REV`` it also times `vine adopt EXPORT` through the
real CLI, alternating the code at git revision REV (exported into a temporary
folder) with this working tree, ``--repeat`` times each, fresh forests, and
prints both medians:

    python bench/bench_checkpoint.py --adopt /tmp/kh-500/export-500-1 --before 6feb38f --repeat 3
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from monkeyllm_core import Vine, init_forest  # noqa: E402


def note(i: int) -> dict:
    return {"id": f"notes/n{i}", "type": "note", "title": f"Note {i}", "summary": f"Note number {i} of the bench.",
            "body": f"# Note {i}\n\nA fact about item {i}.\n"}


def plant_all(vine: Vine, plants: int) -> None:
    for i in range(plants):
        vine.plant(note(i))


def every_write(vine: Vine, plants: int) -> None:
    plant_all(vine, plants)


def one_second(vine: Vine, plants: int) -> None:
    with vine.bulk():
        plant_all(vine, plants)


def every_thousand(vine: Vine, plants: int) -> None:
    with vine.bulk(seconds=float("inf")):
        for i in range(plants):
            vine.plant(note(i))
            if (i + 1) % 1000 == 0:
                vine.flush()


POLICIES: dict[str, Callable[[Vine, int], None]] = {
    "every write": every_write, "1 s": one_second, "1,000 commits": every_thousand}


def fresh_forest(work: Path, name: str) -> Path:
    root = init_forest(work / name, "Bench")
    with Vine(root) as vine:
        vine.plant({"id": "notes/_index", "title": "Notes", "summary": "Notes planted by the bench."})
    return root


def check(root: Path) -> None:
    status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True).stdout
    fsck = subprocess.run(["git", "fsck", "--full", "--strict"], cwd=root, capture_output=True, text=True)
    if status or fsck.returncode:
        raise SystemExit(f"{root}: git status {status!r}, fsck {fsck.stdout + fsck.stderr!r}")


def ms_per_plant(work: Path, name: str, policy: Callable[[Vine, int], None], plants: int) -> float:
    root = fresh_forest(work, name)
    vine = Vine(root)
    started = time.perf_counter()
    policy(vine, plants)  # every policy ends with its writes on the branch
    elapsed = time.perf_counter() - started
    vine.close()
    check(root)
    shutil.rmtree(root)
    return elapsed * 1000 / plants


def checkpoint_ms(work: Path, samples: int) -> float:
    """One flush after one plant, in a bulk session (no timed checkpoint in between)."""
    root = fresh_forest(work, "checkpoint")
    times = []
    with Vine(root) as vine, vine.bulk(seconds=float("inf")):
        for i in range(samples):
            vine.plant(note(i))
            started = time.perf_counter()
            vine.flush()
            times.append((time.perf_counter() - started) * 1000)
    check(root)
    shutil.rmtree(root)
    return statistics.median(times)


def code_at(rev: str, work: Path) -> Path:
    """The repository's tree at ``rev``, exported (not checked out) under ``work``."""
    out = work / f"code-{rev}"
    out.mkdir()
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return out


def adopt_seconds(code: Path, export: Path, work: Path, name: str) -> float:
    forest = work / name
    env = {**os.environ, "PYTHONPATH": str(code), "PYTHONDONTWRITEBYTECODE": "1"}
    cli = [sys.executable, "-m", "monkeyllm_gardener.cli"]
    subprocess.run([*cli, "init", "--forest", str(forest), "--title", "Bench"], env=env, check=True,
                   capture_output=True, cwd=code)
    started = time.perf_counter()
    done = subprocess.run([*cli, "adopt", str(export), "--forest", str(forest), "--json"], env=env,
                          capture_output=True, text=True, cwd=code)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"adopt with {code} failed: {done.stderr[-1000:]}")
    check(forest)
    shutil.rmtree(forest)
    return seconds


def compare_adopts(export: Path, before: str, repeat: int, work: Path) -> None:
    codes = {f"before ({before})": code_at(before, work), "after (this tree)": ROOT}
    times: dict[str, list[float]] = {label: [] for label in codes}
    for round_no in range(repeat):
        labels = list(codes) if round_no % 2 == 0 else list(reversed(codes))
        for label in labels:
            times[label].append(adopt_seconds(codes[label], export, work, f"adopt-{round_no}-{len(times[label])}"))
        print(f"adopt round {round_no}: " + ", ".join(f"{label} {times[label][-1]:.2f} s" for label in codes),
              flush=True)
    files = sum(1 for p in export.rglob("*") if p.is_file())
    print(f"\nvine adopt of {files} files, median of {repeat}:")
    for label in codes:
        print(f"  {label:>20}: {statistics.median(times[label]):6.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plants", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--adopt", type=Path, default=None, metavar="EXPORT",
                        help="also compare `vine adopt EXPORT` before and after")
    parser.add_argument("--before", default="HEAD~1", metavar="REV")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="vine-bench-checkpoint-"))
    home = work / "home"
    home.mkdir()
    os.environ.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), GIT_CONFIG_NOSYSTEM="1")
    try:
        names = list(POLICIES)
        results: dict[str, list[float]] = {name: [] for name in names}
        checkpoints = []
        for round_no in range(args.rounds):
            order = names[round_no % len(names):] + names[:round_no % len(names)]
            for name in order:
                results[name].append(ms_per_plant(work, f"r{round_no}-{len(results[name])}", POLICIES[name],
                                                  args.plants))
            checkpoints.append(checkpoint_ms(work, 20))
            print(f"round {round_no}: " + ", ".join(f"{n} {results[n][-1]:.2f} ms" for n in names), flush=True)
        print(f"\n{args.plants} plants per forest, {args.rounds} rounds, median ms per plant "
              f"(first plant to last checkpoint):")
        for name in names:
            print(f"  {name:>14}: {statistics.median(results[name]):6.2f} ms/plant")
        print(f"  one checkpoint (flush after one plant, median of {args.rounds} x 20): "
              f"{statistics.median(checkpoints):.2f} ms")
        if args.adopt is not None:
            compare_adopts(args.adopt.resolve(), args.before, args.repeat, work)
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
