"""`vine init`: the exact layout of FOREST-FORMAT.md, one commit, its own repo."""
from __future__ import annotations

import subprocess

import pytest

from monkeyllm_core import Vine, VineError, init_forest, parse_node
from monkeyllm_core.forest.dialect import DEFAULT_RELS, DEFAULT_TYPES, load_dialect

IGNORED = ["_derived/", ".vine.lock", "*.db", "*.sqlite", "*.sqlite3", "_assets/"]


def test_init_writes_the_master_index_schema_and_gitignore(brain):
    master = parse_node(brain.text("_index.md"))
    assert master.frontmatter["id"] == "_index"
    assert master.frontmatter["type"] == "branch"
    assert master.frontmatter["title"] == "Test forest"
    assert master.frontmatter["coverage"] == "0 bananas, 0 sub-branches"
    for section in ("## Sub-branches", "## Direct bananas", "## Cross trails", "## Landmarks"):
        assert section in master.body
    assert f"> {master.frontmatter['summary']}" in master.body

    schema = parse_node(brain.text("_meta/schema.md"))
    assert schema.frontmatter["id"] == "_meta/schema"
    assert schema.frontmatter["type"] == "note"
    assert "## Node types (type)" in schema.body and "## Edge types (rel)" in schema.body
    dialect = load_dialect(brain.root)
    assert dialect.types == {name for name, _, _ in DEFAULT_TYPES}
    assert dialect.rels["succeeds"] == "precedes"
    assert dialect.rels["discovered-shortcut"] is None
    assert set(dialect.rels) == {rel for rel, _, _ in DEFAULT_RELS}

    ignored = brain.text(".gitignore").splitlines()
    for entry in IGNORED:
        assert entry in ignored


def test_init_makes_exactly_one_commit_and_a_clean_tree(brain):
    assert brain.subjects() == ["init: forest 'Test forest'"]
    assert sorted(brain.tracked()) == [".gitignore", "_index.md", "_meta/schema.md"]
    assert brain.status() == ""
    assert brain.findings() == []


def test_init_without_git_config_commits_as_vine(brain):
    assert brain.git("log", "--format=%an <%ae>|%cn <%ce>").strip() == \
        "vine <vine@monkeyllm.local>|vine <vine@monkeyllm.local>"


def test_init_uses_the_users_git_identity_when_configured(tmp_path, no_git_config):
    (no_git_config / ".gitconfig").write_text("[user]\n\tname = Ana Ribeiro\n\temail = ana@example.com\n")
    root = init_forest(tmp_path / "brain", "Mine")
    log = subprocess.run(["git", "log", "--format=%an <%ae>"], cwd=root, capture_output=True, text=True).stdout
    assert log.strip() == "Ana Ribeiro <ana@example.com>"
    with Vine(root) as vine:
        vine.plant({"id": "fact", "type": "note", "title": "Fact", "summary": "One fact."})
    log = subprocess.run(["git", "log", "-1", "--format=%an <%ae>"], cwd=root, capture_output=True, text=True).stdout
    assert log.strip() == "Ana Ribeiro <ana@example.com>"


def test_init_inside_another_repo_gets_its_own_repo(tmp_path):
    outer = tmp_path / "project"
    outer.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=outer, check=True)
    (outer / "README").write_text("the user's project\n")
    root = init_forest(outer / "docs" / "brain", "Nested")
    assert (root / ".git").is_dir()
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=root, capture_output=True, text=True).stdout
    assert top.strip() == str(root)
    outer_log = subprocess.run(["git", "log", "--oneline"], cwd=outer, capture_output=True, text=True)
    assert outer_log.stdout == ""  # the project's history was never touched
    with Vine(root) as vine:
        vine.plant({"id": "fact", "type": "note", "title": "Fact", "summary": "One fact."})
    outer_log = subprocess.run(["git", "log", "--oneline"], cwd=outer, capture_output=True, text=True)
    assert outer_log.stdout == ""


def test_init_with_summary_puts_it_in_frontmatter_and_blockquote(tmp_path):
    root = init_forest(tmp_path / "b", "Acme", "Acme's policies, ledgers and people, 2024-2026.")
    master = parse_node((root / "_index.md").read_text())
    assert master.frontmatter["summary"] == "Acme's policies, ledgers and people, 2024-2026."
    assert "> Acme's policies, ledgers and people, 2024-2026." in master.body


def test_cli_init_creates_a_forest(tmp_path, vine_cli):
    result = vine_cli("init", "--forest", str(tmp_path / "b"), "--title", "From CLI", "--summary", "A CLI-made forest.")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "b" / "_meta" / "schema.md").is_file()
    log = subprocess.run(["git", "log", "--format=%s"], cwd=tmp_path / "b", capture_output=True, text=True).stdout
    assert log.strip() == "init: forest 'From CLI'"


def test_init_refuses_an_existing_forest(brain, vine_cli):
    before = brain.head()
    with pytest.raises(VineError) as info:
        init_forest(brain.root, "Again")
    assert info.value.code == "E_EXISTS"
    result = vine_cli("init", "--forest", str(brain.root), "--title", "Again")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "already a forest" in result.stderr
    assert brain.head() == before and brain.subjects() == ["init: forest 'Test forest'"]


@pytest.mark.parametrize("args", [
    ["validate"], ["validate", "--strict"], ["reindex"], ["query", "some/id", "SELECT 1"],
])
def test_other_subcommands_refuse_a_directory_that_is_not_a_forest(tmp_path, vine_cli, args):
    plain = tmp_path / "plain"
    plain.mkdir()
    result = vine_cli(*args, "--forest", str(plain))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error E_NOT_A_FOREST:") and "vine init" in result.stderr
    assert list(plain.iterdir()) == []  # nothing was created implicitly


def test_init_in_an_existing_repository_keeps_its_gitignore(tmp_path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / ".gitignore").write_text("secret.txt\nnode_modules/\n", encoding="utf-8")
    init_forest(root, "T")
    lines = (root / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert lines[:2] == ["secret.txt", "node_modules/"]
    assert "_derived/" in lines and "*.db" in lines
    (root / "secret.txt").write_text("password", encoding="utf-8")
    status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True, check=True)
    assert status.stdout == ""
