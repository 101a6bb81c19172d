"""One Ranger cycle on a real forest: real git, real SQLite, heat from real hunts."""
from __future__ import annotations

from collections import Counter

import pytest

from monkeyllm_core import Vine, VineError
from monkeyllm_core.forest import branches as br
from monkeyllm_core.forest.sections import get_section
from monkeyllm_core.ranger import run_cycle
from monkeyllm_core.ranger.landmarks import pick_landmarks
from monkeyllm_core.read.heat import TRAILS_PATH

from _ranger_forest import age_heat, heat_rows, hunt, link, plant_notes

DAY = 86400.0

LINKS = {
    "notes/a": [link("notes/b", 0.3), link("notes/e", 0.3)],  # a-b walked: promoted; e: a warm end, kept
    "notes/c": [link("notes/d", 0.3), link("notes/e", 0.6), link("notes/d", rel="author")],
    "notes/f": [link("notes/b", 0.5, rel="discovered-shortcut")],
}


@pytest.fixture
def tended(brain):
    """The notes, with a, b and f hot (three hunts each: 0.3) and nothing else warm."""
    plant_notes(brain.root, LINKS)
    hunt(brain.root, ["notes/a", "notes/b", "notes/f"], times=3)
    return brain


def links_of(forest, node_id):
    with Vine(forest.root, writable=False) as vine:
        return vine.read(node_id).frontmatter.get("links")


def test_walked_links_are_promoted_and_cold_ones_pruned_one_commit_per_node(tended):
    before = tended.head()
    report = run_cycle(tended.root)
    assert links_of(tended, "notes/a") == [link("notes/b", 0.8), link("notes/e", 0.3)]
    assert links_of(tended, "notes/f") == [link("notes/b", 0.8, rel="discovered-shortcut")]
    # c -> d at 0.3 with both ends cold is gone; 0.6 is above prune_below; the author link is confirmed
    assert links_of(tended, "notes/c") == [link("notes/e", 0.6), link("notes/d", rel="author")]
    subjects = tended.git("log", "--format=%s", f"{before}..HEAD").splitlines()
    assert subjects == ["ranger(landmarks)", "ranger(promote): notes/f", "ranger(prune): notes/c",
                        "ranger(promote): notes/a"]
    for sha, message in zip(tended.git("log", "--format=%H", f"{before}..HEAD").split(), subjects):
        touched = tended.git("show", "--name-only", "--format=", sha).split()
        node = message.split(": ", 1)[1] if ": " in message else "_index"
        assert touched == [f"{node}.md"]
    assert [e["node"] for e in report.links["promoted"]] == ["notes/a", "notes/f"]
    assert report.links["pruned"] == [{"node": "notes/c", "rel": "related-to", "target": "notes/d",
                                       "confidence": 0.3}]
    assert [c["message"] for c in report.commits] == list(reversed(subjects))
    assert report.failed == []
    tended.assert_clean()
    with Vine(tended.root, writable=False) as vine:  # the catalog follows the edit
        assert vine.catalog.edges_of("notes/a")[0] == ("notes/a", "related-to", "notes/b", 0.8)


def test_a_node_is_never_deleted_and_heat_is_never_committed(tended):
    files = set(tended.tracked())
    run_cycle(tended.root)
    assert set(tended.tracked()) == files
    assert not any(path.startswith("_derived/") for path in tended.tracked())


def test_links_at_confidence_one_are_never_touched(brain):
    (brain.root / "_meta" / "ranger.yaml").write_text("prune_below: 1.0\npromoted_confidence: 1.0\n")
    plant_notes(brain.root, {"notes/c": [link("notes/d", 1.0), link("notes/e"), link("notes/d", 0.9, "author")],
                             "notes/a": [link("notes/b", 1.0), link("notes/f", 0.7)]})
    hunt(brain.root, ["notes/a", "notes/b", "notes/f"], times=3)
    run_cycle(brain.root)
    assert links_of(brain, "notes/c") == [link("notes/d", 1.0), link("notes/e")]  # the 0.9 one went
    assert links_of(brain, "notes/a") == [link("notes/b", 1.0), link("notes/f", 1.0)]


