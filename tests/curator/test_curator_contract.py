"""The summary contract as code: table-driven vectors for every rule."""
from __future__ import annotations

import pytest

from monkeyllm_core.forest import summary_contract as core
from monkeyllm_gardener.curator import CURATOR_BOILERPLATE_OPENINGS, check_summary, fold_tag, trim_summary
from monkeyllm_gardener.curator.contract import merge_tags, split_sentences
from monkeyllm_gardener.curator.dates import year_months
from monkeyllm_gardener.curator.language import detect_language
from monkeyllm_gardener.curator import CurationRequest, Curator, CuratorSettings
from monkeyllm_gardener.curator.testing_server import ScriptedOpenAIServer, json_reply

EN_CONTENT = (
    "The board met to review the rollout plan. The team agreed that the budget is "
    "fixed and that the launch will happen after the audit."
)
PT_CONTENT = (
    "A diretoria aprovou o plano de lançamento. O orçamento foi fixado e a equipe "
    "não vai mudar a data, que também depende da auditoria para os clientes."
)
ES_CONTENT = (
    "El comité aprobó el plan de lanzamiento. El presupuesto es fijo y los equipos "
    "no cambian la fecha, que también depende de la auditoría para los clientes."
)


def test_valid_summary_passes():
    assert check_summary("Board minutes on the Falcon rollout. The budget is fixed at 2 M USD.", EN_CONTENT) == []


@pytest.mark.parametrize("opening", CURATOR_BOILERPLATE_OPENINGS)
def test_boilerplate_openings_are_rejected_in_any_case(opening):
    summary = f"{opening.upper()} the travel policy for staff."
    problems = check_summary(summary, EN_CONTENT)
    assert any("boilerplate" in problem for problem in problems)


def test_boilerplate_list_names_the_format_openings():
    assert {"this document describes", "file containing", "this document", "this file", "the document"} <= set(
        CURATOR_BOILERPLATE_OPENINGS
    )


def test_the_curator_extends_the_core_boilerplate_list_rather_than_restating_it():
    assert CURATOR_BOILERPLATE_OPENINGS[: len(core.BOILERPLATE_OPENINGS)] == core.BOILERPLATE_OPENINGS


@pytest.mark.parametrize(
    "summary",
    [
        "Board minutes on the \x1b[31mFalcon\x1b[0m rollout.",  # an escape sequence
        "Board minutes on the \u202eFalcon rollout.",  # a bidi override
        "Board minutes on the Falcon rollout.\x00",
    ],
)
def test_a_summary_the_core_would_refuse_is_never_accepted(summary):
    assert core.summary_error(summary, where="s") is not None
    problems = check_summary(summary, EN_CONTENT)
    assert any("control, escape or bidi" in problem for problem in problems)


@pytest.mark.parametrize("summary", ["", "   ", "\n\t"])
def test_empty_summary_is_rejected(summary):
    assert check_summary(summary, EN_CONTENT) == ["the summary is empty"]


@pytest.mark.parametrize(
    ("length", "valid"),
    [(240, True), (241, False), (60, True)],
)
def test_at_most_240_characters(length, valid):
    summary = ("x" * (length - 1)) + "."
    problems = check_summary(summary, "")
    assert (problems == []) is valid
    if not valid:
        assert "limit is 240 characters" in problems[0]


@pytest.mark.parametrize(
    ("summary", "count"),
    [
        ("One. Two. Three.", 3),
        ("Rules, e.g. the receipts and U.S. travel. Totals 1240.5 USD.", 2),
        ("A single sentence without a full stop", 1),
        ("Uno. Dos. Tres. Cuatro.", 4),
    ],
)
def test_sentence_splitting(summary, count):
    assert len(split_sentences(summary)) == count


def test_four_sentences_are_rejected():
    problems = check_summary("Alpha rules. Beta rules. Gamma rules. Delta rules.", "")
    assert problems == ["the summary has 4 sentences; write one to 3"]


DATE_VECTORS = [
    # (content, summary, valid)
    ("Meeting held on 2026-03-14 about pricing.", "Pricing meeting minutes from March 2026.", True),
    ("Meeting held on 2026-03-14 about pricing.", "Pricing meeting minutes from 2026-03-14.", True),
    ("Meeting held on 2026-03-14 about pricing.", "Pricing meeting minutes, 14/03/2026.", True),
    ("Meeting held on 2026-03-14 about pricing.", "Pricing meeting minutes from Mar 2026.", True),
    ("Meeting held on 2026-03-14 about pricing.", "Pricing meeting minutes from 2026.", False),
    ("Meeting held on 2026-03-14 about pricing.", "Pricing meeting minutes.", False),
    ("Reunião de 14 de março de 2026 sobre preços.", "Ata da reunião de preços, março de 2026.", True),
    ("Reunión del 14 de marzo de 2026 sobre precios.", "Acta de la reunión de precios, marzo 2026.", True),
    ("Report dated 14/03/2026.", "Quarterly report for March 2026.", True),
    ("Invoices issued 2026-01-04 to 2026-02-20.", "Invoices for Q1 2026 from four customers.", True),
    ("Invoices issued 2026-01-04 to 2026-02-20.", "Invoices from January to March 2026.", True),
    ("Undated notes about pricing and tiers.", "Pricing notes on the three tiers.", True),
    ("Version 2.1 released in 2026.", "Release notes for version 2.1.", True),  # a year alone is not a date
]


