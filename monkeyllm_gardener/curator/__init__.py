"""The Curator: the only model stage of ingestion (summaries, tags, link proposals).

Public API (the pipeline wires it into adopt, sync and rollup)::

    settings = CuratorSettings.from_env(os.environ)   # CuratorConfigError if unusable
    with Curator(settings, directives=..., default_tags=[...]) as curator:
        for outcome in curator.curate_many(requests):  # input order, concurrent
            ...
        curator.summarize_branch(BranchRequest(...))   # str, or None: use the fallback
        curator.stats()

``check_summary`` and ``trim_summary`` (the summary contract) live in
``monkeyllm_gardener.curator.contract`` and are re-exported here.
"""
from __future__ import annotations

from monkeyllm_gardener.curator.contract import (
    CURATOR_BOILERPLATE_OPENINGS,
    check_summary,
    fold_tag,
    trim_summary,
)
from monkeyllm_gardener.curator.curator import (
    STAT_KEYS,
    BranchRequest,
    Candidate,
    CurationOutcome,
    CurationRequest,
    Curator,
)
from monkeyllm_gardener.curator.settings import CuratorConfigError, CuratorSettings

__all__ = [
    "CURATOR_BOILERPLATE_OPENINGS",
    "STAT_KEYS",
    "BranchRequest",
    "Candidate",
    "CurationOutcome",
    "CurationRequest",
    "Curator",
    "CuratorConfigError",
    "CuratorSettings",
    "check_summary",
    "fold_tag",
    "trim_summary",
]
