"""scan: a branch's children filtered by passport fields, served from the catalog alone."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from monkeyllm_core import Vine, VineError
from monkeyllm_core.read.contract import tokens_of


def scanned(response):
    return [n["id"] for n in response["nodes"]]


def test_direct_children_with_the_default_fields(shared_reader):
    response = shared_reader.scan("sales/_index")
    assert scanned(response) == ["sales/exchange-policy", "sales/exchange-policy-2027", "sales/orders-2026",
                                 "sales/pipeline/_index", "sales/price-list", "sales/warehouse", "sales/wide-ledger"]
    assert response["nodes"][0] == {"id": "sales/exchange-policy", "type": "note", "title": "Exchange policy",
                                    "summary": "Return and exchange windows per channel, with invoice rules."}
    assert response["truncated"] is False


def test_the_primitives_md_example_recursive_datasets_tagged_sales(shared_reader):
    response = shared_reader.scan("_index", filter={"type": "dataset", "tags_any": ["sales"]},
                                  fields=["id", "summary", "payload_type"], recursive=True, limit=20)
    assert scanned(response) == ["sales/orders-2026", "sales/pipeline/prospects-q2"]
    assert list(response["nodes"][0]) == ["id", "summary", "payload_type"]
    assert response["nodes"][0]["payload_type"] == "sqlite"


@pytest.mark.parametrize("filter_, expected", [
    ({"type": ["document", "entity"]}, ["contracts/master-agreement", "people/ana-ribeiro"]),
    ({"tags_all": ["sales", "policy"]}, ["sales/exchange-policy", "sales/exchange-policy-2027"]),
    ({"tags_any": ["LEGAL", "pipeline"]}, ["contracts/master-agreement", "sales/pipeline/prospects-q2"]),
    ({"confidence_below": 0.8}, ["contracts/master-agreement"]),
    ({"source": "ingest"}, ["contracts/master-agreement"]),
    ({"payload_type": "sqlite", "tags_any": "ledger"}, ["sales/orders-2026"]),
    ({"kind": "branch"}, ["catalog/_index", "contracts/_index", "people/_index", "relatorios/_index",
                          "sales/_index", "sales/pipeline/_index"]),
])
def test_each_filter(shared_reader, filter_, expected):
    assert scanned(shared_reader.scan("_index", filter=filter_, fields=["id"], recursive=True, limit=100)) == expected


def test_updated_after_and_before_are_strict(shared_reader):
    response = shared_reader.scan("catalog", filter={"updated_after": "2026-10-15", "updated_before": "2026-12-15"},
                                  fields=["updated"], limit=100)
    assert {n["updated"] for n in response["nodes"]} == {"2026-11-15"}
    assert len(response["nodes"]) == 5


def test_limit_and_truncated(shared_reader):
    response = shared_reader.scan("catalog/_index", fields=["id"], limit=10)
    assert len(response["nodes"]) == 10 and response["truncated"] is True
    assert shared_reader.scan("catalog/_index", fields=["id"], limit=60)["truncated"] is False


def test_json_columns_come_back_parsed_and_heat_is_computed(shared_reader):
    (node,) = shared_reader.scan("sales", filter={"tags_all": ["policy"], "type": "note"},
                                 fields=["tags", "aliases", "trail", "heat", "stale"], limit=1)["nodes"]
    assert node == {"id": "sales/exchange-policy", "tags": ["sales", "policy"], "aliases": ["returns policy"],
                    "trail": ["_index", "sales/_index"], "heat": 0.0, "stale": False}


def test_nodes_come_hottest_first(reader):
    reader.close_session(True, ["catalog/item-59"])
    response = reader.scan("catalog/_index", fields=["heat"], limit=3)
    assert response["nodes"][0] == {"id": "catalog/item-59", "heat": 0.1}
    assert scanned(response)[1:] == ["catalog/item-00", "catalog/item-01"]


def test_the_budget_drops_the_tail_and_says_to_ask_for_less(shared_reader):
    response = shared_reader.scan("_index", fields=["title", "summary", "tags", "trail", "coverage"],
                                  recursive=True, limit=1000)
    assert tokens_of(response) <= 800 and response["truncated"] is True and "fewer fields" in response["hint"]


@pytest.mark.parametrize("kwargs, needle", [
    ({"filter": {"color": "red"}}, "unknown filter"), ({"filter": ["type"]}, "mapping"),
    ({"filter": {"tags_any": 3}}, "tags_any"), ({"filter": {"updated_after": "last week"}}, "ISO date"),
    ({"filter": {"confidence_below": "high"}}, "confidence_below"), ({"fields": ["body"]}, "unknown field"),
    ({"limit": 0}, "limit"), ({"limit": True}, "limit"),
])
def test_bad_arguments_are_e_schema(shared_reader, kwargs, needle):
    with pytest.raises(VineError) as err:
        shared_reader.scan("sales/_index", **kwargs)
    assert err.value.code == "E_SCHEMA" and needle in err.value.message


def test_a_banana_is_no_parent_and_a_missing_branch_is_not_found(shared_reader):
    with pytest.raises(VineError) as err:
        shared_reader.scan("sales/price-list")
    assert err.value.code == "E_SCHEMA"
    with pytest.raises(VineError) as err:
        shared_reader.scan("nowhere")
    assert err.value.code == "E_NOT_FOUND"


def node_files_opened(forest, call: str) -> dict:
    """Run ``call`` (a scan on ``vine``) in a real interpreter whose audit hook sees
    every file Python opens: the node files it opened, and what it returned."""
    script = textwrap.dedent(f"""
        import json, sys
        from monkeyllm_core import Vine
        vine = Vine({str(forest)!r}, writable=False)
        vine.scan("catalog/_index")  # the first read checks the catalog, opens the heat store
        opened = []
        sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == "open" else None)
        result = {call}
        print(json.dumps({{"opened": [p for p in opened if p.endswith(".md")], "nodes": result["nodes"]}}))
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    return json.loads(proc.stdout)


