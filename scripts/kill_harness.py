"""Kill `vine adopt` and `vine sync` at random points and check what a user would.

Issue 10's kill harness. One clean adopt of the export is the reference. Then each
trial adopts the same export into a fresh forest through the real CLI and kills it
after a random delay, in one of three modes (in turn):

- ``main``: SIGKILL to the main `vine` process alone, as the OOM killer does it
  (its converter workers and git children must not outlive it);
- ``group``: SIGKILL to its whole process group, as a terminal's kill does;
- ``sync``: the main process alone, then the recovering `vine sync` is killed too.

After each kill it checks that no process of that run is alive (within a few
seconds) and that the forest's lock is free. Then it runs `vine sync` to the end
and checks:

- `vine validate` reports no error (and the same warnings as the reference),
- `git fsck --full --strict` is clean and `git status` is empty,
- no temporary pack, no `.keep` of vine's, no half-copied payload or snapshot, an empty journal,
- every source file is in exactly one node, with the reference's id,
- every payload's bytes (sha256) and every SQLite table's row count equal the
  reference's,
- a second sync plants and updates nothing.

    python scripts/kill_harness.py --files 500 --trials 12 [--seed 1] [--jobs 2]
    python scripts/kill_harness.py --builtin 40 --trials 3      # a small export made here

The export comes from /work/shared/bench/make_exports.py (cached under --work),
or, with ``--builtin N``, from a small generator in this file (notes, CSVs, JSON,
SQLite, PNG, text in nested folders). Exit status 1 if any trial failed; the last
line gives the figures: trials, kills landed (the process was still running when
the signal was sent), failures.
"""
from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAKE_EXPORTS = Path("/work/shared/bench/make_exports.py")
VINE = [sys.executable, "-m", "monkeyllm_gardener.cli"]
MARKER = "VINE_KILL_HARNESS"  # in the environment of every process a run starts
MODES = ("main", "group", "sync")
GRACE = 5.0  # seconds a killed run's processes get to vanish


@dataclass
class Trial:
    number: int
    mode: str
    kills: int = 0     # signals sent
    landed: int = 0    # ... to a process that was still running
    kept: int = 0      # nodes on the branch right after the first kill: planted means committed
    problems: list[str] = field(default_factory=list)


# -- exports ------------------------------------------------------------------------------
def shared_export(work: Path, files: int, seed: int) -> Path:
    out = work / f"export-{files}-{seed}"
    if not out.is_dir():
        subprocess.run([sys.executable, str(MAKE_EXPORTS), str(out), "--files", str(files), "--seed", str(seed),
                        "--large-csvs", "0"], check=True, stdout=subprocess.DEVNULL)
    return out


def builtin_export(root: Path, files: int, seed: int) -> Path:
    """Notes, CSVs, JSON arrays, SQLite databases, PNGs and text in nested folders."""
    rng = random.Random(seed)
    folders = ["", "notes", "notes/archive", "data", "data/2026", "media"]
    for i in range(files):
        folder = root / rng.choice(folders)
        folder.mkdir(parents=True, exist_ok=True)
        kind = i % 6
        if kind == 0:
            (folder / f"ledger-{i}.csv").write_text(
                "id,customer,total\n" + "".join(f"{k},C{k % 7},{k * 1.5}\n" for k in range(rng.randint(5, 400))))
        elif kind == 1:
            (folder / f"items-{i}.json").write_text(json.dumps([{"id": k, "name": f"item {k}"}
                                                                for k in range(rng.randint(2, 50))]))
        elif kind == 2:
            db = sqlite3.connect(folder / f"crm-{i}.db")
            db.execute("CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT)")
            db.executemany("INSERT INTO people (name) VALUES (?)", [(f"p{k}",) for k in range(rng.randint(1, 300))])
            db.commit()
            db.close()
        elif kind == 3:
            from PIL import Image
            Image.new("RGB", (8 + i % 5, 6), (i % 255, 40, 90)).save(folder / f"photo-{i}.png", format="PNG")
        elif kind == 4:
            (folder / f"memo-{i}.txt").write_text(f"Memo {i}.\n\nThe budget for project {i} is {i * 3} EUR.\n")
        else:
            words = " ".join(f"word{rng.randint(0, 999)}" for _ in range(rng.randint(50, 400)))
            (folder / f"note-{i}.md").write_text(f"# Note {i}\n\nMeeting of March 2026 about topic {i}. {words}\n")
    return root


