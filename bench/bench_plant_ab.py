"""The writer's cost per plant, two trees side by side in one run (issue 16 item 1).

An adopt's main process plants every converted file: the node, its parent index
and, because the parent's coverage changed, the grandparent's entry line, each
rendered, catalogued and committed. This plants what an adopt plants (branches
three deep, notes with the Gardener's provenance keys and a ~1 KB body) in one
bulk session, through each tree's own interpreter, alternating sides so neither
always runs on a warmer machine. The figure is CPU time (this process plus its
git children) per plant, the median over rounds: the machine is shared, wall time
swings with other people's load. Both sides must write the same forest: the
``git ls-tree -r HEAD`` of each round is compared.

    .venv/bin/python bench/bench_plant_ab.py --old /work/wt-base20/.venv/bin/python \\
        --new .venv/bin/python [--plants 1000] [--rounds 5]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROUND = r"""
import hashlib, json, resource, subprocess, sys, time
from pathlib import Path
from monkeyllm_core import Vine, init_forest

root = init_forest(Path(sys.argv[1]), "bench")
plants = int(sys.argv[2])
branches = [f"d{a}/_index" for a in range(4)] + [f"d{a}/s{b}/_index" for a in range(4) for b in range(4)] \
    + [f"d{a}/s{b}/t{c}/_index" for a in range(4) for b in range(4) for c in range(2)]
vine = Vine(root)
before = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
with vine.bulk():
    for b in branches:
        name = b.rsplit("/", 2)[-2]
        vine.plant({"id": b, "title": name.title(), "summary": f"Documents adopted from source folder '{name}'.",
                    "source": "ingest", "origin": f"file:///exports/{b[:-7]}", "source_path": b[:-7]})
    leaves = [b[:-len("/_index")] for b in branches if b.count("/") == 3]
    for i in range(plants):
        where = leaves[i % len(leaves)]
        text = " ".join(f"word{(i * 7 + k) % 97}" for k in range(150))
        vine.plant({"id": f"{where}/note-{i:05d}", "type": "note", "title": f"Note {i}",
                    "summary": f"Note {i}: one sentence of scent for the index.",
                    "source": "ingest", "origin": f"file:///exports/{where}/note-{i}.md",
                    "source_path": f"{where}/note-{i}.md", "source_hash": hashlib.sha256(str(i).encode()).hexdigest(),
                    "source_size": 1000 + i, "source_mtime": 1700000000.5 + i,
                    "body": f"# Note {i}\n\n## Facts\n\n{text}\n\n## More\n\n{text[:300]}\n"})
vine.close()
after = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = sum(a.ru_utime + a.ru_stime - (b.ru_utime + b.ru_stime) for a, b in zip(after, before))
tree = subprocess.run(["git", "ls-tree", "-r", "HEAD"], cwd=root, capture_output=True, text=True).stdout
print(json.dumps({"cpu": cpu, "tree": hashlib.sha256(tree.encode()).hexdigest()[:12]}))
"""


def one_round(python: str, forest: Path, plants: int) -> dict:
    # from the forest's folder, not a checkout: `-c` puts the working directory first on sys.path
    out = subprocess.run([python, "-c", ROUND, str(forest), str(plants)], capture_output=True, text=True,
                         check=True, cwd=forest.parent, env={"PATH": "/usr/bin:/bin", "HOME": str(forest.parent),
                                          "GIT_CONFIG_NOSYSTEM": "1"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=True, help="the baseline tree's python")
    parser.add_argument("--new", required=True, help="this tree's python")
    parser.add_argument("--plants", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    cpu: dict[str, list[float]] = {"old": [], "new": []}
    trees: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="plant-ab-") as tmp:
        for r in range(args.rounds):
            for side in (("old", "new") if r % 2 == 0 else ("new", "old")):
                result = one_round(getattr(args, side), Path(tmp) / f"{side}-{r}", args.plants)
                cpu[side].append(result["cpu"])
                trees.add(result["tree"])
                print(f"round {r + 1} {side}: {result['cpu'] / args.plants * 1000:.2f} ms CPU per plant, "
                      f"tree {result['tree']}", file=sys.stderr)
    old, new = (statistics.median(cpu[s]) / args.plants * 1000 for s in ("old", "new"))
    print(f"| {args.plants:,} plants, median of {args.rounds} | {old:.2f} ms | {new:.2f} ms | {old / new:.2f}x | "
          f"{'same tree every round' if len(trees) == 1 else 'TREES DIFFER: ' + ', '.join(sorted(trees))} |")
    return 0 if len(trees) == 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
