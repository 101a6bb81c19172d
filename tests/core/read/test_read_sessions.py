"""Sessions and pheromone: traces, session heat, decay, close_session (concepts.md)."""
from __future__ import annotations

import json
import sqlite3
import time

import pytest

from monkeyllm_core import Vine, VineError
from monkeyllm_core.read.contract import tokens_of
from monkeyllm_core.read.heat import TRAILS_PATH

DAY = 86400.0


def trace_lines(vine):
    return [json.loads(line) for line in vine.read_session().trace_path.read_text().splitlines()]


def heat_of(vine, ids):
    """Heat as responses show it (4 decimals: a deposit a moment ago has decayed by 1e-11)."""
    return {node: round(value, 4) for node, value in vine.read_session().heat_of(ids).items()}


def persistent_heat(root, node):
    with sqlite3.connect(root / TRAILS_PATH) as db:
        row = db.execute("SELECT heat FROM heat WHERE node = ?", (node,)).fetchone()
    return None if row is None else row[0]


def plant_heat(root, node, heat, age_seconds, table="heat", session=None):
    """A heat row as a hunt long ago would have left it (the reader creates the file first)."""
    with sqlite3.connect(root / TRAILS_PATH) as db:
        if table == "heat":
            db.execute("INSERT OR REPLACE INTO heat VALUES (?, ?, ?)", (node, heat, time.time() - age_seconds))
        else:
            db.execute("INSERT OR REPLACE INTO session_heat VALUES (?, ?, ?, ?)",
                       (session, node, heat, time.time() - age_seconds))


def test_a_walked_hunt_closes_with_its_trail_metrics_and_no_shortcut_when_one_covers_it(reader):
    responses = [reader.locate("exchange policy"), reader.look("sales/_index"),
                 reader.move("sales/_index", rel="children"), reader.pick("sales/exchange-policy")]
    session = reader.read_session().id
    outcome = reader.close_session(True, ["sales/exchange-policy"])
    assert outcome["session"] == session and isinstance(outcome["ts"], float)
    assert outcome["outcome"] == {"success": True, "answer_nodes": ["sales/exchange-policy"]}
    assert outcome["metrics"] == {"hops_to_banana": 4, "trail_len": 2,
                                  "tokens_to_banana": sum(tokens_of(r) for r in responses), "calls": 4,
                                  "answer_nodes": ["sales/exchange-policy"]}
    # the entry, sales/_index, already links to the answer (part-of): nothing to suggest
    assert outcome["suggest_shortcuts"] == []
    heat = heat_of(reader, ["sales/_index", "sales/exchange-policy", "catalog/_index"])
    assert heat == {"sales/_index": 0.1, "sales/exchange-policy": 0.1, "catalog/_index": 0.0}


def test_a_long_hunt_with_no_shortcut_suggests_one(reader):
    reader.look("people/_index")
    reader.look("people/ana-ribeiro")
    reader.move("people/ana-ribeiro")
    reader.look("catalog/item-40")  # a detour: not on the winning trail
    reader.pick("sales/exchange-policy")
    outcome = reader.close_session(True, ["sales/exchange-policy"])
    assert outcome["metrics"]["hops_to_banana"] == 5 and outcome["metrics"]["trail_len"] == 3
    assert outcome["suggest_shortcuts"] == ["sales/exchange-policy"]
    trail = ["people/_index", "people/ana-ribeiro", "sales/exchange-policy"]
    assert heat_of(reader, [*trail, "catalog/item-40"]) == {**dict.fromkeys(trail, 0.1),
                                                                         "catalog/item-40": 0.0}


def test_a_short_hunt_suggests_nothing_and_a_failed_one_leaves_no_heat(reader):
    reader.locate("price list")
    reader.pick("sales/price-list")
    assert reader.close_session(True, ["sales/price-list"])["suggest_shortcuts"] == []
    for _ in range(4):
        reader.look("sales/orders-2026")
    failed = reader.close_session(False, ["sales/orders-2026"])
    assert failed["suggest_shortcuts"] == [] and failed["outcome"]["success"] is False
    assert reader.read_session().heat_of(["sales/orders-2026"]) == {"sales/orders-2026": 0.0}