# -- running vine -------------------------------------------------------------------------
def clean_env(work: Path, token: str) -> dict[str, str]:
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").touch()
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
            "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "GIT_CONFIG_NOSYSTEM": "1",
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", MARKER: token}


def vine(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*VINE, *args], env=env, capture_output=True, text=True, timeout=900)


def start(args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    # a session of its own: "group" kills exactly this run's process group
    return subprocess.Popen([*VINE, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def kill_after(proc: subprocess.Popen[bytes], delay: float, *, group: bool, trial: Trial) -> None:
    time.sleep(delay)
    trial.kills += 1
    if proc.poll() is None:
        trial.landed += 1
        if group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


def live_processes(token: str) -> list[str]:
    """Processes (not zombies) whose environment carries this run's marker."""
    needle = f"{MARKER}={token}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                if needle not in fh.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")[:100]
        except OSError:
            continue
        if state != b"Z":
            found.append(f"{entry} {cmd}")
    return found


def lock_is_free(forest: Path) -> bool:
    path = forest / ".vine.lock"
    if not path.exists():
        return True
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return True
    finally:
        os.close(fd)


def after_kill(forest: Path, token: str, trial: Trial, what: str) -> None:
    """No process of the killed run may live on, and the lock must be free."""
    deadline = time.monotonic() + GRACE
    while (alive := live_processes(token)) and time.monotonic() < deadline:
        time.sleep(0.05)
    if alive:
        trial.problems.append(f"after the kill of {what}: still alive: {alive}")
        for line in alive:  # so later trials are not disturbed
            try:
                os.kill(int(line.split()[0]), signal.SIGKILL)
            except ProcessLookupError:
                pass
    if not lock_is_free(forest):
        trial.problems.append(f"after the kill of {what}: the forest is still locked")


# -- what a forest holds ------------------------------------------------------------------
def frontmatter(path: Path) -> dict[str, Any]:
    import yaml
    text = path.read_text(encoding="utf-8")
    return yaml.safe_load(text[4:text.index("\n---\n", 4)]) or {}


def forest_digest(forest: Path) -> dict[str, Any]:
    """source_path -> [(id, payload sha256, row counts)] for every ingested leaf node."""
    out: dict[str, list[Any]] = {}
    for path in sorted(forest.rglob("*.md")):
        rel = path.relative_to(forest).as_posix()
        if rel.startswith((".git/", "_derived/", "_meta/")) or path.name.startswith("."):
            continue
        fm = frontmatter(path)
        if fm.get("type") == "branch" or "source_path" not in fm:
            continue
        payload = None
        if fm.get("payload"):
            db = path.parent / str(fm["payload"])
            payload = (hashlib.sha256(db.read_bytes()).hexdigest() if db.is_file() else "missing",
                       row_counts(db) if fm.get("payload_type") == "sqlite" and db.is_file() else None)
        out.setdefault(fm["source_path"], []).append((fm["id"], payload))
    return out


def row_counts(db: Path) -> dict[str, int]:
    from monkeyllm_core.data.sqlnames import quote_identifier  # table names may hold quotes (BAD-INPUTS)
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: conn.execute(f"SELECT COUNT(*) FROM {quote_identifier(t)}").fetchone()[0] for t in tables}
    finally:
        conn.close()


def nodes_on_branch(forest: Path, env: dict[str, str]) -> int:
    """Leaf nodes the branch reaches (what a kill may no longer take away)."""
    listed = subprocess.run(["git", "ls-tree", "-r", "--name-only", "HEAD"], cwd=forest, env=env,
                            capture_output=True, text=True).stdout.split()
    return sum(1 for rel in listed if rel.endswith(".md") and not rel.endswith("_index.md")
               and not rel.startswith("_meta/"))


def validate_line(forest: Path, env: dict[str, str]) -> str:
    out = vine(["validate", "--forest", str(forest)], env)
    return out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr.strip()


def leftovers(forest: Path) -> list[str]:
    found = []
    pack_dir = forest / ".git" / "objects" / "pack"
    found += [p.name for p in pack_dir.glob("vine_tmp_*")] + [p.name for p in pack_dir.glob("tmp_*")]
    found += [p.name for p in pack_dir.glob("*.keep") if p.read_bytes().startswith(b"vine:")]
    found += [p.relative_to(forest).as_posix() for pattern in (".*.tmp", ".*.snapshot-*")
              for p in forest.rglob(pattern) if ".git" not in p.parts]
    journal = forest / ".git" / "vine-journal"
    if journal.exists() and journal.read_text().strip():
        found.append("a non-empty .git/vine-journal")
    return found


def check_forest(forest: Path, env: dict[str, str], reference: dict[str, Any], trial: Trial) -> None:
    problems = trial.problems
    line = validate_line(forest, env)
    if line != reference["validate"].replace(reference["forest"], str(forest)):
        problems.append(f"validate: {line!r} (reference: {reference['validate']!r})")
    fsck = subprocess.run(["git", "fsck", "--full", "--strict", "--no-dangling"], cwd=forest, env=env,
                          capture_output=True, text=True)
    if fsck.returncode or fsck.stdout.strip():
        problems.append(f"git fsck: {(fsck.stdout + fsck.stderr)[:300]!r}")
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=forest, env=env,
                            capture_output=True, text=True).stdout
    if status:
        problems.append(f"git status: {status[:300]!r}")
    if left := leftovers(forest):
        problems.append(f"left behind: {left}")
    digest = forest_digest(forest)
    twice = {rel: nodes for rel, nodes in digest.items() if len(nodes) != 1}
    if twice:
        problems.append(f"source files in more than one node: {sorted(twice)[:5]}")
    missing = sorted(set(reference["digest"]) - set(digest))
    extra = sorted(set(digest) - set(reference["digest"]))
    if missing or extra:
        problems.append(f"source files missing {missing[:5]} / not in the reference {extra[:5]}")
    differ = sorted(rel for rel in set(digest) & set(reference["digest"]) if digest[rel] != reference["digest"][rel])
    if differ:
        rel = differ[0]
        problems.append(f"{len(differ)} node(s) differ from the reference (id, payload hash, rows), "
                        f"e.g. {rel}: {digest[rel]} != {reference['digest'][rel]}")
    again = vine(["sync", "--forest", str(forest), "--json"], env)
    try:
        report = json.loads(again.stdout)
    except ValueError:
        problems.append(f"second sync: exit {again.returncode}: {again.stderr[-300:]}")
        return
    if report.get("planted") or report.get("updated") or report.get("branches"):
        problems.append(f"second sync planted {len(report.get('planted', []))}, updated "
                        f"{len(report.get('updated', []))}, branches {report.get('branches')}")


