"""The summary contract of the core: the floor every planted summary obeys."""
from __future__ import annotations

import pytest

from monkeyllm_core import VineError
from monkeyllm_core.forest.summary_contract import (
    BOILERPLATE_OPENINGS,
    SUMMARY_MAX_CHARS,
    boilerplate_opening,
    check_summary,
    summary_error,
)


def test_a_summary_within_every_rule_passes() -> None:
    summary = "Return windows per channel, with invoice rules for 2026."
    assert summary_error(summary, where="sales/policy") is None
    check_summary(summary, where="sales/policy")


def test_the_forbidden_openings_are_the_ones_the_format_names() -> None:
    assert BOILERPLATE_OPENINGS == ("this document describes", "file containing")
    assert SUMMARY_MAX_CHARS == 240


@pytest.mark.parametrize("summary", ["  This Document Describes the plan.", "file containing numbers"])
def test_a_boilerplate_opening_is_found_in_any_case_after_leading_spaces(summary: str) -> None:
    assert boilerplate_opening(summary) in BOILERPLATE_OPENINGS
    with pytest.raises(VineError, match="opens with boilerplate") as error:
        check_summary(summary, where="n")
    assert error.value.code == "E_FRONTMATTER"


@pytest.mark.parametrize("summary", ["The document store holds every signed contract.", "This page-turner of a plan."])
def test_wordings_only_the_curator_refuses_are_valid_passport_summaries(summary: str) -> None:
    # A person may write these; vine validate must not refuse a forest the format allows.
    assert summary_error(summary, where="n") is None


def test_a_writer_may_check_its_own_wider_list_of_openings() -> None:
    assert boilerplate_opening("This page lists prices.", ("this page",)) == "this page"
    assert boilerplate_opening("Prices per region.", ("this page",)) is None


@pytest.mark.parametrize(
    ("summary", "words"),
    [
        ("", "empty"),
        (None, "empty"),
        ("x" * 241, "60-token"),
        ("Two\nlines.", "control, escape or bidi"),
        ("A \u202eswapped\u202c word.", "control, escape or bidi"),
    ],
)
def test_the_first_broken_rule_is_named_with_where(summary: object, words: str) -> None:
    error = summary_error(summary, where="notes/idea")
    assert error is not None and error.code == "E_FRONTMATTER"
    assert error.message.startswith("notes/idea: ") and words in error.message
