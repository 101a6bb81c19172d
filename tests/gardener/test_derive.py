from __future__ import annotations

import pytest

from monkeyllm_gardener.derive import (
    derive_summary,
    derive_title,
    is_valid_summary,
    summary_for_branch,
    summary_for_dataset,
    summary_for_media,
)


def assert_contract(summary: str) -> None:
    assert summary.strip()
    assert len(summary) <= 240
    assert "\n" not in summary
    assert not summary.lower().startswith(("this document describes", "file containing"))


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("# Board meeting\n\nText.", "Board meeting"),
        ("Intro.\n\n## Sub\n\n# Real *Title*\n", "Real Title"),
        ("---\ntitle: FM\n---\n# Heading\n", "Heading"),
        ("```\n# not a title\n```\n# After code\n", "After code"),
        ("Setext Title\n============\n\nBody.", "Setext Title"),
        ("## Only h2\n\nBody.", "fallback"),
        ("#hashtag is not a heading\n", "fallback"),
        ("", "fallback"),
    ],
)
def test_derive_title(markdown: str, expected: str) -> None:
    assert derive_title(markdown, "fallback") == expected


def test_summary_takes_whole_opening_sentences_with_markdown_stripped() -> None:
    markdown = (
        "# Board meeting\n\n"
        "The board approved the **Falcon** rollout for [Q2 2026](https://x.example/q2). "
        "Invoice `INV-1041` was paid. Budget stays at $1.2M. A fourth sentence is dropped.\n"
    )
    summary = derive_summary(markdown, title="Board meeting")
    assert summary == (
        "The board approved the Falcon rollout for Q2 2026. Invoice INV-1041 was paid. Budget stays at $1.2M."
    )


@pytest.mark.parametrize(
    "noise",
    [
        "---\ntitle: Secret title\ntags: [hidden]\n---\n",
        "```python\nprint('code sentence.')\n```\n",
        "| col | other |\n| --- | --- |\n| table cell. | x |\n",
        "![diagram of everything](diagram.png)\n",
        "[Home](index.md) | [Next](next.md)\n",
        "<!-- an html comment.\nspanning lines. -->\n",
        "## A heading.\n",
        "---\n",
        "[ref]: https://example.com\n",
    ],
)
def test_non_prose_is_skipped(noise: str) -> None:
    summary = derive_summary(noise + "\nThe real opening sentence.\n", title="T")
    assert summary == "The real opening sentence."


def test_frontmatter_never_reaches_the_summary() -> None:
    markdown = "---\ntitle: Quarterly plan\nsecret: hunter2\n---\n\nWe plan three launches in 2026.\n"
    assert "hunter2" not in derive_summary(markdown, title="Quarterly plan")


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("This document describes the refund policy for EU customers.", "The refund policy for EU customers."),
        ("File containing: quarterly numbers for 2026.", "Quarterly numbers for 2026."),
        ("THIS DOCUMENT DESCRIBES how we work. Second sentence.", "How we work. Second sentence."),
        ("This document describes. Refunds take 14 days.", "Refunds take 14 days."),
    ],
)
def test_boilerplate_openings_are_dropped(markdown: str, expected: str) -> None:
    summary = derive_summary(markdown, title="T")
    assert summary == expected
    assert_contract(summary)


def test_a_long_first_sentence_is_cut_at_a_word_with_an_ellipsis() -> None:
    sentence = " ".join(f"word{i}" for i in range(80)) + "."
    summary = derive_summary(sentence, title="T")
    assert_contract(summary)
    assert summary.endswith("…")
    assert summary[:-1].split(" ")[-1] in sentence.split(" ")  # no word cut in half


def test_sentences_stop_before_overflowing() -> None:
    first, second = "A" * 150 + ".", "B" * 100 + "."
    assert derive_summary(f"{first} {second}", title="T") == first


def test_list_items_count_as_sentences() -> None:
    summary = derive_summary("- Buy milk\n- Call Ana: re INV-7\n", title="Todo")
    assert summary == "Buy milk. Call Ana: re INV-7."


@pytest.mark.parametrize(
    "markdown",
    ["", "   \n\n", "# Just a heading\n", "```\ncode only.\n```", "---\ntitle: x\n---\n", "| a |\n|---|\n| b |", "!!!"],
)
def test_never_empty_falls_back_to_the_title(markdown: str) -> None:
    summary = derive_summary(markdown, title="Team offsite", kind_hint="note")
    assert summary == 'Note titled "Team offsite".'


