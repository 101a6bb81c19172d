"""sniff ranks by matching lines exactly as a literal scan does, however the body index
learns them: a term's words' line counts (``word_lines``), a bound of hits or non-blank
lines made exact by counting, or a scan of every copy. The bodies here are made to
stress those bounds: a term on every line, twice on one line, inside several words of
one line, blank and whitespace-only lines, CRLF, and bodies changed after indexing."""
from __future__ import annotations

import os
import random

import pytest

from monkeyllm_core import Vine
from monkeyllm_core.read.body_index import INDEX_PATH, BodyIndex
from monkeyllm_core.read.sniff import sniff
from test_read_sniff import literal_scan, reference_fold

# ``zq`` is inside more than 64 vocabulary words (zq0 ... zq79): the index cannot list
# them, and every body is scanned; ``ba`` is inside fewer, which the index places
WORDS = ["ba", "bab", "abba", "baba", "cab", "xyz", "dab", "Bá", "BA", "qq", "zz", "xchang", "exchange",
         *(f"zq{i}" for i in range(80))]
TERM_SETS = [
    ["ba"], ["bab"], ["abba"], ["baba"], ["ab"], ["xchang"], ["zq"], ["zq1"], ["b a"], ["ba b"], [" ba"],
    ["qq zz"], ["xyz"], ["ab", "xyz"], ["zq", "cab"], ["ba", "bab", "abba"], ["xchang", "zq7"], ["nowhere"],
]


def stress_body(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(1, 14)):
        shape = rng.random()
        if shape < 0.15:
            lines.append("")
        elif shape < 0.25:
            lines.append(rng.choice(["   ", "\t", " \t "]))  # blank to the eye: no term is on it
        else:
            words = rng.choices(WORDS[:13] + rng.sample(WORDS[13:], 3), k=rng.randint(1, 6))
            if rng.random() < 0.3:
                words += words[:2]  # the same word twice on one line
            lines.append(" ".join(words))
    end = rng.choice(["\n", "\r\n"])
    return end.join(lines) + rng.choice([end, ""])


def plant_stress(vine: Vine, count: int = 48) -> None:
    rng = random.Random(20)
    with vine.bulk():
        for branch in ("east", "west"):
            vine.plant({"id": f"{branch}/_index", "type": "branch", "title": branch, "summary": f"The {branch}."})
        for n in range(count):
            vine.plant({"id": f"{('east', 'west')[n % 2]}/n{n:02d}", "type": "note", "title": f"N{n}",
                        "summary": f"Note {n}.", "body": stress_body(rng)})


def assert_ranked_as_a_scan(vine: Vine, got: dict, terms: list[str], prefix: str = "", heat=None) -> None:
    """The results are the literal scan's ranking, as far as the budget shows it, with its
    match counts; ``truncated`` exactly when more nodes matched."""
    expected = literal_scan(vine, terms, prefix)
    terms_asked = len({reference_fold(t) for t in terms})
    heat = heat or {}
    order = sorted(expected, key=lambda node: (-expected[node][0] / terms_asked * (1 + 0.3 * heat.get(node, 0.0)),
                                               -expected[node][1], node))
    shown = [(r["id"], r["match_count"]) for r in got["results"]]
    assert shown == [(node, expected[node][1]) for node in order[:len(shown)]], terms
    assert got["truncated"] == (len(shown) < len(expected)), terms
    assert shown or not expected, terms


@pytest.fixture
def stressed(vine):
    plant_stress(vine)
    with BodyIndex(vine.root, vine.catalog) as index:
        yield vine, index


def test_the_ranking_is_a_literal_scans_on_bodies_that_stress_the_bounds(stressed):
    vine, index = stressed
    for terms in TERM_SETS:
        got = sniff(index, terms, k=100)
        assert_ranked_as_a_scan(vine, got, terms)
        assert got["scanned_nodes"] == 48


def test_a_short_answer_is_the_head_of_the_full_ranking(stressed):
    vine, index = stressed
    for terms in TERM_SETS:
        full = [r["id"] for r in sniff(index, terms, k=100)["results"]]
        for k in (1, 3):
            got = sniff(index, terms, k=k)
            assert [r["id"] for r in got["results"]] == full[:k], (terms, k)
            assert got["truncated"] == (len(literal_scan(vine, terms)) > k), (terms, k)


def test_scoped_and_typed_answers_are_a_scans_of_that_subtree(stressed):
    vine, index = stressed
    for terms in TERM_SETS:
        assert_ranked_as_a_scan(vine, sniff(index, terms, scope="east", k=100), terms, "east/")
        assert_ranked_as_a_scan(vine, sniff(index, terms, scope="west/n01", k=100), terms, "west/n01")
        assert_ranked_as_a_scan(vine, sniff(index, terms, type_filter="note", k=100), terms)


def test_heat_reorders_exactly_as_the_formula_says(stressed):
    vine, index = stressed
    heat = {"west/n07": 0.5, "east/n10": 1.0, "east/n20": 0.25}
    for terms in TERM_SETS:
        got = sniff(index, terms, k=100, heat_of=lambda ids: {node: heat.get(node, 0.0) for node in ids})
        assert_ranked_as_a_scan(vine, got, terms, heat=heat)


