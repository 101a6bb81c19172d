"""`vine adopt --curate` through the real CLI against a real OpenAI-compatible
server on 127.0.0.1 (the scripted one): the report, the planted summaries and the
closed-list links."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from monkeyllm_gardener.curator.testing_server import (
    ScriptedOpenAIServer,
    json_reply,
    message_text,
)

from cli_helpers import REPO

STAT_KEYS = ["llm_summaries", "fallbacks", "retries", "skipped", "links_proposed", "proposal_fallbacks",
             "branch_rollups", "branch_fallbacks", "transport_errors", "rejected", "repaired"]
_ISO = re.compile(r"\b(20\d\d)-(\d\d)-\d\d\b")
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December"]


def llm_env(**extra: str) -> dict[str, str]:
    """The Curator's settings for a run: four requests in flight, plus ``extra``."""
    return {"MONKEYLLM_LLM_CONCURRENCY": "4", **extra}


def _model_reply(request: dict) -> dict:
    """A well-behaved model: a dated summary naming the node, the first candidate as
    a link, and one invented id that the Curator must drop."""
    text = message_text(request)
    if "Entry lines" in text or "entry lines" in text:
        return json_reply(summary="Folder of exported plans from April 2026.")
    title = re.search(r"^Title: (.+)$", text, re.M)
    content = text.split("Content:", 1)[-1]
    date = _ISO.search(content)
    when = f" from {_MONTHS[int(date.group(2)) - 1]} {date.group(1)}" if date else ""
    candidates = re.findall(r"^- ([a-z0-9][a-z0-9/_-]*) \u2014 ", text, re.M)
    summary = f"Curated record of {title.group(1) if title else 'a node'}{when}."
    return json_reply(summary=summary, tags=["Operações", "export"], links=candidates[:1] + ["invented/node"])


@pytest.fixture
def configured_forest(vine_cli: Any, tmp_path: Path) -> Path:
    """An initialised forest whose _meta/gardener.yaml gives every node the tag 'internal'."""
    forest = vine_cli.init(tmp_path / "forest", title="Ops brain", env=llm_env())
    (forest / "_meta" / "gardener.yaml").write_text(yaml.safe_dump({"curation": {"default_tags": ["internal"]}}))
    return forest


def test_curated_adopt_of_the_fixtures_reports_model_and_counters(vine_cli: Any, tmp_path: Path,
                                                                  configured_forest: Path) -> None:
    with ScriptedOpenAIServer(responder=_model_reply, models=["served-model"]) as server:
        env = llm_env(MONKEYLLM_LLM_ENDPOINT=server.base_url)
        result = vine_cli("adopt", str(REPO / "fixtures" / "export"), "--forest", str(configured_forest),
                          "--curate", "--jobs", "2", env=env, timeout=300)
    lines = result.stdout.splitlines()
    assert result.returncode == 1, result.stdout + result.stderr  # the fixture's broken xlsx
    assert lines[0] == "curation model: served-model"
    assert lines[-1].startswith("curation: {")
    stats = eval(lines[-1][len("curation: "):], {})  # the seed prints a Python dict
    assert list(stats) == STAT_KEYS
    assert stats["llm_summaries"] >= 5
    assert stats["proposal_fallbacks"] >= 1  # the invented id, every time
    assert any(line.startswith("rollup: ") and "branch(es) rolled" in line for line in lines)

    falcon = (configured_forest / "notes" / "falcon-launch.md").read_text()
    fm = yaml.safe_load(falcon.split("---\n")[1])
    assert fm["summary"].startswith("Curated record of ")
    assert fm["summary_source"] == "curated"
    assert "internal" in fm["tags"] and "operacoes" in fm["tags"]  # accents folded, not dropped
    for link in fm.get("links", []):
        assert link["rel"] == "related-to" and link["confidence"] == 0.3
        assert link["target"] != "invented/node" and (configured_forest / f"{link['target']}.md").exists()
    # nothing broke the forest
    check = vine_cli("validate", "--forest", str(configured_forest), env=llm_env())
    assert check.returncode == 0, check.stdout
    status = subprocess.run(["git", "status", "--porcelain"], cwd=configured_forest, capture_output=True, text=True)
    assert status.stdout == ""


