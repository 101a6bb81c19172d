"""`vine` builds the parser of the command it runs alone, and prints what the whole parser prints.

Each command line below runs through the real `vine` script in a subprocess, and
what it prints (help, usage errors) and its exit code are compared with what the
whole parser, every command and argument built (``build_parser()``, as `vine`
built it for every run before), prints for the same arguments in another
process.
"""
from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from cli_helpers import VINE

COMMANDS = ("init", "adopt", "sync", "rollup", "validate", "reindex", "query", "plugins", "locate", "look", "move",
            "scan", "pick", "sniff", "harvest", "snapshot", "serve", "keys", "ranger", "troop", "canopy")
VERBS = (("snapshot", "create"), ("snapshot", "restore"), ("keys", "add"), ("keys", "list"), ("keys", "revoke"),
         ("canopy", "build"), ("canopy", "status"))
# what parsing alone answers: help, and every kind of usage error
COMMAND_LINES = [
    ["--help"], ["-h"], [], ["--traceback"], ["bogus"], ["-h", "sync"], ["--traceback", "sync", "--help"],
    ["--trace", "locate", "-h"], ["sync", "--bogus"], ["--bogus", "sync"], ["locate"], ["snapshot"],
    ["snapshot", "bogus"], ["query", "only-an-id"], ["sync", "--jobs", "many"], ["adopt", "--executor", "ray", "x"],
    ["init", "--title"], ["sy"],
    *([name, "--help"] for name in COMMANDS), *([*verb, "--help"] for verb in VERBS),
]
ENV = {"COLUMNS": "100", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"}

# in a fresh interpreter: what the whole parser prints for each command line, and its exit code
WHOLE_PARSER = """
import contextlib, io, json, sys
from monkeyllm_gardener.cli import build_parser
answers = []
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            build_parser().parse_args(argv)
            code = None
        except SystemExit as exc:
            code = exc.code
    answers.append([out.getvalue(), err.getvalue(), code])
print(json.dumps(answers))
"""


@pytest.fixture(scope="module")
def whole_parser() -> list[Any]:
    proc = subprocess.run([sys.executable, "-c", WHOLE_PARSER, json.dumps(COMMAND_LINES)], env=ENV,
                          capture_output=True, text=True, check=True, timeout=120)
    return json.loads(proc.stdout)


@pytest.mark.parametrize("index", range(len(COMMAND_LINES)), ids=[" ".join(a) or "(none)" for a in COMMAND_LINES])
def test_vine_prints_what_the_whole_parser_prints(whole_parser: list[Any], index: int) -> None:
    argv = COMMAND_LINES[index]
    proc = subprocess.run([*VINE, *argv], env=ENV, capture_output=True, text=True, timeout=120)
    stdout, stderr, code = whole_parser[index]
    assert code is not None, f"{argv}: parsing alone must answer it"
    assert (proc.stdout, proc.stderr, proc.returncode) == (stdout, stderr, code)
    assert "usage: vine" in proc.stdout + proc.stderr


def test_the_help_lists_every_command_with_its_line(whole_parser: list[Any]) -> None:
    listing = whole_parser[COMMAND_LINES.index(["--help"])][0]
    for name in COMMANDS:
        assert f"\n    {name} " in listing
    assert "ranked entry points for a question" in listing and "the vector layer: build it" in listing
    sync_help = whole_parser[COMMAND_LINES.index(["sync", "--help"])][0]
    assert sync_help.startswith("usage: vine sync [-h]") and "--path PATH" in sync_help and "--dry-run" in sync_help
