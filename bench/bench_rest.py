"""REST under load (issue 13): locate over loopback HTTP at 1 and 8 concurrent clients.

The forest is bench_read.py's generated one (``--nodes``, 10,000 by default:
Zipf-drawn titles and summaries, 1% of the nodes warm), its questions are
bench_read's too. The server is a subprocess (this script with ``--serve``): the
REST routes behind the bearer-key middleware, one key in a private key store, on
uvicorn bound to 127.0.0.1, every request carrying that key. The clients are
threads of this process, each on its own keep-alive connection, each sending
its share of a bounded number of requests; a request is an error unless it is
a 200 whose body is a locate answer.

In the same run, as the baseline, the same questions through the direct Python
call (a read-only ``Vine``'s ``locate`` and ``wire`` of its answer, one thread),
so the figures say what HTTP, the key check, the event loop and the hop to the
forest's thread add.

The machine has 2 shared cores, and the client threads run on them beside the
server, so beside each wall-clock figure stand the CPU seconds the server
process spent (``psutil``, user + system) and the clients' own.

    .venv/bin/python bench/bench_rest.py [--nodes 10000] [--requests 2400] [--work DIR [--reuse]]
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_read import generate, percentiles, questions  # noqa: E402  (the read benchmark's forest and questions)

from monkeyllm_core import Vine, init_forest  # noqa: E402
from monkeyllm_core.read.contract import wire  # noqa: E402


# -- the server (a subprocess) -----------------------------------------------------------------
def serve(forest: Path, port_file: Path) -> None:
    import uvicorn
    from starlette.applications import Starlette

    from monkeyllm_gardener.serve import rest
    from monkeyllm_gardener.serve.auth import auth_middleware
    from monkeyllm_gardener.serve.forests import Forests
    from monkeyllm_gardener.serve.keys import KeyStore

    forests = Forests(forest=forest)
    app = Starlette(routes=rest.routes(forests), middleware=[auth_middleware(KeyStore())])
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and
    # without it a response's headers and body (two writes) wait on a delayed ACK (40 ms)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port_file.write_text(str(sock.getsockname()[1]), encoding="utf-8")
    try:
        uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")).run(sockets=[sock])
    finally:
        forests.close()


def start_server(forest: Path, home: Path) -> tuple[subprocess.Popen, int]:
    port_file = home / "port"
    port_file.unlink(missing_ok=True)
    env = {**os.environ, "MONKEYLLM_HOME": str(home)}
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(forest), "--port-file", str(port_file)],
                              env=env)
    deadline = time.monotonic() + 60
    while True:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode}")
        if port_file.exists() and port_file.read_text(encoding="utf-8"):
            port = int(port_file.read_text(encoding="utf-8"))
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return server, port
            except OSError:
                pass
        if time.monotonic() > deadline:
            server.kill()
            raise SystemExit("the server did not start within 60 s")
        time.sleep(0.05)


# -- the clients -------------------------------------------------------------------------------
def load(port: int, key: str, asked: list[str], clients: int) -> dict[str, Any]:
    """``clients`` threads share ``asked`` out; each question is one POST locate."""
    shares = [asked[n::clients] for n in range(clients)]
    latencies: list[list[float]] = [[] for _ in range(clients)]
    errors: list[str] = []
    start = threading.Barrier(clients + 1)

    def connect() -> http.client.HTTPConnection:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.connect()
        # as curl and most HTTP clients do (http.client writes a request's headers and body apart)
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn

    def client(n: int) -> None:
        conn = connect()
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        start.wait()
        for question in shares[n]:
            body = json.dumps({"query": question, "k": 5})
            began = time.perf_counter()
            try:
                conn.request("POST", "/v1/forests/bench/locate", body=body, headers=headers)
                answer = conn.getresponse()
                data = answer.read()
                if answer.status != 200 or "results" not in json.loads(data):
                    errors.append(f"{answer.status} {data[:120]!r}")
            except (OSError, http.client.HTTPException, ValueError) as exc:
                errors.append(repr(exc))
                conn.close()
                conn = connect()
            latencies[n].append(time.perf_counter() - began)
        conn.close()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    start.wait()
    began, began_cpu = time.perf_counter(), time.process_time()
    for thread in threads:
        thread.join()
    wall, cpu = time.perf_counter() - began, time.process_time() - began_cpu
    flat = [x for share in latencies for x in share]
    return {"requests": len(flat), "wall": wall, "client_cpu": cpu, "latency": percentiles(flat), "errors": errors}


def direct(forest: Path, asked: list[str]) -> dict[str, Any]:
    vine = Vine(forest, writable=False)
    try:
        vine.locate("warm up")
        samples = []
        began, began_cpu = time.perf_counter(), time.process_time()
        for question in asked:
            started = time.perf_counter()
            wire(vine.locate(question, k=5))
            samples.append(time.perf_counter() - started)
        return {"requests": len(asked), "wall": time.perf_counter() - began, "cpu": time.process_time() - began_cpu,
                "latency": percentiles(samples)}
    finally:
        vine.close()


def server_cpu(pid: int) -> float:
    import psutil
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def server_rss_mb(pid: int) -> float:
    import psutil
    return psutil.Process(pid).memory_info().rss / (1024 * 1024)


# -- the run -----------------------------------------------------------------------------------
def build_forest(work: Path, size: int, reuse: bool) -> tuple[Path, dict[str, Any]]:
    root = work / "bench"  # the forest's name on the server is its folder's name
    if reuse and (root / "_derived" / "catalog.db").is_file():
        return root, generate(root, size, write_files=False)
    if root.exists():
        shutil.rmtree(root)
    init_forest(root, f"Bench {size}")
    data = generate(root, size)
    with Vine(root) as vine:
        vine.reindex()
        vine.read_session().heat.deposit(random.Random(7).sample(data["ids"], max(1, size // 100)), 0.3)
    return root, data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=2400, help="per configuration (default 2400)")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--work", help="where the forest goes (default: a temporary folder, removed after)")
    parser.add_argument("--reuse", action="store_true", help="with --work: the forest an earlier run left")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--port-file", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(Path(args.serve), Path(args.port_file))
        return 0

    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="bench-rest-"))
    work.mkdir(parents=True, exist_ok=True)
    home = work / "home"
    home.mkdir(exist_ok=True)
    os.environ.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), GIT_CONFIG_NOSYSTEM="1",
                      MONKEYLLM_HOME=str(home / "monkeyllm"))
    print(f"python {platform.python_version()}, {os.cpu_count()} cpu(s), load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    try:
        forest, data = build_forest(work, args.nodes, args.reuse)
        from monkeyllm_gardener.serve.keys import KeyStore
        store = KeyStore()
        store.path.unlink(missing_ok=True)
        key = store.add("bench")
        asked = questions(random.Random(7), data, args.requests)

        baseline = direct(forest, asked)
        server, port = start_server(forest, Path(os.environ["MONKEYLLM_HOME"]))
        try:
            load(port, key, asked[:100], 2)  # warm: the reader open, the catalog checked once
            rows = []
            for clients in (1, args.clients):
                cpu_before = server_cpu(server.pid)
                result = load(port, key, asked, clients)
                result["server_cpu"] = server_cpu(server.pid) - cpu_before
                result["clients"] = clients
                rows.append(result)
            rss = server_rss_mb(server.pid)
        finally:
            server.terminate()
            server.wait(timeout=30)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)

    print(f"# {args.nodes:,} nodes, {args.requests} locate calls per row; server RSS after {rss:.0f} MiB; "
          f"load average after {os.getloadavg()[0]:.1f}")
    print("\n| how | requests/s | p50 ms | p95 ms | server CPU ms/request | client CPU ms/request | errors |\n"
          "|---|---|---|---|---|---|---|")
    p50, p95 = baseline["latency"]
    print(f"| direct `Vine.locate` + `wire`, 1 thread | {baseline['requests'] / baseline['wall']:.0f} | {p50:.2f} | "
          f"{p95:.2f} | {baseline['cpu'] / baseline['requests'] * 1000:.2f} (in process) | | 0 |")
    for row in rows:
        p50, p95 = row["latency"]
        print(f"| REST, {row['clients']} client(s) | {row['requests'] / row['wall']:.0f} | {p50:.2f} | {p95:.2f} | "
              f"{row['server_cpu'] / row['requests'] * 1000:.2f} | {row['client_cpu'] / row['requests'] * 1000:.2f} | "
              f"{len(row['errors'])} |")
    for row in rows:
        for error in row["errors"][:5]:
            print(f"error ({row['clients']} clients): {error}")
    return 1 if any(row["errors"] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
