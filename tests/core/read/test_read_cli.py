"""vine locate | look | move | scan | pick | sniff | harvest: the real command, in a subprocess."""
from __future__ import annotations

import json
import os

import pytest

from monkeyllm_core import Vine
from monkeyllm_core.read.contract import wire
from _read_forest import vine_cli

CALLS = [
    (["locate", "which region closed the most orders in 2026?", "--k", "3"],
     lambda v: v.locate("which region closed the most orders in 2026?", k=3)),
    (["locate", "sales", "--scope", "branches", "--type", "branch"],
     lambda v: v.locate("sales", scope="branches", type_filter=["branch"])),
    (["look", "sales/orders-2026"], lambda v: v.look("sales/orders-2026")),
    (["look", "catalog/_index", "--fields", "summary,stats"], lambda v: v.look("catalog/_index", fields=["summary", "stats"])),
    (["move", "sales/exchange-policy", "--direction", "both"], lambda v: v.move("sales/exchange-policy", direction="both")),
    (["move", "catalog/_index", "--rel", "children"], lambda v: v.move("catalog/_index", rel="children")),
    (["scan", "_index", "--filter", '{"type": "dataset", "tags_any": ["sales"]}', "--fields", "id,summary,payload_type",
      "--recursive", "--limit", "20"],
     lambda v: v.scan("_index", filter={"type": "dataset", "tags_any": ["sales"]},
                      fields=["id", "summary", "payload_type"], recursive=True, limit=20)),
    (["pick", "sales/exchange-policy", "--section", "Deadlines"], lambda v: v.pick("sales/exchange-policy", section="Deadlines")),
    (["pick", "contracts/master-agreement"], lambda v: v.pick("contracts/master-agreement")),
    (["look", "relatorios/社員名簿"], lambda v: v.look("relatorios/社員名簿")),
    (["sniff", "NF-4412", "exchange", "--scope", "sales", "--k", "5"],
     lambda v: v.sniff(["NF-4412", "exchange"], scope="sales", k=5)),
    (["harvest", "exchange deadlines for invoice NF-4412", "--k", "2"],
     lambda v: v.harvest("exchange deadlines for invoice NF-4412", k=2)),
]


@pytest.mark.parametrize("argv, call", CALLS, ids=[" ".join(argv[:2]) for argv, _ in CALLS])
def test_json_is_the_exact_response_of_the_library(read_forest, argv, call):
    ran = vine_cli(*argv, "--json", "--forest", str(read_forest))
    assert ran.returncode == 0, ran.stderr
    with Vine(read_forest, writable=False) as vine:
        expected = call(vine)
    assert ran.stdout == wire(expected) + "\n"


def test_text_output_is_for_a_person(read_forest):
    located = vine_cli("locate", "exchange policy", "--forest", str(read_forest))
    assert located.returncode == 0 and "1. sales/exchange-policy" in located.stdout and "{" not in located.stdout
    looked = vine_cli("look", "sales/orders-2026", "--forest", str(read_forest))
    assert "table orders(id, customer, region, total_invoice, closed_at)" in looked.stdout
    moved = vine_cli("move", "catalog/_index", "--rel", "children", "--forest", str(read_forest))
    assert "-> children catalog/item-00" in moved.stdout and "(truncated:" in moved.stdout
    scanned = vine_cli("scan", "sales", "--fields", "tags", "--forest", str(read_forest))
    assert "sales/exchange-policy  tags=sales, policy" in scanned.stdout
    picked = vine_cli("pick", "sales/exchange-policy", "--section", "online", "--forest", str(read_forest))
    assert picked.stdout.startswith("### Online")
    mapped = vine_cli("pick", "contracts/master-agreement", "--forest", str(read_forest))
    assert "outline:" in mapped.stdout and "  Annexes" in mapped.stdout and "section=<header>" in mapped.stdout


@pytest.mark.parametrize("argv, code", [
    (["look", "sales/nope"], "E_NOT_FOUND"),
    (["locate", "orders", "--scope", "leaves"], "E_SCHEMA"),
    (["scan", "sales", "--filter", "{not json"], "E_SCHEMA"),
    (["scan", "sales", "--fields", "body"], "E_SCHEMA"),
    (["move", "sales/price-list", "--direction", "sideways"], "E_SCHEMA"),
    (["pick", "sales/exchange-policy", "--section", "Nowhere"], "E_NOT_FOUND"),
])
def test_an_expected_error_is_one_line_and_exit_2(read_forest, argv, code):
    ran = vine_cli(*argv, "--forest", str(read_forest))
    assert ran.returncode == 2 and ran.stdout == ""
    assert ran.stderr.startswith(f"error {code}: ") and ran.stderr.count("\n") == 1
    as_json = vine_cli(*argv, "--json", "--forest", str(read_forest))
    assert as_json.returncode == 2 and json.loads(as_json.stdout)["error"]["code"] == code


def test_not_a_forest_is_one_line(tmp_path):
    ran = vine_cli("locate", "orders", "--forest", str(tmp_path))
    assert ran.returncode == 2 and ran.stderr.startswith("error E_NOT_A_FOREST")


def test_a_session_spans_commands_when_named(read_forest):
    env = dict(os.environ, MONKEYLLM_SESSION="cli-hunt")
    assert vine_cli("pick", "sales/orders-2026", "--forest", str(read_forest), env=env).returncode == 0
    ran = vine_cli("locate", "orders 2026 ledger region", "--k", "1", "--json", "--forest", str(read_forest), env=env)
    assert json.loads(ran.stdout)["results"][0]["heat"] == 0.1
    alone = vine_cli("locate", "orders 2026 ledger region", "--k", "1", "--json", "--forest", str(read_forest))
    assert json.loads(alone.stdout)["results"][0]["heat"] == 0.0
    trace = (read_forest / "_derived" / "traces" / "cli-hunt.jsonl").read_text().splitlines()
    assert [json.loads(line)["call"] for line in trace] == ["pick", "locate"]


def test_reads_run_while_a_writer_holds_the_lock(read_forest):
    with Vine(read_forest):
        ran = vine_cli("look", "sales/price-list", "--json", "--forest", str(read_forest))
    assert ran.returncode == 0 and json.loads(ran.stdout)["id"] == "sales/price-list"
