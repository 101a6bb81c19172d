from __future__ import annotations

import codecs
import time
from datetime import date
from pathlib import Path
from typing import Any

import pluggy
import pytest

from monkeyllm_gardener import hookspecs
from monkeyllm_gardener.derive import derive_summary
from monkeyllm_plugins import markdown_text
from monkeyllm_plugins.markdown_text import MarkdownTextConverter

from _conversions import write_source  # tests/plugins is on sys.path


convert = MarkdownTextConverter().convert


OBSIDIAN_NOTE = """---
title: Falcon launch plan
tags: [launch, "#q2", Planning]
aliases:
  - Falcon
  - Project F
author: Ana
secret_key: hunter2
---

# Launch plan (heading)

The board approved the Falcon rollout for Q2 2026.
"""


def test_source_frontmatter_fields_are_kept(tmp_path: Path) -> None:
    result = convert(write_source(tmp_path, "plan.md", OBSIDIAN_NOTE))
    assert result.kind == "markdown" and result.node_type == "note"
    assert result.title == "Falcon launch plan"
    assert dict(result.frontmatter) == {
        "title": "Falcon launch plan",
        "tags": ["launch", "q2", "Planning"],
        "aliases": ["Falcon", "Project F"],
        "author": "Ana",  # the provenance key source_author, through Conversion.frontmatter
    }
    assert result.warnings == ()


def test_other_frontmatter_keys_never_become_passport_keys_but_are_not_lost(tmp_path: Path) -> None:
    result = convert(write_source(tmp_path, "plan.md", OBSIDIAN_NOTE))
    assert "secret_key" not in result.frontmatter
    assert result.markdown.startswith("# Launch plan (heading)\n")
    assert "```yaml\ntitle: Falcon launch plan\n" in result.markdown  # verbatim, fenced, at the end
    assert "secret_key: hunter2\n```\n" in result.markdown


def test_frontmatter_does_not_leak_into_the_summary(tmp_path: Path) -> None:
    result = convert(write_source(tmp_path, "plan.md", OBSIDIAN_NOTE))
    summary = derive_summary(result.markdown, title=result.title or "plan")
    assert summary == "The board approved the Falcon rollout for Q2 2026."


def test_frontmatter_only_note_falls_back_to_its_title(tmp_path: Path) -> None:
    result = convert(write_source(tmp_path, "stub.md", "---\ntitle: Stub\ndate: 2026-03-01\n---\n"))
    assert result.title == "Stub"
    assert derive_summary(result.markdown, title=result.title) == 'Note titled "Stub".'


def test_frontmatter_with_only_known_keys_leaves_a_clean_body(tmp_path: Path) -> None:
    result = convert(write_source(tmp_path, "n.md", "---\ntags: a, b c\n---\nBody text.\n"))
    assert result.markdown == "Body text.\n"
    assert dict(result.frontmatter) == {"tags": ["a", "b", "c"]}
    assert result.title is None


def test_broken_yaml_frontmatter_stays_in_the_body_with_a_warning(tmp_path: Path) -> None:
    text = "---\ntitle: [unclosed\n---\n\nReal text here.\n"
    result = convert(write_source(tmp_path, "bad.md", text))
    assert result.markdown == text
    assert dict(result.frontmatter) == {}
    (warning,) = result.warnings
    assert "bad.md" in warning and "frontmatter" in warning and "\n" not in warning
    assert "unclosed" not in warning  # never the file's content
    assert derive_summary(result.markdown, title="bad") == "Real text here."


def test_a_leading_rule_that_is_not_yaml_mapping_stays_in_the_body(tmp_path: Path) -> None:
    text = "---\nJust prose between rules.\n---\nMore.\n"
    result = convert(write_source(tmp_path, "rule.md", text))
    assert result.markdown == text
    assert result.warnings == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\ntitle: From FM\n---\n# From H1\n", "From FM"),
        ("Intro\n\n# From H1\n", "From H1"),
        ("## Only h2\n\ntext\n", None),
        ("---\ntitle: 2024\n---\nx\n", "2024"),
        ("---\ntitle: [a, b]\n---\n# H1\n", "H1"),  # a non-scalar title is ignored
    ],
)
def test_title_rules(tmp_path: Path, text: str, expected: str | None) -> None:
    assert convert(write_source(tmp_path, "t.md", text)).title == expected


