"""A passport's YAML written without PyYAML's emitter must be PyYAML's, byte for byte.

``block_yaml`` renders the shapes a writer makes (strings, numbers, booleans, None,
dates, lists of those, small link mappings) by libyaml's own rules; every other
shape is left to PyYAML. These tests generate many passports of nasty values and
compare both renderings, and check that what the fast path does not take still
renders as PyYAML does through ``passport.render_node``.
"""
from __future__ import annotations

import datetime as dt
import random

import pytest
import yaml

from monkeyllm_core.forest.block_yaml import block_yaml_renderer
from monkeyllm_core.forest.passport import ordered_frontmatter, parse_node, render_node

pytestmark = pytest.mark.skipif(not getattr(yaml, "__with_libyaml__", False),
                                reason="the fast path follows libyaml's emitter only")


def pyyaml_dump(mapping):
    return yaml.dump(mapping, Dumper=yaml.CSafeDumper, sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=1_000_000)


RENDER = block_yaml_renderer(getattr(yaml, "CSafeDumper", None))

# pieces of strings that each change how libyaml writes a scalar
NASTY = [
    "", " ", "a", "-", "--", "---", "--- x", "...", "..x", "?", "? x", ":", ": x", "x:", "x: y", "x:y",
    "#", "x #y", "x#y", "'", '"', "''", "a'b", "yes", "no", "Yes", "NO", "on", "Off", "y", "n", "true",
    "False", "null", "Null", "~", "NULL", "0", "012", "0x1f", "0o17", "1_000", "1.5", "1e5", "1.0e+5",
    ".inf", ".NaN", "-.inf", "2026-12-01", "2026-12-01 10:00:00", "2026-1-1", "<<", "=", "@x", "`x",
    "%x", "!x", "&x", "*x", "|x", ">x", "[x", "]x", "{x", "}x", ",x", "x,y", "x[y", "é", "日本", "\u00a0",
    "\u2028", "\u2029", "\t", "\n", "\r\n", "\x85", "\ufeff", "\U0001F600", "\x7f", "\x00", "\x1b", "\ud7ff",
    "\ue000", "\ufffd", "\ufffe", " lead", "trail ", "a  b", "a - b", "- a", "-a", "?a", ":a", "1:2",
    "12:30", "190:20:30", "+1", "-1", "+.5", "._", "0b101", "1,000", "x\\y", "\\", "Ünïcödé ☃",
]
LETTERS = list("abnoyYtTfFNO0123456789 .-+:#'\"?!&*|>%@`,[]{}_~=<eEx é日") + ["\u00a0", "\ufffd", "\ud7ff"]


