"""sniff speed (issue 12): p50/p95 over 10,000 bodies, beside a plain Python scan of every body.

A forest of ``--nodes`` notes (100 per branch, planted with the real Vine in one bulk
session) gets bodies of about 1.5 KB of seeded English and Portuguese text, with
headings, invoice numbers, SKUs, error codes, names, a CJK line now and then. The
queries mix what sniff is for (a code or name found in one or a few bodies), words of
every frequency, two-letter terms (which no trigram can index), several terms at
once, and branch scopes.

Measured in the same run, medians of per-query times, wall clock and, beside it,
this process's own CPU time (``time.process_time``: on a shared machine the wall
clock also counts the time spent waiting for a core):

- the body index's build (the first sniff of a forest without ``_derived/bodies.db``),
  and the first sniff of a new process over a built index (its stat sweep);
- sniff, steady state: one ``BodyIndex`` answering every query in turn, its stat
  sweep coming as it is due (every ``SWEEP_SECONDS``, 60 s, as in a server), p50 / p95 / max;
- the same with ``sweep_seconds=0`` (every call stats every file), over the first
  60 queries (it is slow by design: it shows why the sweep is not per call);
- the naive baseline: for each query, every banana's file read, folded and
  compared line by line in plain Python, no index.

Every sniff answer is checked against the baseline's (the same nodes, the same
match counts): the index must change no answer.

    .venv/bin/python bench/bench_sniff.py [--nodes 10000] [--queries 200] [--baseline-queries 40]
"""
from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from monkeyllm_core import Vine, init_forest  # noqa: E402
from monkeyllm_core.forest.passport import split_node  # noqa: E402
from monkeyllm_core.read.body_index import INDEX_PATH, SWEEP_SECONDS, BodyIndex  # noqa: E402
from monkeyllm_core.read.folding import fold  # noqa: E402
from monkeyllm_core.read.sniff import sniff  # noqa: E402

PER_BRANCH = 100
BROAD = ("common word", "two letters")  # found in most bodies: every one of them is scanned
COMMON = ("the of and to in a is for on with that by as at from de da do que em para com os as uma "
          "um no na se por mais sobre entre").split()
NAMES = ["Ana Ribeiro", "João Silva", "Maria Conceição", "Pedro Álvares", "Lúcia Gonçalves", "Dana Reis",
         "Kenji Tanaka", "Olga Petrova", "Samuel Okafor", "Inês Moreira", "Tomás Ferreira", "Chloé Martin"]
CJK = ["東京都の会社と契約", "大阪支店の報告", "株式会社の決算", "上海の倉庫", "서울 사무소 보고서"]


def vocabulary(rng: random.Random, size: int) -> list[str]:
    syllables = "ba be bi bo bu ca ce ci co cu da de di do du fa fe fi fo fu ga ge gi go gu la le li lo lu " \
                "ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu " \
                "ção ções ão ém ês ár".split()
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(words)


class Corpus:
    """Seeded bodies, and the rare strings planted in them (what sniff is for)."""

    def __init__(self, seed: int, nodes: int) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary(self.rng, 4000)
        self.weights = [1 / (rank + 1) for rank in range(len(self.words))]  # Zipf-like
        self.codes: list[str] = []
        self.nodes = nodes

    def sentence(self, n: int) -> str:
        picks = self.rng.choices(self.words, self.weights, k=n)
        for at in range(0, n, 4):
            picks[at] = self.rng.choice(COMMON)
        return " ".join(picks).capitalize() + "."

    def body(self, i: int) -> str:
        rng = self.rng
        code = f"NF-{10000 + i}"
        self.codes.append(code)
        lines = [f"# Note {i}", ""]
        for s in range(rng.randint(3, 4)):
            lines += [f"## {self.sentence(3)[:-1]}", ""]
            for _ in range(rng.randint(2, 3)):
                lines.append(self.sentence(rng.randint(14, 26)))
            lines.append("")
        lines.append(f"Invoice {code} issued to {rng.choice(NAMES)}; SKU AB-{rng.randint(100, 999)}/{rng.randint(1, 9)}, "
                     f"error E-{rng.randint(100, 999)} logged, R$ {rng.randint(1, 99)}.{rng.randint(100, 999)},{rng.randint(10, 99)}.")
        if i % 17 == 0:
            lines.append(rng.choice(CJK) + f" 第{i}号")
        if i % 5 == 0:
            lines.append(f"Estado: {rng.choice(['SP', 'RJ', 'MG', 'BA'])}; contato: {rng.choice(NAMES)}.")
        return "\n".join(lines) + "\n"


