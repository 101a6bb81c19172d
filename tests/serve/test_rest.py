"""REST over real HTTP on 127.0.0.1: a Starlette app of the REST routes behind the
bearer-key middleware, served by uvicorn in a thread, called with http.client.
Keys are made and revoked through the real `vine keys` CLI."""
from __future__ import annotations

import hashlib
import http.client
import json
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest
import uvicorn
from starlette.applications import Starlette

from monkeyllm_core import Vine, VineError, init_forest
from monkeyllm_core.read.contract import wire
from monkeyllm_gardener.serve import rest
from monkeyllm_gardener.serve.auth import auth_middleware
from monkeyllm_gardener.serve.forests import Forests
from monkeyllm_gardener.serve.keys import KeyStore
from monkeyllm_gardener.testing import isolated_env

JSON_TYPE = "application/json; charset=utf-8"


# -- the server and the client ------------------------------------------------------------------
class Client:
    def __init__(self, port: int, key: str | None = None) -> None:
        self.port, self.key = port, key

    def request(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, http.client.HTTPMessage, bytes]:
        sent = {"Host": f"127.0.0.1:{self.port}"}
        if self.key:
            sent["Authorization"] = f"Bearer {self.key}"
        if raw is None and body is not None:
            raw = json.dumps(body).encode()
        if raw is not None:
            sent["Content-Type"] = "application/json"
        sent.update(headers or {})
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, path, body=raw, headers=sent)
            answer = conn.getresponse()
            return answer.status, answer.headers, answer.read()
        finally:
            conn.close()

    def post(self, path: str, body: Any = None, **kwargs: Any) -> tuple[int, dict[str, Any]]:
        status, headers, data = self.request("POST", path, body, **kwargs)
        assert headers["Content-Type"] == JSON_TYPE
        return status, json.loads(data)

    def get(self, path: str, **kwargs: Any) -> tuple[int, dict[str, Any]]:
        status, headers, data = self.request("GET", path, **kwargs)
        assert headers["Content-Type"] == JSON_TYPE
        return status, json.loads(data)