def test_closing_starts_a_fresh_session_and_ends_the_old_ones_scent(reader):
    reader.pick("sales/price-list")
    first = reader.read_session()
    assert first.heat_of(["sales/price-list"])["sales/price-list"] == pytest.approx(0.1)
    reader.close_session(False, [])
    second = reader.read_session()
    assert second.id != first.id and second.heat_of(["sales/price-list"])["sales/price-list"] == 0.0
    reader.locate("orders")
    assert [line["call"] for line in trace_lines(reader)] == ["locate"]
    assert first.trace_path.read_text().count("\n") == 2  # the pick and the outcome record


def test_every_read_call_is_traced_errors_included(reader):
    reader.locate("orders", k=2)
    reader.look("sales/orders-2026", fields=["summary"])
    with pytest.raises(VineError):
        reader.pick("sales/nope")
    reader.scan("sales")
    reader.move("sales/orders-2026", direction="in")
    lines = trace_lines(reader)
    assert [line["call"] for line in lines] == ["locate", "look", "pick", "scan", "move"]
    assert lines[0]["args"] == {"query": "orders", "k": 2, "scope": "all", "type_filter": None}
    assert lines[0]["focus"] is None and "sales/orders-2026" in lines[0]["returned"]
    assert lines[1]["focus"] == "sales/orders-2026" and lines[1]["tokens"] > 0
    assert lines[2]["error"] == "E_NOT_FOUND" and lines[2]["returned"] == []
    assert all(line["session"] == reader.read_session().id and line["ms"] >= 0 for line in lines)


def test_heat_saturates_at_one(reader):
    for _ in range(12):
        reader.pick("sales/price-list")
        reader.close_session(True, ["sales/price-list"])
    assert reader.read_session().heat_of(["sales/price-list"])["sales/price-list"] == pytest.approx(1.0)


def test_heat_decays_by_half_every_half_life(reader, read_forest):
    reader.locate("orders")  # opens the heat store
    plant_heat(read_forest, "sales/orders-2026", 0.8, 30 * DAY)
    assert reader.read_session().heat_of(["sales/orders-2026"])["sales/orders-2026"] == pytest.approx(0.4, abs=1e-4)


def test_the_half_life_comes_from_ranger_yaml(read_forest):
    (read_forest / "_meta" / "ranger.yaml").write_text("half_life_days: 10\npromote_floor: 0.2\n")
    with Vine(read_forest, writable=False) as reader:
        reader.locate("orders")
        plant_heat(read_forest, "sales/orders-2026", 0.8, 10 * DAY)
        assert reader.look("sales/orders-2026")["stats"]["heat"] == pytest.approx(0.4, abs=1e-4)


def test_heat_under_a_hundredth_is_cold_and_its_row_is_deleted(reader, read_forest):
    reader.locate("orders")
    plant_heat(read_forest, "sales/orders-2026", 0.015, 30 * DAY)  # now 0.0075
    assert reader.look("sales/orders-2026")["stats"]["heat"] == 0.0
    reader.close_session(False, [])
    assert persistent_heat(read_forest, "sales/orders-2026") is None


def test_session_heat_expires_after_the_ttl(read_forest, monkeypatch):
    monkeypatch.setenv("MONKEYLLM_SESSION", "hunt-ttl")
    with Vine(read_forest, writable=False) as reader:
        reader.locate("orders")
        plant_heat(read_forest, "sales/orders-2026", 0.5, 25 * 3600, table="session_heat", session="hunt-ttl")
        assert reader.look("sales/orders-2026")["stats"]["heat"] == 0.0
    (read_forest / "_meta" / "ranger.yaml").write_text("session_ttl_hours: 48\n")
    plant_heat(read_forest, "sales/orders-2026", 0.5, 25 * 3600, table="session_heat", session="hunt-ttl")
    with Vine(read_forest, writable=False) as reader:
        assert reader.look("sales/orders-2026")["stats"]["heat"] == 0.5


