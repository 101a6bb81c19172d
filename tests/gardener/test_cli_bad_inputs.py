"""BAD-INPUTS.md (the filesystem; command hooks) through the real `vine` CLI.

Every case ends as one line of the report (or a silent skip for OS junk), never a
traceback, never a command run from a file's name; the forest stays valid.
"""
from __future__ import annotations

import hashlib
import sys
import time
import unicodedata
import urllib.parse
from pathlib import Path
from typing import Any

import yaml

AWKWARD_FILE_NAMES = [
    "with spaces.md", "issue #12.md", "100% done.md", "what?.md", "it's \"quoted\".md",
    "-leading dash.md", "$(touch PWNED).md", "a;b|c&d`touch PWNED`.md", "semi; touch PWNED.md",
    unicodedata.normalize("NFC", "Café menu.md"), unicodedata.normalize("NFD", "Crème brûlée.md"),
]
ZERO_BYTE = ["empty.md", "empty.txt", "empty.csv", "empty.json", "empty.db", "empty.png", "empty.wav",
             "empty.xlsx", "empty.docx", "empty.qqq"]


def no_pwned_file(*roots: Path) -> bool:
    """No file that a shell would have created from one of the names above."""
    return not any(p.name in ("PWNED", "PWNED2") for root in roots for p in root.rglob("*"))


def test_awkward_and_empty_files_each_end_in_exactly_one_list(vine_cli: Any, cli: Any, forest: Path,
                                                              tmp_path: Path) -> None:
    source = tmp_path / "export"
    for name in AWKWARD_FILE_NAMES:
        cli.write(source / "names" / name, f"# {name}\n\nA note saved as {name!r} in March 2026.\n")
    for name in ZERO_BYTE:
        cli.write(source / "empty" / name, b"")
    result = vine_cli.adopt(source, forest, expect=None)
    assert result.returncode in (0, 1), result.describe()
    report = result.json()
    seen = cli.lists_by_file(forest, report)
    assert set(seen) == cli.source_files(source)
    assert {rel: lists for rel, lists in seen.items() if len(lists) != 1} == {}
    assert all(seen[f"names/{name}"] == ["planted"] for name in AWKWARD_FILE_NAMES)
    for node_id in report["planted"]:
        fm = cli.node(forest, node_id)
        assert all(ch not in fm["origin"] for ch in " #?%\"'`;|&$()") or "%" in fm["origin"], fm["origin"]
        assert urllib.parse.unquote(fm["origin"][len("file://"):]) == str(source / fm["source_path"])
        assert all(part.replace("-", "").isalnum() and part.isascii() and part == part.lower()
                   for part in node_id.split("/")), node_id
    assert no_pwned_file(tmp_path, vine_cli.cwd)
    vine_cli.assert_consistent(forest)


def test_nfc_and_nfd_spellings_of_one_name_both_plant(vine_cli: Any, cli: Any, forest: Path, tmp_path: Path) -> None:
    source = tmp_path / "export"
    nfc, nfd = unicodedata.normalize("NFC", "Résumé.md"), unicodedata.normalize("NFD", "Résumé.md")
    cli.write(source / nfc, "# NFC\n\nComposed.\n")
    cli.write(source / nfd, "# NFD\n\nDecomposed.\n")
    report = vine_cli.adopt(source, forest).json()
    first, second = sorted([nfc, nfd])
    assert set(report["planted"]) == {"resume", f"resume-{hashlib.sha1(second.encode()).hexdigest()[:6]}"}
    assert cli.node(forest, "resume")["source_path"] == first
    vine_cli.assert_consistent(forest)


