"""`vine validate`: one line per finding, a counts line, exit codes; each finding
is provoked by editing the files by hand, the way a user would break them."""
from __future__ import annotations

import re
import shutil
import sqlite3

import pytest

from monkeyllm_core import init_forest, parse_node, render_node


@pytest.fixture
def grown(brain, make_note):
    with brain.open() as vine:
        vine.plant({"id": "sales/_index", "title": "Sales", "summary": "Commercial policy and ledgers."})
        vine.plant({"id": "sales/archive/_index", "title": "Archive", "summary": "Old plans, 2024-2025."})
        vine.plant(make_note("sales/policy", "Return windows per channel."))
        vine.plant(make_note("sales/archive/plan-2024", "The 2024 plan."))
        vine.plant({"id": "sales/ledger", "type": "dataset", "title": "Ledger", "summary": "Orders.",
                    "schema": {"orders": {"columns": {"id": "INTEGER"}}}, "rows": {"orders": [[1]]}})
    return brain


def edit(brain, rel, fn):
    path = brain.root / rel
    node = parse_node(path.read_text())
    fm, body = fn(dict(node.frontmatter), node.body)
    path.write_text(render_node(fm, body))


def set_fm(**changes):
    def fn(fm, body):
        fm.update(changes)
        return fm, body
    return fn


def replace_in_body(old, new):
    def fn(fm, body):
        assert old in body
        return fm, body.replace(old, new)
    return fn


def overwrite(rel, text):
    return lambda brain: (brain.root / rel).write_text(text)


def tamper_db(brain):
    with sqlite3.connect(brain.root / "sales" / "ledger.db") as con:
        con.execute("INSERT INTO orders VALUES (2)")


CASES = {
    "bad_frontmatter": (overwrite("sales/policy.md", "---\nid: [unclosed\n---\n\nbody\n"),
                        "error", "E_FRONTMATTER", "sales/policy", "invalid YAML"),
    "no_frontmatter": (overwrite("sales/policy.md", "# just markdown\n"),
                       "error", "E_FRONTMATTER", "sales/policy", "no frontmatter"),
    "id_vs_path": (lambda f: edit(f, "sales/policy.md", set_fm(id="sales/other")),
                   "error", "E_FRONTMATTER", "sales/policy", "does not match its path"),
    "unknown_type": (lambda f: edit(f, "sales/policy.md", set_fm(type="recipe")),
                     "error", "E_SCHEMA", "sales/policy", "type 'recipe'"),
    "boilerplate_summary": (lambda f: edit(f, "sales/archive/plan-2024.md",
                                           set_fm(summary="This document describes a plan.")),
                            "error", "E_FRONTMATTER", "sales/archive/plan-2024", "boilerplate"),
    "broken_link": (lambda f: edit(f, "sales/policy.md", set_fm(links=[{"rel": "related-to", "target": "sales/ghost"}])),
                    "error", "E_NOT_FOUND", "sales/policy", "related-to -> sales/ghost is broken"),
    "dangling_wikilink": (lambda f: edit(f, "sales/policy.md", replace_in_body("A fact", "See [[sales/ghost]]. A fact")),
                          "warning", "W_WIKILINK", "sales/policy", "[[sales/ghost]]"),
    # one line for every absent payload, about the forest (no node): a clone has none of them
    "payload_missing": (lambda f: (f.root / "sales" / "ledger.db").unlink(),
                        "warning", "W_PAYLOADS_ABSENT", "", "1 payload not present (sales/ledger): restore them with"),
    "payload_drift": (tamper_db, "warning", "W_PAYLOAD_DRIFT", "sales/ledger", "does not match payload_hash"),
    "entry_missing": (lambda f: edit(f, "sales/_index.md", replace_in_body(
        "- [[sales/policy]] \u2014 Return windows per channel.\n", "")),
        "error", "E_BRANCH", "sales/_index", "child sales/policy has no entry line"),
    "entry_disagrees": (lambda f: edit(f, "sales/_index.md", replace_in_body(
        "\u2014 Return windows per channel.", "\u2014 Something else.")),
        "error", "E_BRANCH", "sales/_index", "entry line for sales/policy does not repeat its summary"),
    "coverage_wrong": (lambda f: edit(f, "sales/_index.md", set_fm(coverage="7 bananas, 0 sub-branches")),
                       "error", "E_BRANCH", "sales/_index", "coverage says"),
    "blockquote_disagrees": (lambda f: edit(f, "sales/_index.md", replace_in_body(
        "> Commercial policy and ledgers.", "> Something else entirely.")),
        "warning", "W_BRANCH_FORMAT", "sales/_index", "blockquote is worded apart"),  # issue 12: a warning
    "entry_to_nowhere": (lambda f: (f.root / "sales" / "archive" / "plan-2024.md").unlink(),
                         "error", "E_BRANCH", "sales/archive/_index", "[[sales/archive/plan-2024]] points to no node"),
}


