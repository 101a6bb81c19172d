"""The catalog is derived: rows for every node, edges with inverses, FTS entry
search, and it rebuilds to the same rows from the files."""
from __future__ import annotations

import shutil

from monkeyllm_core import Vine, parse_node, render_node
from monkeyllm_core.forest.catalog import NODE_COLUMNS

PROVENANCE = {"source": "ingest", "confidence": 0.7, "origin": "file:///exports/sales/policy.docx",
              "source_path": "sales/Policy.docx", "source_hash": "ab" * 32, "source_size": 20480,
              "source_mtime": 1767225600.125}


def populate(vine, make_note):
    vine.plant({"id": "sales/_index", "title": "Sales", "summary": "Commercial policy and ledgers."})
    vine.plant(make_note("sales/policy", "Return windows per channel.", title="Exchange policy",
                         tags=["policy"], aliases=["returns"], **PROVENANCE))
    vine.plant(make_note("sales/policy-2027", "Return windows from 2027 onward.",
                         links=[{"rel": "succeeds", "target": "sales/policy"},
                                {"rel": "discovered-shortcut", "target": "sales/_index"}]))
    vine.plant(make_note("sales/pricing", "Prices that mention the exchange window in passing.",
                         title="Price list"))


def rows(vine):
    nodes = vine.catalog.db.execute(f"SELECT {', '.join(NODE_COLUMNS)} FROM nodes ORDER BY id").fetchall()
    edges = vine.catalog.db.execute("SELECT * FROM edges ORDER BY source, rel, target").fetchall()
    fts = vine.catalog.db.execute("SELECT * FROM nodes_fts ORDER BY id").fetchall()
    return nodes, edges, fts


def test_every_node_has_a_row_with_its_provenance(vine, make_note):
    populate(vine, make_note)
    ids = [r[0] for r in vine.catalog.db.execute("SELECT id FROM nodes ORDER BY id")]
    assert ids == ["_index", "sales/_index", "sales/policy", "sales/policy-2027", "sales/pricing"]
    row = vine.catalog.get("sales/policy")
    assert row["source_path"] == "sales/Policy.docx"
    assert row["source_hash"] == "ab" * 32
    assert row["source_size"] == 20480
    assert row["source_mtime"] == 1767225600.125
    assert row["origin"] == "file:///exports/sales/policy.docx"
    assert row["confidence"] == 0.7 and row["source"] == "ingest"
    assert row["kind"] == "banana" and row["parent"] == "sales/_index"
    branch = vine.catalog.get("sales/_index")
    assert branch["kind"] == "branch" and branch["coverage"] == "3 bananas, 0 sub-branches"
    assert vine.catalog.provenance("file:///exports/")["file:///exports/sales/policy.docx"]["id"] == "sales/policy"


def test_touch_source_stat_records_a_new_size_and_mtime_and_nothing_else(vine, make_note):
    populate(vine, make_note)
    before = vine.catalog.get("sales/policy")
    vine.catalog.touch_source_stat("sales/policy", 20481, 1767225700.5)
    after = vine.catalog.get("sales/policy")
    assert (after["source_size"], after["source_mtime"]) == (20481, 1767225700.5)
    unchanged = [column for column in NODE_COLUMNS if column not in ("source_size", "source_mtime")]
    assert [after[column] for column in unchanged] == [before[column] for column in unchanged]


def test_edges_carry_their_inverse_from_the_other_side(vine, make_note):
    populate(vine, make_note)
    assert vine.catalog.edges_of("sales/policy") == [("sales/policy", "precedes", "sales/policy-2027", 1.0)]
    out = vine.catalog.edges_of("sales/policy-2027")
    assert ("sales/policy-2027", "succeeds", "sales/policy", 1.0) in out
    # a rel declared without an inverse has no reverse row
    assert vine.catalog.edges_of("sales/_index") == []


def test_a_title_match_ranks_above_a_summary_match(vine, make_note):
    populate(vine, make_note)
    hits = vine.search("exchange")
    ids = [h["id"] for h in hits]
    assert ids.index("sales/policy") < ids.index("sales/pricing")
    assert vine.search("returns")[0]["id"] == "sales/policy"  # aliases are indexed
    assert [h["id"] for h in vine.search("windows", kind="branch")] == []


def test_reindex_after_deleting_derived_rebuilds_the_same_rows(brain, make_note):
    with brain.open() as vine:
        populate(vine, make_note)
        before = rows(vine)
    shutil.rmtree(brain.root / "_derived")
    result = brain.cli("reindex")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "reindex: 5 node(s) in the catalog"
    with Vine(brain.root, writable=False) as reader:
        assert rows(reader) == before
    shutil.rmtree(brain.root / "_derived")
    with Vine(brain.root, writable=False) as reader:  # a reader rebuilds a missing catalog too
        assert rows(reader) == before
    assert brain.status() == ""