def test_files_that_slug_alike_get_the_same_ids_whatever_the_creation_order(vine_cli: Any, cli: Any,
                                                                             tmp_path: Path) -> None:
    names = ["Report.md", "report.md", "REPORT.md"]
    contents = {"Report.md": "# Report\n\nQuarterly report.\n", "report.md": "Plain report.\n",
                "REPORT.md": "Another report.\n"}
    ids = []
    for label, order in (("forward", names), ("backward", list(reversed(names)))):
        source, forest = tmp_path / f"export-{label}", vine_cli.init(tmp_path / f"forest-{label}")
        for name in order:
            cli.write(source / name, contents[name])
        report = vine_cli.adopt(source, forest).json()
        ids.append({cli.node(forest, i)["source_path"]: i for i in report["planted"]})
        vine_cli.assert_consistent(forest)
    assert ids[0] == ids[1]
    winner = sorted(names)[0]
    assert ids[0][winner] == "report"
    for name in names:
        if name != winner:
            assert ids[0][name] == f"report-{hashlib.sha1(name.encode()).hexdigest()[:6]}"


def test_os_junk_is_skipped_silently(vine_cli: Any, cli: Any, forest: Path, tmp_path: Path) -> None:
    source = tmp_path / "export"
    cli.write(source / "notes/plan.md", "# Plan\n\nThe plan.\n")
    junk = [".DS_Store", "Thumbs.db", "desktop.ini", "~$budget.xlsx", "notes/.~lock.plan.md#", "notes/plan.md~",
            "scratch.tmp", ".git/config", "__pycache__/x.pyc", "node_modules/a.js"]
    for rel in junk:
        cli.write(source / rel, b"junk")
    report = vine_cli.adopt(source, forest).json()
    assert report["planted"] == ["notes/plan"]
    assert report["unsupported"] == [] and report["errors"] == [] and report["skipped"] == []
    vine_cli.assert_consistent(forest)


def test_a_nested_forest_inside_the_source_is_pruned(vine_cli: Any, cli: Any, forest: Path, tmp_path: Path) -> None:
    source = tmp_path / "export"
    cli.write(source / "plan.md", "# Plan\n\nThe plan.\n")
    inner = vine_cli.init(source / "old-brain", title="Old brain")
    cli.write(inner / "ideas.md", "# Ideas\n\nNot a document.\n")
    report = vine_cli.adopt(source, forest).json()
    assert report["planted"] == ["plan"]
    assert any(line.startswith("old-brain: nested forest pruned") for line in report["skipped"])
    assert not (forest / "old-brain").exists()
    verbose = vine_cli("adopt", source, "--forest", forest, "--verbose")
    assert any("old-brain: nested forest pruned" in line for line in verbose.stdout.splitlines())
    vine_cli.assert_consistent(forest)


def test_adopting_a_folder_that_holds_the_forest_is_refused(vine_cli: Any, cli: Any, tmp_path: Path) -> None:
    source = tmp_path / "export"
    cli.write(source / "plan.md", "# Plan\n\nThe plan.\n")
    forest = vine_cli.init(source / "brain")
    commits = cli.commit_count(forest)
    result = vine_cli("adopt", source, "--forest", forest)
    assert result.returncode == 2, result.describe()
    assert len(result.stderr.strip().splitlines()) == 1 and "contains the forest" in result.stderr
    itself = vine_cli("adopt", forest, "--forest", forest)
    assert itself.returncode == 2 and len(itself.stderr.strip().splitlines()) == 1
    assert cli.commit_count(forest) == commits
    # a refused adopt records no source, so the next plain sync is not poisoned by it
    sync = vine_cli("sync", "--forest", forest)
    assert "no adopted source" in sync.stderr, sync.describe()
    vine_cli.assert_consistent(forest)


def test_files_that_share_a_name_get_ids_and_titles_that_tell_them_apart(vine_cli: Any, cli: Any,
                                                                        tmp_path: Path) -> None:
    source = tmp_path / "export"
    cli.write(source / "test.md", "Notes about the test run.\n")
    cli.write(source / "test.json", '{"run": 7, "passed": true}\n')
    cli.write(source / "test.csv", "a,b\n1,2\n")
    forest = vine_cli.init(tmp_path / "forest")
    report = vine_cli.adopt(source, forest).json()
    assert sorted(report["planted"]) == ["test-csv", "test-json", "test-md"]
    titles = {node_id: cli.node(forest, node_id)["title"] for node_id in report["planted"]}
    assert titles == {"test-csv": "test.csv", "test-json": "test.json", "test-md": "test.md"}
    # stable: a sync keeps them, and a file added later takes its extension too
    cli.write(source / "test.txt", "More notes.\n")
    report = vine_cli("sync", "--forest", forest, "--json").json()
    assert report["planted"] == ["test-txt"] and sorted(report["unchanged"]) == sorted(titles)
    assert cli.node(forest, "test-txt")["title"] == "test.txt"
    vine_cli.assert_consistent(forest)


