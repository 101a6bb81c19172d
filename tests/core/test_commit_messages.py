"""Issue 10 item 4: the history git accepts and a terminal shows safely.

A title with a NUL, ANSI and OSC escapes, a bidi override and 100,000 characters
is planted for real; `git fsck --full --strict` must pass, `git log` must show no
control byte, the subject must be one bounded line, and the passport must give the
title back exactly, with its control characters escaped in the file.
"""
from __future__ import annotations

import re
import subprocess

import pytest

from monkeyllm_core import init_forest, parse_node
from monkeyllm_core.store.messages import MESSAGE_MAX, SUBJECT_MAX, commit_message
from monkeyllm_core.store.history import Committer

NASTY_TITLE = ("Q1\x00 plan \x1b[31mred\x1b[0m \x1b]0;pwned\x07 \x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\"
               " \u202eevil\u202c \u2066iso\u2069 \x9b2J \x07bell\x7f" + "x" * 100_000)
# what a terminal acts on: C0 (newline aside), DEL, C1, bidi controls
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def run_git(root, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True)


def assert_history_is_clean(root) -> list[str]:
    """fsck --strict passes and every subject is one short line without a control
    character; returns the subjects, newest first."""
    fsck = run_git(root, "fsck", "--full", "--strict")
    assert fsck.returncode == 0 and b"nulInCommit" not in fsck.stderr, fsck.stderr
    log = run_git(root, "log", "--format=%s%x00")
    subjects = log.stdout.decode("utf-8").split("\x00\n")[:-1]  # raises if a message is not UTF-8
    for subject in subjects:
        assert not UNSAFE.search(subject), repr(subject[:200])
        assert len(subject) <= SUBJECT_MAX
    for raw in run_git(root, "rev-list", "--all").stdout.split():
        body = run_git(root, "cat-file", "commit", raw.decode()).stdout
        assert b"\x00" not in body and b"\x1b" not in body
        body.decode("utf-8")
    return subjects


def test_a_hostile_title_round_trips_through_plant_and_the_history_stays_clean(brain):
    with brain.open() as vine:
        vine.plant({"id": "plans/_index", "title": "Plans", "summary": "Plans by quarter."})
        vine.plant({"id": "plans/q1", "type": "note", "title": NASTY_TITLE, "summary": "The Q1 plan.",
                    "body": "# Q1\n\nThe plan.\n"})
        assert vine.read("plans/q1").frontmatter["title"] == NASTY_TITLE

    subjects = assert_history_is_clean(brain.root)
    assert subjects[0].startswith("plant(plans/q1): Q1 plan red link evil iso bellxxx")
    assert subjects[0].endswith("\u2026") and len(subjects[0]) == SUBJECT_MAX
    # the passport keeps the title verbatim, its control characters escaped by the YAML dumper
    raw = (brain.root / "plans" / "q1.md").read_bytes()
    assert b"\x00" not in raw and b"\x1b" not in raw and b"\x07" not in raw
    assert rb"Q1\0 plan \e[31mred" in raw
    assert parse_node(brain.at_head("plans/q1.md")).frontmatter["title"] == NASTY_TITLE
    brain.assert_clean()


def test_a_title_over_several_lines_gives_a_one_line_subject(brain):
    with brain.open() as vine:
        vine.plant({"id": "memo", "type": "note", "title": "Memo\n\nsecond paragraph\r\nthird",
                    "summary": "A memo."})
    assert brain.subjects()[0] == "plant(memo): Memo second paragraph third [source=agent]"
    assert brain.git("log", "-1", "--format=%b").strip() == ""  # nothing spilled into the body


