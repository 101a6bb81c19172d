"""Forests another MonkeyLLM engine wrote: what it formats differently is a warning
our next write to that branch repairs; what misleads a reader stays an error.

The other engine writes sub-branch entry lines without the coverage suffix and lets
the master's ``>`` blockquote say something other than its summary. The files here
are written by hand in that shape and committed with plain git, as that engine does.
"""
from __future__ import annotations

from monkeyllm_core import Vine, parse_node, render_node

FOREIGN_MASTER = """\
# Ops forest

> Knowledge base of the ops team, with a dialect at [[_meta/schema]].

## Sub-branches
- [[projects/_index]] \u2014 Active and archived projects of the ops team.

## Direct bananas

## Cross trails

## Landmarks
"""

FOREIGN_PROJECTS = """\
# Projects

> Active and archived projects of the ops team.

## Sub-branches
- [[projects/falcon/_index]] \u2014 The Falcon rollout, 2026.

## Direct bananas
- [[projects/roadmap]] \u2014 The 2026 roadmap of every project.

## Cross trails
"""


def _write(root, rel, fm, body):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_node(fm, body), encoding="utf-8")


def foreign_forest(brain):
    """The forest as the other engine leaves it: two branches with coverage-less
    sub-branch lines and a master blockquote worded apart from its summary."""
    root = brain.root
    master = parse_node((root / "_index.md").read_text()).frontmatter
    _write(root, "_index.md", dict(master, coverage="0 bananas, 1 sub-branches"), FOREIGN_MASTER)
    branch = {"type": "branch", "created": "2026-06-01", "updated": "2026-06-10"}
    _write(root, "projects/_index.md", dict(branch, id="projects/_index", title="Projects",
           summary="Active and archived projects of the ops team.", coverage="1 bananas, 1 sub-branches"),
           FOREIGN_PROJECTS)
    _write(root, "projects/falcon/_index.md", dict(branch, id="projects/falcon/_index", title="Falcon",
           summary="The Falcon rollout, 2026.", coverage="0 bananas, 0 sub-branches"),
           "# Falcon\n\n> The Falcon rollout, 2026.\n\n## Sub-branches\n\n## Direct bananas\n\n## Cross trails\n")
    _write(root, "projects/roadmap.md", {"id": "projects/roadmap", "type": "note", "title": "Roadmap",
           "summary": "The 2026 roadmap of every project.", "created": "2026-06-01", "updated": "2026-06-10"},
           "# Roadmap\n\nFalcon first, then the rest. See [[_meta/schema]] for the types.\n")
    brain.git("add", "-A")
    brain.git("-c", "user.name=other", "-c", "user.email=other@example.com", "commit", "-qm", "other engine")
    return brain


def test_formatting_differences_are_warnings_not_errors(brain):
    foreign_forest(brain)
    findings = brain.findings()
    assert not [f for f in findings if f.startswith("error")], findings
    assert sorted(findings) == sorted([
        "warning W_BRANCH_FORMAT _index: the > blockquote is worded apart from the frontmatter summary"
        " (the next write to this branch makes it repeat the summary)",
        "warning W_BRANCH_FORMAT _index: entry line for projects/_index leaves out its coverage"
        " (the next write to this branch adds it)",
        "warning W_BRANCH_FORMAT projects/_index: entry line for projects/falcon/_index leaves out its coverage"
        " (the next write to this branch adds it)",
    ])


def test_the_vine_validate_command_exits_zero_on_warnings(brain):
    foreign_forest(brain)
    proc = brain.cli("validate")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 error(s), 3 warning(s)" in proc.stdout


def test_a_wrong_summary_in_an_entry_line_stays_an_error(brain):
    foreign_forest(brain)
    path = brain.root / "projects/_index.md"
    path.write_text(path.read_text().replace("The Falcon rollout, 2026.\n\n## Direct",
                                             "The Falcon rollout, 2027.\n\n## Direct"))
    assert "error E_BRANCH projects/_index: entry line for projects/falcon/_index does not repeat its summary" \
        " and coverage" in brain.findings()


def test_the_next_write_to_each_branch_repairs_its_formatting(brain):
    foreign_forest(brain)
    with Vine(brain.root) as vine:
        vine.plant({"id": "projects/retro", "type": "note", "title": "Retro",
                    "summary": "What the Falcon rollout taught us, 2026-11."})
        vine.plant({"id": "welcome", "type": "note", "title": "Welcome",
                    "summary": "Where to start in the ops forest, 2026-11."})
    brain.assert_clean()
    projects = brain.text("projects/_index.md")
    assert "- [[projects/falcon/_index]] \u2014 The Falcon rollout, 2026. 0 bananas, 0 sub-branches." in projects
    master = brain.text("_index.md")
    summary = parse_node(master).frontmatter["summary"]
    assert f"\n> {summary}\n" in master
    assert "- [[projects/_index]] \u2014 Active and archived projects of the ops team. 2 bananas, 1 sub-branches." \
        in master


def test_a_branch_no_write_touches_keeps_its_formatting(brain):
    foreign_forest(brain)
    master_before = brain.text("_index.md")
    with Vine(brain.root) as vine:
        vine.plant({"id": "projects/falcon/plan", "type": "note", "title": "Plan",
                    "summary": "The Falcon rollout plan, 2026-11."})
    # falcon's coverage changed, so projects/_index was written (and repaired); the
    # master's counts did not change, so it was not written and is as the engine left it
    assert brain.text("_index.md") == master_before
    assert [f.split(":")[0] for f in brain.findings()] == ["warning W_BRANCH_FORMAT _index"] * 2
    assert "- [[projects/falcon/_index]] \u2014 The Falcon rollout, 2026. 1 bananas, 0 sub-branches." \
        in brain.text("projects/_index.md")