@contextmanager
def serving(forests: Forests, store: KeyStore, *, require_key: bool = False, extra: list | None = None) -> Iterator[int]:
    """The REST routes (and ``extra`` routes) behind the auth middleware, on a free loopback port."""
    app = Starlette(routes=[*(extra or []), *rest.routes(forests)],
                    middleware=[auth_middleware(store, require_key=require_key)])
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and
    # without it a response's headers and body (two writes) wait on a delayed ACK (40 ms)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
        forests.close()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def vine(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = isolated_env(home, {"MONKEYLLM_HOME": str(home / "monkeyllm")})
    return subprocess.run([sys.executable, "-m", "monkeyllm_gardener.cli", *args], env=env,
                          capture_output=True, text=True, timeout=60)


def new_key(home: Path, name: str, *options: str) -> str:
    done = vine(home, "keys", "add", name, *options)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def store(home: Path) -> KeyStore:
    return KeyStore(home / "monkeyllm" / "keys.json")


def head_of(forest: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=forest, capture_output=True, text=True,
                          check=True).stdout.strip()


# -- answers ------------------------------------------------------------------------------------
READS = [
    ("locate", {"query": "exchange policy deadlines", "k": 3}, lambda v: v.locate("exchange policy deadlines", k=3)),
    ("look", {"id": "sales/exchange-policy"}, lambda v: v.look("sales/exchange-policy")),
    ("move", {"id": "sales/_index", "rel": "children"}, lambda v: v.move("sales/_index", rel="children")),
    ("scan", {"parent_id": "_index", "filter": {"type": "dataset"}, "recursive": True},
     lambda v: v.scan("_index", filter={"type": "dataset"}, recursive=True)),
    ("pick", {"id": "sales/exchange-policy", "section": "Deadlines"},
     lambda v: v.pick("sales/exchange-policy", section="Deadlines")),
    ("pick", {"id": "contracts/master-agreement"}, lambda v: v.pick("contracts/master-agreement")),
    ("sniff", {"terms": ["NF-4412"]}, lambda v: v.sniff(["NF-4412"])),
    ("query", {"id": "sales/orders-2026", "sql": "SELECT COUNT(*) FROM orders"},
     lambda v: v.query("sales/orders-2026", "SELECT COUNT(*) FROM orders")),
    ("harvest", {"query": "relatórios de exportação", "k": 2}, lambda v: v.harvest("relatórios de exportação", k=2)),
]


@pytest.mark.parametrize("primitive, args, direct", READS, ids=[f"{r[0]}-{i}" for i, r in enumerate(READS)])
def test_a_read_answers_exactly_the_direct_calls_json(served_forest, store, primitive, args, direct):
    with Vine(served_forest, writable=False) as reader:
        expected = direct(reader)
    with serving(Forests(forest=served_forest), store) as port:
        # a session of its own: session heat from an earlier call must not move the scores
        status, headers, body = Client(port).request("POST", f"/v1/forests/acme/{primitive}", args,
                                                     headers={"MonkeyLLM-Session": "fresh"})
    assert (status, headers["Content-Type"]) == (200, JSON_TYPE)
    answer = json.loads(body)
    assert body.decode("utf-8") == wire(answer)  # compact, non-ASCII kept as UTF-8
    if "elapsed_ms" in expected:  # query's own clock: the one field two runs cannot share
        assert isinstance(answer.pop("elapsed_ms"), float) and expected.pop("elapsed_ms") is not None
    assert answer == expected


def test_a_write_is_committed_before_its_answer_and_the_next_read_sees_it(served_forest, store):
    with serving(Forests(forest=served_forest), store) as port:
        client = Client(port)
        status, planted = client.post("/v1/forests/acme/plant", {"node": {
            "id": "people/okapi-keeper", "type": "entity", "title": "Okapi keeper", "summary": "Looks after the okapi."}})
        assert status == 200 and planted["commit"] == head_of(served_forest)
        status, found = client.post("/v1/forests/acme/locate", {"query": "okapi keeper"})
        assert status == 200 and found["results"][0]["id"] == "people/okapi-keeper"


def test_the_forests_route_lists_what_the_key_may_see(served_forest, store, home):
    init_forest(served_forest.parent / "beta", "Beta forest")
    everything = new_key(home, "ops")
    beta_only = new_key(home, "beta-reader", "--forest", "beta", "--read-only")
    with serving(Forests(root=served_forest.parent), store) as port:
        assert Client(port, everything).get("/v1/forests") == (200, {"forests": [
            {"name": "acme", "title": "Acme", "readonly": False},
            {"name": "beta", "title": "Beta forest", "readonly": False}]})
        assert Client(port, beta_only).get("/v1/forests") == (200, {"forests": [
            {"name": "beta", "title": "Beta forest", "readonly": False}]})


# -- 401 ----------------------------------------------------------------------------------------
def test_with_keys_no_key_a_bad_key_and_a_revoked_key_are_401(served_forest, store, home):
    key = new_key(home, "ana")
    with serving(Forests(forest=served_forest), store) as port:
        locate = ("/v1/forests/acme/locate", {"query": "exchange"})
        assert Client(port, key).post(*locate)[0] == 200
        for client, message in ((Client(port), "this server needs a key"),
                                (Client(port, key[:-1] + ("A" if key[-1] != "A" else "B")), "the key was not accepted"),
                                (Client(port, "mk_" + "x" * 43), "the key was not accepted")):
            status, headers, body = client.request("POST", *locate)
            error = json.loads(body)["error"]
            assert (status, error["code"], error["message"]) == (401, "E_UNAUTHORIZED", message)
            assert headers["WWW-Authenticate"].startswith("Bearer")
            assert "vine keys add" in error["hint"]
        status, _, _ = Client(port, key).request("GET", "/v1/forests", headers={"Authorization": f"Basic {key}"})
        assert status == 401

        assert vine(home, "keys", "revoke", "ana").returncode == 0  # the running server re-reads the store
        status, headers, body = Client(port, key).request("POST", *locate)
        assert status == 401 and json.loads(body)["error"]["message"] == "the key was not accepted"


def test_a_server_beyond_loopback_stays_closed_when_its_last_key_is_revoked(served_forest, store, home):
    key = new_key(home, "only")
    with serving(Forests(forest=served_forest), store, require_key=True) as port:
        assert Client(port, key).get("/v1/forests")[0] == 200
        vine(home, "keys", "revoke", "only")
        assert Client(port).get("/v1/forests")[0] == 401
        assert Client(port, key).get("/v1/forests")[0] == 401


def test_the_middleware_passes_a_streamed_response_on_as_it_is_sent(served_forest, store, home):
    """MCP streams its answers: the auth layer must not hold a response until it ends."""
    import anyio.to_thread
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    key = new_key(home, "ana")
    first_read = threading.Event()

    async def stream(request):
        async def chunks():
            yield b"first"
            # the second part is sent only once the client has read the first
            assert await anyio.to_thread.run_sync(first_read.wait, 20), "the first chunk never reached the client"
            yield b"second"
        return StreamingResponse(chunks(), media_type="text/plain")

    with serving(Forests(forest=served_forest), store, extra=[Route("/stream", stream)]) as port:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/stream", headers={"Authorization": f"Bearer {key}"})
        answer = conn.getresponse()
        assert answer.status == 200 and answer.read(5) == b"first"
        first_read.set()
        assert answer.read() == b"second"
        conn.close()


def test_a_corrupt_key_store_refuses_every_request_instead_of_opening(served_forest, store, home):
    key = new_key(home, "ana")
    with serving(Forests(forest=served_forest), store) as port:
        store.path.write_text('{"version": 1, "keys": ', encoding="utf-8")  # a hand edit gone wrong
        for client in (Client(port), Client(port, key)):
            status, body = client.get("/v1/forests")
            assert status == 503 and body["error"]["code"] == "E_KEYS"
            assert str(store.path) not in json.dumps(body)  # the server's paths stay in its log


def test_without_keys_only_a_loopback_host_is_answered(served_forest, store):
    with serving(Forests(forest=served_forest), store) as port:
        assert Client(port).get("/v1/forests")[0] == 200
        assert Client(port).get("/v1/forests", headers={"Host": f"localhost:{port}"})[0] == 200
        status, body = Client(port).get("/v1/forests", headers={"Host": "attacker.example"})
        assert status == 421 and body["error"]["code"] == "E_UNAUTHORIZED"


# -- 403 ----------------------------------------------------------------------------------------
def test_a_read_only_key_cannot_write_and_nothing_is_committed(served_forest, store, home):
    reader = new_key(home, "reader", "--read-only")
    before = head_of(served_forest)
    with serving(Forests(forest=served_forest), store) as port:
        client = Client(port, reader)
        status, body = client.post("/v1/forests/acme/graft", {"id": "sales/price-list",
                                                              "patch": {"set_frontmatter": {"summary": "New."}}})
        assert status == 403 and body["error"]["code"] == "E_READONLY"
        # refused before the body is read: an over-sized write is still 403, not 413
        status, body = client.post("/v1/forests/acme/plant", raw=b"{" + b" " * (2 << 20) + b"}")
        assert status == 403
        assert client.post("/v1/forests/acme/look", {"id": "sales/price-list"})[0] == 200
    assert head_of(served_forest) == before


def test_a_readonly_server_answers_e_readonly_on_writes(served_forest, store):
    with serving(Forests(forest=served_forest, readonly=True), store) as port:
        status, body = Client(port).post("/v1/forests/acme/tend", {"id": "sales/orders-2026",
                                                                   "sql": "DELETE FROM orders WHERE 1"})
        assert status == 403 and body["error"]["code"] == "E_READONLY"
        status, body = Client(port).post("/v1/forests/acme/query", {"id": "sales/orders-2026",
                                                                    "sql": "SELECT COUNT(*) FROM orders"})
        assert status == 200 and body["rows"] == [[4]]


def test_sql_the_principal_may_not_run_is_403_and_wrong_sql_400(served_forest, store):
    with serving(Forests(forest=served_forest), store) as port:
        client = Client(port)
        status, body = client.post("/v1/forests/acme/query", {"id": "sales/orders-2026",
                                                              "sql": "SELECT load_extension('x')"})
        assert (status, body["error"]["code"]) == (403, "E_QUERY_FORBIDDEN")
        status, body = client.post("/v1/forests/acme/query", {"id": "sales/orders-2026",
                                                              "sql": "SELECT total_value FROM orders"})
        assert (status, body["error"]["code"]) == (400, "E_QUERY_INVALID")


# -- 404 ----------------------------------------------------------------------------------------
def test_a_key_scoped_to_one_forest_finds_no_other(served_forest, store, home):
    init_forest(served_forest.parent / "beta", "Beta forest")
    beta_only = new_key(home, "beta-only", "--forest", "beta")
    with serving(Forests(root=served_forest.parent), store) as port:
        client = Client(port, beta_only)
        status, body = client.post("/v1/forests/acme/look", {"id": "sales/exchange-policy"})
        assert (status, body["error"]["code"]) == (404, "E_NOT_FOUND")
        assert "Acme" not in json.dumps(body) and "exchange" not in json.dumps(body)
        assert client.request("GET", "/v1/forests/acme/payload/sales/orders-2026")[0] == 404
        assert client.post("/v1/forests/beta/locate", {"query": "anything"}) == (200, {"results": [], "truncated": False})


@pytest.mark.parametrize("path, body, says", [
    ("/v1/forests/acme/look", {"id": "sales/no-such-node"}, "no node 'sales/no-such-node'"),
    ("/v1/forests/nowhere/look", {"id": "sales/exchange-policy"}, "no forest named 'nowhere' here"),
    ("/v1/forests/acme/drop_table", {}, "no primitive named 'drop_table'"),
    ("/v1/forests/acme/view", {"id": "x"}, "no primitive named 'view'"),  # MCP only, on purpose
    ("/v1/forests/acme/payload", {}, "no primitive named 'payload'"),
    ("/v1/forest/acme/look", {"id": "x"}, "no route /v1/forest/acme/look"),
])
def test_what_does_not_exist_is_404_with_the_envelope(served_forest, store, path, body, says):
    with serving(Forests(forest=served_forest), store) as port:
        status, answer = Client(port).post(path, body)
    assert (status, answer["error"]["code"], answer["error"]["message"]) == (404, "E_NOT_FOUND", says)


# -- 409 ----------------------------------------------------------------------------------------
def test_a_write_meeting_another_writer_is_409_and_reads_go_on(served_forest, store):
    with serving(Forests(forest=served_forest), store) as port:
        client = Client(port)
        with Vine(served_forest):  # a `vine sync` holding the lock
            status, body = client.post("/v1/forests/acme/plant", {"node": {
                "id": "people/late", "type": "entity", "title": "Late", "summary": "Planted after the sync."}})
            assert (status, body["error"]["code"]) == (409, "E_LOCKED")
            assert client.post("/v1/forests/acme/look", {"id": "sales/price-list"})[0] == 200
        assert client.post("/v1/forests/acme/plant", {"node": {  # the retry, once the lock is free
            "id": "people/late", "type": "entity", "title": "Late", "summary": "Planted after the sync."}})[0] == 200


# -- 4xx for what is not a call -----------------------------------------------------------------
def test_bad_bodies_get_a_clear_4xx(served_forest, store):
    with serving(Forests(forest=served_forest), store) as port:
        client = Client(port)
        cases = [
            (client.post("/v1/forests/acme/locate", raw=b'{"query": "x",}'), 400, "E_SCHEMA",
             "the request body is not JSON (Expecting property name enclosed in double quotes at line 1 column 15)"),
            (client.post("/v1/forests/acme/locate", raw=b"\xff\xfe{"), 400, "E_SCHEMA", "the request body is not JSON"),
            (client.post("/v1/forests/acme/locate", raw=b"[" * 100_000), 400, "E_SCHEMA", "the request body is not JSON"),
            (client.post("/v1/forests/acme/locate", ["x"]), 400, "E_SCHEMA",
             "locate: the arguments must be a JSON object, not list"),
            (client.post("/v1/forests/acme/locate", {"query": "x", "forest": "acme"}), 400, "E_SCHEMA",
             "locate: unknown argument 'forest'"),
            (client.post("/v1/forests/acme/locate"), 400, "E_SCHEMA", "locate: missing argument 'query'"),
            (client.post("/v1/forests/acme/locate", raw=b'{"query": "x"}', headers={"Content-Type": "text/plain"}),
             415, "E_MEDIA_TYPE", "the request body is text/plain, not application/json"),
            (client.get("/v1/forests/acme/locate"), 405, "E_METHOD",
             "/v1/forests/acme/locate answers POST, not GET"),
        ]
        for (status, body), want_status, code, message in cases:
            assert (status, body["error"]["code"], body["error"]["message"]) == (want_status, code, message)


def test_a_body_over_1_mib_is_413_whether_declared_or_streamed(served_forest, store):
    with serving(Forests(forest=served_forest), store) as port:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.putrequest("POST", "/v1/forests/acme/locate")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str((1 << 20) + 1))
        conn.endheaders()  # the body is never sent: the declared length is enough
        answer = conn.getresponse()
        error = json.loads(answer.read())["error"]
        conn.close()
        assert (answer.status, error["code"]) == (413, "E_TOO_LARGE")
        assert error["message"] == "the request body is over 1 MiB (1048577 bytes or more)"

        chunks = [b'{"query": "' + b"x" * ((1 << 16) - 11)] + [b"x" * (1 << 16)] * 15 + [b'"}']
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", "/v1/forests/acme/locate", body=iter(chunks), encode_chunked=True,
                     headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
        answer = conn.getresponse()
        error = json.loads(answer.read())["error"]
        conn.close()
        assert (answer.status, error["code"]) == (413, "E_TOO_LARGE")
        assert Client(port).post("/v1/forests/acme/locate", {"query": "x" * 1000})[0] == 200  # under: answered


