"""pick: the whole body or one section; never a partial body."""
from __future__ import annotations

import pytest

from monkeyllm_core import Vine, VineError, estimate_tokens
from monkeyllm_core.read.contract import tokens_of
from _read_forest import EXCHANGE_BODY, MASTER_BODY




def test_whole_body(reader):
    response = reader.pick("sales/exchange-policy")
    assert response == {"id": "sales/exchange-policy", "title": "Exchange policy", "body": EXCHANGE_BODY,
                        "body_tokens": estimate_tokens(EXCHANGE_BODY), "truncated": False}


def test_a_section_by_its_header_in_any_case_with_its_subsections(reader):
    response = reader.pick("sales/exchange-policy", section="deadlines")
    assert response["section"] == "Deadlines"
    assert response["body"].startswith("## Deadlines\n") and "### Online" in response["body"]
    assert "## Invoice rules" not in response["body"]
    assert response["body_tokens"] == estimate_tokens(response["body"]) and response["truncated"] is False
    assert list(response) == ["id", "title", "section", "body", "body_tokens", "truncated"]


def test_a_section_at_any_level(reader):
    response = reader.pick("sales/exchange-policy", section="  ONLINE ")
    assert response["body"].startswith("### Online") and "```" in response["body"]


def test_a_heading_inside_a_fence_is_no_section(reader):
    with pytest.raises(VineError) as err:
        reader.pick("sales/exchange-policy", section="Not a heading: inside a fence")
    assert err.value.code == "E_NOT_FOUND"
    assert err.value.hint == "Sections: Channels, Deadlines, Invoice rules."


def test_a_body_over_4000_tokens_comes_back_as_its_map(reader):
    response = reader.pick("contracts/master-agreement")
    assert response == {"id": "contracts/master-agreement", "title": "Master agreement 2026",
                        "outline": ["Parties", "Scope", "Payment terms", "Termination", "Annexes"],
                        "body_tokens": estimate_tokens(reader.read("contracts/master-agreement").body),
                        "truncated": True,
                        "hint": "Body exceeds 4000 tokens. Use section=<header> to harvest one section."}
    assert response["body_tokens"] > 4000 and reader.read("contracts/master-agreement").body == MASTER_BODY.rstrip() + "\n"


def test_a_section_has_no_cap(reader):
    response = reader.pick("contracts/master-agreement", section="Annexes")
    assert response["body_tokens"] > 4000 and tokens_of(response) > 4000
    assert response["truncated"] is False and response["body"].endswith("annexes.\n")


def test_no_such_node_or_file_is_e_not_found(read_forest):
    (read_forest / "sales" / "price-list.md").unlink()
    with Vine(read_forest, writable=False) as reader:
        for node_id in ("sales/nope", "sales/price-list"):
            with pytest.raises(VineError) as err:
                reader.pick(node_id)
            assert err.value.code == "E_NOT_FOUND"


@pytest.mark.parametrize("section", ["", "   ", 3])
def test_an_empty_section_name_is_e_schema(reader, section):
    with pytest.raises(VineError) as err:
        reader.pick("sales/exchange-policy", section=section)
    assert err.value.code == "E_SCHEMA"


def test_non_ascii_sections(reader):
    assert reader.pick("relatorios/社員名簿", section="営業部")["body"] == "## 営業部\n\n田中さん。\n"
    assert reader.pick("relatorios/exportacoes-2026", section="REGIÕES")["section"] == "Regiões"


def test_a_pick_warms_its_trail_for_the_rest_of_the_session_only(read_forest, reader):
    reader.pick("sales/pipeline/prospects-q2")
    trail = ["_index", "sales/_index", "sales/pipeline/_index", "sales/pipeline/prospects-q2"]
    assert reader.read_session().heat_of(trail) == dict.fromkeys(trail, 0.1)
    with Vine(read_forest, writable=False) as other:  # another session: its own scent only
        assert other.read_session().heat_of(trail) == dict.fromkeys(trail, 0.0)


def test_the_map_instead_of_a_body_leaves_no_scent(reader):
    reader.pick("contracts/master-agreement")
    assert reader.read_session().heat_of(["contracts/master-agreement"]) == {"contracts/master-agreement": 0.0}
