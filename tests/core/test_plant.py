"""plant: the file, the parent's entry, coverage upward, the catalog row and
exactly one commit; datasets born from a declarative schema."""
from __future__ import annotations

import hashlib
import re

import pytest

from monkeyllm_core import NodeWrite, PayloadSpec, Vine, VineError, parse_node
from monkeyllm_core.forest.sections import get_section

SUMMARY = "Return and exchange windows per channel, with invoice rules."


def test_plant_writes_node_entry_coverage_catalog_and_one_commit(vine, brain, make_note):
    vine.plant({"id": "sales/_index", "title": "Sales", "summary": "Commercial policy and ledgers."})
    vine.flush()
    commits_before = len(brain.subjects())
    result = vine.plant(make_note("sales/exchange-policy", SUMMARY, title="Exchange policy", source="manual"))
    vine.flush()
    assert result["id"] == "sales/exchange-policy"
    assert result["trail"] == ["_index", "sales/_index"]
    assert result["commit"] == brain.head()

    node = parse_node(brain.text("sales/exchange-policy.md"))
    assert node.frontmatter["summary"] == SUMMARY
    branch = parse_node(brain.text("sales/_index.md"))
    assert f"- [[sales/exchange-policy]] \u2014 {SUMMARY}" in branch.body.splitlines()
    assert branch.frontmatter["coverage"] == "1 bananas, 0 sub-branches"
    master = brain.text("_index.md")
    assert ("- [[sales/_index]] \u2014 Commercial policy and ledgers. 1 bananas, 0 sub-branches."
            in master.splitlines())
    assert parse_node(master).frontmatter["coverage"] == "0 bananas, 1 sub-branches"

    row = vine.catalog.get("sales/exchange-policy")
    assert row["summary"] == SUMMARY and row["parent"] == "sales/_index" and row["kind"] == "banana"

    assert len(brain.subjects()) == commits_before + 1
    assert brain.subjects()[0] == "plant(sales/exchange-policy): Exchange policy [source=manual]"
    # node, parent index and the grandparent (coverage) land in the same commit
    assert brain.files_in_last_commit() == ["_index.md", "sales/_index.md", "sales/exchange-policy.md"]
    brain.assert_clean()


def test_default_source_is_agent_and_branch_commit_message(vine, brain):
    vine.plant({"id": "people/_index", "title": "People", "summary": "Everyone we work with."})
    vine.plant({"id": "people/ana", "type": "entity", "title": "Ana", "summary": "Head of sales."})
    vine.flush()
    assert brain.subjects()[:2] == ["plant(people/ana): Ana [source=agent]",
                                     "plant(people/_index): People [source=agent]"]


def test_nested_branches_keep_coverage_true_up_the_trail(vine, brain, make_note):
    vine.plant({"id": "a/_index", "title": "A", "summary": "Region A."})
    vine.plant({"id": "a/b/_index", "title": "B", "summary": "Region B."})
    vine.plant({"id": "a/b/c/_index", "title": "C", "summary": "Region C."})
    vine.plant(make_note("a/b/c/leaf"))
    vine.plant(make_note("a/b/leaf2"))
    vine.plant(make_note("top"))
    vine.flush()
    assert parse_node(brain.text("a/b/c/_index.md")).frontmatter["coverage"] == "1 bananas, 0 sub-branches"
    b = brain.text("a/b/_index.md")
    assert parse_node(b).frontmatter["coverage"] == "1 bananas, 1 sub-branches"
    assert "- [[a/b/c/_index]] \u2014 Region C. 1 bananas, 0 sub-branches." in b
    a = brain.text("a/_index.md")
    assert "- [[a/b/_index]] \u2014 Region B. 1 bananas, 1 sub-branches." in a
    master = brain.text("_index.md")
    assert parse_node(master).frontmatter["coverage"] == "1 bananas, 1 sub-branches"
    assert "- [[top]] \u2014 " in master
    # a new branch's template: title, blockquote, the three sections
    c = parse_node(brain.text("a/b/c/_index.md")).body
    assert c.startswith("# C\n\n> Region C.\n\n## Sub-branches\n")
    assert "## Direct bananas" in c and "## Cross trails" in c
    brain.assert_clean()


@pytest.mark.parametrize("node, code", [
    ({"id": "nowhere/fact", "type": "note", "title": "F", "summary": "S."}, "E_NOT_FOUND"),
    ({"id": "fact", "type": "note", "title": "F", "summary": "S.", "parent": "other/_index"}, "E_FRONTMATTER"),
    ({"id": "_meta/extra", "type": "note", "title": "F", "summary": "S."}, "E_SCHEMA"),
    ({"id": "a/../b", "type": "note", "title": "F", "summary": "S."}, "E_FRONTMATTER"),
    ({"id": "fact.md", "type": "note", "title": "F", "summary": "S."}, "E_FRONTMATTER"),
    ({"id": "fact", "type": "branch", "title": "F", "summary": "S."}, "E_SCHEMA"),
])
def test_plant_refusals_write_nothing(vine, brain, node, code):
    before, head = brain.snapshot(), brain.head()
    with pytest.raises(VineError) as info:
        vine.plant(node)
    assert info.value.code == code
    vine.flush()
    assert brain.snapshot() == before and brain.head() == head