def test_a_fresh_grown_forest_validates_clean(grown):
    result = grown.cli("validate", "--strict")
    assert result.returncode == 0
    assert result.stdout == "validate: 6 node(s), 0 error(s), 0 warning(s)\n"


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_broken_rule_is_one_finding_line(grown, name):
    break_it, level, code, node, fragment = CASES[name]
    break_it(grown)
    result = grown.cli("validate")
    lines = result.stdout.splitlines()
    findings, counts = lines[:-1], lines[-1]
    ours = [line for line in findings if line.startswith(f"{level} {code}{f' {node}' if node else ''}: ")]
    assert ours and any(fragment in line for line in ours), result.stdout
    errors = sum(1 for line in findings if line.startswith("error "))
    warnings = sum(1 for line in findings if line.startswith("warning "))
    assert re.fullmatch(rf"validate: \d+ node\(s\), {errors} error\(s\), {warnings} warning\(s\)", counts)
    assert result.returncode == (1 if errors else 0)
    if not errors:
        strict = grown.cli("validate", "--strict")
        assert strict.returncode == 1
    assert "Traceback" not in result.stderr


def test_a_branch_over_150_entries_needs_split(brain):
    with brain.open() as vine:
        vine.plant({"id": "big/_index", "title": "Big", "summary": "A branch that grew too big."})
        for i in range(151):
            vine.plant({"id": f"big/n{i:03d}", "type": "note", "title": f"N{i}", "summary": f"N{i}."})
    result = brain.cli("validate")
    assert result.returncode == 0
    assert result.stdout.splitlines()[0].startswith("warning needs_split big/_index: 151 entries")
    assert brain.cli("validate", "--strict").returncode == 1


HAND_WRITTEN_NOTE = ("---\nid: n\ntype: note\ntitle: n\nsummary: A note with one fact.\n"
                     "created: '2026-01-01'\nupdated: '2026-01-01'\n{extra}---\n\nbody\n")


@pytest.mark.parametrize("extra", [
    "links: 5\n",
    "links: [5, x]\n",
    "tags: 5\n",
    "aliases: {a: 1}\n",
    "coverage: [1]\n",
    "created: 2026-13-45\n",
])
def test_hand_edited_passport_of_odd_shape_is_reported_not_a_traceback(brain, extra: str) -> None:
    (brain.root / "n.md").write_text(HAND_WRITTEN_NOTE.format(extra=extra), encoding="utf-8")
    shutil.rmtree(brain.root / "_derived", ignore_errors=True)
    for verb in ("validate", "reindex"):
        result = brain.cli(verb)
        assert "Traceback" not in result.stderr, result.stderr
        assert result.returncode in (0, 1, 2), result.stderr
    result = brain.cli("validate")
    assert result.returncode == 1
    assert "n:" in result.stdout or "n " in result.stdout


def test_non_utf8_node_is_reported_by_validate_and_reindex(brain) -> None:
    (brain.root / "bad.md").write_bytes(b"---\nid: bad\n---\n\ncaf\xe9\n")
    shutil.rmtree(brain.root / "_derived", ignore_errors=True)
    validate = brain.cli("validate")
    assert "Traceback" not in validate.stderr, validate.stderr
    assert validate.returncode == 1
    assert "bad" in validate.stdout and "UTF-8" in validate.stdout
    reindex = brain.cli("reindex")
    assert reindex.returncode == 0, reindex.stderr
    with brain.open() as vine:  # a writer still opens
        vine.plant({"id": "ok", "type": "note", "title": "ok", "summary": "A fine note."})


def test_validate_reports_an_entry_line_without_closing_brackets(brain) -> None:
    text = brain.text("_index.md").replace("## Direct bananas\n", "## Direct bananas\n- [[broken entry\n")
    (brain.root / "_index.md").write_text(text, encoding="utf-8")
    result = brain.cli("validate")
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode in (0, 1)


def test_validate_cli_on_hand_edited_forest_runs(tmp_path, vine_cli) -> None:
    root = init_forest(tmp_path / "f", "T")
    (root / "x.md").write_text(HAND_WRITTEN_NOTE.format(extra="").replace("id: n", "id: x"), encoding="utf-8")
    result = vine_cli("validate", "--forest", str(root))
    assert result.returncode == 1 and "child x has no entry line" in result.stdout