def test_latin1_file_is_decoded_with_a_warning(tmp_path: Path) -> None:
    path = write_source(tmp_path, "notes.md", "# Réunion\n\nLe café coûte 2 €.\n".encode("cp1252"))
    result = convert(path)
    assert result.title == "Réunion"
    assert "Le café coûte 2 €." in result.markdown
    (warning,) = result.warnings
    assert "notes.md" in warning and "cp1252" in warning


def test_utf8_bom_does_not_reach_the_title_or_body(tmp_path: Path) -> None:
    result = convert(write_source(tmp_path, "bom.md", codecs.BOM_UTF8 + "# Título\n\nTexto.\n".encode("utf-8")))
    assert result.title == "Título"
    assert not result.markdown.startswith("\ufeff")
    assert result.warnings == ()


def test_bom_before_frontmatter_still_finds_it(tmp_path: Path) -> None:
    result = convert(write_source(tmp_path, "bom.md", codecs.BOM_UTF8 + b"---\ntitle: BOM FM\n---\nBody.\n"))
    assert result.title == "BOM FM"
    assert result.markdown == "Body.\n"


def test_utf16_text_file_is_decoded(tmp_path: Path) -> None:
    result = convert(write_source(tmp_path, "log.txt", "Ligne une.\r\nLigne deux.\r\n".encode("utf-16")))
    assert result.markdown == "Ligne une.\nLigne deux.\n"
    assert result.warnings == ()


def test_text_file_is_kept_verbatim(tmp_path: Path) -> None:
    text = "---\ntitle: not parsed\n---\n# not a heading in a text file\n  indented   spacing kept\n"
    result = convert(write_source(tmp_path, "raw.txt", text))
    assert result.markdown == text
    assert result.title is None
    assert dict(result.frontmatter) == {}


@pytest.mark.parametrize("content", [b"", b"  \n\n\t\n"])
def test_empty_file_converts_to_an_empty_note_with_a_warning(tmp_path: Path, content: bytes) -> None:
    result = convert(write_source(tmp_path, "empty.md", content))
    assert result.kind == "markdown" and result.markdown == ""
    (warning,) = result.warnings
    assert "empty.md" in warning and "empty file" in warning


def test_registers_as_generic_fallback_for_text_extensions() -> None:
    manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    manager.add_hookspecs(hookspecs)
    manager.register(markdown_text)
    registered: list[tuple[object, float]] = []
    manager.hook.register_converters(register=lambda converter, priority=0.0: registered.append((converter, priority)))
    ((converter, priority),) = registered
    assert converter.name == "markdown"
    assert set(converter.extensions) == {".md", ".markdown", ".txt", ".text"}
    assert priority > 0.0  # any converter at the default priority goes first


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ("created: 2024-05-01\nmodified: 2024-06-02", {"created": date(2024, 5, 1), "modified": date(2024, 6, 2)}),
        ("date: '2023-01-09T10:00:00Z'\nlastmod: '2023-02-01'", {"created": "2023-01-09T10:00:00Z",
                                                               "modified": "2023-02-01"}),
        ("date: 2024-05-01\ncreated: 2020-01-01", {"created": date(2020, 1, 1)}),  # created wins over date
        ("author: '  Ana   Lima '", {"author": "Ana Lima"}),
    ],
)
def test_the_sources_dates_and_author_are_carried(tmp_path: Path, block: str, expected: dict) -> None:
    result = convert(write_source(tmp_path, "d.md", f"---\n{block}\n---\nBody.\n"))
    assert dict(result.frontmatter) == expected
    carried_everything = "date: 2024-05-01\ncreated" not in block
    assert (result.markdown == "Body.\n") == carried_everything  # a key not carried stays in the body


def test_an_author_list_is_not_a_passport_field_but_stays_in_the_body(tmp_path: Path) -> None:
    result = convert(write_source(tmp_path, "a.md", "---\nauthor: [Ana, Ben]\n---\nBody.\n"))
    assert dict(result.frontmatter) == {}
    assert "author: [Ana, Ben]" in result.markdown