def build_forest(work: Path, corpus: Corpus) -> Path:
    root = init_forest(work / "sniff-forest", "sniff bench")
    with Vine(root) as vine, vine.bulk():
        for b in range(-(-corpus.nodes // PER_BRANCH)):
            vine.plant({"id": f"b{b:03d}/_index", "title": f"Branch {b}", "summary": f"Branch number {b}."})
        for i in range(corpus.nodes):
            vine.plant({"id": f"b{i // PER_BRANCH:03d}/n{i:05d}", "type": "note", "title": f"Note {i}",
                        "summary": f"Benchmark note {i}.", "body": corpus.body(i)})
    return root


def queries(corpus: Corpus, count: int) -> list[tuple[str, list[str], str | None]]:
    """(kind, terms, scope) in a seeded order."""
    rng = random.Random(7)
    out: list[tuple[str, list[str], str | None]] = []
    branches = -(-corpus.nodes // PER_BRANCH)
    for n in range(count):
        kind = ("rare code", "name", "mid word", "common word", "two letters", "several terms", "scoped",
                "CJK", "none")[n % 9]
        if kind == "rare code":
            terms = [rng.choice(corpus.codes)]
        elif kind == "name":
            terms = [rng.choice(NAMES).split()[-1]]
        elif kind == "mid word":
            terms = [corpus.words[rng.randint(200, 1500)]]
        elif kind == "common word":
            terms = [corpus.words[rng.randint(0, 20)]]
        elif kind == "two letters":
            terms = [rng.choice(["SP", "RJ", "MG", "BA"])]
        elif kind == "several terms":
            terms = [rng.choice(corpus.codes), corpus.words[rng.randint(100, 1000)], rng.choice(NAMES).split()[0]]
        elif kind == "scoped":
            terms = [corpus.words[rng.randint(50, 500)]]
        elif kind == "CJK":
            terms = [rng.choice(["東京", "株式会社", "倉庫", "서울"])]
        else:
            terms = [f"ZZ-{rng.randint(0, 99999)}"]
        scope = f"b{rng.randrange(branches):03d}" if kind == "scoped" else None
        out.append((kind, terms, scope))
    return out


def plain_scan(root: Path, ids: list[str], terms: list[str], scope: str | None) -> list[tuple[str, int]]:
    """The naive baseline: every body read, folded and compared, line by line; the
    matching nodes ranked as sniff ranks them (terms held, then lines, then id)."""
    folded = list(dict.fromkeys(fold(t) for t in terms))
    prefix = f"{scope}/" if scope else ""
    found = []
    for node_id in ids:
        if not node_id.startswith(prefix):
            continue
        lines = fold(split_node((root / f"{node_id}.md").read_text(encoding="utf-8"))[1]).split("\n")
        count = sum(1 for line in lines if any(t in line for t in folded))
        if count:
            held = sum(1 for t in folded if any(t in line for line in lines))
            found.append((-held, -count, node_id))
    return [(node_id, -count) for _, count, node_id in sorted(found)]


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def spread(samples: list[tuple[float, float]]) -> str:
    """median and p95 of (wall, CPU) samples, as the README quotes them."""
    wall, cpu = [s[0] for s in samples], [s[1] for s in samples]
    return (f"median {ms(statistics.median(wall))} ms, p95 {ms(percentile(wall, 0.95))} ms; "
            f"CPU median {ms(statistics.median(cpu))} ms, p95 {ms(percentile(cpu, 0.95))} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=10000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--baseline-queries", type=int, default=40)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--work", type=Path, default=None, help="reuse a forest built here by an earlier run")
    args = parser.parse_args()

    work = args.work or Path(tempfile.mkdtemp(prefix="bench-sniff-"))
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    os.environ.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), GIT_CONFIG_NOSYSTEM="1")
    corpus = Corpus(args.seed, args.nodes)
    root = work / "sniff-forest"
    t0 = time.perf_counter()
    if not (root / "_index.md").exists():
        root = build_forest(work, corpus)
        print(f"planted {args.nodes} notes in {time.perf_counter() - t0:.1f} s")
    else:
        for i in range(args.nodes):
            corpus.body(i)  # the same seeded codes as the forest on disk
    vine = Vine(root, writable=False)
    ids = [row[0] for row in vine.catalog.db.execute("SELECT id FROM nodes WHERE kind = 'banana' ORDER BY id")]
    text_mb = sum((root / f"{i}.md").stat().st_size for i in ids) / 1e6
    print(f"{len(ids)} bodies, {text_mb:.1f} MB of node files; {platform.python_version()}, "
          f"load {os.getloadavg()[0]:.1f}")

    (root / INDEX_PATH).unlink(missing_ok=True)
    index = BodyIndex(root, vine.catalog)
    t0, c0 = time.perf_counter(), time.process_time()
    index.refresh()
    build_s, build_cpu = time.perf_counter() - t0, time.process_time() - c0
    index.close()
    size_mb = (root / INDEX_PATH).stat().st_size / 1e6
    print(f"index build: {build_s:.2f} s ({build_cpu:.2f} s CPU), {size_mb:.1f} MB")

    first = []
    for _ in range(3):
        with BodyIndex(root, vine.catalog) as fresh:
            t0, c0 = time.perf_counter(), time.process_time()
            sniff(fresh, [corpus.codes[0]])
            first.append((time.perf_counter() - t0, time.process_time() - c0))
    print(f"first sniff of a new process (stat sweep over {len(ids)} files): {spread(first)}")

    plan = queries(corpus, args.queries)
    results: dict[str, dict] = {}
    for label, sweep in (("steady", SWEEP_SECONDS), ("sweep every call", 0.0)):
        with BodyIndex(root, vine.catalog, sweep_seconds=sweep) as warm:
            sniff(warm, ["warm-up"])
            times, cpu_times, by_kind = [], [], {}
            answers = []
            for kind, terms, scope in plan if sweep else plan[:60]:
                t0, c0 = time.perf_counter(), time.process_time()
                answer = sniff(warm, terms, scope=scope, k=10_000)  # as many as 800 tokens hold
                took, cpu = time.perf_counter() - t0, time.process_time() - c0
                times.append(took)
                cpu_times.append(cpu)
                by_kind.setdefault(kind, []).append((took, cpu))
                answers.append(answer)
        results[label] = {"times": times, "by_kind": by_kind, "answers": answers}
        print(f"sniff, {label}: p50 {ms(statistics.median(times))} ms, p95 {ms(percentile(times, 0.95))} ms, "
              f"max {ms(max(times))} ms over {len(times)} queries; CPU p50 {ms(statistics.median(cpu_times))} ms, "
              f"p95 {ms(percentile(cpu_times, 0.95))} ms")
        for kind, samples in by_kind.items():
            print(f"    {kind:14s} {spread(samples)}")
        selective = [sample for kind, samples in by_kind.items() if kind not in BROAD for sample in samples]
        print(f"    without {' and '.join(BROAD)} (terms in most bodies): {spread(selective)} "
              f"over {len(selective)} queries")

    baseline_times = []
    mismatches = 0
    step = max(1, len(plan) // args.baseline_queries)
    for at in range(0, len(plan), step)[: args.baseline_queries]:
        kind, terms, scope = plan[at]
        t0, c0 = time.perf_counter(), time.process_time()
        expected = plain_scan(root, ids, terms, scope)
        baseline_times.append((time.perf_counter() - t0, time.process_time() - c0))
        answer = results["steady"]["answers"][at]
        got = [(r["id"], r["match_count"]) for r in answer["results"]]
        # the budget shows a prefix of the ranking; truncated says whether there was more
        if got != expected[: len(got)] or answer["truncated"] != (len(got) < len(expected)):
            mismatches += 1
            print(f"MISMATCH {terms} {scope}: sniff {got[:3]}..., scan {expected[:3]}...")
    print(f"plain Python scan of every body: {spread(baseline_times)} over {len(baseline_times)} queries; "
          f"answers equal: {len(baseline_times) - mismatches}/{len(baseline_times)}")
    vine.close()
    if mismatches:
        sys.exit(1)


if __name__ == "__main__":
    main()
