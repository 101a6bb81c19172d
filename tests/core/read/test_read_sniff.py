"""sniff (primitives.md): literal search over bodies, case- and accent-insensitive,
scoped, ranked AND-preferred, within 800 tokens; its body index changes no answer."""
from __future__ import annotations

import json
import unicodedata

import pytest

from monkeyllm_core import Vine
from monkeyllm_core.errors import VineError
from monkeyllm_core.forest.passport import split_node
from monkeyllm_core.read.body_index import INDEX_PATH, BodyIndex
from monkeyllm_core.read.contract import fits
from monkeyllm_core.read.sniff import sniff

LONG_LINE = ("Preamble words " * 12) + "the clause NF-7781 applies " + ("and trailing words " * 12)

TRICKY = {
    "sales/exchange-policy": (
        "# Exchange policy\n\n## Deadlines\n\nReturn with invoice NF-4412 within 30 days of receipt.\n\n"
        "## Channels\n\nRetail exchange is handled at the counter.\nOnline exchanges go through the portal.\n\n"
        "### Invoice rules\n\nAn exchange reissues the invoice under the same series.\n"),
    "sales/relatorio": (
        "# Relatório de exportações\n\nExportações para São Paulo e RJ em 2026.\n"
        "O CAFE\u0301 chegou ao porto (decomposed accent).\nRua da Straße 12, e-mail: vendas@acme.example\n"),
    "sales/pricing": (
        "# Pricing\n\nPrices in R$ 1.234,56 and USD 54.607,56.\nSKU AB-12/x listed; ratio a/b (x) -> y\n"
        "```\n# not a heading inside a fence\nNF-4412 inside code\n```\nFinal line without newline SP"),
    "ops/tokyo": (
        "# 東京オフィス\n\n東京都の会社と株式会社の契約。\n大阪の支店は閉鎖。\n\n## 連絡先\n\n電話は東京本社へ。\n"),
    "ops/incidents": (
        "# Incidents\n\n" + "".join(f"Line {i}: error E-500 seen at gateway.\n" for i in range(1, 41))
        + "\n## Resolution\n\nThe ticket NF-4412 closed the case; exchange of parts.\n"),
    "ops/long-line": "# Long\n\n" + LONG_LINE + "\n",
    "ops/quiet": "# Quiet\n\nNothing to see here, Ａｂｃ full-width and ﬁne ligatures.\n",
}


def plant_tricky(vine: Vine) -> None:
    vine.plant({"id": "sales/_index", "type": "branch", "title": "Sales",
                "summary": "Sales policies NF-4412 exchange relatorio."})
    vine.plant({"id": "ops/_index", "type": "branch", "title": "Ops", "summary": "Operations."})
    for node_id, body in TRICKY.items():
        vine.plant({"id": node_id, "type": "note", "title": node_id.rsplit("/", 1)[-1],
                    "summary": f"The {node_id.rsplit('/', 1)[-1]} note.", "body": body})


@pytest.fixture
def tricky(vine):
    plant_tricky(vine)
    index = BodyIndex(vine.root, vine.catalog)
    yield vine, index
    index.close()


def reference_fold(text: str) -> str:
    """The fold defined on whole strings, apart from the engine's per-character table."""
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", text).casefold())
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if not unicodedata.combining(c)))


def literal_scan(vine: Vine, terms: list[str], prefix: str = "") -> dict[str, tuple[int, int]]:
    """Every banana's file read, every line compared: id -> (matched terms, matching lines)."""
    folded = list(dict.fromkeys(reference_fold(t) for t in terms))
    out = {}
    for (node_id,) in vine.catalog.db.execute("SELECT id FROM nodes WHERE kind = 'banana' ORDER BY id"):
        if not node_id.startswith(prefix):
            continue
        body = split_node((vine.root / f"{node_id}.md").read_text(encoding="utf-8"))[1]
        lines = [reference_fold(line) for line in body.split("\n")]
        hit_lines = [line for line in lines if any(t in line for t in folded)]
        matched = {t for t in folded if any(t in line for line in lines)}
        if hit_lines:
            out[node_id] = (len(matched), len(hit_lines))
    return out