def test_the_index_the_copies_on_disk_and_no_index_answer_alike(stressed, monkeypatch):
    vine, index = stressed
    indexed = [sniff(index, terms, k=100) for terms in TERM_SETS]
    monkeypatch.setattr("monkeyllm_core.read.body_index.COPIES_IN_MEMORY", 0)
    with BodyIndex(vine.root, vine.catalog) as on_disk:
        assert [sniff(on_disk, terms, k=100) for terms in TERM_SETS] == indexed
        assert on_disk._copies is None
    index.close()
    (vine.root / INDEX_PATH).unlink()
    (vine.root / INDEX_PATH).mkdir()  # no database can be opened there: every body is read from its file
    with BodyIndex(vine.root, vine.catalog) as unindexed:
        assert [sniff(unindexed, terms, k=100) for terms in TERM_SETS] == indexed


def test_words_sharing_a_line_count_it_once(vine):
    vine.plant({"id": "w/_index", "type": "branch", "title": "W", "summary": "W."})
    bodies = {
        "w/one-line": "exchange xchang exchanges\nnothing\n",  # three words holding it, one line
        "w/two-lines": "xchang\r\n\r\nexchange\r\n",  # CRLF, a blank line between
        "w/twice": "xchang xchang\n",  # one word twice on one line
    }
    for node_id, body in bodies.items():
        vine.plant({"id": node_id, "type": "note", "title": node_id, "summary": "S.", "body": body})
    with BodyIndex(vine.root, vine.catalog) as index:
        got = sniff(index, ["xchang"], k=10)
    assert [(r["id"], r["match_count"]) for r in got["results"]] == [
        ("w/two-lines", 2), ("w/one-line", 1), ("w/twice", 1)]


def test_a_term_on_every_line_is_not_ranked_below_its_bound(vine):
    """A body whose every non-blank line holds the term has as many lines as its bound:
    it must still come first among equals by id, whether the bound is its non-blank
    lines (a term in more than 64 words, ``zq``) or its hits (`` zq``, a separator)."""
    vine.plant({"id": "e/_index", "type": "branch", "title": "E", "summary": "E."})
    bodies = {
        "e/a": "zq1\nzq2 zq3\nzq4\n",  # on every line, twice on one
        "e/b": "zq5\nnone\nzq6\nnone\nzq7\n",  # as many lines, more non-blank ones
        "e/c": "zq8\n\n   \n\t\nzq9\r\n",  # blank and whitespace-only lines, CRLF
        "e/d": "a zq1 zq2\r\nb zq3\r\n",
        "e/e": "a zq4\nb zq5\nnone\n",
        "e/words": " ".join(WORDS[13:]) + "\n",  # the vocabulary: `zq` is in 80 words
    }
    for node_id, body in bodies.items():
        vine.plant({"id": node_id, "type": "note", "title": node_id, "summary": "S.", "body": body})
    with BodyIndex(vine.root, vine.catalog) as index:
        for terms in (["zq"], [" zq"], ["zq", "none"]):
            assert_ranked_as_a_scan(vine, sniff(index, terms, k=10), terms)
        assert [r["id"] for r in sniff(index, ["zq"], k=3)["results"]] == ["e/a", "e/b", "e/c"]
        assert [r["id"] for r in sniff(index, [" zq"], k=2)["results"]] == ["e/d", "e/e"]


def test_line_counts_follow_a_body_changed_after_indexing(vine):
    """The rowid of a re-indexed body may be reused: its old line counts must go with it."""
    vine.plant({"id": "c/_index", "type": "branch", "title": "C", "summary": "C."})
    vine.plant({"id": "c/a", "type": "note", "title": "A", "summary": "A.", "body": "qqword\nqqword\nother\n"})
    vine.plant({"id": "c/b", "type": "note", "title": "B", "summary": "B.", "body": "qqword\n"})
    vine.plant({"id": "c/z", "type": "note", "title": "Z", "summary": "Z.", "body": "qqword\nqqword\nqqword\n"})
    with BodyIndex(vine.root, vine.catalog, sweep_seconds=0) as index:
        assert_ranked_as_a_scan(vine, sniff(index, ["qqword"], k=10), ["qqword"])
        vine.graft("c/z", {"body": "qqword and qqword, once\n"})  # the last rowid, read again
        for terms in (["qqword"], ["word"], ["qq"]):
            assert_ranked_as_a_scan(vine, sniff(index, terms, k=10), terms)
        vine.graft("c/b", {"body": "qqword\n\nqqword\n\nqqword\n\nqqword\n"})
        for terms in (["qqword"], ["word"], ["qq"]):
            assert_ranked_as_a_scan(vine, sniff(index, terms, k=10), terms)
        path = vine.root / "c/a.md"
        path.write_text(path.read_text(encoding="utf-8").replace("other", "qqword"), encoding="utf-8")
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 2_000_000_000))  # an edit by hand
        for terms in (["qqword"], ["word"], ["qq"]):
            got = sniff(index, terms, k=10)
            assert_ranked_as_a_scan(vine, got, terms)
        assert [(r["id"], r["match_count"]) for r in got["results"]] == [("c/b", 4), ("c/a", 3), ("c/z", 1)]
