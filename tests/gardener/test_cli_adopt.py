"""`vine adopt` end to end: the real CLI in a subprocess on an export made in code."""
from __future__ import annotations

import hashlib
import re
import urllib.parse
from pathlib import Path

import pytest
import yaml

from typing import Any


def test_adopt_reports_every_file_once_and_exits_1_when_a_file_failed(vine_cli: Any, cli: Any, forest: Path,
                                                                       rich_export: Path) -> None:
    report = vine_cli.adopt(rich_export, forest, expect=1).json()
    seen = cli.lists_by_file(forest, report)
    assert set(seen) == cli.source_files(rich_export)
    assert {rel: lists for rel, lists in seen.items() if len(lists) != 1} == {}
    assert {rel: lists[0] for rel, lists in seen.items()} == cli.RICH_EXPORT
    assert set(report["branches"]) == cli.RICH_BRANCHES
    assert any("broken.json" in line for line in report["errors"])
    vine_cli.assert_consistent(forest)


def test_adopt_text_report_lists_failures_and_exit_code(vine_cli: Any, cli: Any, forest: Path, rich_export: Path) -> None:
    result = vine_cli("adopt", rich_export, "--forest", forest)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert "planted (7):" in lines
    assert "branches (4):" in lines
    assert "unsupported (1):" in lines and any(l.startswith("  misc/mystery.qqq: ") for l in lines)
    assert "errors (1):" in lines and any(l.startswith("  misc/broken.json: ") for l in lines)
    vine_cli.assert_consistent(forest)


def test_adopt_exits_0_when_nothing_failed(vine_cli: Any, cli: Any, forest: Path, rich_export: Path) -> None:
    (rich_export / "misc/broken.json").unlink()
    report = vine_cli.adopt(rich_export, forest, expect=0).json()
    assert report["errors"] == []
    vine_cli.assert_consistent(forest)


def test_folders_become_branches_and_ids_are_slugified_paths(vine_cli: Any, cli: Any, forest: Path,
                                                             rich_export: Path) -> None:
    report = vine_cli.adopt(rich_export, forest, expect=1).json()
    assert set(report["planted"]) == {
        "notes/board-meeting-2026-03", "notes/archive/old-plan", "data/invoices", "data/customers",
        "data/crm", "media/photo", "media/beep"}
    assert cli.node_ids(forest) == set(report["planted"]) | cli.RICH_BRANCHES
    for branch in cli.RICH_BRANCHES:
        fm = cli.node(forest, branch)
        assert fm["type"] == "branch" and fm["source"] == "ingest" and "confidence" not in fm
    assert "[[notes/archive/_index]]" in cli.body(forest, "notes/_index")
    assert "[[notes/board-meeting-2026-03]]" in cli.body(forest, "notes/_index")


def test_each_node_and_branch_is_its_own_commit(vine_cli: Any, cli: Any, forest: Path, rich_export: Path) -> None:
    report = vine_cli.adopt(rich_export, forest, expect=1).json()
    messages = cli.commit_messages(forest)
    assert len(messages) == 1 + len(report["branches"]) + len(report["planted"])
    assert messages[-1] == "init: forest 'Test forest'"
    planted_ids = {re.match(r"plant\((.+?)\): ", m).group(1) for m in messages[:-1]}
    assert planted_ids == set(report["branches"]) | set(report["planted"])
    assert all(m.endswith("[source=ingest]") for m in messages[:-1])


def test_every_node_carries_its_provenance(vine_cli: Any, cli: Any, forest: Path, rich_export: Path) -> None:
    report = vine_cli.adopt(rich_export, forest, expect=1).json()
    for node_id in report["planted"]:
        fm = cli.node(forest, node_id)
        source = rich_export / fm["source_path"]
        data = source.read_bytes()
        assert fm["source"] == "ingest" and fm["confidence"] == 0.7, node_id
        assert fm["source_hash"] == hashlib.sha256(data).hexdigest(), node_id
        assert fm["source_size"] == len(data), node_id
        assert fm["source_mtime"] == round(source.stat().st_mtime, 3), node_id
        assert fm["origin"].startswith("file:///"), node_id
        assert " " not in fm["origin"], node_id  # percent-encoded
        assert urllib.parse.unquote(fm["origin"][len("file://"):]) == str(source), node_id
    assert cli.node(forest, "notes/board-meeting-2026-03")["source_path"] == "notes/Board Meeting 2026-03.md"


