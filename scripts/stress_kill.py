"""Kill a writer at random moments, again and again, and check the forest each time.

Each round starts a child process that plants notes and datasets and grafts
summaries into one forest in a loop, in a bulk session (so most writes wait for a
checkpoint: every 7 writes by hand, and the timed one), SIGKILLs it after a random
0.4-1.6 s, then opens the forest for writing (which runs the crash recovery),
plants one note and checks:

- `git status --porcelain` is empty,
- `git fsck --full --strict` finds nothing (vine writes its own git packs),
- `vine validate` reports no errors (payloads present and matching their hashes,
  indexes and coverage true),
- no temporary pack, no vine `.keep` and no half-copied payload is left behind.

For kills of the real `vine adopt` / `vine sync` (main process alone, process
group, the recovering sync) see `scripts/kill_harness.py`.

    python scripts/stress_kill.py [--rounds 30] [--seed 1]

Exit status 1 if any round found a problem. Run it after touching the writer,
the journal or the recovery; each round takes about two seconds.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from monkeyllm_core import Vine, init_forest
from monkeyllm_core.store.packfile import KEEP_MARK, LEGACY_TEMP_PREFIX, TEMP_PREFIX
from monkeyllm_core.forest.validate import validate_forest

CHILD = '''
import itertools, sys
from monkeyllm_core import Vine
vine = Vine(sys.argv[1])
with vine.bulk():
    for i in itertools.count(int(sys.argv[2])):
        if i % 9 == 4:
            vine.plant({"id": f"log/t{i}", "type": "dataset", "title": f"T{i}", "summary": f"Table {i}.",
                        "schema": {"t": {"columns": {"n": "INTEGER"}}}, "rows": {"t": ([k] for k in range(3000))}})
        elif i % 13 == 5 and vine.exists(f"log/n{i - 1}"):
            vine.graft(f"log/n{i - 1}", {"set_frontmatter": {"summary": f"Changed summary {i}."}})
        else:
            vine.plant({"id": f"log/n{i}", "type": "note", "title": f"N{i}", "summary": f"Note {i}.",
                        "body": "A line of the note.\\n" * 20})
        if i % 7 == 0:
            vine.flush()
'''


def git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)


def check(root: Path) -> list[str]:
    problems = []
    status = git(root, "status", "--porcelain").stdout
    if status:
        problems.append(f"git status: {status[:300]!r}")
    fsck = git(root, "fsck", "--full", "--strict", "--no-dangling")
    if fsck.returncode or fsck.stdout.strip():
        problems.append(f"git fsck: {(fsck.stdout + fsck.stderr)[:300]!r}")
    with Vine(root, writable=False) as reader:
        errors = [f.line() for f in validate_forest(reader) if f.level == "error"]
    problems += [f"validate: {line}" for line in errors[:5]]
    pack_dir = root / ".git" / "objects" / "pack"
    leftovers = [*pack_dir.glob(f"{TEMP_PREFIX}*"), *pack_dir.glob(f"{LEGACY_TEMP_PREFIX}*"),
                 *(keep for keep in pack_dir.glob("*.keep") if keep.read_bytes().startswith(KEEP_MARK)),
                 *(p for pattern in (".*.tmp", ".*.snapshot-*") for p in root.rglob(pattern) if ".git" not in p.parts)]
    if leftovers:
        problems.append(f"left behind: {leftovers}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="vine-stress-"))
    try:
        home = work / "home"
        home.mkdir()
        os.environ.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), GIT_CONFIG_NOSYSTEM="1")
        root = init_forest(work / "forest", "Stress")
        with Vine(root) as vine:
            vine.plant({"id": "log/_index", "title": "Log", "summary": "What the killed writers planted."})
        child = work / "child.py"
        child.write_text(CHILD)
        failed = 0
        for round_no in range(args.rounds):
            proc = subprocess.Popen([sys.executable, str(child), str(root), str(round_no * 100_000)],
                                    stderr=subprocess.PIPE, text=True)
            time.sleep(rng.uniform(0.4, 1.6))
            if proc.poll() is not None:  # the child must be killed mid-work, not fail by itself
                print(f"round {round_no}: the writer stopped by itself: {proc.stderr.read()[-500:]}")
                return 1
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            with Vine(root) as vine:  # recovery runs here
                vine.plant({"id": f"after-{round_no}", "type": "note", "title": "After",
                            "summary": "Planted after a kill."})
            problems = check(root)
            failed += bool(problems)
            commits = git(root, "rev-list", "--count", "HEAD").stdout.strip()
            print(f"round {round_no}: {commits} commits, " + ("; ".join(problems) if problems else "whole"))
        print(f"{args.rounds} rounds, {failed} with problems")
        return 1 if failed else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