def test_dangling_links_and_directory_links_are_listed(vine_cli: Any, cli: Any, forest: Path, tmp_path: Path) -> None:
    source, outside = tmp_path / "export", tmp_path / "outside"
    cli.write(source / "plan.md", "# Plan\n\nThe plan.\n")
    cli.write(outside / "secret.md", "# Secret\n\nOutside the source.\n")
    (source / "gone.md").symlink_to(tmp_path / "nowhere.md")
    (source / "elsewhere").symlink_to(outside, target_is_directory=True)
    (source / "secret-link.md").symlink_to(outside / "secret.md")
    (source / "loop.md").symlink_to(source / "loop.md")
    report = vine_cli.adopt(source, forest, expect=1).json()  # a broken link is an error
    assert report["planted"] == ["plan"]
    errors = dict(line.split(": ", 1) for line in report["errors"])
    unsupported = dict(line.split(": ", 1) for line in report["unsupported"])
    assert errors["gone.md"].startswith("dangling link")
    assert errors["loop.md"].startswith("symlink loop")
    assert unsupported["elsewhere"].startswith("link to a directory")
    assert unsupported["secret-link.md"].startswith("link pointing outside")
    assert report["skipped"] == []
    assert "Secret" not in "".join(p.read_text("utf-8") for p in forest.rglob("*.md") if ".git" not in p.parts)
    vine_cli.assert_consistent(forest)


TOOL = """
import sys, time
src, out, mode = sys.argv[1], sys.argv[2], sys.argv[3]
if mode == "fail":
    sys.stderr.write("no text layer in " + src.rsplit("/", 1)[-1] + ": scanned PDF\\n")
    sys.exit(3)
if mode == "hang":
    time.sleep(60)
with open(out, "w", encoding="utf-8") as fh:
    fh.write("# Converted by the tool\\n\\nThe contract runs from January 2026 to December 2027.\\n")
"""