def test_heat_below_the_floor_after_evaporation_promotes_nothing(brain):
    plant_notes(brain.root, {"notes/a": [link("notes/b", 0.3)]})
    hunt(brain.root, ["notes/a", "notes/b"], times=3)
    age_heat(brain.root, "notes/b", 40 * DAY)  # 0.3 halves in 30 days: 0.12 now, under 0.2
    report = run_cycle(brain.root)
    assert links_of(brain, "notes/a") == [link("notes/b", 0.3)]
    assert report.links == {"promoted": [], "pruned": []}


def test_evaporation_deletes_cold_rows_and_prunes_what_only_they_kept(brain):
    plant_notes(brain.root, {"notes/a": [link("notes/b", 0.3)]})
    hunt(brain.root, ["notes/a", "notes/b"], times=1)
    for node in ("notes/a", "notes/b"):
        age_heat(brain.root, node, 200 * DAY)  # 0.1 x 0.5^(200/30): under 0.01
    report = run_cycle(brain.root)
    assert report.evaporation == {"heat_rows": 2, "session_rows": 0}
    assert heat_rows(brain.root) == {}
    assert links_of(brain, "notes/a") is None  # the last link went: the passport has no links key
    assert brain.subjects()[0] == "ranger(prune): notes/a"  # and no edge left: the Landmarks stay empty


def test_landmarks_are_the_most_connected_nodes_and_unchanged_means_no_commit(brain):
    plant_notes(brain.root, {"notes/a": [link("notes/b"), link("notes/c"), link("notes/d")],
                             "notes/b": [link("notes/c", rel="author")],
                             "notes/e": [link("notes/a", rel="mentioned-in")]})
    report = run_cycle(brain.root)
    # degrees: a 4, b 2, c 2, d 1, e 1 (f has no typed edge); ties by id
    assert [(n["id"], n["degree"]) for n in report.landmarks["nodes"]] == [
        ("notes/a", 4), ("notes/b", 2), ("notes/c", 2), ("notes/d", 1), ("notes/e", 1)]
    master = brain.text("_index.md")
    assert get_section(master.split("\n---\n", 1)[1], br.LANDMARKS) == (
        "## Landmarks\n\n" + "".join(f"- [[notes/{n}]] {br.EM_DASH} Note {n}, one fact.\n" for n in "abcde"))
    assert brain.subjects()[0] == "ranger(landmarks)"
    head = brain.head()
    again = run_cycle(brain.root)
    assert again.landmarks["changed"] is False and again.commits == []
    assert brain.head() == head
    brain.assert_clean()


def test_a_landmark_follows_its_summary_and_a_hand_edit_is_rebuilt(brain, make_note):
    plant_notes(brain.root, {"notes/a": [link("notes/b")]})
    run_cycle(brain.root)
    with brain.open() as vine:
        vine.graft("notes/b", {"set_frontmatter": {"summary": "Note b, a new fact."}})
    master = brain.text("_index.md")
    assert f"- [[notes/b]] {br.EM_DASH} Note b, a new fact." in master  # the writer kept it true
    head = brain.head()
    assert run_cycle(brain.root).commits == [] and brain.head() == head
    (brain.root / "_index.md").write_text(master.replace("## Landmarks\n", "## Landmarks\n\n- [[notes/f]] mine\n"))
    brain.commit_all("a hand edit")
    report = run_cycle(brain.root)
    assert report.landmarks["changed"] is True and brain.subjects()[0] == "ranger(landmarks)"
    assert "[[notes/f]]" not in brain.text("_index.md")