@pytest.mark.parametrize("text", ["half_life_days: -3\n", "session_ttl_hours: soon\n", "[1, 2]\n", "a: [\n"])
def test_a_bad_ranger_yaml_is_e_schema(read_forest, text):
    (read_forest / "_meta" / "ranger.yaml").write_text(text)
    with Vine(read_forest, writable=False) as reader:
        with pytest.raises(VineError) as err:
            reader.locate("orders")
    assert err.value.code == "E_SCHEMA" and "ranger.yaml" in err.value.message


def test_one_session_can_span_vines_and_processes(read_forest, monkeypatch):
    monkeypatch.setenv("MONKEYLLM_SESSION", "hunt-42")
    with Vine(read_forest, writable=False) as first:
        first.pick("sales/orders-2026")
    with Vine(read_forest, writable=False) as second:
        (result,) = second.locate("orders 2026 ledger region", k=1)["results"]
        assert result["heat"] == 0.1  # the first Vine's pick, same session
        outcome = second.close_session(True, ["sales/orders-2026"])
    assert outcome["session"] == "hunt-42" and outcome["metrics"]["calls"] == 2
    assert (read_forest / "_derived" / "traces" / "hunt-42.jsonl").is_file()


def test_a_session_id_that_is_not_one_is_e_schema(read_forest, monkeypatch):
    monkeypatch.setenv("MONKEYLLM_SESSION", "../../etc")
    with Vine(read_forest, writable=False) as reader:
        with pytest.raises(VineError) as err:
            reader.locate("orders")
    assert err.value.code == "E_SCHEMA"


def test_close_session_wants_a_list_of_ids(reader):
    with pytest.raises(VineError) as err:
        reader.close_session(True, "sales/orders-2026")
    assert err.value.code == "E_SCHEMA"


def test_a_bad_alpha_is_e_schema(reader):
    reader.alpha = -1
    with pytest.raises(VineError) as err:
        reader.locate("orders")
    assert err.value.code == "E_SCHEMA"


def test_fortifying_a_link_warms_both_ends_without_a_commit(read_forest):
    with Vine(read_forest) as vine:
        result = vine.graft("sales/exchange-policy", {"add_links": [{"rel": "related-to",
                                                                     "target": "sales/price-list"}]})
        assert result["commit"] is None and result["fortified"] == [{"rel": "related-to",
                                                                     "target": "sales/price-list"}]
    with Vine(read_forest, writable=False) as reader:
        heat = heat_of(reader, ["sales/exchange-policy", "sales/price-list", "sales/_index"])
    assert heat == {"sales/exchange-policy": 0.1, "sales/price-list": 0.1, "sales/_index": 0.0}


def test_a_discovered_shortcut_is_minted_at_confidence_half(read_forest):
    with Vine(read_forest) as vine:
        vine.graft("people/_index", {"add_links": [{"rel": "discovered-shortcut",
                                                    "target": "sales/exchange-policy"}]})
        links = vine.read("people/_index").frontmatter["links"]
    assert links == [{"rel": "discovered-shortcut", "target": "sales/exchange-policy", "confidence": 0.5}]


def test_reads_go_on_without_memory_when_derived_cannot_be_written(read_forest):
    (read_forest / TRAILS_PATH).mkdir()          # no database can be opened there
    (read_forest / "_derived" / "traces").write_text("")  # and no trace folder made
    with Vine(read_forest, writable=False) as reader:
        assert reader.pick("sales/price-list")["truncated"] is False
        assert reader.locate("price list")["results"][0]["heat"] == 0.0
        assert reader.close_session(True, ["sales/price-list"])["metrics"]["calls"] == 0


def test_query_is_traced_like_every_read(reader):
    reader.query("sales/orders-2026", "SELECT region, COUNT(*) FROM orders GROUP BY region")
    with pytest.raises(VineError):
        reader.query("sales/orders-2026", "SELECT nope FROM orders")
    calls = trace_lines(reader)
    assert [(c["call"], c["focus"], c.get("error")) for c in calls] == [
        ("query", "sales/orders-2026", None), ("query", "sales/orders-2026", "E_QUERY_INVALID")]


def test_a_pick_that_answered_with_the_map_has_not_harvested_yet(reader):
    reader.locate("master agreement")
    reader.pick("contracts/master-agreement")                      # over 4000 tokens: the outline
    reader.pick("contracts/master-agreement", section="Payment terms")
    outcome = reader.close_session(True, ["contracts/master-agreement"])
    assert outcome["metrics"]["hops_to_banana"] == 3