def test_a_stale_catalog_is_rebuilt_on_open(brain, make_note):
    with brain.open() as vine:
        populate(vine, make_note)
    path = brain.root / "sales" / "policy.md"
    node = parse_node(path.read_text())
    node.frontmatter["summary"] = "Return windows per channel, edited by hand."
    node.frontmatter["title"] = "Hand-edited policy"
    path.write_text(render_node(node.frontmatter, node.body))
    brain.git("-c", "user.name=Ana", "-c", "user.email=ana@example.com", "commit", "-qam", "edit by hand")
    with brain.open() as vine:
        row = vine.catalog.get("sales/policy")
        assert row["summary"] == "Return windows per channel, edited by hand."
        assert vine.search("hand")[0]["id"] == "sales/policy"


def test_repeated_edits_keep_one_search_row_per_node(vine, make_note):
    populate(vine, make_note)
    for title in ("Returns desk", "Refund desk", "Exchange desk"):
        vine.graft("sales/policy", {"set_frontmatter": {"title": title}})
    fts_ids = [r[0] for r in vine.catalog.db.execute("SELECT id FROM nodes_fts ORDER BY id")]
    node_ids = [r[0] for r in vine.catalog.db.execute("SELECT id FROM nodes ORDER BY id")]
    assert fts_ids == node_ids
    assert [h["id"] for h in vine.search("refund")] == []
    assert vine.search("desk")[0]["id"] == "sales/policy"


def test_a_branch_rewritten_by_the_writes_beneath_it_stays_one_true_search_entry(brain, vine, make_note):
    """Every plant rewrites its parent's row (coverage, updated); its search entry
    is kept while title, tags, aliases and summary are the same, replaced when one
    changes, and equals what a rebuild from the files makes."""
    populate(vine, make_note)
    for i in range(5):
        vine.plant(make_note(f"sales/note-{i}", f"Ledger note {i}."))
    row = vine.catalog.db.execute("SELECT coverage FROM nodes WHERE id = 'sales/_index'").fetchone()
    assert row[0].startswith("8 bananas")
    vine.graft("sales/_index", {"set_frontmatter": {"summary": "Quotas and commissions.", "tags": ["quota"]}})
    vine.plant(make_note("sales/note-5", "Ledger note 5."))
    assert [h["id"] for h in vine.search("commissions")] == ["sales/_index"]
    assert [h["id"] for h in vine.search("quota")] == ["sales/_index"]
    assert vine.search("Commercial ledgers", kind="branch") == []
    incremental = rows(vine)
    vine.close()
    shutil.rmtree(brain.root / "_derived")
    with Vine(brain.root) as rebuilt:
        assert rows(rebuilt) == incremental


def test_a_catalog_of_another_layout_version_is_rebuilt(brain, make_note):
    import sqlite3
    with brain.open() as vine:
        populate(vine, make_note)
        before = rows(vine)
    with sqlite3.connect(brain.root / "_derived" / "catalog.db") as con:
        con.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
        con.execute("DELETE FROM nodes WHERE id = 'sales/policy'")
    with brain.open() as vine:
        assert rows(vine) == before


def test_a_hand_edited_passport_of_odd_shapes_is_stored_as_json_or_as_it_is(brain):
    """Whatever YAML shape a key holds, its column gets the value itself (a string or
    a number) or its JSON; tags and aliases keep their strings only."""
    import datetime as dt
    from monkeyllm_core.forest.catalog import Catalog
    from monkeyllm_core.forest.dialect import load_dialect
    catalog = Catalog(brain.root)
    catalog.begin()
    catalog.upsert_node({"id": "odd/n", "type": "note", "title": ["a", "b"], "summary": 12,
                         "tags": ["x", 3, "é"], "aliases": "not a list", "created": dt.date(2026, 1, 2),
                         "updated": "2026-01-03", "confidence": True, "source": {"by": "hand"},
                         "payload_hash": None, "coverage": ["3 bananas"], "source_size": 2**62, "source_mtime": 1.5,
                         "stale": "yes"}, load_dialect(brain.root), body_tokens=9, outline=[])
    catalog.commit()
    types = ", ".join(f"{c}, typeof({c})" for c in NODE_COLUMNS)
    got = catalog.db.execute(f"SELECT {types} FROM nodes WHERE id = 'odd/n'").fetchone()
    assert dict(zip(NODE_COLUMNS, zip(got[::2], got[1::2]))) == {
        "id": ("odd/n", "text"), "type": ("note", "text"), "kind": ("banana", "text"), "parent": ("odd/_index", "text"),
        "title": ("['a', 'b']", "text"), "summary": ("12", "text"), "tags": ('["x", "é"]', "text"),
        "aliases": ("[]", "text"), "created": ('"2026-01-02"', "text"), "updated": ("2026-01-03", "text"),
        "confidence": (1.0, "real"), "source": ('{"by": "hand"}', "text"), "payload": (None, "null"),
        "payload_type": (None, "null"), "payload_hash": (None, "null"), "coverage": ('["3 bananas"]', "text"),
        "origin": (None, "null"), "source_path": (None, "null"), "source_hash": (None, "null"),
        "source_size": (2**62, "integer"), "source_mtime": (1.5, "real"), "stale": (1, "integer"),
        "body_tokens": (9, "integer"), "outline": ("[]", "text")}
    assert catalog.db.execute("SELECT title, tags, aliases, summary FROM nodes_fts WHERE id = 'odd/n'").fetchone() \
        == ("['a', 'b']", "x é", "", "12")
    catalog.close()
