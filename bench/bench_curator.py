"""Benchmark: curate 1,000 requests against a scripted server answering after 200 ms.

    /work/venv/bin/python bench/bench_curator.py [--requests 1000] [--delay 0.2]
                                                  [--concurrency 8] [--runs 1]

Prints the wall time of each run (and the median), the concurrency used and the
serial figure (requests x delay) the concurrency is measured against.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

from monkeyllm_gardener.curator import Candidate, CurationRequest, Curator, CuratorSettings
from monkeyllm_gardener.curator.testing_server import ScriptedOpenAIServer, json_reply

SUMMARY = "Expense policy for travel and meals. Receipts are required above 50 USD."
TEXT = (
    "Travel and meals are reimbursed for all staff. Receipts are required above 50 USD "
    "and the approvals go through the team lead. "
) * 20


def make_requests(count: int) -> list[CurationRequest]:
    candidates = [Candidate(f"finance/doc-{i}", f"Doc {i}", "A finance document.") for i in range(8)]
    return [
        CurationRequest(
            node_id=f"notes/node-{i}",
            node_type="note",
            title=f"Node {i}",
            text=TEXT,
            derived_summary="Expense policy. Travel and meals are reimbursed.",
            candidates=candidates,
        )
        for i in range(count)
    ]


def run_once(*, count: int, delay: float, concurrency: int) -> tuple[float, dict[str, int]]:
    reply = json_reply(SUMMARY, tags=["finance"], links=["finance/doc-1"])
    with ScriptedOpenAIServer(default_reply=reply, delay=delay) as server:
        settings = CuratorSettings(endpoint=server.base_url, model="scripted-model", concurrency=concurrency)
        requests = make_requests(count)
        with Curator(settings) as curator:
            started = time.perf_counter()
            outcomes = sum(1 for _ in curator.curate_many(requests))
            elapsed = time.perf_counter() - started
            stats = curator.stats()
    assert outcomes == count and stats["llm_summaries"] == count, stats
    return elapsed, stats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--delay", type=float, default=0.2, help="server answer delay, seconds")
    parser.add_argument("--concurrency", type=int, default=CuratorSettings(endpoint="http://x").concurrency)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args(argv)

    times = []
    for run in range(1, args.runs + 1):
        elapsed, stats = run_once(count=args.requests, delay=args.delay, concurrency=args.concurrency)
        times.append(elapsed)
        print(f"run {run}: {args.requests} requests in {elapsed:.2f} s wall "
              f"({args.requests / elapsed:.1f} req/s); stats {stats}")
    serial = args.requests * args.delay
    ideal = serial / args.concurrency
    median = statistics.median(times)
    print(f"concurrency: {args.concurrency} requests in flight")
    print(f"wall time (median of {len(times)}): {median:.2f} s")
    print(f"serial figure: {args.requests} x {args.delay * 1000:.0f} ms = {serial:.0f} s "
          f"(ideal at this concurrency: {ideal:.1f} s; speed-up {serial / median:.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