def test_command_hooks_never_run_file_names_and_report_failures(vine_cli: Any, cli: Any, forest: Path,
                                                                tmp_path: Path) -> None:
    tool = cli.write(tmp_path / "tools/convert.py", TOOL)
    config = {
        "command_timeout": 2,
        "converters": {
            ".pdf": f'"{sys.executable}" "{tool}" "{{input}}" "{{output}}" ok',
            ".scan": f'"{sys.executable}" "{tool}" "{{input}}" "{{output}}" fail',
            ".slow": f'"{sys.executable}" "{tool}" "{{input}}" "{{output}}" hang',
        },
    }
    (forest / "_meta/gardener.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    source = tmp_path / "export"
    cli.write(source / "a; touch PWNED.pdf", b"%PDF-1.4 fake")
    cli.write(source / "$(touch PWNED2).pdf", b"%PDF-1.4 fake")
    cli.write(source / "contract.scan", b"%PDF-1.4 scanned")
    cli.write(source / "stuck.slow", b"zzz")
    started = time.monotonic()
    result = vine_cli.adopt(source, forest, expect=1)
    assert time.monotonic() - started < 30  # the hanging tool was stopped by the timeout
    report = result.json()
    assert sorted(cli.node(forest, i)["source_path"] for i in report["planted"]) == [
        "$(touch PWNED2).pdf", "a; touch PWNED.pdf"]
    assert cli.node(forest, "a-touch-pwned")["title"] == "Converted by the tool"
    errors = {cli.report_rel(line): line for line in report["errors"]}
    assert set(errors) == {"contract.scan", "stuck.slow"}
    assert "no text layer in contract.scan: scanned PDF" in errors["contract.scan"]
    assert "time" in errors["stuck.slow"].lower()
    assert no_pwned_file(tmp_path)
    assert not Path("PWNED").exists() and not Path("PWNED2").exists()
    vine_cli.assert_consistent(forest)


def test_escape_sequences_in_a_source_never_reach_titles_summaries_or_indexes(vine_cli: Any, cli: Any, forest: Path,
                                                                              tmp_path: Path) -> None:
    source = tmp_path / "export"
    cli.write(source / "sub\x1b[31m red/note.md",
              "# Title \x1b]0;pwned\x07here\n\nThe board \x1b[31mapproved\x1b[0m the \u202eplan in March 2026.\n")
    report = vine_cli.adopt(source, forest).json()
    [node_id] = report["planted"]
    passport = cli.node(forest, node_id)
    assert passport["title"] == "Title here"
    assert passport["summary"] == "The board approved the plan in March 2026."
    [branch] = report["branches"]
    assert cli.node(forest, branch)["title"] == "sub red"
    for index in ("_index.md", f"{branch}.md"):
        text = (forest / index).read_text(encoding="utf-8")
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text, index
    # the body is the document: kept as written
    assert "\x1b[31mapproved" in (forest / f"{node_id}.md").read_text(encoding="utf-8")
    vine_cli.assert_consistent(forest)


def test_a_file_whose_command_hook_was_refused_says_why_in_the_report(vine_cli: Any, cli: Any, forest: Path,
                                                                      tmp_path: Path) -> None:
    # the user configured a converter for .pdf: "no converter for .pdf" would send them
    # looking for the wrong fix
    config = {"converters": {".pdf": f'"{sys.executable}" -c pass'}}  # never passes {input}
    (forest / "_meta/gardener.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    source = tmp_path / "export"
    cli.write(source / "contract.pdf", b"%PDF-1.4 fake")
    report = vine_cli.adopt(source, forest).json()
    assert report["planted"] == []
    [line] = report["unsupported"]
    assert line.startswith("contract.pdf: the command hook for .pdf in _meta/gardener.yaml was refused: ")
    assert "never passes {input}" in line


def test_control_characters_in_a_title_or_summary_are_dropped(vine_cli: Any, cli: Any, forest: Path,
                                                               tmp_path: Path) -> None:
    # as EXIF and ID3 values already do (kit.clean_tag): a terminal escape in a note's
    # heading, frontmatter or first sentence must not reach the passport's one-line fields
    source = tmp_path / "export"
    cli.write(source / "heading.md", "# Head \x1b[31mred\x1b[0m\n\nSome \x1b]0;pwned\x07 body text here.\n")
    cli.write(source / "front.md", '---\ntitle: "Bell\\a title"\nauthor: "A\\x00B"\n---\n\nBody.\n')
    vine_cli.adopt(source, forest)
    heading, front = cli.node(forest, "heading"), cli.node(forest, "front")
    assert heading["title"] == "Head red"  # the escape sequences go whole, not just their ESC
    assert heading["summary"] == "Some body text here."
    assert (front["title"], front["source_author"]) == ("Bell title", "AB")
    vine_cli.assert_consistent(forest)


def test_a_misspelt_key_in_gardener_yaml_is_a_warning_not_silence(vine_cli: Any, cli: Any, forest: Path,
                                                                   tmp_path: Path) -> None:
    # "ignores:" for "ignore:": the user's drafts would be adopted without a word
    config = {"ignores": ["drafts"], "command_timeout": 30}
    (forest / "_meta/gardener.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    source = tmp_path / "export"
    cli.write(source / "drafts/wip.md", "# WIP\n\nNot ready.\n")
    report = vine_cli.adopt(source, forest).json()
    assert report["warnings"] == ["_meta/gardener.yaml: unknown key 'ignores' is not used (known: command_output_limit_mb, "
                                  "command_timeout, converters, curation, ignore, sources)"]
    assert vine_cli.sync(forest).json()["warnings"] == report["warnings"]