def test_fallback_respects_the_limit_with_a_huge_title_and_names_the_kind() -> None:
    summary = derive_summary("", title="Budget " * 100, kind_hint="document")
    assert_contract(summary)
    assert summary.startswith('Document titled "Budget')


@pytest.mark.parametrize(
    "markdown",
    [
        "x" * 5000,
        "Line one\nline two\nline three.\n\nNext paragraph.",
        "a. b. c. d. e. f.",
        "***bold italic*** and __under__ and ~~struck~~.",
        "Ünïcödé façade — naïve café. " * 30,
        "This document describes " + "y " * 300,
        "file containing",
    ],
)
def test_every_summary_meets_the_contract(markdown: str) -> None:
    summary = derive_summary(markdown, title="T")
    assert_contract(summary)
    assert is_valid_summary(summary)


def test_dataset_summary_names_table_rows_and_columns() -> None:
    summary = summary_for_dataset(
        "orders-2026", {"orders_2026": 1240}, {"orders_2026": ["id", "customer", "region", "total"]}
    )
    assert summary == 'Dataset "orders-2026": table orders_2026 with 1,240 rows; columns id, customer, region, total.'


def test_dataset_summary_of_a_wide_table_states_what_it_leaves_out() -> None:
    columns = [f"measurement_{i:03d}" for i in range(60)]
    summary = summary_for_dataset("sensors", {"readings": 1}, {"readings": columns})
    assert_contract(summary)
    assert "with 1 row;" in summary
    shown = summary.count("measurement_")
    assert summary.endswith(f"and {60 - shown} more.")


def test_dataset_summary_lists_several_tables() -> None:
    summary = summary_for_dataset("crm", {"customers": 12, "orders": 1}, {"customers": ["id"], "orders": ["id"]})
    assert summary == 'Dataset "crm": 2 tables: customers (12 rows), orders (1 row).'


def test_media_summary() -> None:
    summary = summary_for_media("whiteboard pricing", "PNG format, 320x160 pixels, 2,048 bytes", kind="image")
    assert summary == 'Image "whiteboard pricing": PNG format, 320x160 pixels, 2,048 bytes.'
    assert_contract(summary_for_media("x" * 500, "y " * 500, kind="audio"))


def test_branch_summary_lists_child_titles_deterministically() -> None:
    titles = [f"Q{i} report" for i in range(1, 40)]
    summary = summary_for_branch("Invoices", titles, 12, 2)
    assert summary == summary_for_branch("Invoices", titles, 12, 2)
    assert summary.startswith('Folder "Invoices": 12 nodes and 2 sub-branches, including Q1 report, Q2 report,')
    assert_contract(summary)
    assert summary.endswith("more.")


@pytest.mark.parametrize(
    ("children", "bananas", "branches", "expected"),
    [
        ([], 0, 0, 'Folder "X": empty so far.'),
        (["Only child"], 1, 0, 'Folder "X": 1 node, including Only child.'),
        (["A", "B"], 1, 1, 'Folder "X": 1 node and 1 sub-branch, including A, B.'),
    ],
)
def test_branch_summary_small_cases(children: list[str], bananas: int, branches: int, expected: str) -> None:
    assert summary_for_branch("X", children, bananas, branches) == expected


def test_a_summary_skips_openings_without_prose_then_takes_three_sentences_of_a_long_note() -> None:
    # Issue 16: the deriver reads lazily, stopping once the summary is full. The
    # sentences it skips (no letters, a boilerplate opening alone) and the text past
    # the third sentence (here 20,000 paragraphs, an unclosed fence) change nothing.
    markdown = "\n\n".join([
        "# Ledger", "- ?!", "This document describes:", "Totals are *final*. Refunds [wait](https://x.y) a day.",
        "> Audits close on **Friday**.", "Fourth sentence is left out.",
        *(f"Paragraph {n} says more." for n in range(20_000)), "```", "never closed",
    ])
    summary = derive_summary(markdown, title="Ledger")
    assert summary == "Totals are final. Refunds wait a day. Audits close on Friday."
    assert_contract(summary)