def nasty_string(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.01:
        return "word " * rng.randint(1, 250_000)  # past the dump's width: PyYAML folds it
    if roll < 0.5:
        return "".join(rng.choice(LETTERS) for _ in range(rng.randint(0, 8)))
    return "".join(rng.choice(NASTY) for _ in range(rng.randint(1, 4)))


def nasty_scalar(rng: random.Random, dates: list[dt.date]):
    roll = rng.random()
    if roll < 0.55:
        return nasty_string(rng)
    if roll < 0.62:
        return rng.choice([0, -1, 7, 2**53 + 1, 2**63, -2**70, 10**40])
    if roll < 0.72:
        return rng.choice([0.0, -0.0, 1.5, 1e17, 1e-7, 1e300, float("inf"), -float("inf"), float("nan"),
                           0.7, 1672570800.0, 5e-324, 123456789.125])
    if roll < 0.77:
        return rng.choice([True, False])
    if roll < 0.80:
        return None
    if roll < 0.87:
        if dates and rng.random() < 0.3:
            return dates[0]  # one date object under two keys: PyYAML writes an anchor
        day = dt.date(rng.randint(1, 9999), rng.randint(1, 12), rng.randint(1, 28))
        dates.append(day)
        return day
    if roll < 0.89:
        return dt.datetime(2020, 1, 2, 3, 4, 5)
    return nasty_string(rng)


def nasty_value(rng: random.Random, shared: list, depth: int = 0):
    roll = rng.random()
    if roll < 0.6 or depth > 2:
        return nasty_scalar(rng, shared)
    if shared and rng.random() < 0.05:
        return shared[-1]  # one object twice: an alias
    if roll < 0.8:
        value = [nasty_value(rng, shared, depth + 1) for _ in range(rng.randint(0, 4))]
    else:
        value = {(nasty_string(rng) if rng.random() < 0.9 else rng.choice([1, None, True])):
                 nasty_value(rng, shared, depth + 1) for _ in range(rng.randint(0, 3))}
    shared.append(value)
    return value


def nasty_passport(rng: random.Random) -> dict:
    shared: list = []
    keys = ["id", "title", "summary", "tags", "links", "created", "source_sections", "x" * 129, "é" * 65]
    return {(nasty_string(rng) if rng.random() < 0.5 else rng.choice(keys)): nasty_value(rng, shared)
            for _ in range(rng.randint(1, 8))}


def adopted_passport(rng: random.Random) -> dict:
    """What the Gardener plants, with strings drawn from the nasty pieces."""
    words = [nasty_string(rng) if rng.random() < 0.3 else rng.choice(["Budget", "Q1", "report", "Ana"])
             for _ in range(rng.randint(1, 6))]
    text = " ".join(words)
    fm = {"id": "budgets/q1/inv-2056", "type": "note", "title": text, "summary": f"Date: 2019-05-10. {text}",
          "created": rng.choice(["2019-09-07", dt.date(2019, 9, 7)]), "updated": "2026-12-01",
          "tags": [nasty_string(rng) for _ in range(rng.randint(0, 3))], "confidence": rng.choice([0.7, 1.0, 0.0]),
          "source": "ingest", "origin": f"file:///tmp/x/{text}.md",
          "links": [{"rel": "related", "target": nasty_string(rng), "confidence": 0.5}] if rng.random() < 0.3 else [],
          "source_sections": [nasty_string(rng) for _ in range(rng.randint(0, 3))],
          "summary_source": "derived", "source_path": f"{text}.md", "source_hash": "ab" * 32,
          "source_size": rng.choice([0, 1989, 2**63 + 5]), "source_mtime": rng.choice([1672570800.0, 1.5e9, 0.1]),
          "stale": rng.choice([True, False, None])}
    return ordered_frontmatter(fm)


@pytest.mark.parametrize("make, seed", [(nasty_passport, seed) for seed in range(4)]
                         + [(adopted_passport, seed) for seed in range(2)])
def test_generated_passports_render_as_pyyaml_does(make, seed):
    rng = random.Random(seed)
    taken = 0
    for _ in range(3000):
        mapping = make(rng)
        fast = RENDER(mapping)
        if fast is None:
            continue  # left to PyYAML (checked below)
        taken += 1
        assert fast == pyyaml_dump(mapping), repr(mapping)[:2000]
    assert taken > 300  # the comparison ran on the fast path, not only on the fallback


def test_every_short_string_renders_as_pyyaml_does_as_value_key_and_item():
    rng = random.Random(7)
    taken = 0
    for _ in range(20_000):
        text = "".join(rng.choice(LETTERS) for _ in range(rng.randint(0, 8)))
        for mapping in ({"k": text}, {text: 1}, {"k": [text, {"a": text}], "m": {"n": text}}):
            fast = RENDER(mapping)
            if fast is not None:
                taken += 1
                assert fast == pyyaml_dump(mapping), repr(mapping)
    assert taken > 50_000


@pytest.mark.parametrize("mapping", [
    {"summary": "two\nlines"}, {"summary": "a\ttab"}, {"summary": "emoji \U0001F600"}, {"summary": "\ufeffbom"},
    {"summary": "bell\x07"}, {"summary": "line\u2028separator"}, {"summary": "word " * 250_000},
    {"x" * 129: "a key past libyaml's simple key"}, {1: "an int key"}, {"when": dt.datetime(2020, 1, 2, 3, 4)},
    {"tags": [["a list in a list"]]}, {"links": [{"rel": "x", "target": ["deep"]}]},
    {"a": (shared := ["one list"]), "b": shared}, {"a": (day := dt.date(2020, 1, 2)), "b": day},
])
def test_what_the_fast_path_does_not_prove_is_left_to_pyyaml(mapping):
    assert RENDER(mapping) is None
    text = render_node({"id": "n", **mapping} if "id" not in mapping else mapping, "Body.")
    assert text == "---\n" + pyyaml_dump(ordered_frontmatter({"id": "n", **mapping})) + "---\n\nBody.\n"


def test_an_adopted_note_takes_the_fast_path_and_reads_back_the_same():
    fm = {"id": "budgets/q1-2023-20/inv-2056-santos-location", "type": "note", "title": "INV-2056 Santos location",
          "summary": "Date: 2019-05-10 Ref: TKT-2552. Being his mail: total today was 2022-06-19 #3.",
          "created": "2019-09-07", "updated": "2026-12-01", "tags": ["one", "per", "yes", "2026"], "confidence": 0.7,
          "source": "ingest", "origin": "file:///tmp/x/Budgets/Q1%202023%2020/INV-2056%20Santos%20location.md",
          "source_sections": ["National resources: section", "'quoted' heading"], "summary_source": "derived",
          "source_author": "Nuno Almeida", "source_path": "Budgets/Q1 2023 20/INV-2056 Santos location.md",
          "source_hash": "6a4a8186ec23f3477429bc71aedfb0dbd02cf28211f3c1d37b38d857c4bf11ee",
          "source_size": 1989, "source_mtime": 1672570800.0}
    assert RENDER(ordered_frontmatter(fm)) is not None
    text = render_node(fm, "# INV-2056\n")
    assert text.startswith("---\n" + pyyaml_dump(ordered_frontmatter(fm)) + "---\n")
    assert parse_node(text).frontmatter == fm


def test_the_pure_python_dumper_gets_no_fast_path():
    assert block_yaml_renderer(yaml.SafeDumper) is None
