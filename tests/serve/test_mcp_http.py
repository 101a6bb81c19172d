"""MCP over streamable HTTP on 127.0.0.1, with the SDK's own client: `vine serve
--transport http` as a subprocess (sessions that stay apart, a root of forests,
`vine sync` while a client reads), and `build_app` in-process with a middleware
standing where the key check will stand (principals, extra routes)."""
from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import threading

import anyio
import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from starlette.middleware import Middleware
from starlette.responses import JSONResponse
from starlette.routing import Route

from _mcp_helpers import VINE, answer_of, error_of, http_server, run
from monkeyllm_core import Vine, init_forest
from monkeyllm_gardener.cli import main
from monkeyllm_gardener.serve.forests import Forests
from monkeyllm_gardener.serve.http_app import build_app
from monkeyllm_gardener.serve.mcp_server import SESSION_HEADER
from monkeyllm_gardener.serve.principal import SCOPE_KEY, Principal, principal_of


def traces(forest):
    """Each trace file's calls, in order, as a sorted list of tuples."""
    return sorted(tuple(json.loads(line).get("call", "outcome") for line in path.read_text().splitlines())
                  for path in (forest / "_derived" / "traces").glob("*.jsonl"))


@pytest.mark.parametrize("how", ["mcp-session-id", "session-header"])
def test_two_clients_hunt_in_sessions_of_their_own(served_forest, tmp_path, how):
    """Handshake-era clients are told apart by their MCP session id; 2026-07-28 clients,
    which have none, by the MonkeyLLM-Session header they send."""
    def client(url, name):
        if how == "mcp-session-id":
            return contextlib.nullcontext(), Client(url, mode="legacy")
        http = create_mcp_http_client(headers={SESSION_HEADER: name})
        return http, Client(streamable_http_client(url, http_client=http))

    with http_server(tmp_path / "serve.log", "--forest", str(served_forest)) as url:
        async def hunts():
            (http_a, a), (http_b, b) = client(url, "hunt-a"), client(url, "hunt-b")
            async with http_a, http_b, a, b:
                await a.call_tool("pick", {"id": "sales/exchange-policy"})
                await b.call_tool("look", {"id": "people/ana-ribeiro"})
                await b.call_tool("look", {"id": "sales/price-list"})
                closed_a = answer_of(await a.call_tool("close_session", {"success": True,
                                                                         "answer_nodes": ["sales/exchange-policy"]}))
                closed_b = answer_of(await b.call_tool("close_session", {"success": False, "answer_nodes": []}))
                await a.call_tool("look", {"id": "sales/_index"})  # a's next hunt
                return closed_a, closed_b
        closed_a, closed_b = run(hunts)
    assert closed_a["metrics"]["calls"] == 1 and closed_b["metrics"]["calls"] == 2
    assert closed_a["session"] != closed_b["session"]
    assert traces(served_forest) == [("look",), ("look", "look", "outcome"), ("pick", "outcome")]


def test_a_root_serves_each_forest_by_the_forest_argument(served_forest, tmp_path):
    beta = init_forest(served_forest.parent / "beta", "Beta forest")
    with Vine(beta) as vine:
        vine.plant({"id": "okapis", "type": "note", "title": "Okapis", "summary": "Okapis of the beta forest."})

    with http_server(tmp_path / "serve.log", "--root", str(served_forest.parent)) as url:
        async def session():
            async with Client(url) as client:
                locate = next(t for t in (await client.list_tools()).tools if t.name == "locate")
                forests_tool = next(t for t in (await client.list_tools()).tools if t.name == "forests")
                return (locate.input_schema, forests_tool.input_schema,
                        answer_of(await client.call_tool("forests", {})),
                        answer_of(await client.call_tool("locate", {"query": "okapis", "forest": "beta"})),
                        answer_of(await client.call_tool("locate", {"query": "okapis", "forest": "acme"})),
                        await client.call_tool("locate", {"query": "okapis"}),
                        await client.call_tool("locate", {"query": "okapis", "forest": "../beta"}),
                        answer_of(await client.call_tool("graft", {"id": "okapis", "forest": "beta", "patch": {
                            "set_frontmatter": {"summary": "Okapis of the beta forest, counted."}}})))
        schema, forests_schema, listing, in_beta, in_acme, no_forest, outside, grafted = run(session)

    assert schema["properties"]["forest"]["type"] == "string" and schema["required"] == ["query", "forest"]
    assert "forest" not in forests_schema["properties"]
    assert listing == {"forests": [{"name": "acme", "title": "Acme", "readonly": False},
                                   {"name": "beta", "title": "Beta forest", "readonly": False}]}
    assert [r["id"] for r in in_beta["results"]] == ["okapis"] and in_acme["results"] == []
    assert error_of(no_forest) == {"code": "E_SCHEMA", "message": "forest must name one of this server's forests",
                                   "hint": "Forests: acme, beta."}
    assert error_of(outside)["code"] == "E_NOT_FOUND"
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=beta, capture_output=True, text=True).stdout.strip()
    assert grafted["commit"] == head