def test_planting_an_existing_id_is_refused(vine, brain, make_note):
    vine.plant(make_note("fact"))
    with pytest.raises(VineError) as info:
        vine.plant(make_note("fact", "Another summary."))
    assert info.value.code == "E_EXISTS"
    assert "graft" in info.value.hint


def test_payloads_are_never_staged(vine, brain, tmp_path):
    vine.plant({"id": "data/_index", "title": "Data", "summary": "Datasets and media."})
    vine.plant({"id": "data/ledger", "type": "dataset", "title": "Ledger", "summary": "Orders.",
                "schema": {"orders": {"columns": {"id": "INTEGER"}}}, "rows": {"orders": [[1]]}})
    image = tmp_path / "photo.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    vine.plant(NodeWrite(passport={"id": "data/photo", "type": "media", "title": "Photo", "summary": "A team photo.",
                                   "payload": "_assets/photo.png", "payload_type": "image"},
                         payload=PayloadSpec(source=image)))
    vine.close()
    assert (brain.root / "data" / "ledger.db").is_file() and (brain.root / "data" / "_assets" / "photo.png").is_file()
    tracked = brain.tracked()
    assert all(path.endswith(".md") or path == ".gitignore" for path in tracked), tracked
    assert brain.status() == ""  # the payloads are ignored, not untracked noise
    assert brain.findings() == []


def generated_rows(n):
    for i in range(n):
        yield [i, f"g{i % 10}", i * 0.5, None if i % 3 else "x"]


KEYWORD_SCHEMA = {"orders": {"columns": {"order": "INTEGER", "group": "TEXT", "amount": "REAL",
                                         "select": "TEXT"},
                             "primary_key": ["order"]}}


def test_dataset_plant_from_a_schema_with_keyword_columns_and_100k_generated_rows(vine, brain):
    vine.plant({"id": "sales/_index", "title": "Sales", "summary": "Commercial policy and ledgers."})
    result = vine.plant({"id": "sales/orders-2026", "type": "dataset", "title": "Orders 2026",
                         "summary": "Every order of 2026, one row per order.",
                         "body": "# Orders 2026\n\n## Notes\n\namount is in USD.\n",
                         "schema": KEYWORD_SCHEMA, "rows": {"orders": generated_rows(100_000)}})
    vine.flush()
    assert result["commit"] == brain.head() and result["trail"] == ["_index", "sales/_index"]
    db = brain.root / "sales" / "orders-2026.db"
    node = parse_node(brain.text("sales/orders-2026.md"))
    fm = node.frontmatter
    assert (fm["payload"], fm["payload_type"]) == ("orders-2026.db", "sqlite")
    assert fm["payload_hash"] == hashlib.sha256(db.read_bytes()).hexdigest()
    assert brain.files_in_last_commit() == ["_index.md", "sales/_index.md", "sales/orders-2026.md"]
    assert brain.subjects()[0] == "plant(sales/orders-2026): Orders 2026 [source=agent]"

    body = node.body
    assert "## Notes\n\namount is in USD." in body  # the person's section survives
    manual = get_section(body, "Query manual")
    samples = get_section(body, "Sample rows")
    assert manual and samples
    assert '"order" INTEGER' in manual and '"group" TEXT' in manual
    assert "### orders \u2014 100000 rows" in samples
    examples = re.findall(r"^- `(SELECT .*)`$", manual, flags=re.M)
    assert examples
    for sql in examples:
        answer = vine.query("sales/orders-2026", sql)
        assert answer["columns"], sql
    count = vine.query("sales/orders-2026", "SELECT COUNT(*) FROM orders")
    assert count["rows"] == [[100_000]]
    grouped = vine.query("sales/orders-2026", 'SELECT "group", COUNT(*) FROM orders GROUP BY "group" ORDER BY 1')
    assert grouped["rows"][0] == ["g0", 10_000]
    brain.assert_clean()


def test_dataset_plant_without_rows_has_a_manual_and_no_sample_rows(vine, brain):
    vine.plant({"id": "log", "type": "dataset", "title": "Log", "summary": "Events, empty at birth.",
                "schema": {"events": {"columns": {"at": "TEXT", "what": "TEXT"}}}})
    body = parse_node(brain.text("log.md")).body
    assert body.startswith("# Log\n\n## Query manual\n")
    assert get_section(body, "Query manual") is not None
    assert get_section(body, "Sample rows") is None