def test_note_frontmatter_keeps_title_tags_aliases_out_of_the_summary(vine_cli: Any, cli: Any, forest: Path,
                                                                      rich_export: Path) -> None:
    vine_cli.adopt(rich_export, forest, expect=1)
    fm = cli.node(forest, "notes/board-meeting-2026-03")
    assert fm["title"] == "Board meeting, March 2026"
    assert fm["tags"] == ["board", "governance"]
    assert fm["aliases"] == ["March board"]
    assert "Falcon rollout" in fm["summary"]
    for leak in ("---", "title:", "tags:", "FRONTMATTER-ONLY-VALUE", "aliases"):
        assert leak not in fm["summary"]


def test_datasets_and_media_are_queryable_payloads(vine_cli: Any, cli: Any, forest: Path, rich_export: Path) -> None:
    vine_cli.adopt(rich_export, forest, expect=1)
    result = vine_cli("query", "data/invoices", "SELECT customer FROM invoices WHERE status = 'F' ORDER BY customer",
                  "--forest", forest)
    assert result.returncode == 0, result.describe()
    assert result.json()["rows"] == [["Fabrikam"], ["Northwind"]]
    crm = vine_cli("query", "data/crm", "SELECT COUNT(*) FROM customers", "--forest", forest)
    assert crm.json()["rows"] == [[4]]
    photo = cli.node(forest, "media/photo")
    assert photo["type"] == "media" and photo["payload_type"] == "image"
    assert (forest / "media" / photo["payload"]).read_bytes() == (rich_export / "media/photo.png").read_bytes()


def test_gardener_yaml_records_the_source(vine_cli: Any, cli: Any, forest: Path, rich_export: Path) -> None:
    vine_cli.adopt(rich_export, forest, "--dest", "imports/2026", expect=1)
    config = yaml.safe_load((forest / "_meta/gardener.yaml").read_text(encoding="utf-8"))
    assert config["sources"] == [{"root": str(rich_export.resolve()), "dest": "imports/2026"}]
    assert cli.node(forest, "imports/2026/data/invoices")["source_path"] == "data/invoices.csv"
    vine_cli.assert_consistent(forest)


def test_adopt_twice_changes_nothing(vine_cli: Any, cli: Any, forest: Path, rich_export: Path) -> None:
    first = vine_cli.adopt(rich_export, forest, expect=1).json()
    before = cli.commit_count(forest)
    second = vine_cli.adopt(rich_export, forest, expect=1).json()
    assert cli.commit_count(forest) == before
    assert second["planted"] == [] and second["updated"] == [] and second["branches"] == []
    assert sorted(second["unchanged"]) == sorted(first["planted"])
    text = vine_cli("adopt", rich_export, "--forest", forest)
    assert "unchanged (7)" in text.stdout.splitlines()
    vine_cli.assert_consistent(forest)


def test_two_sources_under_different_dest_share_a_forest(vine_cli: Any, cli: Any, forest: Path, tmp_path: Path) -> None:
    alpha = cli.make_rich_export(tmp_path / "alpha")
    beta = cli.make_rich_export(tmp_path / "beta")
    vine_cli.adopt(alpha, forest, "--dest", "alpha", expect=1)
    vine_cli.adopt(beta, forest, "--dest", "beta", expect=1)
    beta_before = {p: p.read_bytes() for p in (forest / "beta").rglob("*") if p.is_file()}
    note = alpha / "notes/archive/old plan.md"
    note.write_text("# Old plan\n\nRevised: the warehouse moves to Faro in 2027.\n", encoding="utf-8")
    report = vine_cli("sync", str(alpha), "--forest", forest, "--json").json()
    assert report["updated"] == ["alpha/notes/archive/old-plan"]
    assert all(not i.startswith("beta/") for k in ("planted", "updated", "unchanged", "stale") for i in report[k])
    assert {p: p.read_bytes() for p in (forest / "beta").rglob("*") if p.is_file()} == beta_before
    assert cli.commit_messages(forest)[0] == "gardener(sync): alpha/notes/archive/old-plan"
    vine_cli.assert_consistent(forest)