def test_vine_sync_of_the_served_forest_runs_while_a_client_reads(served_forest, tmp_path):
    export = tmp_path / "export"
    (export / "zoo").mkdir(parents=True)
    (export / "zoo" / "okapi.md").write_text("# Okapi\n\nThe okapi eats leaves at dawn.\n", encoding="utf-8")
    adopt = subprocess.run([VINE, "adopt", str(export), "--forest", str(served_forest)], capture_output=True,
                           text=True)
    assert adopt.returncode == 0, adopt.stderr

    with http_server(tmp_path / "serve.log", "--forest", str(served_forest)) as url:
        async def session():
            async with Client(url) as client:
                before = answer_of(await client.call_tool("locate", {"query": "giraffe"}))
                okapi_id = answer_of(await client.call_tool("locate", {"query": "okapi"}))["results"][0]["id"]
                (export / "zoo" / "giraffe.md").write_text("# Giraffe\n\nThe giraffe sleeps standing up.\n",
                                                           encoding="utf-8")
                (export / "zoo" / "okapi.md").write_text("# Okapi\n\nThe okapi eats leaves at dusk.\n",
                                                         encoding="utf-8")
                reads, done = [], anyio.Event()

                async def keep_reading():
                    while not done.is_set():
                        reads.append(await client.call_tool("look", {"id": "sales/exchange-policy",
                                                                     "fields": ["title"]}))

                async with anyio.create_task_group() as group:
                    group.start_soon(keep_reading)
                    sync = await anyio.run_process([VINE, "sync", "--forest", str(served_forest)], check=False)
                    done.set()
                after = answer_of(await client.call_tool("locate", {"query": "giraffe"}))
                okapi = answer_of(await client.call_tool("pick", {"id": okapi_id}))
                return before, sync, reads, after, okapi
        before, sync, reads, after, okapi = run(session)

    assert sync.returncode == 0, sync.stderr.decode()
    assert before["results"] == [] and reads
    assert all(answer_of(r) == {"id": "sales/exchange-policy", "title": "Exchange policy"} for r in reads)
    assert [r["title"] for r in after["results"]] == ["Giraffe"]
    assert "at dusk" in okapi["body"]


# -- build_app in-process: a principal on the scope, routes beside /mcp ------------------------
class PrincipalFromHeader:
    """Stands where auth.py's key check will: the principal a header names."""
    PRINCIPALS = {"beta-reader": Principal("beta-reader", forest="beta", read_only=True)}

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            name = dict(scope["headers"]).get(b"x-test-principal", b"").decode()
            if name in self.PRINCIPALS:
                scope = {**scope, SCOPE_KEY: self.PRINCIPALS[name]}
        await self.app(scope, receive, send)


@pytest.fixture
def app_server(served_forest):
    init_forest(served_forest.parent / "beta", "Beta forest")
    forests = Forests(root=served_forest.parent)
    acme = forests.service("acme")

    async def whoami(request):
        return JSONResponse({"principal": principal_of(request.scope).name})

    app = build_app(forests, extra_routes=[Route("/v1/whoami", whoami)], middleware=[Middleware(PrincipalFromHeader)])
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]})
    thread.start()
    try:
        while not server.started:
            assert thread.is_alive(), "uvicorn did not start"
            thread.join(0.05)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(60)
        listener.close()
    assert not thread.is_alive()
    with pytest.raises(Exception, match="no longer served"):  # the app's lifespan closed the forests
        acme.call("locate", {"query": "x"})


def test_the_principal_on_the_scope_is_checked_on_every_call(app_server):
    async def session():
        async with create_mcp_http_client(headers={"x-test-principal": "beta-reader"}) as http:
            async with Client(streamable_http_client(f"{app_server}/mcp", http_client=http)) as client:
                return (answer_of(await client.call_tool("forests", {})),
                        await client.call_tool("locate", {"query": "x", "forest": "acme"}),
                        await client.call_tool("locate", {"query": "x", "forest": "zeta"}),
                        await client.call_tool("locate", {"query": "x"}),
                        await client.call_tool("plant", {"forest": "beta", "node": {
                            "id": "x", "title": "X", "summary": "X."}}),
                        answer_of(await client.call_tool("locate", {"query": "x", "forest": "beta"})))
    listing, other_forest, unknown_forest, no_forest, write, read = run(session)
    assert listing == {"forests": [{"name": "beta", "title": "Beta forest", "readonly": False}]}
    assert error_of(other_forest) == {"code": "E_NOT_FOUND", "message": "no forest named 'acme' here",
                                      "hint": "This key is for the forest 'beta'."}
    assert "acme" not in json.dumps(error_of(unknown_forest)) and "acme" not in json.dumps(error_of(no_forest))
    assert error_of(write)["code"] == "E_READONLY"
    assert read["results"] == []


def test_extra_routes_share_the_port_and_the_middleware(app_server):
    with httpx2.Client() as http:
        assert http.get(f"{app_server}/v1/whoami").json() == {"principal": "local"}
        assert http.get(f"{app_server}/v1/whoami", headers={"x-test-principal": "beta-reader"}).json() == {
            "principal": "beta-reader"}


def test_a_host_beyond_loopback_is_refused_until_keys_exist(served_forest, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("MONKEYLLM_HOME", str(tmp_path / "no-keys"))
    assert main(["serve", "--forest", str(served_forest), "--transport", "http", "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error E_KEYS: refusing to serve on 0.0.0.0 without a key")
    assert "vine keys add NAME" in err and err.count("\n") == 1