def test_a_slow_call_holds_neither_the_event_loop_nor_another_forest(served_forest, store):
    init_forest(served_forest.parent / "beta", "Beta forest")
    slow = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c"
    finished: list[str] = []
    with serving(Forests(root=served_forest.parent), store) as port:
        client = Client(port)

        def run_slow() -> None:
            status, body = client.post("/v1/forests/acme/query", {"id": "sales/orders-2026", "sql": slow})
            finished.append(f"{status} {body['error']['code']}")

        thread = threading.Thread(target=run_slow)
        thread.start()
        time.sleep(0.3)  # the slow query is running on acme's thread
        assert client.post("/v1/forests/beta/locate", {"query": "x"})[0] == 200
        assert client.get("/v1/forests")[0] == 200
        assert finished == []  # both answered while acme's query still ran
        thread.join()
    assert finished == ["504 E_TIMEOUT"]


# -- sessions -----------------------------------------------------------------------------------
def test_two_keys_hunt_apart_and_one_key_can_name_its_sessions(served_forest, store, home):
    ana, bob = new_key(home, "ana"), new_key(home, "bob")
    with serving(Forests(forest=served_forest), store) as port:
        close = ("/v1/forests/acme/close_session", {"success": True, "answer_nodes": ["sales/exchange-policy"]})
        Client(port, ana).post("/v1/forests/acme/pick", {"id": "sales/exchange-policy"})
        Client(port, bob).post("/v1/forests/acme/look", {"id": "people/ana-ribeiro"})
        Client(port, bob).post("/v1/forests/acme/look", {"id": "sales/price-list"})
        assert Client(port, ana).post(*close)[1]["metrics"]["calls"] == 1
        assert Client(port, bob).post(*close)[1]["metrics"]["calls"] == 2

        Client(port, ana).post("/v1/forests/acme/look", {"id": "sales/price-list"},
                               headers={"MonkeyLLM-Session": "hunt-1"})
        Client(port, ana).post("/v1/forests/acme/look?session=hunt-2", {"id": "sales/price-list"})
        Client(port, ana).post("/v1/forests/acme/look?session=hunt-2", {"id": "people/ana-ribeiro"})
        assert Client(port, ana).post(close[0] + "?session=hunt-1", close[1])[1]["metrics"]["calls"] == 1
        assert Client(port, ana).post(*close, headers={"MonkeyLLM-Session": "hunt-2"})[1]["metrics"]["calls"] == 2
        assert Client(port, ana).post(*close)[1]["metrics"]["calls"] == 0  # the key's own session: fresh

        status, body = Client(port, ana).post(close[0] + "?session=a", close[1], headers={"MonkeyLLM-Session": "b"})
        assert (status, body["error"]["code"]) == (400, "E_SCHEMA")
        status, body = Client(port, ana).post(*close, headers={"MonkeyLLM-Session": "../../etc"})
        assert (status, body["error"]["message"]) == (400, "'../../etc' is not a session name")


