"""The transport-free part of `vine serve`: argument checks, one thread per forest,
durable writes, read-only serving, client sessions, forests by name."""
from __future__ import annotations

import subprocess

import pytest

from monkeyllm_core import Vine, VineError, init_forest
from monkeyllm_gardener.serve.forests import Forests
from monkeyllm_gardener.serve.tools import TOOLS


@pytest.fixture
def forests(served_forest):
    """The test forest served alone (``--forest``), closed after the test."""
    served = Forests(forest=served_forest)
    yield served
    served.close()


def error_of(call):
    with pytest.raises(VineError) as caught:
        call()
    return caught.value.envelope()["error"]


def test_every_tool_schema_names_the_vine_parameters():
    import inspect
    for name, tool in TOOLS.items():
        method = getattr(Vine, name, None)
        if method is None or name in ("plant", "graft", "tend", "query"):
            continue
        params = [p for p in inspect.signature(method).parameters if p != "self"]
        assert list(tool.properties) == params, name
    assert list(TOOLS["query"].properties) == ["id", "sql"] and list(TOOLS["graft"].properties) == ["id", "patch"]
    assert all(tool.description.strip() for tool in TOOLS.values())


@pytest.mark.parametrize("args, message", [
    ({"q": "x"}, "locate: unknown argument 'q'"),
    ({}, "locate: missing argument 'query'"),
    ({"query": 3}, "locate: query must be a string, not 3"),
    ({"query": "x", "k": True}, "locate: k must be an integer, not True"),
    ({"query": "x", "scope": "trees"}, "locate: scope must be one of all, branches, bananas, not 'trees'"),
    (["x"], "locate: the arguments must be a JSON object, not list"),
])
def test_a_wrong_argument_object_is_e_schema_before_any_work(forests, args, message):
    error = error_of(lambda: forests.service(None).call("locate", args))
    assert error["code"] == "E_SCHEMA" and error["message"] == message


def test_an_unknown_primitive_is_e_not_found_naming_the_real_ones(forests):
    error = error_of(lambda: forests.service(None).call("drop_table", {}))
    assert error["code"] == "E_NOT_FOUND" and "locate" in error["hint"] and "harvest" in error["hint"]


def test_an_answered_write_is_on_the_branch_and_the_next_read_sees_it(served_forest, forests):
    service = forests.service("acme")
    service.call("locate", {"query": "okapi"})  # the reader is open before the write
    planted = service.call("plant", {"node": {"id": "people/okapi-keeper", "type": "entity",
                                              "title": "Okapi keeper", "summary": "Looks after the okapi."}})
    ref = subprocess.run(["git", "rev-parse", "HEAD"], cwd=served_forest, capture_output=True, text=True)
    assert planted["commit"] == ref.stdout.strip()
    assert service.call("locate", {"query": "okapi keeper"})["results"][0]["id"] == "people/okapi-keeper"
    assert not (served_forest / ".vine.lock").exists() or (served_forest / ".vine.lock").read_text() == ""


def test_a_write_meeting_another_writer_is_e_locked_and_reads_go_on(served_forest, forests):
    service = forests.service(None)
    with Vine(served_forest):  # a `vine sync` holding the lock
        error = error_of(lambda: service.call("graft", {"id": "sales/price-list",
                                                        "patch": {"set_frontmatter": {"summary": "New."}}}))
        assert error["code"] == "E_LOCKED"
        assert service.call("look", {"id": "sales/price-list"})["title"] == "Price list"


def test_a_readonly_server_refuses_writes(served_forest):
    forests = Forests(forest=served_forest, readonly=True)
    try:
        error = error_of(lambda: forests.service(None).call("tend", {"id": "sales/orders-2026",
                                                                      "sql": "DELETE FROM orders"}))
        assert error["code"] == "E_READONLY"
        assert forests.service(None).call("query", {"id": "sales/orders-2026",
                                                    "sql": "SELECT COUNT(*) FROM orders"})["rows"] == [[4]]
    finally:
        forests.close()


def test_two_clients_hunt_apart(forests):
    service = forests.service(None)
    service.call("pick", {"id": "sales/exchange-policy"}, client="a")
    service.call("look", {"id": "people/ana-ribeiro"}, client="b")
    closed = service.call("close_session", {"success": True, "answer_nodes": ["sales/exchange-policy"]},
                          client="a")
    assert closed["metrics"]["calls"] == 1


def test_a_root_offers_its_forests_by_name_and_nothing_outside(served_forest, tmp_path):
    root = served_forest.parent
    init_forest(root / "beta", "Beta forest")
    (root / "notes").mkdir()  # a folder that is not a forest
    forests = Forests(root=root)
    try:
        assert forests.listing() == {"forests": [{"name": "acme", "title": "Acme", "readonly": False},
                                                 {"name": "beta", "title": "Beta forest", "readonly": False}]}
        assert forests.listing(allowed=["beta"])["forests"][0]["name"] == "beta"
        assert forests.service("beta").call("locate", {"query": "anything"})["results"] == []
        for name in ("notes", "../acme", "..", "acme/../beta", None):
            assert error_of(lambda: forests.service(name))["code"] in ("E_NOT_FOUND", "E_SCHEMA")
    finally:
        forests.close()


def test_an_inline_forest_runs_on_its_callers_thread_and_refuses_another(served_forest):
    """Served alone over stdio, the forest's one thread is the event loop's: its calls
    run where they are made, and a call from a second thread is refused rather than
    letting two threads share its SQLite connections."""
    import asyncio
    import threading

    forests = Forests(forest=served_forest, inline=True)
    try:
        service = forests.service(None)
        ran_on = []
        looked = asyncio.run(service.arun_on_thread(lambda reader: ran_on.append(threading.get_ident())
                                                    or reader.look("sales/price-list")))
        assert looked["title"] == "Price list" and ran_on == [threading.get_ident()]
        assert service.call("locate", {"query": "price list"})["results"][0]["id"] == "sales/price-list"
        assert error_of(lambda: service.call("locate", {"q": "x"}))["code"] == "E_SCHEMA"

        refused = []
        other = threading.Thread(target=lambda: refused.append(
            pytest.raises(RuntimeError, service.call, "look", {"id": "sales/price-list"})))
        other.start()
        other.join(30)
        assert refused and "another thread" in str(refused[0].value)
        assert not [t for t in threading.enumerate() if t.name.startswith("forest-")]  # no forest thread made
    finally:
        forests.close()


def test_only_a_forest_served_alone_runs_inline(served_forest):
    with pytest.raises(ValueError, match="a root's forests each get a thread"):
        Forests(root=served_forest.parent, inline=True)
