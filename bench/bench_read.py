"""Read-engine speed (issue 12): locate, look and scan at 10,000 and 100,000 nodes.

A forest is generated straight onto disk (node files and branch indexes exactly as
the writer renders them, deterministic from a seed), then its derived read layer
is built by ``Vine.reindex`` (the catalog and its FTS5 index, timed: that is what
a forest another engine wrote costs on its first read), in a child process of its
own so that its peak resident memory (``VmHWM``) is the reindex's alone. Planting through the
writer is measured in bench_core.py; here the subject is the reads.

The metadata is drawn from a synthetic vocabulary of 8,000 made-up words with a
Zipf frequency (``zipf_picker``), so a few words are in thousands of summaries
and most in a handful. 1% of the nodes
carry persistent heat. Every call goes through the public ``Vine`` method of a
read-only Vine (so tracing and heat are in the measurement) and its latency is
one ``perf_counter`` interval (and the process's own CPU time beside it, which
a busy shared machine does not inflate as much); p50/p95 over the sample. Beside each, in the same
run, the naive way to answer the same calls without a catalog:

- locate: a Python scan of every node's title, aliases, tags and summary (loaded
  in memory once), counting the folded query words each carries;
- look: parse the node's file and each link target's file (their summaries),
  and scan every link in the forest (held in memory) for the ones pointing at it;
- scan: parse the frontmatter of every file in the branch's folder and filter;
- harvest: the naive locate, plus every body read and searched for the query's
  sniff terms in plain Python, and the top nodes' files read again.

harvest needs the body index: the first call builds it (timed apart, once), the
timed calls use it as a reader keeps it.

    /work/venv/bin/python bench/bench_read.py [--sizes 10000,100000] [--queries 300] [--work DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from monkeyllm_core import Vine, init_forest, parse_node, render_node
from monkeyllm_core.forest import branches as br
from monkeyllm_core.read.folding import fold
from monkeyllm_core.read.harvest import sniff_terms
from monkeyllm_core.read.words import STOP_WORDS, words_of

RELS = ("related-to", "mentioned-in", "derived-from", "succeeds", "part-of", "compared-with")
TYPES = ("note",) * 6 + ("document",) * 2 + ("entity", "event")
BANANAS_PER_BRANCH = 100
SUBS_PER_TOP = 10


def vocabulary(rng: random.Random, size: int = 8000) -> list[str]:
    """Pronounceable made-up words, 4 to 10 letters, in a random frequency order (so
    frequent words do not share a prefix, as real frequent words seldom do)."""
    consonants, vowels = "bcdfghjklmnprstvz", "aeiou"
    words: set[str] = set()
    while len(words) < size:
        length = rng.randint(4, 10)
        words.add("".join(rng.choice(vowels if i % 2 else consonants) for i in range(length)))
    ordered = sorted(words)
    rng.shuffle(ordered)
    return ordered


def zipf_picker(rng: random.Random, words: list[str]) -> Callable[[], str]:
    """Zipf over content words: weight 1 / (rank + 60). The offset stands for the
    function words summaries also hold (and queries drop): with it the commonest
    word is in about one summary in twelve, as "2026" or "sales" might be."""
    cumulative, total = [], 0.0
    for rank in range(len(words)):
        total += 1.0 / (rank + 60)
        cumulative.append(total)

    def pick() -> str:
        return rng.choices(words, cum_weights=cumulative, k=1)[0]
    return pick


def generate(root: Path, size: int, seed: int = 12, *, write_files: bool = True) -> dict[str, Any]:
    """Write ``size`` bananas under ~size/100 branches; returns what the baselines need
    (``write_files=False``: the same forest, deterministic from the seed, not written)."""
    rng = random.Random(seed)
    words = vocabulary(rng)
    word = zipf_picker(rng, words)
    tags = [f"tag{n}" for n in range(60)]
    branches = max(1, size // BANANAS_PER_BRANCH)
    tops = max(1, branches // SUBS_PER_TOP)
    ids: list[str] = []
    layout: dict[str, list[str]] = {}
    for b in range(branches):
        folder = f"top{b % tops:02d}/sub{b:04d}"
        layout[f"{folder}/_index"] = []
    folders = list(layout)
    for n in range(size):
        branch = folders[n % len(folders)]
        node_id = f"{branch[:-len('/_index')]}/node-{n:06d}"
        layout[branch].append(node_id)
        ids.append(node_id)
    meta: dict[str, dict[str, Any]] = {}
    edges: list[tuple[str, str, str]] = []
    for node_id in ids:
        title = " ".join(word() for _ in range(rng.randint(2, 4))).capitalize()
        summary = " ".join(word() for _ in range(rng.randint(14, 24))).capitalize() + "."
        links = [{"rel": rng.choice(RELS), "target": rng.choice(ids)} for _ in range(rng.randint(0, 3))]
        fm = {"id": node_id, "type": rng.choice(TYPES), "title": title, "summary": summary[:230],
              "created": "2025-01-01", "updated": f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
              "tags": rng.sample(tags, rng.randint(1, 3)), "links": links, "source": "agent"}
        if rng.random() < 0.2:
            fm["aliases"] = [" ".join(word() for _ in range(2))]
        sections = "".join(f"## {word().capitalize()}\n\n{' '.join(word() for _ in range(60))}.\n\n"
                           for _ in range(rng.randint(2, 5)))
        if write_files:
            write(root, fm, f"# {title}\n\n{sections}")
        meta[node_id] = fm
        edges += [(node_id, link["rel"], link["target"]) for link in links]
    for branch, children in (layout.items() if write_files else ()):
        folder = branch[:-len("/_index")]
        write_branch(root, branch, folder.split("/")[-1].capitalize(), f"Region {folder}: {len(children)} nodes.",
                     [(child, meta[child]["summary"]) for child in children], [])
    for t in range(tops if write_files else 0):
        subs = [f for f in folders if f.startswith(f"top{t:02d}/")]
        write_branch(root, f"top{t:02d}/_index", f"Top {t:02d}", f"Area top{t:02d}: {len(subs)} regions.",
                     [], [(sub, f"Region {sub[:-7]}.") for sub in subs])
    return {"ids": ids, "meta": meta, "edges": edges, "branches": folders, "words": words}


def write(root: Path, fm: dict[str, Any], body: str) -> None:
    path = root / f"{fm['id']}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_node(fm, body), encoding="utf-8")


def write_branch(root: Path, node_id: str, title: str, summary: str, bananas: list[tuple[str, str]],
                 subs: list[tuple[str, str]]) -> None:
    body = br.branch_body(title, summary)
    body = body.replace(f"## {br.SUB_BRANCHES}\n", f"## {br.SUB_BRANCHES}\n" + "".join(
        br.entry_line(child, text, br.coverage_text(BANANAS_PER_BRANCH, 0)) + "\n" for child, text in subs))
    body = body.replace(f"## {br.DIRECT_BANANAS}\n", f"## {br.DIRECT_BANANAS}\n" + "".join(
        br.entry_line(child, text) + "\n" for child, text in bananas))
    fm = {"id": node_id, "type": "branch", "title": title, "summary": summary, "created": "2025-01-01",
          "updated": "2026-06-01", "source": "agent", "coverage": br.coverage_text(len(bananas), len(subs))}
    write(root, fm, body)


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return (statistics.median(ordered) * 1000, ordered[max(0, int(len(ordered) * 0.95) - 1)] * 1000)


def timed(calls: list[Callable[[], Any]]) -> tuple[tuple[float, float], tuple[float, float]]:
    """(wall p50, p95), (CPU p50, p95) in ms. On a shared machine the wall clock also
    counts the time this process waited for a core; its own CPU time does not."""
    wall, cpu = [], []
    for call in calls:
        started, started_cpu = time.perf_counter(), time.process_time()
        call()
        cpu.append(time.process_time() - started_cpu)
        wall.append(time.perf_counter() - started)
    return percentiles(wall), percentiles(cpu)


def questions(rng: random.Random, data: dict[str, Any], count: int) -> list[str]:
    """Questions as people type them: content words of a node, stop words, punctuation."""
    out = []
    for i in range(count):
        fm = data["meta"][rng.choice(data["ids"])]
        title_words = fm["title"].lower().split()
        summary_words = fm["summary"].lower().rstrip(".").split()
        if i % 10 < 5:
            out.append(f"which {' '.join(title_words[:2])} has the {rng.choice(summary_words)}?")
        elif i % 10 < 8:
            out.append(f"{rng.choice(title_words)} {rng.choice(data['words'])}, please")  # one word nothing carries
        else:
            out.append(f"\"{rng.choice(summary_words)}\"")
    return out


class NaiveLocate:
    def __init__(self, data: dict[str, Any]) -> None:
        self.texts = [(node, set(words_of(" ".join([fm["title"], fm["summary"], *fm["tags"], *fm.get("aliases", [])]))))
                      for node, fm in data["meta"].items()]

    def __call__(self, query: str, k: int = 5) -> list[str]:
        wanted = [w for w in words_of(query) if w not in STOP_WORDS]
        scored = [(sum(w in words for w in wanted), node) for node, words in self.texts]
        return [node for score, node in sorted(scored, key=lambda s: -s[0])[:k] if score]


def naive_look(root: Path, node_id: str, edges: list[tuple[str, str, str]]) -> dict[str, Any]:
    node = parse_node((root / f"{node_id}.md").read_text(encoding="utf-8"))
    targets = {}
    for link in node.frontmatter.get("links") or []:
        target = root / f"{link['target']}.md"
        if target.is_file():
            targets[link["target"]] = parse_node(target.read_text(encoding="utf-8")).frontmatter.get("summary")
    incoming = [(source, rel) for source, rel, target in edges if target == node_id]
    return {"fm": node.frontmatter, "targets": targets, "in": incoming}


def naive_scan(root: Path, branch: str, tag: str) -> list[str]:
    folder = root / branch[:-len("/_index")]
    out = []
    for path in sorted(folder.glob("*.md")):
        fm = parse_node(path.read_text(encoding="utf-8")).frontmatter
        if fm.get("type") == "note" and tag in (fm.get("tags") or []):
            out.append(fm["id"])
    return out


def naive_harvest(root: Path, query: str, ids: list[str], locate: NaiveLocate, k: int = 3) -> list[dict[str, Any]]:
    """locate's naive half, every body searched for the sniff terms, the top k read whole."""
    located = locate(query, k=k * 2)
    terms = [fold(t) for t in sniff_terms(query)]
    sniffed = []
    for node_id in ids:
        body = fold(parse_node((root / f"{node_id}.md").read_text(encoding="utf-8")).body)
        held = sum(1 for t in terms if t in body)
        if held:
            sniffed.append((-held, node_id))
    ranked = list(dict.fromkeys([*located, *(node for _, node in sorted(sniffed)[:k * 2])]))[:k]
    return [{"id": node, "body": parse_node((root / f"{node}.md").read_text(encoding="utf-8")).body} for node in ranked]