def as_found(response: dict) -> dict[str, tuple[int, int]]:
    return {r["id"]: (round(r["score"] * 100), r["match_count"]) for r in response["results"]}


TERM_SETS = [
    ["NF-4412"], ["nf-4412", "exchange"], ["relatorio"], ["RELATÓRIO", "exportacoes"], ["sao paulo"],
    ["cafe"], ["café"], ["strasse"], ["STRASSE"], ["xchang"], ["change"], ["ange"], ["SP"], ["RJ"],
    ["東京"], ["株式会社"], ["の会"], ["R$ 1.234,56"], ["1.234"], ["a/b"], ["(x)"], ["->"], ["-> y"],
    ["ab-12/x"], ["@acme.ex"], ["e-mail: vendas"], ["e-500"], ["gateway."], ["abc"], ["fine"],
    ["without newline sp"], ["line sp"], ["nf-7781"], ["zzz-none"], ["de", "em"], ["ti", "on"],
    ["NF-4412", "exchange", "portal", "counter", "series", "receipt", "retail", "online"],
]


def test_results_equal_a_literal_scan_of_every_body(tricky):
    vine, index = tricky
    for terms in TERM_SETS:
        expected = literal_scan(vine, terms)
        got = sniff(index, terms, k=100)
        n = len(dict.fromkeys(reference_fold(t) for t in terms))
        assert as_found(got) == {i: (round(m / n * 100), c) for i, (m, c) in expected.items()}, terms
        assert got["scanned_nodes"] == len(TRICKY)


def test_a_scope_reads_its_subtree_or_its_node(tricky):
    vine, index = tricky
    for scope, prefix in [("sales", "sales/"), ("sales/_index", "sales/"), ("ops/", "ops/"),
                          ("ops/incidents", "ops/incidents"), ("_index", ""), (None, "")]:
        got = sniff(index, ["NF-4412", "exchange"], scope=scope, k=100)
        assert {r["id"] for r in got["results"]} == set(literal_scan(vine, ["NF-4412", "exchange"], prefix)), scope
        assert got["scanned_nodes"] == sum(1 for node_id in TRICKY if node_id.startswith(prefix))


def test_the_index_changes_no_answer(tricky):
    vine, index = tricky
    indexed = [sniff(index, terms, k=100) for terms in TERM_SETS]
    index.close()
    (vine.root / INDEX_PATH).unlink()
    (vine.root / INDEX_PATH).mkdir()  # no database can be opened there: every body is scanned
    unindexed = BodyIndex(vine.root, vine.catalog)
    assert [sniff(unindexed, terms, k=100) for terms in TERM_SETS] == indexed


def test_a_match_carries_its_section_line_and_snippet(tricky):
    _, index = tricky
    result = sniff(index, ["NF-4412"], scope="sales/exchange-policy")["results"][0]
    assert result["matches"] == [{"section": "Deadlines", "line": 5,
                                  "snippet": "Return with invoice NF-4412 within 30 days of receipt."}]
    invoice = sniff(index, ["reissues"])["results"][0]["matches"][0]
    assert invoice["section"] == "Invoice rules" and invoice["line"] == 14  # a ### heading counts


def test_a_fenced_line_is_not_a_heading(tricky):
    _, index = tricky
    matches = sniff(index, ["inside code", "inside a fence"])["results"][0]["matches"]
    assert matches == [{"section": "Pricing", "line": 6, "snippet": "# not a heading inside a fence"},
                       {"section": "Pricing", "line": 7, "snippet": "NF-4412 inside code"}]


def test_the_snippet_is_a_window_centred_on_the_leftmost_hit(tricky):
    _, index = tricky
    snippet = sniff(index, ["nf-7781"])["results"][0]["matches"][0]["snippet"]
    assert "NF-7781" in snippet and 60 <= len(snippet) <= 100
    left, right = snippet.split("NF-7781")
    assert abs(len(left) - len(right)) < 30
    assert snippet == snippet.strip() and LONG_LINE.find(snippet) != -1  # whole words of the original


