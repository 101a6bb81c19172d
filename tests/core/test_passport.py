"""Passports: byte-stable round trips, foreign nodes, the rules every write obeys."""
from __future__ import annotations

import pytest

from monkeyllm_core import VineError, parse_node, render_node
from monkeyllm_core.forest.dialect import load_dialect
from monkeyllm_core.forest.rules import validate_passport

FOREIGN = """---
id: people/ana
type: entity
title: Ana Ribeiro
summary: Head of sales since 2024, owns the exchange policy.
created: 2025-03-01
updated: 2026-01-15
entity_kind: person
reviewed_by: bruno
x-obsidian:
  cssclass: wide
---

# Ana Ribeiro

Runs the sales team.
"""


def test_every_node_the_engine_writes_round_trips_byte_for_byte(vine, brain, make_note):
    vine.plant({"id": "sales/_index", "title": "Sales", "summary": "Commercial policy and ledgers."})
    vine.plant(make_note("sales/policy", tags=["sales", "policy"], confidence=0.7, aliases=["returns"],
                         origin="file:///x/policy.md", source_path="policy.md", source_hash="ab" * 32,
                         source_size=12, source_mtime=1700000000.125, source="ingest"))
    vine.plant(make_note("sales/policy-2027", links=[{"rel": "succeeds", "target": "sales/policy"}]))
    vine.plant({"id": "sales/ledger", "type": "dataset", "title": "Ledger", "summary": "Orders, one per row.",
                "schema": {"orders": {"columns": {"id": "INTEGER", "note": "TEXT"}}},
                "rows": {"orders": [[1, "a | b"], [2, None]]}})
    vine.flush()
    for rel in ("_index.md", "_meta/schema.md", "sales/_index.md", "sales/policy.md",
                "sales/policy-2027.md", "sales/ledger.md"):
        text = brain.text(rel)
        node = parse_node(text)
        assert render_node(node.frontmatter, node.body) == text, rel


def test_canonical_key_order_with_extra_keys_last(vine, brain, make_note):
    vine.plant(make_note("fact", zeta_extra=1, alpha_extra="x", tags=["t"], confidence=0.5,
                         source="ingest", origin="file:///f"))
    keys = list(parse_node(brain.text("fact.md")).frontmatter)
    assert keys == ["id", "type", "title", "summary", "created", "updated", "tags", "confidence",
                    "source", "origin", "zeta_extra", "alpha_extra"]


def test_confidence_one_is_omitted(vine, brain, make_note):
    vine.plant(make_note("fact", confidence=1.0))
    assert "confidence" not in brain.text("fact.md")


def test_foreign_node_with_unquoted_dates_parses_as_iso_strings():
    node = parse_node(FOREIGN)
    assert node.frontmatter["created"] == "2025-03-01"
    assert node.frontmatter["updated"] == "2026-01-15"
    assert node.body == "# Ana Ribeiro\n\nRuns the sales team.\n"


def test_unknown_frontmatter_keys_survive_a_graft(vine, brain):
    vine.plant({"id": "people/_index", "title": "People", "summary": "Everyone we work with."})
    vine.flush()
    (brain.root / "people" / "ana.md").write_text(FOREIGN)
    brain.git("add", "people/ana.md")
    brain.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "hand-written")
    vine.close()
    with brain.open() as v:
        v.graft("people/ana", {"append_section": {"header": "Notes", "body": "Met in May."}})
    fm = parse_node(brain.text("people/ana.md")).frontmatter
    assert fm["reviewed_by"] == "bruno"
    assert fm["x-obsidian"] == {"cssclass": "wide"}
    assert fm["entity_kind"] == "person"
    assert fm["created"] == "2025-03-01"


BASE = {"id": "notes/fact", "type": "note", "title": "Fact", "summary": "A fact.",
        "created": "2026-01-01", "updated": "2026-01-01"}


@pytest.mark.parametrize("change, code, words", [
    ({"id": None}, "E_FRONTMATTER", "missing required"),
    ({"type": None}, "E_FRONTMATTER", "missing required"),
    ({"title": None}, "E_FRONTMATTER", "missing required"),
    ({"summary": None}, "E_FRONTMATTER", "missing required"),
    ({"created": None}, "E_FRONTMATTER", "missing required"),
    ({"updated": None}, "E_FRONTMATTER", "missing required"),
    ({"type": "recipe"}, "E_SCHEMA", "not declared"),
    ({"links": [{"rel": "loves", "target": "x"}]}, "E_SCHEMA", "not declared"),
    ({"summary": "x" * 241}, "E_FRONTMATTER", "60-token"),
    ({"summary": "This document describes the policy."}, "E_FRONTMATTER", "boilerplate"),
    ({"summary": "FILE CONTAINING the policy."}, "E_FRONTMATTER", "boilerplate"),
    ({"summary": "   "}, "E_FRONTMATTER", "empty"),
    ({"confidence": 1.5}, "E_FRONTMATTER", "confidence"),
    ({"source": "robot"}, "E_FRONTMATTER", "source"),
    ({"payload_type": "zip"}, "E_FRONTMATTER", "payload_type"),
    ({"links": [{"rel": "related-to", "target": f"n{i}"} for i in range(51)]}, "E_FRONTMATTER", "51 links"),
    ({"type": "branch"}, "E_SCHEMA", "branch"),
    ({"id": "../escape"}, "E_FRONTMATTER", "invalid id"),
    ({"created": "yesterday"}, "E_FRONTMATTER", "ISO date"),
])
def test_passport_rules_refuse_with_an_error_envelope(brain, change, code, words):
    fm = {**BASE, **change}
    fm = {k: v for k, v in fm.items() if v is not None}
    with pytest.raises(VineError) as info:
        validate_passport(fm, load_dialect(brain.root))
    assert info.value.code == code
    assert words in info.value.message
    envelope = info.value.envelope()
    assert set(envelope) == {"error"}
    assert envelope["error"]["code"] == code
    assert envelope["error"]["message"] == info.value.message
    assert envelope["error"]["hint"]


