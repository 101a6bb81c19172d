"""A sync replaces what the source produced and keeps every section a person added."""
from __future__ import annotations

import subprocess
from pathlib import Path


def test_sections_a_person_added_survive_a_sync_and_removed_source_sections_go(vine_cli, forest: Path,
                                                                               tmp_path: Path) -> None:
    source = tmp_path / "export"
    source.mkdir()
    note = source / "plan.md"
    note.write_text("# Plan\n\nThe plan for April 2026.\n\n## Goals\n\nShip v1.\n\n## Risks\n\nNone yet.\n")
    vine_cli.adopt(source, forest)
    node = forest / "plan.md"
    node.write_text(node.read_text() + "\n## Review\n\nLooked fine to me. -- Ana\n\n## Notes\n\nAsk Ben.\n")
    subprocess.run(["git", "commit", "-qam", "hand edit"], cwd=forest, check=True,
                   env={"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a",
                        "GIT_COMMITTER_EMAIL": "a@x", "PATH": "/usr/bin:/bin"})
    note.write_text("# Plan\n\nThe revised plan for April 2026.\n\n## Goals\n\nShip v1 and v2.\n")
    report = vine_cli.sync(forest).json()
    assert report["updated"] == ["plan"]
    body = node.read_text()
    assert "Ship v1 and v2." in body and "revised plan" in body
    assert "## Risks" not in body  # the source dropped it
    assert "## Review\n\nLooked fine to me. -- Ana" in body and "## Notes\n\nAsk Ben." in body
    assert body.index("## Goals") < body.index("## Review")
    vine_cli.assert_consistent(forest)
    # a second sync of the same source changes nothing and keeps them once
    note.write_text(note.read_text() + "\nOne more line.\n")
    vine_cli.sync(forest)
    body = node.read_text()
    assert body.count("## Review") == 1 and body.count("## Notes") == 1
    vine_cli.assert_consistent(forest)
