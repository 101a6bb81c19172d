"""`vine serve --forest DIR` over stdio, driven by the MCP SDK's own client as a real
subprocess: the tools an agent sees, answers equal to the Python calls', error
envelopes, durable writes, --readonly, images, and the command's bad arguments."""
from __future__ import annotations

import base64
import json
import signal
import subprocess
import time

import psutil
import pytest
from mcp import Client

from _mcp_helpers import STARTUP_SECONDS, VINE, answer_of, error_of, run, stdio_server
from monkeyllm_core import Vine, VineError
from monkeyllm_core.read.contract import wire
from monkeyllm_gardener.cli import main
from monkeyllm_gardener.curator.testing_server import ScriptedOpenAIServer, chat_completion
from monkeyllm_gardener.pipeline import Gardener
from monkeyllm_gardener.serve.tools import TOOLS

WRITE_TOOLS = {"plant", "graft", "tend"}

# Every read tool, with arguments that exercise it, and the same call on a Vine.
READ_CALLS = [
    ("locate", {"query": "exchange policy deadlines", "k": 3}, lambda v: v.locate("exchange policy deadlines", k=3)),
    ("look", {"id": "sales/orders-2026"}, lambda v: v.look("sales/orders-2026")),
    ("look", {"id": "sales/exchange-policy", "fields": ["summary"]},
     lambda v: v.look("sales/exchange-policy", fields=["summary"])),
    ("move", {"id": "sales/exchange-policy", "direction": "both"},
     lambda v: v.move("sales/exchange-policy", direction="both")),
    ("scan", {"parent_id": "_index", "filter": {"type": "dataset"}, "fields": ["id", "payload_type"],
              "recursive": True}, lambda v: v.scan("_index", filter={"type": "dataset"},
                                                   fields=["id", "payload_type"], recursive=True)),
    ("pick", {"id": "sales/exchange-policy", "section": "Deadlines"},
     lambda v: v.pick("sales/exchange-policy", section="Deadlines")),
    ("pick", {"id": "contracts/master-agreement"}, lambda v: v.pick("contracts/master-agreement")),
    ("sniff", {"terms": ["NF-4412"], "scope": "sales"}, lambda v: v.sniff(["NF-4412"], scope="sales")),
    ("query", {"id": "sales/orders-2026", "sql": "SELECT region, COUNT(*) AS n FROM orders GROUP BY region"},
     lambda v: v.query("sales/orders-2026", "SELECT region, COUNT(*) AS n FROM orders GROUP BY region")),
    ("harvest", {"query": "relatórios de exportação", "k": 2},
     lambda v: v.harvest("relatórios de exportação", k=2)),
]


def test_the_tools_carry_the_declared_schemas_and_descriptions(served_forest):
    async def session():
        async with Client(stdio_server("--forest", str(served_forest))) as client:
            return (await client.list_tools()).tools

    listed = run(session)
    assert [tool.name for tool in listed] == [name for name in TOOLS if name != "answer"]  # no model bound
    for tool in listed:
        assert tool.input_schema == TOOLS[tool.name].input_schema(), tool.name
        assert tool.description == TOOLS[tool.name].description
        assert tool.annotations.read_only_hint is (tool.name not in WRITE_TOOLS)


def test_every_read_answers_the_wire_json_of_the_python_call(served_forest):
    # the direct calls first, in a session of their own, so both sides start cold
    with Vine(served_forest, writable=False) as vine:
        expected = [call(vine) for _name, _args, call in READ_CALLS]

    async def session():
        async with Client(stdio_server("--forest", str(served_forest))) as client:
            return [await client.call_tool(name, args) for name, args, _call in READ_CALLS]

    for (name, _args, _call), result, direct in zip(READ_CALLS, run(session), expected):
        assert not result.is_error, (name, result.content)
        text = result.content[0].text
        if name == "query":  # the one answer that carries its own timing
            got = json.loads(text)
            assert got.pop("elapsed_ms") >= 0 and direct.pop("elapsed_ms") >= 0
            assert got == direct
        else:
            assert text == wire(direct), name
    assert "Relatórios" in result.content[0].text  # non-ASCII travels as itself, not as \\u escapes