def test_an_accent_found_keeps_the_original_text_in_the_snippet(tricky):
    _, index = tricky
    snippet = sniff(index, ["cafe chegou"])["results"][0]["matches"][0]["snippet"]
    assert snippet == "O CAFE\u0301 chegou ao porto (decomposed accent)."


def test_at_most_three_lines_show_and_match_count_is_the_real_total(tricky):
    _, index = tricky
    result = sniff(index, ["E-500"])["results"][0]
    assert result["match_count"] == 40 and result["truncated_matches"] is True
    assert [m["line"] for m in result["matches"]] == [3, 4, 5]


def test_the_lines_shown_are_those_holding_the_most_terms(tricky):
    _, index = tricky
    result = sniff(index, ["E-500", "NF-4412", "exchange"], scope="ops/incidents")["results"][0]
    assert result["matches"][0]["section"] == "Resolution"  # NF-4412 and exchange on one line
    assert result["match_count"] == 41


def test_more_terms_matched_outrank_more_lines_matched(tricky):
    _, index = tricky
    results = sniff(index, ["E-500", "counter", "portal", "series"])["results"]
    assert results[0]["id"] == "sales/exchange-policy" and results[0]["score"] == 0.75
    assert results[1]["id"] == "ops/incidents" and results[1]["score"] == 0.25


def test_equal_strength_is_broken_by_match_count(tricky):
    _, index = tricky
    results = sniff(index, ["exchange"])["results"]
    assert [r["id"] for r in results] == ["sales/exchange-policy", "ops/incidents"]
    assert results[0]["match_count"] > results[1]["match_count"]


def test_heat_lifts_a_node_and_alpha_zero_turns_it_off(tricky):
    _, index = tricky
    heat = lambda ids: {"ops/incidents": 0.9}
    results = sniff(index, ["exchange"], heat_of=heat)["results"]
    assert results[0]["id"] == "ops/incidents"
    assert results[0]["score"] == round(1 * (1 + 0.3 * 0.9), 4) and results[0]["heat"] == 0.9
    cold = sniff(index, ["exchange"], heat_of=heat, alpha=0)["results"]
    assert cold[0]["id"] == "sales/exchange-policy" and cold[1]["heat"] == 0.9


def test_branch_bodies_are_not_sniffed(tricky):
    _, index = tricky
    # the sales branch repeats its children's summaries; its own summary names NF-4412
    got = sniff(index, ["the pricing note"])
    assert got["results"] == [] and got["truncated"] is False


def test_type_filter_narrows_and_counts(tricky):
    vine, index = tricky
    assert sniff(index, ["exchange"], type_filter="dataset", types=vine.dialect.types) == {
        "results": [], "scanned_nodes": 0, "truncated": False}
    assert len(sniff(index, ["exchange"], type_filter=["note"])["results"]) == 2


def test_past_k_whole_nodes_drop_and_truncated_says_so(tricky):
    _, index = tricky
    got = sniff(index, ["exchange"], k=1)
    assert len(got["results"]) == 1 and got["truncated"] is True and "2 nodes matched" in got["hint"]


def test_a_response_over_800_tokens_sheds_whole_nodes_from_the_tail(vine):
    vine.plant({"id": "logs/_index", "type": "branch", "title": "Logs", "summary": "Logs."})
    for i in range(40):
        line = f"Entry {i}: code QX-17 " + "padding words " * 6
        vine.plant({"id": f"logs/day-{i:02d}", "type": "note", "title": f"Day {i}", "summary": f"Day {i}.",
                    "body": f"# Day {i}\n\n" + (line + "\n") * 5})
    with BodyIndex(vine.root, vine.catalog) as index:
        got = sniff(index, ["QX-17"], k=40)
    assert got["truncated"] is True and 0 < len(got["results"]) < 40
    assert fits(got, 800) and "pick(id, section)" in got["hint"]
    assert all(len(r["matches"]) == 3 for r in got["results"])  # whole nodes, never a sliced one