def test_landmarks_take_ten_then_the_ties_with_the_tenth_up_to_twenty():
    exists = {f"n{i:02d}" for i in range(30)}
    ranked = Counter({f"n{i:02d}": 30 - i for i in range(8)})  # n00..n07: 30..23
    ranked.update({f"n{i:02d}": 5 for i in range(8, 25)})      # n08..n24 all tied at 5
    picked = pick_landmarks(ranked, exists)
    assert [node for node, _ in picked] == [f"n{i:02d}" for i in range(20)]  # capped at twenty, by id
    no_tie = Counter({f"n{i:02d}": 30 - i for i in range(15)})
    assert [node for node, _ in pick_landmarks(no_tie, exists)] == [f"n{i:02d}" for i in range(10)]
    assert pick_landmarks(Counter({"_index": 9, "_meta/schema": 9, "gone": 9, "n01": 0}), exists) == []


def test_a_dry_run_reports_the_cycle_and_changes_nothing(tended):
    age_heat(tended.root, "notes/f", 400 * DAY)  # a cold row a real cycle deletes
    head, files = tended.head(), tended.snapshot()
    trails = (tended.root / TRAILS_PATH).read_bytes()
    rows = heat_rows(tended.root)
    dry = run_cycle(tended.root, dry_run=True)
    assert tended.head() == head and tended.snapshot() == files and tended.status() == ""
    assert (tended.root / TRAILS_PATH).read_bytes() == trails and heat_rows(tended.root) == rows
    assert dry.commits == [] and dry.dry_run is True
    real = run_cycle(tended.root)
    assert dry.links == real.links and dry.evaporation == real.evaporation == {"heat_rows": 1, "session_rows": 0}
    assert dry.landmarks["nodes"] == real.landmarks["nodes"] and dry.landmarks["changed"] is True
    assert dry.health["uncertain_links"] != real.health["uncertain_links"]  # the dry run's are before the edits


def test_a_dry_run_on_a_forest_without_heat_creates_no_trails_file(brain):
    plant_notes(brain.root, {"notes/a": [link("notes/b", 0.3)]})
    report = run_cycle(brain.root, dry_run=True)
    assert not (brain.root / TRAILS_PATH).exists()
    assert report.links["pruned"] == [{"node": "notes/a", "rel": "related-to", "target": "notes/b",
                                       "confidence": 0.3}]


def test_a_cycle_meeting_another_writer_is_e_locked_and_writes_nothing(tended):
    head = tended.head()
    with tended.open():
        with pytest.raises(VineError) as caught:
            run_cycle(tended.root)
    assert caught.value.code == "E_LOCKED" and tended.head() == head


@pytest.mark.parametrize("text, key", [
    ("promote_floor: 2\n", "promote_floor"), ("prune_below: high\n", "prune_below"),
    ("promoted_confidence: 0\n", "promoted_confidence"), ("payload_cache_gb: -1\n", "payload_cache_gb"),
    ("half_life_days: true\n", "half_life_days"), ("prune_below: 0.9\npromoted_confidence: 0.8\n", "prune_below"),
])
def test_a_bad_ranger_yaml_is_e_schema_naming_the_key_before_anything_is_written(tended, text, key):
    (tended.root / "_meta" / "ranger.yaml").write_text(text)
    head, trails = tended.head(), (tended.root / TRAILS_PATH).read_bytes()
    with pytest.raises(VineError) as caught:
        run_cycle(tended.root)
    assert caught.value.code == "E_SCHEMA" and key in caught.value.message
    assert "\n" not in caught.value.one_line()
    assert tended.head() == head and (tended.root / TRAILS_PATH).read_bytes() == trails


def test_unknown_keys_are_reported_with_the_key_they_resemble(tended):
    (tended.root / "_meta" / "ranger.yaml").write_text("half_life_day: 10\nmy_engine: on\n")
    report = run_cycle(tended.root)
    assert report.unknown_keys == ["half_life_day (did you mean half_life_days?)", "my_engine"]
    assert report.settings["half_life_days"] == 30.0
