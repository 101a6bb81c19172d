"""The write request: a passport holds passport fields only; what the engine does
with files (a dataset to birth, a payload to install) travels beside it, taken by
plant and replace alike."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from monkeyllm_core import DatasetSpec, NodeWrite, PayloadSpec, VineError, parse_node
from monkeyllm_core.forest.sections import get_section

DATASET = {"t": {"columns": {"n": "INTEGER"}}}


def _db(path: Path, *values: int) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (n INTEGER)")
    conn.executemany("INSERT INTO t VALUES (?)", [(v,) for v in values])
    conn.commit()
    conn.close()
    return path


def test_the_wire_dict_is_parsed_into_passport_body_and_dataset() -> None:
    request = NodeWrite.from_wire({"id": "data/orders", "type": "dataset", "parent": "data/_index",
                                   "title": "Orders", "summary": "Orders.", "source_path": "orders.csv",
                                   "body": "# Orders\n", "schema": DATASET, "rows": {"t": [[1]]}})
    assert request.passport == {"id": "data/orders", "type": "dataset", "title": "Orders", "summary": "Orders.",
                                "source_path": "orders.csv"}
    assert request.body == "# Orders\n"
    assert request.dataset == DatasetSpec(schema=DATASET, rows={"t": [[1]]})
    assert request.payload is None


def test_a_wire_parent_that_breaks_the_parent_rule_is_refused() -> None:
    with pytest.raises(VineError) as info:
        NodeWrite.from_wire({"id": "sales/policy", "parent": "finance/_index", "summary": "A policy."})
    assert info.value.code == "E_FRONTMATTER" and "parent rule" in info.value.message


@pytest.mark.parametrize("key", ["payload_source", "payload_move", "row_counts", "manual_notes"])
def test_plant_refuses_an_engine_instruction_inside_the_passport(vine, brain, tmp_path, key) -> None:
    before = brain.head()
    with pytest.raises(VineError) as info:
        vine.plant({"id": "photo", "type": "media", "title": "Photo", "summary": "A photo.",
                    "payload": "_assets/photo.png", "payload_type": "image", key: str(tmp_path / "photo.png")})
    assert info.value.code == "E_FRONTMATTER" and key in info.value.message
    assert "Spec" in info.value.hint
    assert not vine.exists("photo") and brain.head() == before
    brain.assert_clean()


def test_replace_refuses_an_engine_instruction_inside_the_passport(vine, brain, make_note, tmp_path) -> None:
    vine.plant(make_note("fact"))
    vine.flush()
    before = brain.head()
    with pytest.raises(VineError) as info:
        vine.replace("fact", {"summary": "A new fact.", "payload_source": str(_db(tmp_path / "x.db", 1))})
    assert info.value.code == "E_FRONTMATTER" and "payload_source" in info.value.message
    assert brain.head() == before and "payload_source" not in vine.read("fact").frontmatter


def test_a_request_carries_a_dataset_or_a_payload_not_both(tmp_path) -> None:
    with pytest.raises(ValueError, match="not both"):
        NodeWrite(passport={"id": "data"}, dataset=DatasetSpec(schema=DATASET),
                  payload=PayloadSpec(source=tmp_path / "x.db"))


def test_the_request_keeps_its_own_copy_of_the_passport() -> None:
    passport = {"id": "fact", "summary": "A fact."}
    request = NodeWrite(passport=passport)
    passport["summary"] = "Changed later."
    assert request.passport["summary"] == "A fact."


def test_plant_installs_the_payload_the_request_names(vine, brain, tmp_path) -> None:
    result = vine.plant(NodeWrite(passport={"id": "data", "type": "dataset", "title": "Data", "summary": "Numbers.",
                                            "payload": "data.db", "payload_type": "sqlite"},
                                  payload=PayloadSpec(source=_db(tmp_path / "src.db", 1, 2),
                                                      manual_notes=("`n` counts apples.",))))
    assert result["commit"]
    node = vine.read("data")
    assert "`n` counts apples." in get_section(node.body, "Query manual")
    assert "### t — 2 rows" in node.body
    assert (tmp_path / "src.db").is_file()  # copied, not moved: move is the caller's choice
    brain.assert_clean()


def test_row_counts_the_caller_took_are_the_ones_the_map_states(vine, tmp_path) -> None:
    """Whoever counted hands the number along; the engine does not count again."""
    vine.plant(NodeWrite(passport={"id": "data", "type": "dataset", "title": "Data", "summary": "Numbers.",
                                   "payload": "data.db", "payload_type": "sqlite"},
                         payload=PayloadSpec(source=_db(tmp_path / "src.db", 1), move=True, row_counts={"t": 7})))
    assert "### t — 7 rows" in vine.read("data").body
    assert not (tmp_path / "src.db").exists()  # moved into place


def test_a_moved_payloads_hash_and_map_the_caller_made_are_the_ones_planted(vine, brain, tmp_path) -> None:
    """The Gardener's workers hash a staged dataset and render its map from it; the
    writer moves the file in and takes both, as it would have made them."""
    import hashlib

    from monkeyllm_core.data.sample_map import render_map
    staged = _db(tmp_path / "staged.db", 1, 2)
    made = render_map(staged, ("Two numbers.",), {"t": 2})
    sha = hashlib.sha256(staged.read_bytes()).hexdigest()
    passport = {"id": "data", "type": "dataset", "title": "Data", "summary": "Numbers.",
                "payload": "data.db", "payload_type": "sqlite"}
    vine.plant(NodeWrite(passport=passport, body="# Data\n", payload=PayloadSpec(
        source=staged, move=True, row_counts={"t": 2}, manual_notes=("Two numbers.",), sha256=sha, sample_map=made)))
    vine.plant(NodeWrite(passport={**passport, "id": "again"}, body="# Data\n", payload=PayloadSpec(
        source=_db(tmp_path / "again.db", 1, 2), move=True, row_counts={"t": 2}, manual_notes=("Two numbers.",))))
    mine, engines = vine.read("data"), vine.read("again")
    assert mine.frontmatter["payload_hash"] == sha == hashlib.sha256((brain.root / "data.db").read_bytes()).hexdigest()
    assert mine.body == engines.body  # the map the caller made is the engine's own
    assert get_section(mine.body, "Query manual") == get_section(engines.body, "Query manual")
    assert "Two numbers." in mine.body and "### t — 2 rows" in mine.body
    # taken as the caller made it, not rendered a second time
    manual, samples = made
    vine.plant(NodeWrite(passport={**passport, "id": "told"}, body="# Data\n", payload=PayloadSpec(
        source=_db(tmp_path / "told.db", 1, 2), move=True, row_counts={"t": 2},
        sample_map=(manual.replace("Two numbers.", "Told numbers."), samples))))
    assert "Told numbers." in vine.read("told").body
    vine.flush()
    brain.assert_clean()


def test_a_hash_the_caller_took_is_recorded_as_it_is_and_validate_checks_it(vine, brain, tmp_path) -> None:
    """The writer does not hash a moved payload again when told its hash: a caller
    that told a wrong one is caught by validate, as a payload changed outside tend."""
    told = "ab" * 32
    vine.plant(NodeWrite(passport={"id": "data", "type": "dataset", "title": "Data", "summary": "Numbers.",
                                   "payload": "data.db", "payload_type": "sqlite"}, body="# Data\n",
                         payload=PayloadSpec(source=_db(tmp_path / "staged.db", 1), move=True, sha256=told)))
    assert vine.read("data").frontmatter["payload_hash"] == told
    vine.flush()
    assert any("data.db does not match payload_hash" in line for line in brain.findings())


def test_replace_rebuilds_a_dataset_from_a_dataset_spec(vine, brain) -> None:
    vine.plant({"id": "data", "type": "dataset", "title": "Data", "summary": "Numbers.",
                "schema": DATASET, "rows": {"t": [[1]]}})
    vine.replace("data", NodeWrite(passport={"summary": "More numbers."},
                                   dataset=DatasetSpec(schema=DATASET, rows={"t": [[1], [2], [3]]},
                                                       manual_notes=("Three numbers.",))))
    node = parse_node(brain.text("data.md"))
    assert node.frontmatter["summary"] == "More numbers."
    assert "### t — 3 rows" in node.body and "Three numbers." in node.body
    assert vine.query("data", "SELECT COUNT(*) FROM t")["rows"] == [[3]]
    vine.flush()
    brain.assert_clean()


def test_replace_with_a_body_replaces_the_body(vine, brain, make_note) -> None:
    vine.plant(make_note("fact"))
    vine.replace("fact", NodeWrite(passport={"title": "Fact"}, body="# Fact\n\nA corrected fact.\n"))
    node = vine.read("fact")
    assert node.body == "# Fact\n\nA corrected fact.\n" and node.frontmatter["title"] == "Fact"