@pytest.mark.parametrize("argv, fragment", [
    (["adopt", "{tmp}/no-such-folder", "--forest", "{forest}"], "no-such-folder"),
    (["adopt", "{export}", "--forest", "{tmp}/not-a-forest"], "not a forest"),
    (["sync", "--forest", "{forest}"], "no adopted source"),
    (["adopt", "{export}", "--forest", "{forest}", "--jobs", "0"], "--jobs"),
    (["rollup", "--forest", "{tmp}/not-a-forest"], "not a forest"),
])
def test_usage_errors_exit_2_with_one_line(vine_cli: Any, cli: Any, forest: Path, rich_export: Path, tmp_path: Path,
                                            argv: list[str], fragment: str) -> None:
    (tmp_path / "not-a-forest").mkdir()
    args = [a.format(tmp=tmp_path, forest=forest, export=rich_export) for a in argv]
    result = vine_cli(*args)
    assert result.returncode == 2, result.describe()
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1, result.describe()
    assert fragment in result.stderr
    assert cli.commit_count(forest) == 1
    assert not (tmp_path / "not-a-forest" / "_index.md").exists()  # never creates a forest implicitly


def test_jobs_1_and_jobs_4_produce_identical_forests(vine_cli: Any, cli: Any, tmp_path: Path, rich_export: Path) -> None:
    for i in range(12):  # enough files that 4 workers really interleave
        (rich_export / f"bulk/n{i:02}.md").parent.mkdir(exist_ok=True)
        (rich_export / f"bulk/n{i:02}.md").write_text(f"# Note {i}\n\nBody of note {i} about topic {i * 7}.\n")
    serial, parallel = vine_cli.init(tmp_path / "serial"), vine_cli.init(tmp_path / "parallel")
    one = vine_cli.adopt(rich_export, serial, "--jobs", "1", expect=1).json()
    four = vine_cli.adopt(rich_export, parallel, "--jobs", "4", expect=1).json()
    assert one == four
    assert cli.commit_messages(serial) == cli.commit_messages(parallel)

    def markdown(forest: Path) -> dict[str, str]:
        out = {}
        for path in sorted(forest.rglob("*.md")):
            rel = path.relative_to(forest).as_posix()
            if not rel.startswith((".git/", "_derived/")):
                out[rel] = re.sub(r"(?m)^payload_hash: \w+$", "payload_hash: <hash>", path.read_text("utf-8"))
        return out

    assert markdown(serial) == markdown(parallel)
    vine_cli.assert_consistent(serial)
    vine_cli.assert_consistent(parallel)


def test_the_dataset_conventions_are_stated_once_in_the_dialect(vine_cli: Any, cli: Any, forest: Path,
                                                                 rich_export: Path) -> None:
    schema = (forest / "_meta/schema.md").read_text(encoding="utf-8")
    assert schema.count("## Dataset conventions") == 1 and "NULL means no value" in schema
    vine_cli.adopt(rich_export, forest, expect=1)
    assert (forest / "_meta/schema.md").read_text(encoding="utf-8") == schema  # already there: untouched
    manual = cli.body(forest, "data/invoices")
    assert "NULL means no value" not in manual and "whitespace-only" not in manual


def test_an_older_forest_gets_the_conventions_before_its_first_dataset(vine_cli: Any, cli: Any, forest: Path,
                                                                        rich_export: Path) -> None:
    import subprocess
    schema_path = forest / "_meta/schema.md"
    text = schema_path.read_text(encoding="utf-8")
    older = text[:text.index("\n## Dataset conventions")] + "\n"  # as vine init wrote it before
    schema_path.write_text(older, encoding="utf-8")
    subprocess.run(["git", "-C", str(forest), "commit", "-qam", "an older dialect"], check=True,
                   env=vine_cli.env({"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x",
                                 "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x"}))
    vine_cli("reindex", "--forest", forest)
    vine_cli.adopt(rich_export, forest, expect=1)
    now = schema_path.read_text(encoding="utf-8")
    assert now.count("## Dataset conventions") == 1 and "NULL means no value" in now
    assert "graft(_meta/schema): append 'Dataset conventions'" in cli.commit_messages(forest)
    vine_cli.assert_consistent(forest)