def test_curate_without_an_endpoint_fails_before_any_file_is_touched(vine_cli: Any, tmp_path: Path,
                                                                     configured_forest: Path) -> None:
    head = ["git", "rev-parse", "HEAD"]
    before = subprocess.run(head, cwd=configured_forest, capture_output=True, text=True).stdout
    config_before = (configured_forest / "_meta" / "gardener.yaml").read_text()
    result = vine_cli("adopt", str(REPO / "fixtures" / "export"), "--forest", str(configured_forest), "--curate",
                      env=llm_env(), timeout=300)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "MONKEYLLM_LLM_ENDPOINT" in result.stderr
    assert "Traceback" not in result.stderr
    assert subprocess.run(head, cwd=configured_forest, capture_output=True, text=True).stdout == before
    assert (configured_forest / "_meta" / "gardener.yaml").read_text() == config_before


def test_a_dead_endpoint_never_blocks_the_batch(vine_cli: Any, tmp_path: Path, configured_forest: Path) -> None:
    with ScriptedOpenAIServer(default_reply=(500, {"error": {"message": "boom"}})) as server:
        env = llm_env(MONKEYLLM_LLM_ENDPOINT=server.base_url, MONKEYLLM_LLM_MODEL="m",
                      MONKEYLLM_LLM_RETRIES="1")
        source = tmp_path / "export"
        source.mkdir()
        for i in range(6):
            (source / f"note-{i}.md").write_text(f"# Note {i}\n\nThe note number {i} of the export.\n")
        result = vine_cli("adopt", str(source), "--forest", str(configured_forest), "--curate", "--json", env=env,
                          timeout=300)
    assert result.returncode == 0, result.stderr
    import json
    report = json.loads(result.stdout)
    assert len(report["planted"]) == 6
    assert report["curation"]["transport_errors"] >= 1
    assert report["curation"]["llm_summaries"] == 0
    for i in range(6):
        text = (configured_forest / f"note-{i}.md").read_text()
        assert f"summary: The note number {i} of the export." in text  # the derived summary stands


def test_curated_summary_survives_a_sync_and_rollup_skips_unchanged_branches(vine_cli: Any, tmp_path: Path,
                                                                             configured_forest: Path) -> None:
    source = tmp_path / "export"
    (source / "plans").mkdir(parents=True)
    (source / "plans" / "q2.md").write_text("# Q2 plan\n\nThe plan for the second quarter, written 2026-04-02.\n")
    with ScriptedOpenAIServer(responder=_model_reply, models=["m"]) as server:
        env = llm_env(MONKEYLLM_LLM_ENDPOINT=server.base_url)
        adopt = vine_cli("adopt", str(source), "--forest", str(configured_forest), "--curate", env=env, timeout=300)
        assert adopt.returncode == 0
        curated = (configured_forest / "plans" / "q2.md").read_text()
        assert "summary: Curated record of Q2 plan from April 2026." in curated
        branch = (configured_forest / "plans" / "_index.md").read_text()
        assert "> Folder of exported plans from April 2026." in branch  # the model's rollup
        # the body changes; without --curate the curated summary is kept, the body refreshed
        (source / "plans" / "q2.md").write_text("# Q2 plan\n\nRevised plan for the quarter, 2026-04-20.\n")
        assert vine_cli("sync", "--forest", str(configured_forest), env=env, timeout=300).returncode == 0
        synced = (configured_forest / "plans" / "q2.md").read_text()
        assert "summary: Curated record of Q2 plan from April 2026." in synced
        assert "Revised plan for the quarter" in synced
        # a second model rollup: the branch's children are unchanged since the last one
        requests_before = len(server.requests)
        rolled = vine_cli("rollup", "--forest", str(configured_forest), "--curate", env=env, timeout=300)
        assert rolled.returncode == 0, rolled.stderr
        assert "rollup: 0 branch(es) rolled" in rolled.stdout
        assert len(server.requests) == requests_before


def test_curated_tags_are_folded_and_at_most_five_even_with_the_sources_own_tags(vine_cli: Any, tmp_path: Path,
                                                                                 configured_forest: Path) -> None:
    source = tmp_path / "export"
    source.mkdir()
    (source / "alpha.md").write_text("---\ntags: [Project Alpha, Work, Café, Q2, Roadmap, Extra]\n---\n"
                                     "# Alpha\n\nThe alpha project plan, written 2026-04-02.\n")
    with ScriptedOpenAIServer(responder=_model_reply, models=["m"]) as server:
        env = llm_env(MONKEYLLM_LLM_ENDPOINT=server.base_url)
        adopt = vine_cli("adopt", str(source), "--forest", str(configured_forest), "--curate", env=env, timeout=300)
        assert adopt.returncode == 0
    fm = yaml.safe_load((configured_forest / "alpha.md").read_text().split("---\n")[1])
    assert 1 <= len(fm["tags"]) <= 5
    assert all(t == t.lower() and " " not in t and t.isascii() for t in fm["tags"]), fm["tags"]
    assert len(set(fm["tags"])) == len(fm["tags"])
