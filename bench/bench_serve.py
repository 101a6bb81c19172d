"""`vine serve` over stdio MCP (issue 13): a warm read against the direct Python call,
and the server's resident memory over many calls. Loopback only, bounded by flags.

The forest is bench_read's generated one (``--nodes`` bananas, deterministic from a
seed, committed so the served reader's freshness check finds nothing to redo).

1. Warm reads. The same ``look`` and ``locate`` calls (``--calls`` of each, after
   ``--warmup`` calls that open the catalog, the heat store and the session) go
   once through a read-only ``Vine`` in this process and once through
   ``vine serve --forest`` driven by the MCP SDK's own stdio client. Each call is
   one ``perf_counter`` interval; beside it the CPU time of the process(es) doing
   the work (the direct call: this process; MCP: the client plus the server,
   whose CPU is read from /proc). Medians; the overhead is the MCP median minus the
   direct median, measured in the same run. The issue's target: within 2 ms.
   Beside them, the SDK's own floor: the same client calling an ``MCPServer`` whose
   one tool returns a constant, so what the transport costs is told apart from
   what ``vine serve`` adds.
   The same calls again from a minimal JSON-RPC client (``initialize``,
   ``notifications/initialized``, then one ``tools/call`` line out and one answer
   line back, on blocking pipes): the SDK client spends about 1 ms of CPU on each
   call itself, so this row shows what the server adds, alone. ``--before VINE``
   (another checkout's ``vine``, e.g. main's) runs both MCP rows against it too,
   in the same run, so a change to the server is measured against its baseline.
2. Memory. ``--memory-calls`` more calls (look, locate, pick, scan in turn) on the
   same server, its resident set size (VmRSS) read every 1/20th of the way. Flat
   means the last samples are no higher than the first ones after warm-up, beyond
   allocator noise.

    .venv/bin/python bench/bench_serve.py [--nodes 2000] [--calls 500] [--warmup 200] [--memory-calls 20000]
        [--before OTHER/.venv/bin/vine]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import anyio
import psutil
from mcp import Client, StdioServerParameters
from mcp_types.version import LATEST_HANDSHAKE_VERSION

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_read import generate, questions  # noqa: E402  (the read benchmarks' forest)

from monkeyllm_core import Vine, init_forest  # noqa: E402

VINE = str(Path(sys.executable).parent / "vine")
FLOOR_SERVER = """
from mcp.server.mcpserver import MCPServer
server = MCPServer("floor", log_level="WARNING")

@server.tool()
async def ping() -> str:
    return "pong"