@pytest.mark.parametrize(
    "name, hostile_line",
    [
        # Unclosed emphasis markers: quadratic in the line length for the inline stripper.
        ("emphasis.md", "*a " * 60_000),
        # A line of glued URLs: exponential backtracking in the link-only line check.
        ("urls.md", "http://" * 60 + " !"),
        # A heading with a long run of spaces: quadratic in the H1 title pattern.
        ("heading.md", "# a" + " " * 200_000 + "b"),
    ],
)
def test_markdown_with_pathological_lines_plants_quickly(vine_cli: Any, cli: Any, tmp_path: Path, name: str,
                                                       hostile_line: str) -> None:
    export = tmp_path / "export"
    export.mkdir()
    (export / name).write_text(f"Budget approved for March 2026.\n\n{hostile_line}\n", encoding="utf-8")
    started = time.monotonic()
    forest, report = vine_cli.adopt_into_new_forest(export, timeout=60)
    assert time.monotonic() - started < 30
    node_id = name.removesuffix(".md")
    assert report["planted"] == [node_id]
    assert cli.node(forest, node_id)["summary"].startswith("Budget approved for March 2026.")


@pytest.mark.parametrize(
    "frontmatter_value",
    ["7" * 5000,  # an integer Python's int() refuses (ValueError, not a YAMLError)
     "[" * 20000 + "]" * 20000],  # nesting deeper than the YAML parser's stack
)
def test_markdown_whose_frontmatter_cannot_be_loaded_plants_with_a_warning(vine_cli: Any, cli: Any, tmp_path: Path,
                                                                          frontmatter_value: str) -> None:
    export = tmp_path / "export"
    export.mkdir()
    (export / "note.md").write_text(f"---\nserial: {frontmatter_value}\n---\nPricing review for May 2026.\n",
                                    encoding="utf-8")
    forest, report = vine_cli.adopt_into_new_forest(export)
    assert report["planted"] == ["note"], report
    assert any("frontmatter does not parse" in line for line in report["warnings"])
    body = (forest / "note.md").read_text(encoding="utf-8")
    assert frontmatter_value in body  # kept as text, nothing lost
    assert cli.node(forest, "note")["summary"] == "Pricing review for May 2026."


# --- fast path: simple frontmatter without the parser


_FRONTMATTER_SAMPLES = [
    "created: 2024-03-25\nauthor: Lucas Oliveira\ntags: [index, products]\n",
    "title: Falcon launch plan\ntags: [launch, q2]\n\naliases: []\n",
    "a:\nb: \nc: yes\nd: 1.5\ne: 0x1F\nf: 0o17\ng: 1_000\nh: 1e5\ni: 6.02e+23\nj: null\nk: Null\nl: ~\n",
    "on: off\nyes: no\ntrue: false\nTrue: TRUE\nNULL: x\n",
    "date: 2024-02-30\n",  # not a day: a ValueError, as from the parser
    "when: 2001-12-14t21:59:43.10-05:00\n",
    "when: 2001-12-14 21:59:43.10\n",
    "x: a  b\n",  # two spaces: not read here
    "dup: 1\ndup: 2\n",
    "path: a/b.c+d-e\nv: 1.2.3\nn: -5\np: +5\nm: .5\n",
    "tags: [a,b]\n",
    "tags: [ a, b ]\n",
    "tags: [a, b,]\n",
    "tags:\n  - a\n  - b\n",
    "title: a: b\n",
    "title: a #comment\n",
    "title: 'quoted'\n",
    "k: v\r\n",
    "k: v\u2028w\n",
    "k: v\x85\n",
    "k: v\tw\n",
    " k: v\n",
    "k : v\n",
    "- a\n- b\n",
    "k: [x]\nk2: [x, 2024-01-01, 3, yes, null]\n",
    "key-with-dash: v\n_under: v\nCamelCase9: v\n",
    "k: " + "word " * 300 + "\n",
    "k" * 1030 + ": v\n",
    "a: b\n...\n",
    "a: b\n---\nc: d\n",
    "%YAML 1.1\n",
    "a: &x 1\nb: *x\n",
]


@pytest.mark.parametrize("block", _FRONTMATTER_SAMPLES)
def test_simple_frontmatter_reads_as_yaml_does(block: str) -> None:
    _assert_simple_frontmatter_agrees(block)