# -- trials -------------------------------------------------------------------------------
def make_reference(work: Path, export: Path, jobs: int) -> dict[str, Any]:
    forest = work / "reference"
    env = clean_env(work, "reference")
    shutil.rmtree(forest, ignore_errors=True)
    vine(["init", "--forest", str(forest), "--title", "Reference"], env)
    started = time.monotonic()
    done = vine(["adopt", str(export), "--forest", str(forest), "--json", "--jobs", str(jobs)], env)
    seconds = time.monotonic() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"the reference adopt failed: {done.stderr[-1000:]}")
    return {"forest": str(forest), "seconds": seconds, "digest": forest_digest(forest),
            "validate": validate_line(forest, env)}


def run_trial(work: Path, export: Path, reference: dict[str, Any], trial: Trial, rng: random.Random,
              jobs: int) -> None:
    forest = work / f"trial-{trial.number}"
    shutil.rmtree(forest, ignore_errors=True)
    token = f"{os.getpid()}-{trial.number}"
    env = clean_env(work, token)
    vine(["init", "--forest", str(forest), "--title", f"Trial {trial.number}"], env)
    span = reference["seconds"]
    adopt = start(["adopt", str(export), "--forest", str(forest), "--json", "--jobs", str(jobs)], env)
    kill_after(adopt, rng.uniform(0.05, span * 0.95), group=trial.mode == "group", trial=trial)
    after_kill(forest, token, trial, "adopt")
    trial.kept = nodes_on_branch(forest, env)
    if trial.mode == "sync":
        recovering = start(finishing_command(forest, export, jobs), env)
        kill_after(recovering, rng.uniform(0.05, span * 0.5), group=False, trial=trial)
        after_kill(forest, token, trial, "the recovering sync")
    finished = vine(finishing_command(forest, export, jobs), env)
    if finished.returncode not in (0, 1):
        trial.problems.append(f"the finishing sync exited {finished.returncode}: {finished.stderr[-300:]}")
        return
    check_forest(forest, env, reference, trial)
    if not trial.problems:
        shutil.rmtree(forest, ignore_errors=True)