def test_a_long_note_without_prose_falls_back_to_the_title() -> None:
    markdown = "# Inventory\n\n" + "\n".join(f"| {n} | item {n} |" for n in range(5_000))
    assert derive_summary(markdown, title="Inventory") == 'Note titled "Inventory".'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain words only", "plain words only"),
        ("see ![logo](a.png) [the docs](https://d.example) and [[Page|alias]] or [[Other]]", "see the docs and alias or Other"),
        ("a [ref][1] note[^1] with <https://x.example> and <b>bold</b> `code`", "a ref note with https://x.example and bold code"),
        ("***both*** __strong__ ~~gone~~ _it_ snake_case_name 2*3*4", "both strong gone it snake_case_name 2*3*4"),
        ("  tabs\tand\u3000ideographic\xa0spaces\x1c \u2028end  ", "tabs and ideographic spaces end"),
        ("[unclosed link( and * lone star and < lone angle", "[unclosed link( and * lone star and < lone angle"),
    ],
)
def test_inline_markdown_is_reduced_to_its_visible_text(text: str, expected: str) -> None:
    from monkeyllm_gardener.kit.markdown import strip_inline_markdown
    assert strip_inline_markdown(text) == expected


@pytest.mark.parametrize(
    "text", ["", "\n", "\n\n", "one", "one\n", "one\ntwo", "one\n\ntwo\n", "a\rb\r\nc\x0cd\u2028e\n"]
)
def test_lines_with_next_is_split_with_the_following_line(text: str) -> None:
    # the readers' lazy split: each line of text.split("\n"), with the next one or ""
    from monkeyllm_gardener.kit.markdown import lines_with_next

    lines = text.split("\n")
    assert list(lines_with_next(text)) == list(zip(lines, lines[1:] + [""]))


@pytest.mark.parametrize("text", ["", "One.", "One. Two! Three? Four", 'He said "go." Then left.  Twice…  Done. ',
                                  "No end", "a.b. c.) d.] e.’ f", ". . .", "x.\n\ny.\tz."])
def test_sentence_pieces_are_the_pattern_split(text: str) -> None:
    from monkeyllm_gardener.derive import _SENTENCE_END, _split_lazily

    assert list(_split_lazily(_SENTENCE_END, text)) == _SENTENCE_END.split(text)


@pytest.mark.parametrize(
    ("line", "in_comment", "expected"),
    [
        ("plain prose", False, ("plain prose", False)),  # the no-comment shortcut
        ("", False, ("", False)),
        ("plain prose", True, ("", True)),  # inside an open comment: nothing kept
        ("a <!-- c --> b", False, ("a  b", False)),
        ("<!-- open", False, ("", True)),
        ("end --> after", True, (" after", False)),
        ("x --> y <!-- z", True, (" y ", True)),
        ("-->", False, ("-->", False)),
    ],
)
def test_text_outside_comments(line: str, in_comment: bool, expected: tuple[str, bool]) -> None:
    from monkeyllm_gardener.derive import _outside_comments

    assert _outside_comments(line, in_comment) == expected


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_title_and_summary_read_cr_newlines_as_lf(newline: str) -> None:
    from monkeyllm_gardener.kit.markdown import first_h1

    note = "Setext title\n============\n\n<!-- a\ncomment -->\nThe plan is ready. It ships in May.\n\n- one item\n"
    crlf = note.replace("\n", newline)
    assert derive_summary(crlf, title="t") == derive_summary(note, title="t")
    if newline == "\r\n":  # first_h1 reads CR LF as LF; a lone CR is no line break to it
        assert first_h1(crlf) == first_h1(note) == "Setext title"


@pytest.mark.parametrize(
    "line",
    ["plain prose with no link", "[a](b)", "![img](x.png) , [b](c)", "<https://x.org>", "see https://x.org",
     "https://a.org | https://b.org", "[[Wiki]] - [[Other]]", "a [ref] here", "x < y", "http://", "- [a](b) -"],
)
def test_link_only_lines(line: str) -> None:
    # the shortcut (no '[', '<' or 'http': prose) gives what the token scan gives
    from monkeyllm_gardener.derive import _LINK_SEPARATORS, _LINK_TOKEN, _is_link_only

    rest, found = _LINK_TOKEN.subn(" ", line)
    assert _is_link_only(line) == (found > 0 and _LINK_SEPARATORS.fullmatch(rest) is not None)