@pytest.mark.parametrize("write", ["graft", "replace"])
def test_a_callers_own_message_is_cleaned_too(brain, make_note, write):
    with brain.open() as vine:
        vine.plant(make_note("fact"))
        hostile = "sync\x00 \x1b]52;c;ZXZpbA==\x07fact\u202e\n\nbody \x1b[2Jline\x00\n" + "y" * 50_000
        if write == "graft":
            vine.graft("fact", {"set_frontmatter": {"summary": "A new fact."}}, message=hostile)
        else:
            vine.replace("fact", {"summary": "A new fact."}, message=hostile)
    subjects = assert_history_is_clean(brain.root)
    assert subjects[0] == "sync fact"
    body = brain.git("log", "-1", "--format=%b")
    assert body.startswith("body line\n") and len(body) <= MESSAGE_MAX


def test_init_cleans_the_title_in_its_message_and_keeps_it_in_the_master_index(tmp_path):
    root = init_forest(tmp_path / "brain", "Brain\x00 \x1b[1mbold\x1b[0m \u202ex")
    assert assert_history_is_clean(root) == ["init: forest 'Brain bold x'"]
    master = parse_node((root / "_index.md").read_text(encoding="utf-8"))
    assert master.frontmatter["title"] == "Brain\x00 \x1b[1mbold\x1b[0m \u202ex"


def test_the_committer_itself_cleans_what_it_is_given(brain):
    committer = Committer(brain.root)
    committer.commit("raw\x00\x1b[31m commit\x9b1m\u2067", {"raw.md": b"---\nid: raw\n---\n"})
    committer.close()
    assert assert_history_is_clean(brain.root)[0] == "raw commit"


@pytest.mark.parametrize("message, expected", [
    ("plain", "plain"),
    ("", "(no subject)"),
    ("\x00\x1b[0m\u202e", "(no subject)"),
    ("tab\there", "tab here"),
    ("a\x1bcb", "ab"),                               # a two-byte ESC sequence goes whole
    ("osc \x1b]0;title\x1b\\end", "osc end"),         # an OSC string to ST goes whole
    ("c1 \x9d0;title\x9cend", "c1 end"),              # ... in its C1 form too
    ("apc \x1b_payload\x07end", "apc end"),
    ("unterminated \x1b]0;title", "unterminated 0;title"),  # no terminal state is left open
    ("lone \udcff surrogate", "lone \ufffd surrogate"),
    ("first\nsame paragraph\n\nbody", "first same paragraph\n\nbody"),
    ("\n\n  lead  spaces  \n\n\n\nbody\n\n\n\nmore\n\n", "lead spaces\n\nbody\n\nmore"),
])
def test_commit_message_rules(message, expected):
    assert commit_message(message) == expected


def test_a_long_body_is_cut_between_lines():
    paths = "\n".join(f"folder/node-{i:05d}.md" for i in range(2000))
    message = commit_message(f"vine(recover): re-commit 2000 write(s)\n\n{paths}")
    assert len(message) <= MESSAGE_MAX
    *kept, last = message.split("\n\n", 1)[1].split("\n")
    assert last == "\u2026"
    assert all(re.fullmatch(r"folder/node-\d{5}\.md", line) for line in kept)


def test_printable_ascii_is_returned_as_the_rules_would_clean_it():
    # clean_text hands printable ASCII back untouched: it must be what the rules give,
    # on every ASCII character (controls, DEL, ESC) and on text that is not ASCII
    import random

    from monkeyllm_core.store import messages

    rng = random.Random(23)
    alphabet = [chr(code) for code in range(128)] + ["\x85", "\u2028", "\u200e", "\x9b", "\ud800", "é", "\u00a0"]
    samples = ["", " ", "  a  b  ", "Plain title", "\x1b[31mred\x1b[0m", "a\tb\nc\r\nd"]
    samples += [chr(code) * 2 + " x " + chr(code) for code in range(128)]
    samples += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(3000)]
    for text in samples:
        assert messages.clean_text(text) == messages._by_the_rules(text), repr(text)
        assert messages.one_line(text) == " ".join(messages._by_the_rules(text).split()), repr(text)
