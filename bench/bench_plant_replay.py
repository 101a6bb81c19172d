"""The writer's planting alone: an adopt's plants recorded once, replayed by two trees (issue 16 item 1).

An adopt's main process converts nothing with the pool; what it spends is planting,
and in a ``--jobs 1`` adopt the conversions hide that cost in noise. This records
every ``Vine.plant`` request of one real adopt (passport, body, dataset rows, the
payload files themselves) and replays them into a fresh forest in a bulk session,
as the Gardener plants them, through each tree's own interpreter, alternating sides
(old first in odd rounds). Each round reports the CPU time (``time.process_time``)
spent inside ``plant`` and the closing flush, plus the git children they waited
for; the payload files are copied into place outside the timed calls. Both sides
must write the same forest: ``git ls-tree -r HEAD``, the commit subjects and every
payload's SHA-256 are compared every round.

    .venv/bin/python bench/bench_plant_replay.py record --export /tmp/ingest-exports/files-1000 --out /tmp/plants.pkl
    .venv/bin/python bench/bench_plant_replay.py replay --plants /tmp/plants.pkl \\
        --old /work/wt-base21/.venv/bin/python --new .venv/bin/python [--rounds 7] [--work DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_gardener import clean_env

RECORD = r"""
import contextlib, io, pickle, shutil, sys
from pathlib import Path
from monkeyllm_core.vine import Vine
from monkeyllm_core.writing.request import NodeWrite
from monkeyllm_gardener.cli import main

source, forest, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
files = out.with_suffix(".files")
files.mkdir(parents=True, exist_ok=True)
recorded = []
plant = Vine.plant

def recording(self, node):
    request = node if isinstance(node, NodeWrite) else NodeWrite.from_wire(node)
    entry = {"passport": dict(request.passport), "body": request.body, "dataset": None, "payload": None}
    if request.dataset is not None:
        entry["dataset"] = {"schema": request.dataset.schema, "manual_notes": request.dataset.manual_notes,
                            "rows": None if request.dataset.rows is None
                            else {t: [list(r) for r in rows] for t, rows in request.dataset.rows.items()}}
        request = NodeWrite(passport=request.passport, body=request.body, dataset=type(request.dataset)(
            schema=entry["dataset"]["schema"], rows=entry["dataset"]["rows"],
            manual_notes=entry["dataset"]["manual_notes"]))
    if request.payload is not None:
        kept = files / f"{len(recorded):05d}-{request.payload.source.name}"
        shutil.copyfile(request.payload.source, kept)
        entry["payload"] = {"file": kept.name, "move": request.payload.move,
                            "row_counts": request.payload.row_counts, "manual_notes": request.payload.manual_notes}
    recorded.append(entry)
    return plant(self, request)

Vine.plant = recording
with contextlib.redirect_stdout(io.StringIO()):
    for args in (["init", "--forest", forest, "--title", "bench"],
                 ["adopt", source, "--forest", forest, "--jobs", "1", "--json"]):
        try:
            main(args)
        except SystemExit as exc:
            if exc.code not in (0, 1, None):
                raise
out.write_bytes(pickle.dumps(recorded))
print(len(recorded))
"""

REPLAY = r"""
import contextlib, hashlib, io, json, pickle, resource, shutil, subprocess, sys, time
from pathlib import Path
from monkeyllm_core import Vine, init_forest
from monkeyllm_core.writing.request import DatasetSpec, NodeWrite, PayloadSpec

plants_file, forest = Path(sys.argv[1]), Path(sys.argv[2])
files = plants_file.with_suffix(".files")
recorded = pickle.loads(plants_file.read_bytes())
init_forest(forest, "bench")
staging = forest / "_derived" / "tmp"
spent, kids = 0.0, 0.0

def timed(call):
    global spent, kids
    cpu, before = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
    result = call()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    spent += time.process_time() - cpu
    kids += after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return result

vine = Vine(forest)
with vine.bulk():
    for entry in recorded:
        dataset = payload = None
        if entry["dataset"] is not None:
            dataset = DatasetSpec(**entry["dataset"])
        if entry["payload"] is not None:
            spec = dict(entry["payload"])
            staging.mkdir(parents=True, exist_ok=True)
            source = staging / spec.pop("file")
            shutil.copyfile(files / source.name, source)  # outside the timed call, as a worker made it
            payload = PayloadSpec(source=source, **spec)
        request = NodeWrite(passport=entry["passport"], body=entry["body"], dataset=dataset, payload=payload)
        timed(lambda: vine.plant(request))
    timed(vine.flush)