def run(size: int, work: Path, queries: int, reuse: bool) -> list[list[str]]:
    root = work / f"forest-{size}"
    if reuse and (root / "_derived" / "catalog.db").is_file():
        data = generate(root, size, write_files=False)
        built = "reused from an earlier run"
        (root / "_derived" / "trails.db").unlink(missing_ok=True)
    else:
        if root.exists():
            shutil.rmtree(root)
        init_forest(root, f"Bench {size}")
        started = time.perf_counter()
        data = generate(root, size)
        generated = time.perf_counter() - started
        child = subprocess.run([sys.executable, __file__, "--reindex-child", str(root)], check=True,
                               capture_output=True, text=True, env=os.environ.copy())
        done = json.loads(child.stdout)
        built = (f"generated in {generated:.1f} s, derived read layer (reindex of {done['nodes']:,} nodes, in a "
                 f"child process) in {done['wall_s']:.1f} s ({done['cpu_s']:.1f} s CPU, and {done['workers_cpu_s']:.1f} s "
                 f"in its parsing workers), its peak RSS {done['peak_rss_mib']:.0f} MiB (a worker's "
                 f"{done['workers_peak_rss_mib']:.0f} MiB)")
    rng = random.Random(7)
    vine = Vine(root, writable=False)
    warm = rng.sample(data["ids"], max(1, size // 100))
    vine.read_session().heat.deposit(warm, 0.3)
    vine.locate("warm up")  # the first read checks the catalog once and opens the heat store
    asked = questions(rng, data, queries)
    bananas = [rng.choice(data["ids"]) for _ in range(queries)]
    branch_sample = [rng.choice(data["branches"]) for _ in range(queries)]
    tags = [f"tag{rng.randrange(60)}" for _ in range(queries)]
    tops = [f"top{rng.randrange(max(1, len(data['branches']) // SUBS_PER_TOP)):02d}/_index" for _ in range(queries)]
    naive_locate = NaiveLocate(data)
    naive_n = max(20, queries // 5)  # the naive calls are slow: a smaller sample of the same calls
    started, started_cpu = time.perf_counter(), time.process_time()
    vine.harvest("warm up the body index")
    print(f"# {size:,} nodes: first harvest (it builds the body index, or sweeps one an earlier run left) in "
          f"{time.perf_counter() - started:.1f} s "
          f"({time.process_time() - started_cpu:.1f} s CPU)", flush=True)
    rows = [
        ("locate, k=5", timed([lambda q=q: vine.locate(q) for q in asked]),
         timed([lambda q=q: naive_locate(q) for q in asked[:naive_n]])),
        ("look, a banana", timed([lambda n=n: vine.look(n) for n in bananas]),
         timed([lambda n=n: naive_look(root, n, data["edges"]) for n in bananas[:naive_n]])),
        ("look, a 100-child branch", timed([lambda b=b: vine.look(b) for b in branch_sample]), None),
        ("scan, one branch, type + tags_any", timed([lambda b=b, t=t: vine.scan(
            b, filter={"type": "note", "tags_any": [t]}, fields=["id", "title"]) for b, t in zip(branch_sample, tags)]),
         timed([lambda b=b, t=t: naive_scan(root, b, t) for b, t in zip(branch_sample[:naive_n], tags)])),
        ("scan, recursive under a top branch, limit 20", timed([lambda b=b, t=t: vine.scan(
            b, filter={"tags_all": [t], "updated_after": "2026-03-01"}, fields=["id", "updated"], recursive=True,
            limit=20) for b, t in zip(tops, tags)]), None),
        ("harvest, k=3", timed([lambda q=q: vine.harvest(q) for q in asked]),
         timed([lambda q=q: naive_harvest(root, q, data["ids"], naive_locate) for q in asked[:max(5, naive_n // 6)]])),
    ]
    vine.close()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"# load average {os.getloadavg()[0]:.1f}; {size:,} nodes: {built}; peak RSS of the benchmark "
          f"process {rss_mb:.0f} MiB", flush=True)
    table = []
    for label, ((p50, p95), (c50, c95)), naive in rows:
        naive_text = f"{naive[0][0]:.2f} / {naive[0][1]:.2f}" if naive else "n/a"
        table.append([f"{size:,}", label, f"{p50:.2f}", f"{p95:.2f}", f"{c50:.2f} / {c95:.2f}", naive_text])
    return table


def reindex_child(root: Path) -> None:
    """The derived read layer built alone: open the forest, reindex, report on stdout."""
    started, started_cpu = time.perf_counter(), time.process_time()
    with Vine(root) as vine:
        nodes = vine.reindex()
    wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
    status = Path("/proc/self/status").read_text()
    peak_kib = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:"))
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)  # the parsing workers (forest/parallel_read.py)
    print(json.dumps({"nodes": nodes, "wall_s": wall, "cpu_s": cpu, "peak_rss_mib": peak_kib / 1024,
                      "workers_cpu_s": workers.ru_utime + workers.ru_stime,
                      "workers_peak_rss_mib": workers.ru_maxrss / 1024}))


def main(argv: list[str] | None = None) -> int:
    if argv is None and sys.argv[1:2] == ["--reindex-child"]:
        reindex_child(Path(sys.argv[2]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--work", help="where the forests go (default: a temporary folder, removed after)")
    parser.add_argument("--reuse", action="store_true", help="with --work: read the forests an earlier run left")
    args = parser.parse_args(argv)
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="bench-read-"))
    work.mkdir(parents=True, exist_ok=True)
    home = work / "home"
    home.mkdir(exist_ok=True)
    os.environ.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), GIT_CONFIG_NOSYSTEM="1")
    print(f"python {platform.python_version()}, {os.cpu_count()} cpu(s), load {os.getloadavg()[0]:.1f}", flush=True)
    table = []
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            table += run(size, work, args.queries, args.reuse)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    print("\n| nodes | call | p50 ms | p95 ms | CPU p50 / p95 ms | naive p50 / p95 ms |\n|---|---|---|---|---|---|")
    for row in table:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