@pytest.mark.parametrize(("content", "summary", "valid"), DATE_VECTORS)
def test_dated_content_needs_month_and_year_in_summary(content, summary, valid):
    problems = check_summary(summary, content)
    date_problems = [problem for problem in problems if "dated" in problem]
    assert (date_problems == []) is valid, problems


def test_content_date_hint_makes_content_dated():
    problems = check_summary("Team photo of the offsite.", "A photo.", content_date="2025-11-02")
    assert any("November 2025" in problem for problem in problems)
    assert check_summary("Team photo of the offsite, November 2025.", "A photo.", content_date="2025-11-02") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("On 2026-03-14 we met.", {(2026, 3)}),
        ("Em 5 de dezembro de 2025.", {(2025, 12)}),
        ("Le 3 février 2024.", {(2024, 2)}),
        ("Am 1. Oktober 2023.", {(2023, 10)}),
        ("March 14, 2026", {(2026, 3)}),
        ("03/04/2026", {(2026, 3), (2026, 4)}),  # ambiguous: both readings
        ("may be done by 2026", set()),  # "may" the verb is not May
    ],
)
def test_year_month_extraction(text, expected):
    assert year_months(text) == expected


@pytest.mark.parametrize(
    ("text", "language"),
    [(EN_CONTENT, "en"), (PT_CONTENT, "pt"), (ES_CONTENT, "es"), ("Budget 2026", None), ("", None)],
)
def test_language_detection(text, language):
    assert detect_language(text) == language


def test_summary_in_another_language_is_rejected():
    problems = check_summary("The board approved the launch plan and the budget is fixed for the year.", PT_CONTENT)
    assert any("write it in Portuguese" in problem for problem in problems)


def test_same_language_summary_passes():
    assert check_summary("Plano de lançamento aprovado pela diretoria. O orçamento foi fixado para os clientes.", PT_CONTENT) == []


def test_short_summary_is_not_judged_on_language():
    # Too few words to detect a language: the rule is not enforced.
    assert check_summary("Falcon rollout plan.", PT_CONTENT) == []


@pytest.mark.parametrize(
    ("raw", "tag"),
    [
        ("café", "cafe"),
        ("Finance", "finance"),
        ("São Paulo", "sao-paulo"),
        ("machine_learning", "machine-learning"),
        ("Ärger!", "arger"),
        ("#q1", "q1"),
        ("???", ""),
    ],
)
def test_tags_fold_accents_and_become_one_lowercase_word(raw, tag):
    assert fold_tag(raw) == tag


def test_tag_merge_dedupes_caps_at_five_and_says_what_it_dropped():
    tags, problems = merge_tags(["Finance", "café"], ["internal", "finance"], ["a", "b", "c", "d", "!!"])
    assert tags == ["finance", "cafe", "internal", "a", "b"]
    assert "tags capped at 5: dropped c, d" in problems
    assert any("'!!' dropped" in problem for problem in problems)


TRIM_VECTORS = [
    # (summary, limit, expected)
    ("Short and fine.", 240, "Short and fine."),
    ("First sentence here. Second sentence is here. Third one.", 30, "First sentence here."),
    ("First sentence here. Second sentence is here.", 44, "First sentence here."),
    ("First sentence here. Second sentence is here.", 45, "First sentence here. Second sentence is here."),
    ("One two three four five six seven.", 20, "One two three four…"),
    ("A. B. C. D. E.", 240, "A. B. C."),
    ("x" * 300, 10, "xxxxxxxxx…"),
    ("Alpha beta, gamma delta.", 14, "Alpha beta…"),
]


@pytest.mark.parametrize(("summary", "limit", "expected"), TRIM_VECTORS)
def test_trim_drops_whole_sentences_then_words_with_ellipsis(summary, limit, expected):
    trimmed = trim_summary(summary, limit)
    assert trimmed == expected
    assert len(trimmed) <= limit


def test_trimmed_long_summary_satisfies_the_contract():
    long = "Expense policy for travel and meals in 2026. " + "Receipts are required above fifty dollars. " * 8
    trimmed = trim_summary(long)
    assert len(trimmed) <= 240
    assert check_summary(trimmed, "") == []


DERIVED = "Expense policy. Travel and meals are reimbursed."
TEXT = "Travel and meals are reimbursed for all staff. Receipts are required above 50 USD."


def _curate(summary: str):
    with ScriptedOpenAIServer(default_reply=json_reply(summary)) as server:
        settings = CuratorSettings(endpoint=server.base_url, backoff_seconds=0.01,
                                   backoff_cap_seconds=0.05, timeout_seconds=5.0)
        with Curator(settings) as curator:
            request = CurationRequest(node_id="finance/policy", node_type="document", title="Expense policy",
                                      text=TEXT, derived_summary=DERIVED)
            return curator.curate(request)


@pytest.mark.parametrize(
    "wrapped",
    [
        '"This document describes the expense policy."',
        "“This document describes the expense policy.”",
        "**This document describes** the expense policy.",
        "'File containing the expense policy.'",
        "- This file lists the expense policy.",
    ],
)
def test_boilerplate_wrapped_in_quotes_or_markup_is_still_rejected(wrapped: str) -> None:
    outcome = _curate(wrapped)
    assert outcome.summary_source == "fallback"
    assert outcome.summary == DERIVED
