"""`vine rollup` end to end: deterministic branch summaries, bottom-up, idempotent."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

ROLLUP_LINE = re.compile(r"^rollup: (\d+) branch\(es\) rolled, (\d+) fallback\(s\), (\d+) skipped$")


def rollup(vine_cli: Any, forest: Path, *extra: str) -> tuple[int, int, int]:
    result = vine_cli("rollup", "--forest", forest, *extra)
    assert result.returncode == 0, result.describe()
    match = ROLLUP_LINE.match(result.stdout.strip())
    assert match, result.describe()
    return tuple(int(n) for n in match.groups())  # type: ignore[return-value]


def branches(cli: Any, forest: Path) -> list[str]:
    return sorted(i for i in cli.node_ids(forest) if i.endswith("_index"))


def parent_of(branch_id: str) -> str:
    parts = branch_id.split("/")[:-2]
    return "/".join(parts + ["_index"]) if parts else "_index"


def test_rollup_summarises_ingest_branches_and_everything_agrees(vine_cli: Any, cli: Any, forest: Path,
                                                                 rich_export: Path) -> None:
    cli.write(rich_export / "empty-folder/.DS_Store", b"junk")  # a branch with no children
    vine_cli.adopt(rich_export, forest, expect=1)
    before = {b: cli.node(forest, b)["summary"] for b in branches(cli, forest)}
    rolled, fallbacks, skipped = rollup(vine_cli, forest)
    # every ingest branch with children; skipped: the master index (manual). misc/ (one
    # unsupported file, one failure) and the empty folder have no branch at all
    assert (rolled, fallbacks, skipped) == (4, 0, 1)
    assert not (forest / "misc").exists() and not (forest / "empty-folder").exists()
    assert cli.commit_messages(forest)[0].startswith("gardener(rollup): ")
    for branch in branches(cli, forest):
        fm, text = cli.node(forest, branch), cli.body(forest, branch)
        assert f"\n> {fm['summary']}\n" in text, branch
        parent_text = (forest / f"{parent_of(branch)}.md").read_text(encoding="utf-8")
        assert f"- [[{branch}]] — {fm['summary']} {fm['coverage']}." in parent_text, branch
        assert fm["summary"] != before[branch], branch
    # bottom-up: notes/_index names its sub-branch by the title the rollup read
    assert "archive" in cli.node(forest, "notes/_index")["summary"]
    vine_cli.assert_consistent(forest)


def test_a_second_rollup_changes_nothing(vine_cli: Any, cli: Any, forest: Path, rich_export: Path) -> None:
    vine_cli.adopt(rich_export, forest, expect=1)
    rollup(vine_cli, forest)
    commits, files = cli.commit_count(forest), cli.snapshot(forest)
    rolled, fallbacks, _ = rollup(vine_cli, forest)
    assert (rolled, fallbacks) == (0, 0)
    assert cli.commit_count(forest) == commits and cli.snapshot(forest) == files
    vine_cli.assert_consistent(forest)


def test_rollup_is_deterministic_across_forests(vine_cli: Any, cli: Any, tmp_path: Path, rich_export: Path) -> None:
    texts = []
    for name in ("one", "two"):
        forest = vine_cli.init(tmp_path / name)
        vine_cli.adopt(rich_export, forest, expect=1)
        rollup(vine_cli, forest)
        texts.append({b: (forest / f"{b}.md").read_bytes() for b in branches(cli, forest)})
    assert texts[0] == texts[1]


def test_rollup_after_a_sync_rewrites_only_the_changed_branch(vine_cli: Any, cli: Any, forest: Path,
                                                               rich_export: Path) -> None:
    vine_cli.adopt(rich_export, forest, expect=1)
    rollup(vine_cli, forest)
    cli.write_png(rich_export / "media/chart.png")
    vine_cli.sync(forest, expect=1)
    rolled, _, _ = rollup(vine_cli, forest)
    assert rolled == 1
    assert "chart" in cli.node(forest, "media/_index")["summary"]
    vine_cli.assert_consistent(forest)


def test_rollup_all_includes_the_master_index(vine_cli: Any, cli: Any, forest: Path, rich_export: Path) -> None:
    vine_cli.adopt(rich_export, forest, expect=1)
    rolled, _, skipped = rollup(vine_cli, forest, "--all")
    assert (rolled, skipped) == (5, 0)  # misc/ has no branch: nothing in it planted
    master = cli.node(forest, "_index")
    assert f"\n> {master['summary']}\n" in cli.body(forest, "_index")
    vine_cli.assert_consistent(forest)


def test_one_unreadable_branch_is_skipped_and_named_while_the_others_roll(vine_cli: Any, forest: Path,
                                                                         tmp_path: Path) -> None:
    source = tmp_path / "two"
    for folder in ("good", "bad"):
        (source / folder).mkdir(parents=True)
        (source / folder / "note.md").write_text(f"# {folder}\n\nThe {folder} note of March 2026.\n")
    vine_cli.adopt(source, forest)
    bad = forest / "bad" / "_index.md"
    bad.write_text(bad.read_text().replace("type: branch", "type: [branch"))  # invalid YAML
    result = vine_cli("rollup", "--forest", forest)
    assert result.returncode == 0, result.describe()
    assert "warning: rollup skipped bad/_index: error E_FRONTMATTER" in result.stdout
    assert re.search(r"rollup: 1 branch\(es\) rolled, 0 fallback\(s\), 2 skipped", result.stdout), result.stdout
    assert 'Folder "good"' in (forest / "good" / "_index.md").read_text()


def test_an_empty_ingest_branch_keeps_its_template_summary(vine_cli: Any, cli: Any, forest: Path,
                                                            rich_export: Path) -> None:
    # adopt plants no empty branch any more; an older adopt or another tool may have
    from monkeyllm_core import Vine
    vine_cli.adopt(rich_export, forest, expect=1)
    template = "Documents adopted from source folder 'attic'."
    with Vine(forest) as writer:
        writer.plant({"id": "attic/_index", "type": "branch", "title": "attic", "summary": template,
                      "source": "ingest"})
    rolled, fallbacks, skipped = rollup(vine_cli, forest)
    assert (rolled, fallbacks, skipped) == (4, 0, 2)  # the master index and the empty attic
    assert cli.node(forest, "attic/_index")["summary"] == template
    vine_cli.assert_consistent(forest)


def test_a_rollup_is_one_bulk_session_not_a_checkpoint_per_branch(vine_cli: Any, cli: Any, forest: Path,
                                                                   rich_export: Path) -> None:
    vine_cli.adopt(rich_export, forest, expect=1)
    packs = lambda: set((forest / ".git/objects/pack").glob("*.pack"))  # noqa: E731
    checkpoints = lambda: subprocess.run(["git", "reflog", "--format=%gs"], cwd=forest, capture_output=True,  # noqa: E731
                                         text=True, check=True).stdout.count("vine: checkpoint")
    before, checkpoints_before = packs(), checkpoints()
    rolled, _, _ = rollup(vine_cli, forest)
    assert rolled == 4
    assert checkpoints() - checkpoints_before == 1  # one checkpoint for the four branches
    assert len(packs() - before) == 1  # and a session leaves one pack
    assert cli.git_status(forest) == ""