def test_two_clients_of_one_vine_keep_their_hunts_apart(reader):
    with reader.client_session("agent-a"):
        reader.pick("sales/exchange-policy")  # warms its trail for agent-a only
        a_trace = reader.read_session().trace_path
    with reader.client_session("agent-b"):
        b_session = reader.read_session()
        assert heat_of(reader, ["sales/exchange-policy"]) == {"sales/exchange-policy": 0.0}
        reader.look("people/ana-ribeiro")
    with reader.client_session("agent-a"):
        assert heat_of(reader, ["sales/exchange-policy"]) == {"sales/exchange-policy": 0.1}
        outcome = reader.close_session(True, ["sales/exchange-policy"])
        assert outcome["metrics"]["calls"] == 1  # agent-b's look is not in agent-a's hunt
        assert reader.read_session().trace_path != a_trace  # a fresh session for agent-a
    with reader.client_session("agent-b"):
        assert reader.read_session() is b_session  # untouched by agent-a's close
    assert [line["call"] for line in map(json.loads, b_session.trace_path.read_text().splitlines())] == ["look"]
    assert reader.read_session() is not b_session  # outside any client: the Vine's own session


def test_clients_sharing_a_heat_scope_warm_each_other_but_keep_their_own_traces(reader):
    with reader.client_session("forager-1", heat_scope="troop-1") as one:
        reader.pick("sales/exchange-policy")
    with reader.client_session("forager-2", heat_scope="troop-1") as two:
        # forager-1's pick warms forager-2's ranking: one scope of session heat
        assert heat_of(reader, ["sales/exchange-policy"]) == {"sales/exchange-policy": 0.1}
        located = reader.locate("exchange policy", k=1)["results"][0]
        assert located["id"] == "sales/exchange-policy" and located["heat"] == pytest.approx(0.1)
        reader.pick("sales/price-list")
    with reader.client_session("outsider"):
        assert heat_of(reader, ["sales/exchange-policy", "sales/price-list"]) == {
            "sales/exchange-policy": 0.0, "sales/price-list": 0.0}
    assert one.id != two.id and one.heat_scope == two.heat_scope == "troop-1"
    calls_of = {s.id: [line["call"] for line in map(json.loads, s.trace_path.read_text().splitlines())]
                for s in (one, two)}
    assert calls_of == {one.id: ["pick"], two.id: ["locate", "pick"]}
    # only the closing client's trail becomes persistent heat; the scope's session heat ends with it
    with reader.client_session("forager-2"):
        outcome = reader.close_session(True, ["sales/price-list"])
    assert outcome["session"] == two.id and outcome["metrics"]["calls"] == 2
    assert persistent_heat(reader.root, "sales/price-list") == pytest.approx(0.1)
    assert persistent_heat(reader.root, "sales/exchange-policy") is None
    with reader.client_session("forager-1"):
        assert heat_of(reader, ["sales/exchange-policy"]) == {"sales/exchange-policy": 0.0}


def test_close_session_with_reads_the_calls_it_is_given_instead_of_the_trace(reader):
    reader.look("people/ana-ribeiro")
    # a walk the trace does not hold (another forager's trace does): people/_index -> ana -> the policy
    walked = [{"call": "move", "focus": "people/_index", "returned": ["people/ana-ribeiro"], "tokens": 40},
              {"call": "move", "focus": "people/ana-ribeiro", "returned": ["sales/exchange-policy"], "tokens": 60},
              {"call": "pick", "focus": "sales/exchange-policy", "returned": ["sales/exchange-policy"],
               "tokens": 300}]
    outcome = reader.close_session_with(True, ["sales/exchange-policy"], calls=walked)
    assert outcome["metrics"] == {"hops_to_banana": 3, "trail_len": 3, "tokens_to_banana": 400, "calls": 3,
                                  "answer_nodes": ["sales/exchange-policy"]}
    trail = ["people/_index", "people/ana-ribeiro", "sales/exchange-policy"]
    assert {node: persistent_heat(reader.root, node) for node in trail} == dict.fromkeys(trail, pytest.approx(0.1))