def test_summary_of_exactly_240_chars_and_50_links_are_accepted(brain):
    fm = {**BASE, "summary": "x" * 240,
          "links": [{"rel": "related-to", "target": f"n{i}"} for i in range(50)]}
    validate_passport(fm, load_dialect(brain.root))


def test_a_type_declared_in_the_forests_schema_can_be_planted(brain):
    schema = brain.root / "_meta" / "schema.md"
    text = schema.read_text()
    text = text.replace("| `media` |", "| `recipe` | A dish and how to cook it. | pick |\n| `media` |")
    text = text.replace("| `succeeds` |", "| `cooked-with` | `cooks` | An ingredient. |\n| `succeeds` |")
    schema.write_text(text)
    brain.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "declare recipe")
    with brain.open() as vine:
        vine.plant({"id": "salt", "type": "concept", "title": "Salt", "summary": "Sodium chloride."})
        vine.plant({"id": "soup", "type": "recipe", "title": "Soup", "summary": "A soup with salt.",
                    "links": [{"rel": "cooked-with", "target": "salt"}]})
        assert vine.catalog.get("soup")["type"] == "recipe"
        edges = vine.catalog.edges_of("salt")
    assert ("salt", "cooks", "soup", 1.0) in edges
    assert brain.findings() == []


def test_planting_an_undeclared_type_is_refused_and_writes_nothing(vine, brain):
    before = brain.snapshot()
    with pytest.raises(VineError) as info:
        vine.plant({"id": "soup", "type": "recipe", "title": "Soup", "summary": "A soup."})
    assert info.value.code == "E_SCHEMA"
    assert "_meta/schema.md" in info.value.message
    assert brain.snapshot() == before


# -- a branch's passport rendered entry by entry (render_node_parsed's fast path) ----------
TRICKY_STRINGS = [
    "", " ", "plain words", "yes", "No", "null", "~", "true", "0x1F", "1e3", "007", "1_000", ".inf", "-.nan",
    "2026-12-01", "2026-12-01T10:00:00Z", "12:30", "a: b", "a:b", "#hash", "a #hash", "- dash", "-", "?",
    "'single'", '"double"', "back\\slash", "tab\there", "trailing ", " leading", "line\nbreak", "two\n\nbreaks",
    "ends\n", "\nstarts", "---", "a\n---\nb", "...", "{flow}", "[list]", "&anchor", "*alias", "!tag", "%dir",
    "@at", "`tick`", "ação e coração", "日本語のテキスト", "emoji 🌳", "\u2028sep", "nel\x85", "bell\x07",
    "bom\ufeff", "x" * 3000, "word " * 400, "12 bananas, 3 sub-branches", "file:///tmp/x y/%20",
]
TRICKY_SCALARS = [0, 1, -7, 2**63, 2**80, 1.0, 0.5, -0.0, 0.0, float("inf"), float("nan"), 1e-12, 3.14159,
                  True, False]


def test_a_passport_of_scalars_renders_and_loads_entry_by_entry_as_one_dump_does():
    """render_node_parsed builds a branch's YAML from remembered ``key: value`` pieces:
    for every value a passport may hold, the text and what loads back must be what
    one whole dump and load give (else a branch's bytes would depend on the cache)."""
    import datetime as dt
    import random

    from monkeyllm_core.forest import passport

    values = TRICKY_STRINGS + TRICKY_SCALARS + [dt.date(2026, 12, 1), dt.datetime(2026, 12, 1, 10, 30)]
    rng = random.Random(16)
    keys = ["id", "type", "title", "summary", "created", "updated", "source", "coverage", "origin",
            "source_path", "x-extra", "yes", "123", "key with space", "clé"]
    checked = 0
    for round_ in range(400):
        fm = {key: rng.choice(values) for key in rng.sample(keys, rng.randint(1, len(keys)))}
        fm["id"] = f"b{round_}/_index"
        whole = passport.render_frontmatter(fm)
        pieces = passport._render_from_fragments(fm, "test")
        if any(isinstance(v, dt.date) for v in fm.values()):
            assert pieces is None  # an object a whole dump may anchor
            continue
        assert pieces is not None
        assert pieces[0] == whole, fm
        assert pieces[1] == passport._load_frontmatter(whole, "test"), fm
        # twice: the second time every entry comes from the remembered pieces
        assert passport._render_from_fragments(fm, "test") == pieces
        checked += 1
    assert checked > 300


@pytest.mark.parametrize("shared", [["a", "b"], {"k": "v"}, __import__("datetime").date(2026, 12, 1)])
def test_a_passport_holding_one_object_under_two_keys_is_dumped_whole(shared):
    from monkeyllm_core.forest import passport

    fm = {"id": "x/_index", "title": "X", "tags": shared, "aliases": shared}
    assert passport._render_from_fragments(fm, "test") is None
    text, node = passport.render_node_parsed(fm, "# X\n")
    assert "&id001" in text  # the whole dump's anchor, as before
    assert node.frontmatter == passport.parse_node(text).frontmatter
