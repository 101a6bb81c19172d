"""One Ranger cycle (issue 14) on a 10,000-node forest with 20,000 links and a populated heat table.

The forest is generated straight onto disk (node files and branch indexes as the
writer renders them, deterministic from a seed, with ``bench_read``'s helpers),
then committed with plain git, as a forest another engine wrote would arrive.
Links: two per node on average, their confidence drawn from the lifecycle's
rungs (0.3 proposals, 0.5 shortcuts, 0.8 promoted, 1.0 confirmed). Heat: a third
of the nodes hold persistent heat, deposited between today and 300 days ago (so
some rows are cold and evaporate), plus expired and live session rows.

Each round copies the committed forest, opens it once (the catalog is built by
that open, outside the measurement), then runs in a fresh child process, each
measured alone: the baseline, ``validate_forest`` over the same files (the pass
every cycle includes), then ``run_cycle`` (the first cycle: it promotes, prunes
and writes the Landmarks), then a second cycle (nothing left to change). Wall
time, the child's CPU time (``time.process_time``) and its peak RSS; medians over
the rounds.

    .venv/bin/python bench/bench_ranger.py [--nodes 10000] [--links 20000] [--rounds 3] [--work DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from monkeyllm_core import Vine, init_forest
from monkeyllm_core.forest import branches as br
from monkeyllm_core.read.heat import HeatStore
from monkeyllm_core.read.ranger_settings import HeatSettings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_read import write, write_branch  # noqa: E402

RELS = ("related-to", "mentioned-in", "derived-from", "compared-with", "discovered-shortcut")
CONFIDENCES = (0.3, 0.3, 0.5, 0.8, None)  # None: confirmed (1.0, written without the key)
PER_BRANCH = 100
DAY = 86400.0


def generate(root: Path, nodes: int, links: int, seed: int = 14) -> None:
    rng = random.Random(seed)
    ids = [f"top{(n // PER_BRANCH) % 10:02d}/sub{n // PER_BRANCH:04d}/node-{n:06d}" for n in range(nodes)]
    out: dict[str, list[dict]] = {node: [] for node in ids}
    for _ in range(links):
        source, target = rng.choice(ids), rng.choice(ids)
        if len(out[source]) >= 50 or source == target:
            continue
        link = {"rel": rng.choice(RELS), "target": target}
        confidence = rng.choice(CONFIDENCES)
        if confidence is not None:
            link["confidence"] = confidence
        out[source].append(link)
    branches: dict[str, list[tuple[str, str]]] = {}
    for node in ids:
        summary = f"Node {node.rsplit('-', 1)[1]}, one fact about region {node.split('/')[1]}."
        write(root, {"id": node, "type": "note", "title": node.rsplit("/", 1)[1], "summary": summary,
                     "created": "2025-01-01", "updated": "2026-01-01", "links": out[node], "source": "agent"},
              f"# {node}\n\nA fact.\n")
        branches.setdefault(node.rsplit("/", 1)[0] + "/_index", []).append((node, summary))
    tops: dict[str, list[tuple[str, str]]] = {}
    for branch, children in branches.items():
        folder = branch[:-len("/_index")]
        summary = f"Region {folder}: {len(children)} nodes."
        write_branch(root, branch, folder.split("/")[-1], summary, children, [])
        tops.setdefault(folder.split("/")[0] + "/_index", []).append((branch, summary))
    for top, subs in tops.items():
        write_branch(root, top, top.split("/")[0], f"Area {top.split('/')[0]}: {len(subs)} regions.", [], subs)
    master = [(top, f"Area {top.split('/')[0]}: {len(subs)} regions.") for top, subs in tops.items()]
    master_entries = "".join(br.entry_line(t, s, br.coverage_text(0, len(tops[t]))) + "\n" for t, s in master)
    text = (root / "_index.md").read_text(encoding="utf-8")
    text = text.replace(f"## {br.SUB_BRANCHES}\n", f"## {br.SUB_BRANCHES}\n" + master_entries)
    text = text.replace("coverage: 0 bananas, 0 sub-branches", f"coverage: 0 bananas, {len(master)} sub-branches")
    (root / "_index.md").write_text(text, encoding="utf-8")
    plant_heat(root, ids, rng)


def plant_heat(root: Path, ids: list[str], rng: random.Random) -> None:
    store = HeatStore(root, HeatSettings())
    store.evaporate()  # creates the file and its tables, as the read engine does
    store.close()
    now = time.time()
    with sqlite3.connect(root / "_derived" / "trails.db") as db:
        db.executemany("INSERT OR REPLACE INTO heat VALUES (?, ?, ?)",
                       [(node, round(rng.uniform(0.1, 1.0), 2), now - rng.uniform(0, 300) * DAY)
                        for node in rng.sample(ids, len(ids) // 3)])
        db.executemany("INSERT OR REPLACE INTO session_heat VALUES (?, ?, ?, ?)",
                       [(f"s{n % 40}", node, 0.1, now - rng.uniform(0, 48) * 3600)
                        for n, node in enumerate(rng.sample(ids, len(ids) // 5))])
    db.close()


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def child(what: str, root: str) -> None:
    """Run one measured step in this fresh process and print its figures."""
    from monkeyllm_core.forest.validate import validate_forest
    from monkeyllm_core.ranger import run_cycle
    wall, cpu = time.perf_counter(), time.process_time()
    if what == "validate":
        with Vine(root, writable=False) as vine:
            detail = f"{len(validate_forest(vine))} findings"
    else:
        report = run_cycle(root)
        detail = (f"{len(report.links['promoted'])} promoted, {len(report.links['pruned'])} pruned, "
                  f"{len(report.commits)} commits, {report.evaporation['heat_rows']} heat rows evaporated")
    print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
                      "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "detail": detail}))


def measure(what: str, root: Path) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--child", what, str(root)], capture_output=True, text=True,
                          check=True)
    return json.loads(proc.stdout.splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=10000)
    parser.add_argument("--links", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", help="folder for the forests (default: a temporary one)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    work = Path(args.work or tempfile.mkdtemp(prefix="bench-ranger-"))
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    os.environ.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), GIT_CONFIG_NOSYSTEM="1",
                      GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.com",
                      GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.com")
    base = work / "base"
    shutil.rmtree(base, ignore_errors=True)
    init_forest(base, "Ranger bench")
    started = time.perf_counter()
    generate(base, args.nodes, args.links)
    git(base, "add", "-A")
    # no background `gc --auto` (it would prune loose objects while a round copies them): one repack, now
    git(base, "-c", "gc.auto=0", "commit", "-qm", "a forest another engine wrote")
    git(base, "repack", "-adq")
    print(f"# generated and committed {args.nodes:,} nodes in {time.perf_counter() - started:.1f} s; "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    steps = ("validate", "cycle", "second cycle")
    results: dict[str, list[dict]] = {step: [] for step in steps}
    for n in range(args.rounds):
        root = work / f"round{n}"
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(base, root, symlinks=True)
        (root / "_derived" / "catalog.db").unlink(missing_ok=True)
        Vine(root).close()  # the catalog, built outside the measurement
        for step in steps:
            results[step].append(measure("validate" if step == "validate" else "cycle", root))
            print(f"round {n + 1} {step}: {results[step][-1]}", flush=True)
    print(f"\n| step | wall s (median) | CPU s (median) | peak RSS MiB (median) | what it did |")
    print("|---|---|---|---|---|")
    for step in steps:
        runs = results[step]
        print(f"| {step} | {statistics.median(r['wall'] for r in runs):.2f} | "
              f"{statistics.median(r['cpu'] for r in runs):.2f} | {statistics.median(r['rss_mib'] for r in runs):.0f} "
              f"| {runs[-1]['detail']} |")
    print(f"\n# load average at the end {os.getloadavg()[0]:.1f}; {args.rounds} rounds; work folder {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
