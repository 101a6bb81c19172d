"""The Canopy (issue 15): hybrid locate's quality, and the cost of building and using the vectors.

1. Quality: recall@1/3/5 and MRR@5 of ``vine.locate`` (k=5) on the navigation
   question set (``navigation_forest.py``, ``navigation_questions.json``, measured
   as ``bench_navigation.py`` does: ``rank_of`` and ``scores`` are its own), BM25
   alone against hybrid (the RRF of BM25 and the canopy's cosine ranks). The
   embedder is the deterministic ``hashed_embedding`` of the scripted server (word
   and character-trigram features, hashed to 256 dimensions): a stand-in with no
   semantics beyond shared words and stems, so the hybrid row is what fusion
   buys with a weak dense half, not what a real embedding model would give.
2. Cost, on the 10,000-node forest of ``bench_read.py`` (``generate``, then a
   reindex): ``vine canopy build``'s library call against a local endpoint (the
   scripted server in a child process, so the CPU time measured here is the
   build's alone), in summaries/s, CPU and wall; a no-change rebuild; a rebuild
   after 1% of the summaries changed. Then locate's CPU p50/p95 per call, BM25-only
   beside hybrid in the same run on the same questions: hybrid with each query
   embedded (one HTTP round trip), and again with the query vectors cached (the
   dense half's own cost: a 10,000 x 256 product and the fusion).

    .venv/bin/python bench/bench_canopy.py [--work DIR] [--size 10000] [--queries 300] [--skip-quality]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import bench_navigation  # noqa: E402
import bench_read  # noqa: E402
import navigation_forest  # noqa: E402

from monkeyllm_core import Vine, init_forest  # noqa: E402
from monkeyllm_core.canopy.embedder import EmbedSettings, OpenAIEmbedder  # noqa: E402

MODEL = "hashed-256"
SERVER_CHILD = """
import sys, time
from monkeyllm_gardener.curator.testing_server import ScriptedOpenAIServer
server = ScriptedOpenAIServer().start()
print(server.base_url, flush=True)
sys.stdin.read()  # until the benchmark closes our stdin
server.stop()
"""


class LocalEndpoint:
    """The scripted OpenAI-compatible server in a child process on 127.0.0.1."""

    def __enter__(self) -> "LocalEndpoint":
        self.proc = subprocess.Popen([sys.executable, "-c", SERVER_CHILD], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.url = self.proc.stdout.readline().strip()
        return self

    def embedder(self) -> OpenAIEmbedder:
        return OpenAIEmbedder(EmbedSettings(endpoint=self.url, model=MODEL))

    def __exit__(self, *exc: object) -> None:
        self.proc.stdin.close()
        self.proc.wait(10)


def quality(work: Path, endpoint: LocalEndpoint) -> None:
    root = work / "navigation"
    if not (root / "_index.md").exists():
        navigation_forest.build(root)
    questions = json.loads((HERE / "navigation_questions.json").read_text(encoding="utf-8"))["questions"]
    with Vine(root, writable=False) as vine:
        build = vine.canopy_build(endpoint.embedder())
        print(f"navigation forest: {build['count']} nodes embedded in {build['seconds']:.2f} s; "
              f"{len(questions)} questions")
        ranked: dict[str, list[int | None]] = {}
        for name, embedder in (("locate, BM25 alone", None), ("locate, hybrid (RRF, k=60)", endpoint.embedder())):
            vine.embedder = embedder
            ranked[name] = []
            for question in questions:
                response = vine.locate(question["question"], k=bench_navigation.K)
                assert (embedder is None) == ("dense" not in response), response.get("dense")
                ranked[name].append(bench_navigation.rank_of([r["id"] for r in response["results"]],
                                                             question["expected"]))
                vine.close_session(success=False, answer_nodes=[])  # each question its own hunt
    kinds = list(dict.fromkeys(q["kind"] for q in questions))
    print("\n| ranker | recall@1 | recall@3 | recall@5 | MRR@5 | " + " | ".join(f"{k} r@5" for k in kinds) + " |")
    print("|---|---|---|---|---|" + "---|" * len(kinds))
    for name, ranks in ranked.items():
        overall = bench_navigation.scores(ranks)
        per_kind = [bench_navigation.scores([r for r, q in zip(ranks, questions) if q["kind"] == kind])["r@5"]
                    for kind in kinds]
        print(f"| {name} | {overall['r@1']:.2f} | {overall['r@3']:.2f} | {overall['r@5']:.2f} | "
              f"{overall['mrr@5']:.3f} | " + " | ".join(f"{v:.2f}" for v in per_kind) + " |")
    print()


def cost(work: Path, size: int, queries: int, endpoint: LocalEndpoint) -> None:
    root = work / f"forest-{size}"
    if not (root / "_derived" / "catalog.db").is_file():
        init_forest(root, f"Canopy bench {size}")
        data = bench_read.generate(root, size)
        with Vine(root) as vine:
            vine.reindex()
    else:
        data = bench_read.generate(root, size, write_files=False)
    for leftover in ("canopy.db", "canopy.building.db"):
        (root / "_derived" / leftover).unlink(missing_ok=True)
    asked = bench_read.questions(random.Random(7), data, queries)
    rows = []
    with Vine(root, writable=False) as vine:
        vine.alpha = 0
        for label in ("build, from nothing", "rebuild, nothing changed"):
            report = vine.canopy_build(endpoint.embedder(), batch=64, workers=4)
            rows.append((label, report))
    changed = sorted(data["ids"])[:: 100]
    with Vine(root) as writer, writer.bulk():
        for node in changed:
            writer.replace(node, {"summary": data["meta"][node]["summary"][:200] + f" Revised {time.time_ns()}."})
    with Vine(root, writable=False) as vine:
        vine.alpha = 0
        rows.append((f"rebuild, {len(changed)} summaries changed (1%)", vine.canopy_build(endpoint.embedder())))
        print(f"| {size:,} nodes | embedded | kept | wall s | CPU s | summaries/s (wall) |")
        print("|---|---|---|---|---|---|")
        for label, report in rows:
            rate = report["embedded"] / report["seconds"] if report["embedded"] else 0
            print(f"| {label} | {report['embedded']:,} | {report['kept']:,} | {report['seconds']:.2f} | "
                  f"{report['cpu_seconds']:.2f} | {rate:,.0f} |")
        vine.locate("warm up")
        bm25 = bench_read.timed([lambda q=q: vine.locate(q) for q in asked])
        vine.embedder = endpoint.embedder()
        first = bench_read.timed([lambda q=q: vine.locate(q) for q in asked])
        repeated = asked[:100]  # within the 128 query vectors a Vine keeps
        for q in repeated:
            vine.locate(q)
        cached = bench_read.timed([lambda q=q: vine.locate(q) for q in repeated])
        vine.embedder = None
        bm25_again = bench_read.timed([lambda q=q: vine.locate(q) for q in asked])
    print(f"\n| {size:,} nodes, {queries} questions | wall p50 / p95 ms | CPU p50 / p95 ms |")
    print("|---|---|---|")
    for label, ((w50, w95), (c50, c95)) in (("locate, BM25 alone", bm25), ("locate, hybrid, each query embedded", first),
                                            ("locate, hybrid, query vectors cached (100 of them)", cached),
                                            ("locate, BM25 alone (again, after)", bm25_again)):
        print(f"| {label} | {w50:.2f} / {w95:.2f} | {c50:.2f} / {c95:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=None, help="reuse the forests an earlier run built here")
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--skip-quality", action="store_true")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-canopy-"))
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    os.environ.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), GIT_CONFIG_NOSYSTEM="1")
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {os.getloadavg()[0]:.1f}, "
          f"work {work}")
    with LocalEndpoint() as endpoint:
        if not args.skip_quality:
            quality(work, endpoint)
        cost(work, args.size, args.queries, endpoint)
    print(f"# load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
