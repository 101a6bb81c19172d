"""`vine serve --transport http` as users run it: MCP at /mcp and REST at /v1 on one
port, both behind the same keys once a key exists, and `answer` over both when a
model is bound. Real subprocesses, real HTTP on 127.0.0.1, the SDK's own client."""
from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from _mcp_helpers import VINE, answer_of, http_server, run
from monkeyllm_gardener.curator.testing_server import ScriptedOpenAIServer, chat_completion


def add_key(*args: str) -> str:
    done = subprocess.run([VINE, "keys", "add", *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def post(base: str, path: str, body: dict, key: str | None = None) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.fixture
def keys_home(tmp_path, monkeypatch):
    monkeypatch.setenv("MONKEYLLM_HOME", str(tmp_path / "home"))  # the server subprocess inherits it
    return tmp_path / "home"


def test_once_a_key_exists_mcp_and_rest_both_need_it(served_forest, tmp_path, keys_home):
    ana = add_key("ana")
    bob = add_key("bob", "--forest", "elsewhere", "--read-only")
    with http_server(tmp_path / "serve.log", "--forest", str(served_forest)) as url:
        base = url.removesuffix("/mcp")
        status, body = post(base, "/v1/forests/acme/locate", {"query": "exchange policy"})
        assert status == 401 and body["error"]["code"] == "E_UNAUTHORIZED"
        status, body = post(base, "/v1/forests/acme/locate", {"query": "exchange policy"}, ana)
        assert status == 200 and body["results"][0]["id"] == "sales/exchange-policy"
        assert post(base, "/v1/forests/acme/look", {"id": "sales/price-list"}, bob)[0] == 404

        async def over_mcp(key):
            http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"} if key else {})
            async with http, Client(streamable_http_client(url, http_client=http)) as client:
                return answer_of(await client.call_tool("locate", {"query": "exchange policy", "k": 1}))

        assert run(lambda: over_mcp(ana))["results"][0]["id"] == "sales/exchange-policy"
        with pytest.raises(Exception):  # the SDK client cannot even start a session without the key
            run(lambda: over_mcp(None))
        # because the key check answers /mcp itself, before the SDK sees the request
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        status, body = post(base, "/mcp", initialize)
        assert status == 401 and body["error"]["code"] == "E_UNAUTHORIZED"


def test_answer_over_rest_when_a_model_is_bound(served_forest, tmp_path, keys_home, monkeypatch):
    reply = chat_completion(json.dumps({"answer": "Retail returns close 30 days after the invoice date.",
                                        "evidence": ["sales/exchange-policy"]}))
    with ScriptedOpenAIServer(default_reply=reply) as model:
        monkeypatch.setenv("MONKEYLLM_LLM_ENDPOINT", model.base_url)
        monkeypatch.setenv("MONKEYLLM_LLM_MODEL", "scripted-model")
        with http_server(tmp_path / "serve.log", "--forest", str(served_forest)) as url:
            base = url.removesuffix("/mcp")
            status, body = post(base, "/v1/forests/acme/answer", {"question": "what is the exchange deadline?"})
            assert status == 200, body
            assert body["evidence"] == ["sales/exchange-policy"] and body["sources"][0]["title"] == "Exchange policy"
            status, body = post(base, "/v1/forests/acme/answer", {"question": 7})
            assert status == 400 and body["error"]["code"] == "E_SCHEMA"
    assert len(model.requests) == 1


def test_without_a_model_answer_is_not_a_primitive(served_forest, tmp_path, keys_home, monkeypatch):
    monkeypatch.delenv("MONKEYLLM_LLM_ENDPOINT", raising=False)
    with http_server(tmp_path / "serve.log", "--forest", str(served_forest)) as url:
        status, body = post(url.removesuffix("/mcp"), "/v1/forests/acme/answer", {"question": "x"})
    assert status == 404 and body["error"]["code"] == "E_NOT_FOUND"