def test_no_node_file_is_opened(read_forest):
    out = node_files_opened(read_forest, 'vine.scan("_index", filter={"tags_any": ["sales"]}, '
                                         'fields=["id", "tags", "trail"], recursive=True)')
    assert out["opened"] == [] and len(out["nodes"]) > 5


def test_scan_opens_no_node_file(read_forest):
    opened = []
    watching = []

    def audit(event, args):  # the interpreter reports every file it opens
        if watching and event == "open" and str(args[0]).endswith(".md"):
            opened.append(str(args[0]))

    sys.addaudithook(audit)  # hooks cannot be removed: this one only records while `watching`
    with Vine(read_forest, writable=False) as reader:
        reader.scan("_index")  # the first call may index; the ones after serve from the catalog
        watching.append(True)
        response = reader.scan("_index", fields=["id", "type", "tags"], recursive=True, limit=100)
        watching.clear()
    assert len(response["nodes"]) > 10 and opened == []


def test_outline_is_a_field_with_the_same_headings_look_shows(shared_reader):
    """scan serves outline from the catalog, as look computes it from the body, for every node."""
    nodes = [node for branch in ("sales", "contracts", "people", "relatorios", "_index")
             for node in shared_reader.scan(branch, fields=["id", "outline"], limit=200)["nodes"]]
    assert len(nodes) > 12
    for node in nodes:
        digest = shared_reader.look(node["id"], fields=["outline"])
        if "outline" in digest:  # a banana's digest
            assert node["outline"] == digest["outline"], node["id"]
        assert isinstance(node["outline"], list)
    outlines = {n["id"]: n["outline"] for n in nodes}
    assert outlines["sales/exchange-policy"] == shared_reader.look("sales/exchange-policy")["outline"] != []


def test_outline_comes_from_the_catalog_with_no_file_opened(read_forest):
    out = node_files_opened(read_forest, 'vine.scan("sales", fields=["id", "outline"])')
    assert out["opened"] == []
    assert {n["id"]: n["outline"] for n in out["nodes"]}["sales/exchange-policy"] == ["Channels", "Deadlines",
                                                                                      "Invoice rules"]


def test_a_write_and_a_hand_edit_both_reach_the_outline(read_forest):
    with Vine(read_forest) as writer:
        writer.plant({"id": "sales/returns-desk", "type": "note", "title": "Returns desk",
                      "summary": "Who staffs the returns desk.", "body": "# Returns desk\n\n## Staff\n\nA.\n\n## Hours\n\nB.\n"})
    with Vine(read_forest, writable=False) as reader:
        nodes = {n["id"]: n for n in reader.scan("sales", fields=["outline"], limit=50)["nodes"]}
        assert nodes["sales/returns-desk"]["outline"] == ["Staff", "Hours"]
    path = read_forest / "sales" / "returns-desk.md"
    path.write_text(path.read_text(encoding="utf-8").replace("## Hours", "## Opening hours"), encoding="utf-8")
    subprocess.run(["git", "-C", str(read_forest), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam",
                    "hand edit"], check=True, capture_output=True)
    with Vine(read_forest, writable=False) as reader:  # another commit: the catalog is rebuilt from the files
        nodes = {n["id"]: n for n in reader.scan("sales", fields=["outline"], limit=50)["nodes"]}
        assert nodes["sales/returns-desk"]["outline"] == ["Staff", "Opening hours"]


def test_a_catalog_of_the_layout_before_outline_is_rebuilt(read_forest):
    db_path = read_forest / "_derived" / "catalog.db"
    con = sqlite3.connect(db_path)
    con.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    con.execute("UPDATE nodes SET outline = NULL")
    con.commit()
    con.close()
    with Vine(read_forest, writable=False) as reader:
        nodes = {n["id"]: n for n in reader.scan("sales", fields=["outline"], limit=50)["nodes"]}
    assert nodes["sales/exchange-policy"]["outline"] == ["Channels", "Deadlines", "Invoice rules"]
