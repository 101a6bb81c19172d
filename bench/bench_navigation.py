"""Navigation quality (issue 12): recall@1/3/5 and MRR@5 of locate and harvest on a 300-node forest.

The forest is ``navigation_forest.py`` (a distributor's knowledge base in English and
Portuguese, planted with the real Vine, seeded); the questions are
``navigation_questions.json``, written in words other than their answers' summaries:
paraphrases and synonyms, the other language, questions whose answer is one typed
link away from what they describe, tables to query, whole regions of the forest. A
question is answered at rank r when one of its expected ids is the r-th result;
recall@n counts the questions answered within n, MRR@5 averages 1/r (0 past 5).

What is measured is printed first, since the calls arrive from two helpers of
issue 12: ``vine.locate`` and ``vine.harvest`` when the Vine has them; until then
locate is ``Catalog.search`` (the catalog's BM25 over title, aliases, tags and
summary, the stand-in for locate) and harvest is ``read.harvest`` over that
stand-in, ``read.sniff`` and the node bodies. sniff alone (the question's content
words, ``harvest.sniff_terms``) is shown beside them as the body-only ranker.

    .venv/bin/python bench/bench_navigation.py [--work DIR] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import navigation_forest  # noqa: E402

from monkeyllm_core import Vine  # noqa: E402
from monkeyllm_core.forest.validate import validate_forest  # noqa: E402
from monkeyllm_core.read.body_index import BodyIndex  # noqa: E402
from monkeyllm_core.read.harvest import harvest, sniff_terms  # noqa: E402
from monkeyllm_core.read.sniff import sniff  # noqa: E402

K = 5
Ranker = Callable[[str], list[str]]


def rankers(vine: Vine, index: BodyIndex) -> dict[str, tuple[str, Ranker]]:
    """name -> (what is called, question -> ranked ids)."""
    def stand_in_locate(query: str, k: int = 5, scope: str = "all", type_filter: Any = None) -> dict[str, Any]:
        hits = vine.catalog.search(query, k=k + 1)
        return {"results": hits[:k], "truncated": len(hits) > k}

    def sniff_call(terms: Any, scope: Any = None, k: int = 5, type_filter: Any = None) -> dict[str, Any]:
        return sniff(index, terms, scope=scope, k=k, type_filter=type_filter)

    def body_of(node_id: str) -> str:
        return vine.read(node_id).body

    out: dict[str, tuple[str, Ranker]] = {}
    if hasattr(vine, "locate"):
        locate, called = vine.locate, "vine.locate(question, k=5)"
    else:
        locate, called = stand_in_locate, "Catalog.search(question, k=5): BM25 stand-in, vine.locate is not wired yet"
    out["locate"] = (called, lambda q: [r["id"] for r in locate(q, k=K)["results"]])
    if hasattr(vine, "harvest"):
        out["harvest"] = ("vine.harvest(question, k=5)",
                          lambda q: [r["id"] for r in vine.harvest(q, k=K)["results"]])
    else:
        out["harvest"] = (f"read.harvest(question, k=5) over {called.split('(')[0]}, read.sniff and Vine.read bodies",
                          lambda q: [r["id"] for r in harvest(q, None, K, locate=locate, sniff=sniff_call,
                                                              body_of=body_of, catalog=vine.catalog)["results"]])
    out["sniff"] = ("read.sniff(harvest.sniff_terms(question), k=5)",
                    lambda q: [r["id"] for r in sniff(index, sniff_terms(q), k=K)["results"]] if sniff_terms(q) else [])
    return out


def rank_of(ids: list[str], expected: list[str]) -> int | None:
    return next((n for n, node_id in enumerate(ids[:K], start=1) if node_id in expected), None)


def scores(ranks: list[int | None]) -> dict[str, float]:
    total = len(ranks) or 1
    return {"r@1": sum(1 for r in ranks if r == 1) / total, "r@3": sum(1 for r in ranks if r and r <= 3) / total,
            "r@5": sum(1 for r in ranks if r) / total, "mrr@5": sum(1 / r for r in ranks if r) / total}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=None, help="reuse the forest an earlier run built here")
    parser.add_argument("--json", action="store_true", help="print the per-question ranks as JSON too")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-nav-"))
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    os.environ.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), GIT_CONFIG_NOSYSTEM="1")
    root = work / "forest"
    if not (root / "_index.md").exists():
        t0 = time.perf_counter()
        navigation_forest.build(root)
        print(f"planted the forest in {time.perf_counter() - t0:.1f} s: {root}")
    questions = json.loads((HERE / "navigation_questions.json").read_text(encoding="utf-8"))["questions"]
    with Vine(root, writable=False) as vine, BodyIndex(root, vine.catalog) as index:
        nodes = vine.catalog.count()
        errors = [f.line() for f in validate_forest(vine) if f.line().startswith("error")]
        missing = sorted({e for q in questions for e in q["expected"] if not vine.catalog.exists(e)})
        print(f"forest: {nodes} nodes, validate errors: {len(errors)}; {len(questions)} questions")
        if errors or missing or nodes < 300:
            sys.exit(f"the benchmark forest is not what the questions need: {errors[:3]} {missing[:3]}")
        ranked: dict[str, list[int | None]] = {}
        for name, (called, rank) in rankers(vine, index).items():
            print(f"  {name}: {called}")
            ranked[name] = []
            for question in questions:
                ranked[name].append(rank_of(rank(question["question"]), question["expected"]))
                if hasattr(vine, "close_session"):  # each question its own hunt: no heat carried over
                    vine.close_session(success=False, answer_nodes=[])
    kinds = list(dict.fromkeys(q["kind"] for q in questions))
    print()
    print("| ranker | recall@1 | recall@3 | recall@5 | MRR@5 | " + " | ".join(f"{k} r@5" for k in kinds) + " |")
    print("|---|---|---|---|---|" + "---|" * len(kinds))
    for name, ranks in ranked.items():
        overall = scores(ranks)
        per_kind = [scores([r for r, q in zip(ranks, questions) if q["kind"] == kind])["r@5"] for kind in kinds]
        print(f"| {name} | {overall['r@1']:.2f} | {overall['r@3']:.2f} | {overall['r@5']:.2f} | {overall['mrr@5']:.3f} | "
              + " | ".join(f"{v:.2f}" for v in per_kind) + " |")
    counts = {kind: sum(1 for q in questions if q["kind"] == kind) for kind in kinds}
    print("\nquestions per kind: " + ", ".join(f"{kind} {n}" for kind, n in counts.items()))
    if args.json:
        print(json.dumps({q["id"]: {name: ranked[name][i] for name in ranked} for i, q in enumerate(questions)},
                         indent=1))


if __name__ == "__main__":
    main()