def test_expected_failures_are_error_envelopes_and_the_server_goes_on(served_forest):
    with Vine(served_forest, writable=False) as vine, pytest.raises(VineError) as missing:
        vine.look("sales/no-such-node")

    async def session():
        async with Client(stdio_server("--forest", str(served_forest))) as client:
            return (await client.call_tool("look", {"id": "sales/no-such-node"}),
                    await client.call_tool("locate", {"q": "x"}),
                    await client.call_tool("query", {"id": "sales/orders-2026", "sql": "DELETE FROM orders"}),
                    await client.call_tool("look", {"id": "sales/exchange-policy", "forest": "acme"}),
                    await client.call_tool("look", {"id": "sales/exchange-policy", "fields": ["title"]}))

    not_found, unknown_argument, forbidden, no_forest_argument, after = run(session)
    assert error_of(not_found) == missing.value.envelope()["error"]
    assert error_of(unknown_argument)["message"] == "locate: unknown argument 'q'"
    assert error_of(forbidden)["code"] == "E_QUERY_FORBIDDEN"
    assert error_of(no_forest_argument)["message"] == "look: unknown argument 'forest'"  # one forest: no such argument
    assert answer_of(after) == {"id": "sales/exchange-policy", "title": "Exchange policy"}


def test_an_answered_plant_is_in_git_though_the_server_is_killed_at_once(served_forest):
    node = {"id": "people/okapi-keeper", "type": "entity", "parent": "people/_index", "title": "Okapi keeper",
            "summary": "Looks after the okapi at the zoo, 2026."}

    planted: dict = {}

    async def session():
        async with Client(stdio_server("--forest", str(served_forest))) as client:
            planted.update(answer_of(await client.call_tool("plant", {"node": node})))
            server = _served_process()
            server.kill()  # SIGKILL: no shutdown code runs
            server.wait(timeout=30)
    run(session)
    git = lambda *args: subprocess.run(["git", *args], cwd=served_forest, capture_output=True, text=True,  # noqa: E731
                                       check=True).stdout
    assert planted["id"] == "people/okapi-keeper" and planted["commit"] == git("rev-parse", "HEAD").strip()
    assert "title: Okapi keeper" in git("show", f"{planted['commit']}:people/okapi-keeper.md")
    assert "people/okapi-keeper" in git("show", f"{planted['commit']}:people/_index.md")
    with Vine(served_forest) as vine:  # no lock was left behind
        assert vine.look("people/okapi-keeper")["title"] == "Okapi keeper"


def _served_process() -> psutil.Process:
    children = [p for p in psutil.Process().children(recursive=True) if "serve" in p.cmdline()]
    assert len(children) == 1, children
    return children[0]


def test_a_readonly_server_offers_no_write_tool(served_forest):
    async def session():
        async with Client(stdio_server("--forest", str(served_forest), "--readonly")) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            refused = await client.call_tool("plant", {"node": {"id": "x/y", "title": "Y", "summary": "Y."}})
            listing = answer_of(await client.call_tool("forests", {}))
            return names, refused, listing

    names, refused, listing = run(session)
    assert not WRITE_TOOLS & set(names) and {"locate", "view", "close_session", "forests"} <= set(names)
    assert refused.is_error and "plant" in refused.content[0].text
    assert error_of(refused)["code"] == "E_READONLY"
    assert listing == {"forests": [{"name": "acme", "title": "Acme", "readonly": True}]}
    assert not (served_forest / "x" / "y.md").exists()


def test_view_returns_an_image_payload_as_image_content_up_to_6_mib(served_forest, tmp_path):
    from PIL import Image
    export = tmp_path / "export" / "photos"
    export.mkdir(parents=True)
    Image.new("RGB", (40, 30), (200, 30, 90)).save(export / "team_photo.png")
    Image.new("RGB", (1500, 1500), (10, 10, 10)).save(export / "poster.bmp")  # 6.4 MiB uncompressed
    report = Gardener(served_forest).adopt(tmp_path / "export", dest="media", jobs=1)
    assert not report.failed
    with Vine(served_forest, writable=False) as vine:
        small_id, = [n["id"] for n in vine.scan("media", recursive=True, fields=["id", "title"])["nodes"]
                     if n["title"] == "team photo"]
        png = vine.payload_path(small_id).read_bytes()
        big_id, = [n["id"] for n in vine.scan("media", recursive=True, fields=["id", "title"])["nodes"]
                   if n["title"] == "poster"]

    async def session():
        async with Client(stdio_server("--forest", str(served_forest))) as client:
            return (await client.call_tool("view", {"id": small_id}),
                    await client.call_tool("view", {"id": big_id}),
                    await client.call_tool("view", {"id": "sales/orders-2026"}))

    image, too_big, not_an_image = run(session)
    assert not image.is_error and [block.type for block in image.content] == ["image"]
    assert image.content[0].mime_type == "image/png" and base64.b64decode(image.content[0].data) == png
    error = error_of(too_big)
    assert error["code"] == "E_UNSUPPORTED" and "6.4 MiB, over view's 6 MiB cap" in error["message"]
    assert error_of(not_an_image)["message"] == "sales/orders-2026 has no image payload (its payload is sqlite)"