server.run()
"""


def build_forest(root: Path, nodes: int) -> dict[str, Any]:
    init_forest(root, f"Serve bench {nodes}")
    data = generate(root, nodes)
    with Vine(root) as vine:
        vine.reindex()
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    subprocess.run([*git, "add", "-A"], cwd=root, check=True, capture_output=True)
    subprocess.run([*git, "commit", "-qm", "generated forest"], cwd=root, check=True, capture_output=True)
    return data


def workload(data: dict[str, Any], count: int, seed: int) -> list[tuple[str, dict[str, Any]]]:
    """``count`` look calls then ``count`` locate calls, on ids and questions drawn from the forest."""
    rng = random.Random(seed)
    looks = [("look", {"id": rng.choice(data["ids"])}) for _ in range(count)]
    locates = [("locate", {"query": q}) for q in questions(rng, data, count)]
    return looks + locates


def mixed(data: dict[str, Any], count: int, seed: int) -> list[tuple[str, dict[str, Any]]]:
    rng = random.Random(seed)
    asked = questions(rng, data, 256)
    kinds: list[Callable[[int], tuple[str, dict[str, Any]]]] = [
        lambda n: ("look", {"id": data["ids"][n % len(data["ids"])]}),
        lambda n: ("locate", {"query": asked[n % len(asked)]}),
        lambda n: ("pick", {"id": data["ids"][(n * 7) % len(data["ids"])]}),
        lambda n: ("scan", {"parent_id": data["branches"][n % len(data["branches"])], "fields": ["id", "title"]}),
    ]
    return [kinds[n % len(kinds)](n) for n in range(count)]


def direct(vine: Vine, name: str, args: dict[str, Any]) -> Any:
    return getattr(vine, name)(**args)


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def rss_mib(process: psutil.Process) -> float:
    return process.memory_info().rss / 2**20


def cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def served_process(marker: str = "serve") -> psutil.Process:
    found = [p for p in psutil.Process().children(recursive=True) if marker in p.cmdline()]
    assert len(found) == 1, found
    return found[0]


def run_direct(root: Path, warm: list, calls: list) -> dict[str, tuple[list[float], float]]:
    with Vine(root, writable=False) as vine:
        for name, args in warm:
            direct(vine, name, args)
        out: dict[str, tuple[list[float], float]] = {}
        for kind in ("look", "locate"):
            walls, cpu = [], time.process_time()
            for name, args in (c for c in calls if c[0] == kind):
                started = time.perf_counter()
                direct(vine, name, args)
                walls.append(time.perf_counter() - started)
            out[kind] = (walls, time.process_time() - cpu)
    return out


async def run_floor(count: int, warmup: int) -> tuple[list[float], float, float]:
    params = StdioServerParameters(command=sys.executable, args=["-c", FLOOR_SERVER], env=dict(os.environ))
    async with Client(params) as client:
        server = served_process(FLOOR_SERVER)
        for _ in range(warmup):
            await client.call_tool("ping", {})
        walls, cpu, server_cpu = [], time.process_time(), cpu_seconds(server)
        for _ in range(count):
            started = time.perf_counter()
            await client.call_tool("ping", {})
            walls.append(time.perf_counter() - started)
        return walls, time.process_time() - cpu, cpu_seconds(server) - server_cpu


async def run_mcp(root: Path, warm: list, calls: list, memory_calls: list, vine: str = VINE) -> dict[str, Any]:
    params = StdioServerParameters(command=vine, args=["serve", "--forest", str(root), "--readonly"],
                                   env=dict(os.environ))
    out: dict[str, Any] = {}
    async with Client(params) as client:
        server = served_process()
        for name, args in warm:
            assert not (await client.call_tool(name, args)).is_error
        for kind in ("look", "locate"):
            walls, cpu, server_cpu = [], time.process_time(), cpu_seconds(server)
            for name, args in (c for c in calls if c[0] == kind):
                started = time.perf_counter()
                result = await client.call_tool(name, args)
                walls.append(time.perf_counter() - started)
                assert not result.is_error, result.content
            out[kind] = (walls, time.process_time() - cpu, cpu_seconds(server) - server_cpu)
        samples = [(0, rss_mib(server))]
        step = max(1, len(memory_calls) // 20)
        started, errors = time.perf_counter(), 0
        for n, (name, args) in enumerate(memory_calls, start=1):
            errors += (await client.call_tool(name, args)).is_error
            if n % step == 0:
                samples.append((n, rss_mib(server)))
        out["memory"] = {"samples": samples, "seconds": time.perf_counter() - started, "errors": errors}
    return out


class MinimalClient:
    """JSON-RPC over the server's pipes and nothing else: the handshake, then a
    ``tools/call`` line written and its answer line read, blocking, per call."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env=dict(os.environ))
        self.next_id = 0
        self.request("initialize", {"protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {},
                                    "clientInfo": {"name": "bench-minimal-client", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.process.stdout is not None
        answer = json.loads(self.process.stdout.readline())
        assert answer.get("id") == self.next_id and "result" in answer, answer
        return answer["result"]

    def call_tool(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        result = self.request("tools/call", {"name": name, "arguments": args})
        assert not result.get("isError"), result
        return result

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()  # EOF: the server ends by itself
        self.process.wait(timeout=60)


def run_minimal(command: list[str], warm: list, calls: list) -> dict[str, tuple[list[float], float, float]]:
    client = MinimalClient(command)
    try:
        server = psutil.Process(client.process.pid)
        for name, args in warm:
            client.call_tool(name, args)
        out = {}
        for kind in sorted({name for name, _ in calls}, key=[name for name, _ in calls].index):
            walls, cpu, server_cpu = [], time.process_time(), cpu_seconds(server)
            for name, args in (c for c in calls if c[0] == kind):
                started = time.perf_counter()
                client.call_tool(name, args)
                walls.append(time.perf_counter() - started)
            out[kind] = (walls, time.process_time() - cpu, cpu_seconds(server) - server_cpu)
        return out
    finally:
        client.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--calls", type=int, default=500, help="timed calls of each of look and locate")
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--memory-calls", type=int, default=20000)
    parser.add_argument("--work", type=Path, help="where the forest goes (default: a temporary folder)")
    parser.add_argument("--before", help="another `vine` (e.g. main's checkout's) to measure in the same run")
    args = parser.parse_args(argv)
    for name in ("nodes", "calls", "warmup", "memory_calls"):
        if not 1 <= getattr(args, name) <= 1_000_000:
            parser.error(f"--{name.replace('_', '-')} must be 1-1,000,000")

    with tempfile.TemporaryDirectory(dir=args.work) as work:
        root = Path(work) / "forest"
        load_before = os.getloadavg()
        data = build_forest(root, args.nodes)
        warm = mixed(data, args.warmup, seed=3)
        calls = workload(data, args.calls, seed=5)
        memory_calls = mixed(data, args.memory_calls, seed=11)
        direct_results = run_direct(root, warm, calls)
        floor = anyio.run(run_floor, args.calls, args.warmup)
        mcp = anyio.run(run_mcp, root, warm, calls, memory_calls)
        served = ["serve", "--forest", str(root), "--readonly"]
        pings = [("ping", {})] * args.calls
        minimal = run_minimal([VINE, *served], warm, calls)
        minimal_floor = run_minimal([sys.executable, "-c", FLOOR_SERVER], pings[:args.warmup], pings)["ping"]
        before = before_minimal = None
        if args.before:
            before = anyio.run(run_mcp, root, warm, calls, [], args.before)
            before_minimal = run_minimal([args.before, *served], warm, calls)
        load_after = os.getloadavg()

    print(f"python {platform.python_version()}, {os.cpu_count()} cores, {args.nodes:,} nodes; "
          f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after")
    shown = f" (before: {args.before})" if args.before else ""
    for title, rows, floor_row, before_rows in (
            ("the SDK's stdio client", mcp, floor, before),
            ("a minimal JSON-RPC client", minimal, minimal_floor, before_minimal)):
        print(f"\nstdio MCP driven by {title}{shown}")
        print("| call | direct Python, median | stdio MCP, median | overhead (median) | CPU per call: direct | "
              "CPU per call: MCP client + server |" + (" before: stdio MCP, median | before: overhead | "
                                                     "before: CPU client + server |" if before_rows else ""))
        print("|---|---|---|---|---|---|" + ("---|---|---|" if before_rows else ""))
        for kind in ("look", "locate"):
            walls, cpu = direct_results[kind]
            count = len(walls)
            line = (f"| {kind} ({count} calls) | {median_ms(walls):.2f} ms | "
                    + _mcp_cells(rows[kind], median_ms(walls)) + f" {cpu / count * 1000:.2f} ms | "
                    + _cpu_cell(rows[kind]) + " |")
            if before_rows:
                line += f" {_mcp_cells(before_rows[kind], median_ms(walls))} {_cpu_cell(before_rows[kind])} |"
            print(line)
        print(f"| SDK floor: a constant tool ({len(floor_row[0])} calls) | | {median_ms(floor_row[0]):.2f} ms | | | "
              f"{_cpu_cell(floor_row)} |" + (" | | |" if before_rows else ""))
    memory = mcp["memory"]
    samples = memory["samples"]
    print(f"\nmemory: {len(memory_calls):,} calls in {memory['seconds']:.0f} s "
          f"({len(memory_calls) / memory['seconds']:.0f} calls/s), {memory['errors']} error(s)")
    print("server VmRSS (MiB) by calls made: " + ", ".join(f"{n:,}: {mib:.1f}" for n, mib in samples))
    first, last = samples[1][1], samples[-1][1]
    print(f"after the first 1/20th: {first:.1f} MiB; at the end: {last:.1f} MiB ({last - first:+.1f} MiB); "
          f"peak {max(m for _, m in samples):.1f} MiB")
    return 0


def _mcp_cells(row: tuple[list[float], float, float], direct_median_ms: float) -> str:
    return f"{median_ms(row[0]):.2f} ms | {median_ms(row[0]) - direct_median_ms:+.2f} ms |"


def _cpu_cell(row: tuple[list[float], float, float]) -> str:
    walls, client_cpu, server_cpu = row
    return f"{client_cpu / len(walls) * 1000:.2f} + {server_cpu / len(walls) * 1000:.2f} ms"


if __name__ == "__main__":
    sys.exit(main())
