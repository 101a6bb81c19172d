"""Each file belongs to exactly one source: a source keeps its --dest, and adopted
sources never nest, so syncing one never touches another's nodes."""
from __future__ import annotations

from pathlib import Path


def _export(root: Path, *names: str) -> Path:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {path.stem}\n\nThe {path.stem} note of the export, March 2026.\n")
    return root


def test_a_source_inside_an_adopted_source_is_refused(vine_cli, forest, tmp_path: Path) -> None:
    outer = _export(tmp_path / "exports", "a.md", "finance/b.md")
    vine_cli.adopt(outer, forest)
    result = vine_cli.adopt(outer / "finance", forest, expect=2)
    assert "overlaps the adopted source" in result.stderr and result.stderr.count("\n") == 1
    # and the other way round: a folder holding an adopted source
    inner_forest = vine_cli.init(tmp_path / "forest2")
    vine_cli.adopt(outer / "finance", inner_forest, "--dest", "fin")
    assert vine_cli.adopt(outer, inner_forest, expect=2).returncode == 2
    vine_cli.assert_consistent(forest)
    vine_cli.assert_consistent(inner_forest)


def test_a_source_keeps_the_dest_it_was_adopted_under(vine_cli, forest, tmp_path: Path) -> None:
    source = _export(tmp_path / "exports", "a.md")
    vine_cli.adopt(source, forest, "--dest", "ops")
    result = vine_cli.adopt(source, forest, "--dest", "other", expect=2)
    assert "adopted under --dest 'ops'" in result.stderr
    again = vine_cli.adopt(source, forest, "--dest", "ops").json()
    assert again["unchanged"] == ["ops/a"] and again["planted"] == []
    assert not (forest / "other").exists()