# -- payloads -----------------------------------------------------------------------------------
def test_the_payload_route_streams_a_datasets_db(served_forest, store):
    with Vine(served_forest, writable=False) as reader:
        db = reader.payload_path("sales/orders-2026")
        payload_hash = reader.read("sales/orders-2026").frontmatter["payload_hash"]
    with serving(Forests(forest=served_forest), store) as port:
        status, headers, body = Client(port).request("GET", "/v1/forests/acme/payload/sales/orders-2026")
    assert (status, headers["Content-Type"]) == (200, "application/vnd.sqlite3")
    assert body == db.read_bytes() and body.startswith(b"SQLite format 3\x00")
    assert hashlib.sha256(body).hexdigest() == payload_hash == headers["X-MonkeyLLM-Payload-Hash"]
    assert headers["Content-Length"] == str(len(body))


def test_the_payload_route_never_leaves_the_forest(served_forest, store, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("the server's secret", encoding="utf-8")
    with Vine(served_forest, writable=False) as reader:
        db = reader.payload_path("sales/orders-2026")
    db.unlink()
    db.symlink_to(secret)  # a payload that is a link out of the forest
    with serving(Forests(forest=served_forest), store) as port:
        client = Client(port)
        for path in ("/v1/forests/acme/payload/sales/orders-2026",
                     "/v1/forests/acme/payload/sales/exchange-policy",  # a node with no payload
                     "/v1/forests/acme/payload/sales/no-such-node",
                     "/v1/forests/acme/payload/../../secret.txt",
                     "/v1/forests/acme/payload/%2e%2e/%2e%2e/secret.txt"):
            status, _, body = client.request("GET", path)
            assert status in (400, 404), path
            assert b"secret" not in body.replace(b"secret.txt", b"")
        status, body = client.get("/v1/forests/acme/payload/sales/exchange-policy")
        assert body["error"] == {"code": "E_NOT_FOUND", "message": "sales/exchange-policy has no payload",
                                 "hint": "Datasets and media nodes carry a payload file; pick reads a node's body."}


def test_a_missing_payload_is_404_in_the_words_query_uses(served_forest, store):
    with Vine(served_forest, writable=False) as reader:
        reader.payload_path("sales/orders-2026").unlink()  # a fresh `git clone`: payloads never enter git
        with pytest.raises(VineError) as query_says:
            reader.query("sales/orders-2026", "SELECT COUNT(*) FROM orders")
    with serving(Forests(forest=served_forest), store) as port:
        status, body = Client(port).get("/v1/forests/acme/payload/sales/orders-2026")
    assert status == 404 and body == query_says.value.envelope()
    assert "vine snapshot restore" in body["error"]["hint"]
