"""look: the digest of one node within 500 tokens, as primitives.md shows it."""
from __future__ import annotations

import pytest

from monkeyllm_core import Vine, VineError, estimate_tokens
from monkeyllm_core.read.contract import tokens_of

BANANA_KEYS = ["id", "type", "title", "summary", "tags", "confidence", "updated", "edges_out", "edges_in",
               "outline", "stats"]


def test_a_banana_digest_has_the_fields_of_primitives_md(shared_reader):
    digest = shared_reader.look("sales/exchange-policy")
    assert list(digest) == BANANA_KEYS
    assert digest["tags"] == ["sales", "policy"] and digest["confidence"] == 1.0
    assert digest["outline"] == ["Channels", "Deadlines", "Invoice rules"]  # no ###, no heading inside a fence
    body = shared_reader.read("sales/exchange-policy").body
    assert digest["stats"] == {"body_tokens": estimate_tokens(body), "degree": 4, "heat": 0.0}


def test_edges_out_carry_the_target_scent_and_edges_in_the_inverse_name(shared_reader):
    digest = shared_reader.look("sales/exchange-policy")
    assert digest["edges_out"] == [
        {"rel": "related-to", "target": "sales/price-list",
         "target_summary": "Prices per product for 2026, in USD, with volume discounts."},
        {"rel": "part-of", "target": "sales/_index",
         "target_summary": "Commercial policy, price lists and the 2026 order ledger."}]
    # ana declared mentioned-in, 2027 declared succeeds: read from here, mentions and precedes
    assert digest["edges_in"] == [{"rel": "precedes", "source": "sales/exchange-policy-2027"},
                                  {"rel": "mentions", "source": "people/ana-ribeiro"}]


def test_a_rel_without_inverse_and_a_broken_link_still_show(shared_reader):
    digest = shared_reader.look("sales/price-list")
    assert {"rel": "discovered-shortcut", "source": "sales/exchange-policy-2027"} in digest["edges_in"]
    assert digest["edges_out"] == [{"rel": "related-to", "target": "sales/retired-list", "target_summary": None}]


def test_edges_are_capped_at_twelve_each_way_and_degree_is_the_real_total(shared_reader):
    digest = shared_reader.look("people/ana-ribeiro")
    assert len(digest["edges_out"]) <= 12 and len(digest["edges_in"]) <= 12
    assert digest["stats"]["degree"] == 35  # 15 links of its own, 20 to it
    assert digest["truncated"] is True and "move('people/ana-ribeiro'" in digest["hint"]
    assert tokens_of(digest) <= 500
    assert all(len(edge["target_summary"]) <= 100 for edge in digest["edges_out"])  # 25 tokens


def test_edges_come_hottest_first(reader):
    cold = reader.look("people/ana-ribeiro")
    assert cold["edges_out"][0]["target"] == "sales/exchange-policy"
    reader.close_session(True, ["catalog/item-33"])
    warm = reader.look("people/ana-ribeiro")
    assert warm["edges_out"][0]["target"] == "catalog/item-33"


def test_a_branch_digest_lists_children_cross_trails_and_coverage(shared_reader):
    digest = shared_reader.look("sales/_index")
    assert "outline" not in digest
    assert [c["id"] for c in digest["children"]][0] == "sales/pipeline/_index"  # sub-branches first when cold
    assert len(digest["children"]) == 7
    assert digest["cross_trails"] == [
        {"target": "contracts/master-agreement", "text": "Contractor terms are not sales policy"},
        {"target": "people/ana-ribeiro", "text": "owns the exchange policy"}]
    assert digest["coverage"] == "6 bananas, 1 sub-branches"


def test_a_sixty_child_branch_sheds_children_from_the_tail(shared_reader):
    digest = shared_reader.look("catalog/_index")
    assert tokens_of(digest) <= 500 and digest["truncated"] is True
    children = [c["id"] for c in digest["children"]]
    assert 0 < len(children) < 60 and children == [f"catalog/item-{n:02d}" for n in range(len(children))]
    assert all(len(c["summary"]) <= 100 and c["summary"].endswith("…") for c in digest["children"])
    assert "scan('catalog/_index')" in digest["hint"]
    assert f"dropped {60 - len(children)} of 60 children" in digest["hint"]
    assert "cross_trails" not in digest  # the index declares none