def test_an_unexpected_failure_is_an_error_result_and_the_server_keeps_serving(served_forest):
    # a hand-broken forest: a media passport whose payload is a folder, not a file
    with Vine(served_forest) as vine:
        vine.plant({"id": "media/_index", "title": "Media", "summary": "Photos."})
        vine.plant({"id": "media/broken", "type": "media", "parent": "media/_index", "title": "Broken",
                    "summary": "An image whose file was replaced by a folder."})
    passport = served_forest / "media" / "broken.md"
    passport.write_text(passport.read_text(encoding="utf-8").replace(
        "type: media\n", "type: media\npayload: _assets/broken.png\npayload_type: image\n"), encoding="utf-8")
    (served_forest / "media" / "_assets" / "broken.png").mkdir(parents=True)

    async def session():
        async with Client(stdio_server("--forest", str(served_forest))) as client:
            return (await client.call_tool("view", {"id": "media/broken"}),
                    await client.call_tool("look", {"id": "media/broken", "fields": ["title"]}))

    failed, after = run(session)
    error = error_of(failed)
    assert error == {"code": "E_INTERNAL", "message": "view: unexpected IsADirectoryError",
                     "hint": "The server logged the traceback on its stderr; report it."}
    assert answer_of(after) == {"id": "media/broken", "title": "Broken"}


@pytest.mark.parametrize("argv, line", [
    (["serve"], "error: vine serve needs exactly one of --forest DIR or --root DIR"),
    (["serve", "--forest", "{forest}", "--root", "{root}"], "error: vine serve needs exactly one of --forest DIR"),
    (["serve", "--forest", "{root}"], "error E_NOT_A_FOREST: {root} is not a forest"),
    (["serve", "--root", "{forest}/nothing"], "error E_NOT_FOUND: {forest}/nothing is not a folder"),
])
def test_bad_arguments_are_one_line_and_exit_2(served_forest, capsys, argv, line):
    fill = {"forest": str(served_forest), "root": str(served_forest.parent)}
    assert main([arg.format(**fill) for arg in argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith(line.format(**fill)) and captured.err.count("\n") == 1


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_the_stdio_server_cleanly(served_forest, tmp_path, stop):
    log = tmp_path / "serve.log"
    with open(log, "w", encoding="utf-8") as stderr:
        server = subprocess.Popen([VINE, "serve", "--forest", str(served_forest)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=stderr)
    deadline = time.monotonic() + STARTUP_SECONDS
    while "over MCP stdio" not in log.read_text(encoding="utf-8") and time.monotonic() < deadline:
        assert server.poll() is None, log.read_text(encoding="utf-8")
        time.sleep(0.05)
    server.send_signal(stop)
    out, _ = server.communicate(timeout=STARTUP_SECONDS)
    said = log.read_text(encoding="utf-8")
    assert server.returncode == 0 and out == b"", said
    assert said.splitlines() == ["vine serve: serving the forest acme over MCP stdio", "vine serve: stopped"]


def test_answer_is_offered_when_a_model_is_bound_and_answers_from_the_forest(served_forest):
    reply = chat_completion(json.dumps({"answer": "Retail returns close 30 days after the invoice date.",
                                        "evidence": ["sales/exchange-policy"]}))
    with ScriptedOpenAIServer(default_reply=reply) as model:
        params = stdio_server("--forest", str(served_forest))
        params.env.update({"MONKEYLLM_LLM_ENDPOINT": model.base_url, "MONKEYLLM_LLM_MODEL": "scripted-model"})

        async def session():
            async with Client(params) as client:
                names = [tool.name for tool in (await client.list_tools()).tools]
                result = await client.call_tool("answer", {"question": "what is the deadline to exchange?"})
                return names, result

        names, result = run(session)
        asked = model.requests
    assert "answer" in names
    out = answer_of(result)
    assert out["answer"].startswith("Retail returns close 30 days") and out["evidence"] == ["sales/exchange-policy"]
    assert out["harvest"]["results"] and len(asked) == 1
