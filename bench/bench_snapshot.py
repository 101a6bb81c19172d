"""Snapshot create and restore of a 5,000-file adopted forest (issue 14), beside
plain git and tar doing the bare copy in the same run.

    python bench/bench_snapshot.py [--files 5000] [--rounds 3] [--work /tmp/bench-snapshot]

The export comes from the shared generator (``make_exports.py DIR --files N
--large-csvs 0``, cached in /tmp/bench-exports), then ``vine init`` and ``vine
adopt`` through the real CLI with a clean HOME. Each round, in this order:

- ``vine snapshot create FILE --with-payloads`` (bundle of every ref, every
  payload streamed into the sidecar and checked against its passport);
- baseline: ``git bundle create --all`` plus ``tar cf`` of the same payload files;
- ``vine snapshot restore FILE --forest DEST --payloads SIDECAR`` (fetch, checkout,
  payloads verified, catalog built, validate);
- baseline: ``git clone`` of the bundle plus ``tar xf`` of the baseline archive.

Every command is its own process, waited with ``os.wait4``: wall time, CPU time
(user + system of the process and the git children it waited for) and peak RSS
(the largest process of that tree). Medians over the rounds are printed, with the
load average before and after. After each restore, ``git status`` must be clean,
HEAD and the payload count equal the original's.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_gardener import MAKE_EXPORTS, VINE, clean_env, git  # noqa: E402 - the same CLI, clean HOME and generator


def measured(cmd: list[str], env: dict[str, str], cwd: Path | None = None,
             ok: tuple[int, ...] = (0,)) -> dict[str, Any]:
    """Run ``cmd``; its wall time, the CPU time of its process tree and its peak RSS."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # read the pipes before reaping, so a chatty child never blocks on a full pipe
    stdout, stderr = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in ok:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{stderr.decode()[-2000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mib": usage.ru_maxrss / 1024,
            "stdout": stdout.decode()}


def adopted_forest(work: Path, files: int, env: dict[str, str]) -> Path:
    export = Path("/tmp/bench-exports") / f"files-{files}-nolarge"
    if not export.is_dir():
        export.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(MAKE_EXPORTS), str(export), "--files", str(files), "--large-csvs", "0"],
                       check=True)
    forest = work / "forest"
    if not (forest / "_meta" / "schema.md").is_file():
        shutil.rmtree(forest, ignore_errors=True)
        measured([*VINE, "init", "--forest", str(forest), "--title", "bench"], env)
        run = measured([*VINE, "adopt", str(export), "--forest", str(forest), "--json"], env, ok=(0, 1))
        report = json.loads(run["stdout"])
        print(f"adopt: {len(report['planted'])} planted, {len(report['errors'])} errors, {run['wall']:.1f} s")
    return forest


def payload_paths(forest: Path) -> list[str]:
    from monkeyllm_core.snapshot.named import named_payloads
    from monkeyllm_core.store.committed import CommittedForest
    return sorted(named.path for named in named_payloads(CommittedForest(forest)).payloads)


def one_round(forest: Path, work: Path, env: dict[str, str], payloads: list[str], head: str) -> dict[str, dict]:
    folder = work / "round"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    bundle, base_bundle, base_tar = folder / "brain.bundle", folder / "base.bundle", folder / "base.tar"
    listing = folder / "payloads.txt"
    listing.write_text("".join(f"{p}\n" for p in payloads))
    out: dict[str, dict] = {}
    out["vine snapshot create --with-payloads"] = measured(
        [*VINE, "snapshot", "create", str(bundle), "--forest", str(forest), "--with-payloads"], env)
    bundle_run = measured(["git", "bundle", "create", str(base_bundle), "--all"], env, cwd=forest)
    tar_run = measured(["tar", "cf", str(base_tar), "-T", str(listing)], env, cwd=forest)
    out["baseline: git bundle create + tar cf"] = _sum(bundle_run, tar_run)

    dest, base_dest = folder / "restored", folder / "base-restored"
    out["vine snapshot restore --payloads"] = measured(
        [*VINE, "snapshot", "restore", str(bundle), "--forest", str(dest), "--payloads", f"{bundle}.payloads.tar"], env)
    clone_run = measured(["git", "clone", "-q", str(base_bundle), str(base_dest)], env)
    untar_run = measured(["tar", "xf", str(base_tar)], env, cwd=base_dest)
    out["baseline: git clone + tar xf"] = _sum(clone_run, untar_run)

    if git(dest, env, "status", "--porcelain").strip():
        raise SystemExit("git status is not clean after the restore")
    if git(dest, env, "rev-parse", "HEAD").strip() != head:
        raise SystemExit("the restored HEAD is not the forest's")
    if sum((dest / p).is_file() for p in payloads) != len(payloads):
        raise SystemExit("the restore lacks payloads")
    out["sizes"] = {"bundle_mib": bundle.stat().st_size / 2**20,
                    "sidecar_mib": Path(f"{bundle}.payloads.tar").stat().st_size / 2**20}
    return out


def _sum(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    return {"wall": a["wall"] + b["wall"], "cpu": a["cpu"] + b["cpu"], "rss_mib": max(a["rss_mib"], b["rss_mib"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench-snapshot"))
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    env = clean_env(args.work)
    forest = adopted_forest(args.work, args.files, env)
    payloads = payload_paths(forest)
    head = git(forest, env, "rev-parse", "HEAD").strip()
    nodes = sum(1 for path in forest.rglob("*.md") if not {".git", "_derived"} & set(path.parts))
    commits = git(forest, env, "rev-list", "--count", "--all").strip()
    load_before = os.getloadavg()
    rounds = [one_round(forest, args.work, env, payloads, head) for _ in range(args.rounds)]
    load_after = os.getloadavg()
    print(f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; forest: {nodes} markdown files, {commits} commits, "
          f"{len(payloads)} payloads ({sum((forest / p).stat().st_size for p in payloads) / 2**20:.1f} MiB); "
          f"bundle {rounds[0]['sizes']['bundle_mib']:.1f} MiB, sidecar {rounds[0]['sizes']['sidecar_mib']:.1f} MiB")
    print(f"load average before {load_before[0]:.2f} {load_before[1]:.2f}, "
          f"after {load_after[0]:.2f} {load_after[1]:.2f}; medians of {args.rounds}")
    print("| step | wall | CPU | peak RSS |")
    print("|---|---|---|---|")
    for name in (n for n in rounds[0] if n != "sizes"):
        wall = statistics.median(r[name]["wall"] for r in rounds)
        cpu = statistics.median(r[name]["cpu"] for r in rounds)
        rss = max(r[name]["rss_mib"] for r in rounds)
        print(f"| {name} | {wall:.2f} s | {cpu:.2f} s | {rss:.0f} MiB |")


if __name__ == "__main__":
    main()