def test_every_response_fits_its_budget(tricky):
    vine, index = tricky
    for node_id in [*TRICKY, "sales", "ops", None]:
        for terms in TERM_SETS:
            assert fits(sniff(index, terms, scope=node_id, k=50), 800)


def test_bad_terms_are_e_schema(tricky):
    _, index = tricky
    for terms, message in [
        ([], "1 to 8 terms"), ([f"term{i}" for i in range(9)], "1 to 8 terms"), (["a"], "shorter than 2"),
        (["é"], "shorter than 2"), ([" x "], "shorter than 2"), (["two\nlines"], "spans lines"),
        ([42], "list of strings"), ({"NF": 1}, "list of strings"),
    ]:
        with pytest.raises(VineError) as err:
            sniff(index, terms)
        assert err.value.code == "E_SCHEMA" and message in err.value.message and err.value.hint, terms


def test_a_bad_k_is_e_schema(tricky):
    _, index = tricky
    for k in [0, -1, "5", True, 2.5]:
        with pytest.raises(VineError) as err:
            sniff(index, ["exchange"], k=k)
        assert err.value.code == "E_SCHEMA", k


def test_an_unknown_type_filter_is_e_schema(tricky):
    vine, index = tricky
    with pytest.raises(VineError) as err:
        sniff(index, ["exchange"], type_filter="invoice", types=vine.dialect.types)
    assert err.value.code == "E_SCHEMA" and "dataset" in err.value.hint


def test_an_unknown_scope_is_e_not_found(tricky):
    _, index = tricky
    for scope in ["nowhere", "sales/nothing", "sales/_index/_index", "../etc"]:
        with pytest.raises(VineError) as err:
            sniff(index, ["exchange"], scope=scope)
        assert err.value.code == "E_NOT_FOUND" and "locate" in err.value.hint, scope


def test_a_single_string_is_one_term(tricky):
    _, index = tricky
    assert sniff(index, "NF-4412") == sniff(index, ["NF-4412"])


def test_the_response_is_the_primitives_shape(tricky):
    _, index = tricky
    got = json.loads(json.dumps(sniff(index, ["NF-4412"], scope="sales")))
    assert list(got) == ["results", "scanned_nodes", "truncated"]
    assert list(got["results"][0]) == ["id", "type", "title", "trail", "score", "heat", "match_count",
                                       "truncated_matches", "matches"]
    assert got["results"][0]["trail"] == ["_index", "sales/_index"]


def test_ties_are_ordered_by_lines_even_when_hits_crowd_few_lines(vine):
    """Equal strength is ordered by matching lines, then id, as a full sort would: a
    body with many hits on few lines must not outrank one with more lines."""
    import random

    rng = random.Random(5)
    vine.plant({"id": "mix/_index", "type": "branch", "title": "Mix", "summary": "Mixed bodies."})
    for n in range(40):
        lines = []
        for _ in range(rng.randint(1, 12)):
            hits = rng.choice([0, 0, 1, 1, 2, 6])
            lines.append(" ".join(["alpha"] * hits + ["filler", "words"] + ["beta"] * rng.choice([0, 1, 3])))
        vine.plant({"id": f"mix/n{n:02d}", "type": "note", "title": f"n{n}", "summary": "A mixed note.",
                    "body": "\n".join(lines) + "\n"})
    with BodyIndex(vine.root, vine.catalog) as index:
        for terms in (["alpha"], ["alpha", "beta"], ["beta"], ["al"], ["al", "beta"]):
            expected = literal_scan(vine, terms)
            ranked = sorted(expected, key=lambda node: (-expected[node][0], -expected[node][1], node))
            got = sniff(index, terms, k=100, heat_of=lambda ids: {})
            assert [r["id"] for r in got["results"]] == ranked[:len(got["results"])], terms
            assert len(got["results"]) >= 5