def finishing_command(forest: Path, export: Path, jobs: int) -> list[str]:
    """What a user runs after a kill: `vine sync`, or `vine adopt` again when the kill
    came before the adopt recorded its source (then nothing was planted yet)."""
    import yaml
    config = forest / "_meta" / "gardener.yaml"
    recorded = config.is_file() and (yaml.safe_load(config.read_text(encoding="utf-8")) or {}).get("sources")
    verb = ["sync"] if recorded else ["adopt", str(export)]
    return [*verb, "--forest", str(forest), "--json", "--jobs", str(jobs)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=500, help="files in the shared generator's export")
    parser.add_argument("--builtin", type=int, default=None, metavar="N",
                        help="use this file's own generator with N files instead")
    parser.add_argument("--trials", type=int, default=12)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--work", type=Path, default=None, help="kept between runs (the export is cached)")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    work = args.work or Path(tempfile.mkdtemp(prefix="vine-kill-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        if args.builtin is not None:
            export = work / f"builtin-{args.builtin}-{args.seed}"
            if not export.is_dir():
                builtin_export(export, args.builtin, args.seed)
        else:
            export = shared_export(work, args.files, args.seed)
        reference = make_reference(work, export, args.jobs)
        files = sum(1 for p in export.rglob("*") if p.is_file())
        print(f"export: {files} files; clean adopt {reference['seconds']:.1f} s, "
              f"{len(reference['digest'])} source files planted; {reference['validate']}", flush=True)
        trials = [Trial(number=i, mode=MODES[i % len(MODES)]) for i in range(args.trials)]
        for trial in trials:
            started = time.monotonic()
            run_trial(work, export, reference, trial, rng, args.jobs)
            verdict = "; ".join(trial.problems) if trial.problems else "whole"
            print(f"trial {trial.number} ({trial.mode}): {trial.landed}/{trial.kills} kill(s) landed, "
                  f"{trial.kept} node(s) on the branch after the kill, {time.monotonic() - started:.1f} s: "
                  f"{verdict}", flush=True)
        failures = sum(bool(t.problems) for t in trials)
        print(f"trials: {len(trials)}, kills landed: {sum(t.landed for t in trials)} of "
              f"{sum(t.kills for t in trials)}, failures: {failures}")
        return 1 if failures else 0
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
