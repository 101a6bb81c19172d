"""git run in a folder, the way the core tests judge what the engine wrote: its output
as text (``git``) or as bytes with an optional stdin (``git_bytes``); either fails the
test, with git's stderr, when git fails. Plus ``plain_note``, the note whose title is
its id, for the tests that read commit subjects back."""
from __future__ import annotations

import subprocess
from pathlib import Path


def git(cwd: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} in {cwd} failed: {proc.stderr}")
    return proc.stdout


def git_bytes(cwd: Path, *args: str, input: bytes | None = None) -> bytes:
    proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True)
    assert proc.returncode == 0, f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace')}"
    return proc.stdout


def plain_note(node_id: str) -> dict:
    """A note titled by its id: its commit subject is ``plant(<id>): <id> [source=agent]``."""
    return {"id": node_id, "type": "note", "title": node_id, "summary": f"Note {node_id} with one fact.",
            "body": f"# {node_id}\n\nA fact.\n"}