timed(vine.close)
tree = subprocess.run(["git", "ls-tree", "-r", "HEAD"], cwd=forest, capture_output=True, text=True).stdout
log = subprocess.run(["git", "log", "--format=%s"], cwd=forest, capture_output=True, text=True).stdout
payloads = sorted(hashlib.sha256(p.read_bytes()).hexdigest() + " " + p.relative_to(forest).as_posix()
                  for p in forest.rglob("*") if p.is_file() and p.relative_to(forest).parts[0] not in (".git", "_derived")
                  and not p.name.endswith(".md") and p.name not in (".gitignore", ".vine.lock"))
print(json.dumps({"cpu": spent, "children": kids, "plants": len(recorded),
                  "digest": hashlib.sha256((tree + log + "\n".join(payloads)).encode()).hexdigest()[:16]}))
"""


def record(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="plant-record-"))
    env = clean_env(work)
    proc = subprocess.run([args.python, "-c", RECORD, str(args.export), str(work / "forest"), str(args.out)],
                          env=env, capture_output=True, text=True, cwd=env["HOME"])
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    shutil.rmtree(work)
    print(f"{proc.stdout.strip()} plants recorded in {args.out}")


def replay(args: argparse.Namespace) -> None:
    work = args.work or Path(tempfile.mkdtemp(prefix="plant-replay-"))
    work.mkdir(parents=True, exist_ok=True)
    env = clean_env(work)
    sides = {"old": args.old, "new": args.new}
    results: dict[str, list[dict]] = {"old": [], "new": []}
    print(f"load average at start: {os.getloadavg()}")
    for round_no in range(1, args.rounds + 1):
        digests = {}
        for side in (["old", "new"] if round_no % 2 else ["new", "old"]):
            forest = work / f"forest-{side}"
            shutil.rmtree(forest, ignore_errors=True)
            # from the bench's home, not a checkout: `-c` puts the working directory first on sys.path
            proc = subprocess.run([sides[side], "-c", REPLAY, str(args.plants), str(forest)], env=env,
                                  capture_output=True, text=True, cwd=env["HOME"])
            if proc.returncode != 0:
                raise SystemExit(f"{side}: {proc.stderr[-2000:]}")
            result = json.loads(proc.stdout.splitlines()[-1])
            results[side].append(result)
            digests[side] = result["digest"]
            print(f"round {round_no} {side}: {result['cpu']:.3f} s CPU + git {result['children']:.3f} s, "
                  f"{result['plants']} plants, {os.getloadavg()[0]:.1f} load", flush=True)
        if digests["old"] != digests["new"]:
            raise SystemExit(f"round {round_no}: the forests differ ({digests})")
    print(f"load average at end: {os.getloadavg()}")
    plants = results["new"][0]["plants"]
    print(f"| median of {args.rounds} | old | new |\n|---|---|---|")
    for key, label in (("cpu", "planting CPU (main process)"), ("children", "git children")):
        old, new = (statistics.median(r[key] for r in results[side]) for side in ("old", "new"))
        print(f"| {label} | {old:.3f} s | {new:.3f} s |")
    old, new = (statistics.median(r["cpu"] for r in results[side]) / plants * 1000 for side in ("old", "new"))
    print(f"| per plant | {old:.2f} ms | {new:.2f} ms |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    rec = commands.add_parser("record", help="adopt once and keep every plant request")
    rec.add_argument("--export", type=Path, default=Path("/tmp/ingest-exports/files-1000"))
    rec.add_argument("--out", type=Path, required=True)
    rec.add_argument("--python", default=sys.executable)
    rep = commands.add_parser("replay", help="replay the recorded plants, old and new alternating")
    rep.add_argument("--plants", type=Path, required=True)
    rep.add_argument("--old", required=True)
    rep.add_argument("--new", default=sys.executable)
    rep.add_argument("--rounds", type=int, default=7)
    rep.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    record(args) if args.command == "record" else replay(args)


if __name__ == "__main__":
    main()