def test_a_body_that_already_has_a_query_manual_keeps_it(vine, brain):
    manual = "## Query manual\n\nUse `SELECT at FROM events` and nothing else.\n"
    vine.plant({"id": "log", "type": "dataset", "title": "Log", "summary": "Events, empty at birth.",
                "body": "# Log\n\n" + manual, "schema": {"events": {"columns": {"at": "TEXT"}}}})
    body = parse_node(brain.text("log.md")).body
    assert body.count("## Query manual") == 1
    assert "Use `SELECT at FROM events` and nothing else." in body


@pytest.mark.parametrize("schema", [
    {"Orders": {"columns": {"id": "INTEGER"}}},
    {"orders": {"columns": {"id": "DECIMAL"}}},
    {"orders": {"columns": {"id": "INTEGER"}, "primary_key": ["nope"]}},
    {f"t{i}": {"columns": {"id": "INTEGER"}} for i in range(11)},
    {"orders": {"columns": {f"c{i}": "TEXT" for i in range(51)}}},
    {"orders": {"columns": {}}},
    {},
])
def test_dataset_schema_errors_are_e_schema_and_leave_nothing(vine, brain, schema):
    before, head = brain.snapshot(), brain.head()
    with pytest.raises(VineError) as info:
        vine.plant({"id": "ledger", "type": "dataset", "title": "Ledger", "summary": "Orders.",
                    "schema": schema})
    assert info.value.code == "E_SCHEMA"
    vine.flush()
    assert brain.snapshot() == before and brain.head() == head


def test_dataset_plant_never_overwrites_an_existing_db(vine, brain):
    stray = brain.root / "ledger.db"
    stray.write_bytes(b"someone else's bytes")
    before = brain.snapshot()
    with pytest.raises(VineError) as info:
        vine.plant({"id": "ledger", "type": "dataset", "title": "Ledger", "summary": "Orders.",
                    "schema": {"orders": {"columns": {"id": "INTEGER"}}}})
    assert info.value.code == "E_SCHEMA" and "already exists" in info.value.message
    assert stray.read_bytes() == b"someone else's bytes"
    assert brain.snapshot() == before


@pytest.mark.parametrize("summary", ["Plan \x1b[31mred\x1b[0m, March 2026.", "Line one.\nLine two.",
                                     "A \u202ereversed note, 2026.", "Bell\x07 rings, 2026."])
def test_a_summary_with_control_escape_or_bidi_characters_is_refused(brain, summary: str) -> None:
    with Vine(brain.root) as vine:
        with pytest.raises(VineError) as caught:
            vine.plant({"id": "n", "type": "note", "title": "N", "summary": summary})
    assert caught.value.code == "E_FRONTMATTER" and "control, escape or bidi" in caught.value.message


@pytest.mark.parametrize("bad_id", [
    ".hidden", "a/.hidden", ".git/_index", "_derived/_index", "_assets/_index", "x/_assets/y",
    "new\nline", "tab\there", "a]]b", "a[[b", "a|b", "a#b",
])
def test_plant_refuses_ids_the_forest_cannot_hold(brain, vine: Vine, bad_id: str) -> None:
    before = brain.head()
    node = {"id": bad_id, "type": "branch" if bad_id.endswith("_index") else "note",
            "title": "t", "summary": "A test node with one fact."}
    with pytest.raises(VineError) as err:
        vine.plant(node)
    assert err.value.code == "E_FRONTMATTER"
    vine.close()
    assert brain.head() == before
    brain.assert_clean()


@pytest.mark.parametrize("good_id", ["sp ace", "ünïcode", "x%y?z", "deep/er"])
def test_plant_still_accepts_ids_with_spaces_unicode_and_url_characters(brain, vine: Vine, good_id: str) -> None:
    if "/" in good_id:
        vine.plant({"id": "deep/_index", "type": "branch", "title": "deep", "summary": "Deep region."})
    vine.plant({"id": good_id, "type": "note", "title": "t", "summary": "A test node with one fact."})
    vine.close()
    brain.assert_clean()


def test_plant_of_a_node_named_in_a_cross_trail_keeps_the_trail_and_lists_the_node(brain) -> None:
    text = brain.text("_index.md").replace("## Cross trails\n", "## Cross trails\n- [[later]] — see the later note.\n")
    (brain.root / "_index.md").write_text(text, encoding="utf-8")
    brain.commit_all("hand-written cross trail")
    with brain.open() as vine:
        vine.plant({"id": "later", "type": "note", "title": "later", "summary": "The later note."})
    master = brain.text("_index.md")
    assert "- [[later]] — see the later note." in master
    assert "## Direct bananas\n- [[later]] — The later note.\n" in master
    brain.assert_clean()