def test_simple_frontmatter_agrees_with_yaml_on_generated_blocks() -> None:
    import random

    rng = random.Random(23)
    # mostly words the fast path takes (so it is exercised), now and then one it must not
    plain = ["a", "Z", "x9", "2024-03-25", "2024-13-01", "1", "0", "-1", "+2", "1.5", ".5", "1e3", "0x1f", "0o7",
             "0b101", "1_0", "yes", "No", "on", "OFF", "true", "null", "Null", "nan", ".inf", "a.b", "a/b", "a-b",
             "a_b", "-", "+", ".", "/", "2001-12-14", "21-59-43"]
    odd = ["~", "a:b", "a,b", "#x", "[x]", "'q'", '"q"', "&a", "*a", "!t", "|", ">", "%", "@", "`", "\u00e9", "\t",
           "12:30", "2001-12-14 21:59:43", "1:2:3", "", "?", "{a: b}"]
    keys = ["k", "title", "tags", "K_2", "a-b", "yes", "null", "1", "_", "on", "-k", "k k", "\u00e9", "[k]"]

    def word() -> str:
        return rng.choice(odd) if rng.random() < 0.03 else rng.choice(plain)

    accepted = 0
    for _ in range(3000):
        lines = []
        for _ in range(rng.randint(1, 4)):
            if rng.random() < 0.3:
                separator = ", " if rng.random() < 0.9 else rng.choice([",", " , "])
                value = "[" + separator.join(word() for _ in range(rng.randint(0, 3))) + "]"
            else:
                value = (" " if rng.random() < 0.95 else "  ").join(word() for _ in range(rng.randint(0, 3)))
            key = rng.choice(keys[:8]) if rng.random() < 0.95 else rng.choice(keys)
            separator = ": " if rng.random() < 0.9 else rng.choice([":", ":  ", " : "])
            lines.append(key + separator + value + rng.choice(["", "", " ", "  "]))
            if rng.random() < 0.1:
                lines.append(rng.choice(["", " "]))
        accepted += _assert_simple_frontmatter_agrees("\n".join(lines) + "\n")
    assert accepted > 500  # the fast path took a good share of them (926 with this seed)


def _assert_simple_frontmatter_agrees(block: str) -> bool:
    """Both read ``block`` alike, when the fast path reads it at all (returned)."""
    import yaml

    def outcome(load: Any) -> Any:
        try:
            data = load(block)
        except (yaml.YAMLError, ValueError, RecursionError) as exc:
            return "error", type(exc)
        return "data", data, [(type(key), type(value)) for key, value in (data or {}).items()]

    fast = outcome(markdown_text._simple_frontmatter)
    if fast == ("data", None, []):
        return False  # not a simple block: the parser reads it
    assert fast == outcome(yaml.safe_load), block
    return True


def test_a_note_with_simple_frontmatter_converts_as_through_the_parser(tmp_path: Path) -> None:
    # same fields and body whether the block takes the fast path or not
    simple = ("---\ncreated: 2024-03-25\nauthor: Lucas Oliveira\ntags: [index, products]\nextra: kept\n---\n"
              "\n# T\n\nBody.\n")
    quoted = simple.replace("author: Lucas Oliveira", "author: 'Lucas Oliveira'")
    fast, parsed = convert(write_source(tmp_path, "a.md", simple)), convert(write_source(tmp_path, "b.md", quoted))
    assert fast.frontmatter == parsed.frontmatter == {
        "created": date(2024, 3, 25), "author": "Lucas Oliveira", "tags": ["index", "products"]}
    assert fast.markdown == parsed.markdown.replace("author: 'Lucas Oliveira'", "author: Lucas Oliveira")
    assert fast.title == parsed.title == "T"


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_a_note_reads_the_same_with_any_newline(tmp_path: Path, newline: str) -> None:
    # CR and CR LF become LF whichever way the note is read (one read, or read_text)
    text = "---\ntitle: Plan\ntags: [a, b]\n---\n\n# Heading\n\nFirst line.\nSecond line.\n"
    expected = convert(write_source(tmp_path, "lf.md", text))
    for data in (text.replace("\n", newline).encode(), text.replace("\n", newline).encode("utf-16")):
        result = convert(write_source(tmp_path, "note.md", data))
        assert (result.markdown, result.title, result.frontmatter) == (
            expected.markdown, expected.title, expected.frontmatter)
