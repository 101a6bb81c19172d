"""Contract holes found in review, driven through a real HTTP server on 127.0.0.1."""
from __future__ import annotations

import pytest

from monkeyllm_gardener.curator import CurationRequest, Curator, CuratorSettings
from monkeyllm_gardener.curator.testing_server import ScriptedOpenAIServer, json_reply

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