def test_a_dataset_digest_carries_its_manual_samples_and_notes(shared_reader):
    digest = shared_reader.look("sales/orders-2026")
    assert digest["query_manual"] == {
        "tables": {"orders": ["id", "customer", "region", "total_invoice", "closed_at"]},
        "example_queries": ["SELECT * FROM orders LIMIT 5", "SELECT COUNT(*) FROM orders"]}
    samples = digest["sample_rows"]
    assert samples["columns"] == ["id", "customer", "region", "total_invoice", "closed_at"]
    assert len(samples["rows"]) == 3  # of 4 rows: at most 3
    assert samples["rows"][2][1] == "Initech | Ltd"  # the pipe unescaped
    assert digest["notes"].startswith("total_invoice is TEXT")
    assert "truncated" not in digest


def test_a_dataset_wider_than_twelve_columns_lists_every_column(shared_reader):
    digest = shared_reader.look("sales/wide-ledger")
    assert len(digest["query_manual"]["tables"]["ledger"]) == 16
    assert len(digest["sample_rows"]["columns"]) == 12
    assert digest["query_manual"]["example_queries"] == ["SELECT COUNT(*) FROM ledger"]


def test_sample_rows_go_before_the_notes_a_person_wrote(read_forest):
    with Vine(read_forest) as vine:
        vine.plant({"id": "sales/long-cells", "type": "dataset", "title": "Long cells",
                    "summary": "Twelve columns of long text, 2026.",
                    "schema": {"t": {"columns": {f"c{n}": "TEXT" for n in range(12)}}},
                    "rows": {"t": [["x" * 110] * 12 for _ in range(3)]},
                    "body": "# Long cells\n\n## Notes\n\nRead c0 first.\n"})
    with Vine(read_forest, writable=False) as reader:
        digest = reader.look("sales/long-cells")
    assert "sample_rows" not in digest and digest["notes"] == "Read c0 first."
    assert digest["truncated"] is True and "sample_rows" in digest["hint"]
    assert tokens_of(digest) <= 500


def test_a_huge_manual_is_cut_table_by_table(shared_reader):
    digest = shared_reader.look("sales/warehouse")
    assert tokens_of(digest) <= 500 and digest["truncated"] is True
    tables = digest["query_manual"]["tables"]
    assert 0 < len(tables) < 8 and list(tables)[0] == "stock_table_0"


def test_fields_narrow_the_digest(shared_reader):
    assert shared_reader.look("sales/price-list", fields=["summary"]) == {
        "id": "sales/price-list", "summary": "Prices per product for 2026, in USD, with volume discounts."}
    assert shared_reader.look("sales/price-list", fields=["children"]) == {"id": "sales/price-list"}
    narrowed = shared_reader.look("catalog/_index", fields=["coverage", "stats"])
    assert narrowed == {"id": "catalog/_index", "coverage": "60 bananas, 0 sub-branches",
                        "stats": {"body_tokens": narrowed["stats"]["body_tokens"], "degree": 0, "heat": 0.0}}


def test_an_unknown_field_is_e_schema(shared_reader):
    with pytest.raises(VineError) as err:
        shared_reader.look("sales/price-list", fields=["summary", "body"])
    assert err.value.code == "E_SCHEMA" and "stats" in err.value.hint


@pytest.mark.parametrize("node_id", ["sales/nope", "../etc/passwd", "", "sales/price-list.md", 42])
def test_no_such_node_is_e_not_found(shared_reader, node_id):
    with pytest.raises(VineError) as err:
        shared_reader.look(node_id)
    assert err.value.code == "E_NOT_FOUND"


def test_non_ascii_text_reads_back_as_written(shared_reader):
    digest = shared_reader.look("relatorios/exportacoes-2026")
    assert digest["title"] == "Relatório de exportações 2026" and digest["tags"] == ["exportação", "relatório"]
    assert shared_reader.look("relatorios/社員名簿")["outline"] == ["営業部"]


def test_the_digest_is_served_when_the_file_goes_between_two_checks(read_forest, monkeypatch):
    # the catalog still names the node (the working tree is checked every few
    # seconds): look answers from it, with no outline, instead of failing
    monkeypatch.setattr("monkeyllm_core.read.freshness.STATUS_SECONDS", 3600.0)
    with Vine(read_forest, writable=False) as reader:
        reader.look("sales/exchange-policy")
        (read_forest / "sales" / "price-list.md").unlink()
        digest = reader.look("sales/price-list")
    assert digest["summary"].startswith("Prices per product") and digest["outline"] == []


def test_a_node_deleted_by_hand_is_not_found_by_the_next_reader(read_forest):
    (read_forest / "sales" / "price-list.md").unlink()
    with Vine(read_forest, writable=False) as reader:
        with pytest.raises(VineError) as caught:
            reader.look("sales/price-list")
    assert caught.value.code == "E_NOT_FOUND"
