"""Helpers for the end-to-end tests of every folder: the real ``vine`` CLI in a
subprocess, readers of what it wrote, and export folders made in code.

Every command runs as ``python -m monkeyllm_gardener.cli`` with a fresh machine's
environment (HOME and GIT_CONFIG_GLOBAL point at an empty folder, so no git
identity is configured and no user plugin allow-list leaks in), on forests and
export folders made in code under ``tmp_path``.

Tests reach this module through the ``cli`` fixture (tests/conftest.py) or import
it (``from cli_helpers import VINE``): tests/conftest.py puts tests/ on sys.path.
"""
from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import wave
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import yaml

from monkeyllm_gardener.testing import isolated_env

VINE = [sys.executable, "-m", "monkeyllm_gardener.cli"]
REPO = Path(__file__).resolve().parents[1]
# What the built-in media describer writes when nothing describes the file.
SENTINEL = "No description has been generated for this media yet."


@dataclass(frozen=True, kw_only=True)
class Result:
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> dict[str, Any]:
        return json.loads(self.stdout)

    def describe(self) -> str:
        return f"vine {' '.join(self.args)} -> {self.returncode}\nstdout:\n{self.stdout}\nstderr:\n{self.stderr}"


# No plugin but the built-ins: a converter's own end-to-end test must not meet a plugin
# installed on the machine that runs it.
NO_THIRD_PARTY_PLUGINS = {"MONKEYLLM_LOAD_PLUGINS": ""}

Expect = int | tuple[int, ...] | None


class VineRunner:
    """``vine_cli(*args)`` runs the CLI for real and returns its ``Result``; the stderr
    of every command is checked for a traceback. ``env`` is added to the clean
    environment of every command (a call's own ``env`` is added on top)."""

    def __init__(self, tmp_path: Path, env: Mapping[str, str] | None = None) -> None:
        self.tmp_path = tmp_path
        self.home = tmp_path / "home"
        self.cwd = tmp_path / "cwd"
        self.cwd.mkdir(exist_ok=True)
        self.base_env = dict(env or {})

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        return isolated_env(self.home, {**self.base_env, **(extra or {})})

    def __call__(self, *args: str | os.PathLike[str], env: Mapping[str, str] | None = None,
                 cwd: Path | None = None, timeout: float = 120) -> Result:
        argv = tuple(str(a) for a in args)
        proc = subprocess.run([*VINE, *argv], cwd=cwd or self.cwd, env=self.env(env), capture_output=True,
                              text=True, timeout=timeout)
        result = Result(args=argv, returncode=proc.returncode, stdout=proc.stdout, stderr=proc.stderr)
        assert "Traceback" not in result.stderr, result.describe()
        return result

    def popen(self, *args: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen([*VINE, *(str(a) for a in args)], cwd=self.cwd, env=self.env(env),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def init(self, forest: Path, title: str = "Test forest", **options: Any) -> Path:
        result = self("init", "--forest", forest, "--title", title, **options)
        assert result.returncode == 0, result.describe()
        return forest

    def adopt(self, source: Path, forest: Path, *extra: str, expect: Expect = 0, **options: Any) -> Result:
        return self.expecting(expect, self("adopt", source, "--forest", forest, "--json", *extra, **options))

    def sync(self, forest: Path, *extra: str, expect: Expect = 0, **options: Any) -> Result:
        return self.expecting(expect, self("sync", "--forest", forest, "--json", *extra, **options))

    def adopt_into_new_forest(self, source: Path, timeout: float = 60) -> tuple[Path, dict[str, Any]]:
        """`vine init` a forest beside the export, `vine adopt --json` the export into
        it with only the built-in plugins, exit 0 or 1: the forest and the report."""
        forest = self.init(self.tmp_path / "forest", env=NO_THIRD_PARTY_PLUGINS)
        report = self.adopt(source, forest, expect=(0, 1), env=NO_THIRD_PARTY_PLUGINS, timeout=timeout)
        return forest, report.json()

    @staticmethod
    def expecting(expect: Expect, result: Result) -> Result:
        """The result, once its exit code is checked against ``expect`` (None: any)."""
        if expect is not None:
            allowed = expect if isinstance(expect, tuple) else (expect,)
            assert result.returncode in allowed, result.describe()
        return result

    def assert_consistent(self, forest: Path) -> None:
        """`git status` clean and `vine validate` clean: checked after every command."""
        assert git_status(forest) == "", git_status(forest)
        result = self("validate", "--forest", forest)
        assert result.returncode == 0, result.describe()
        assert " 0 error(s), 0 warning(s)" in result.stdout, result.describe()


# -- git and forest readers -------------------------------------------------------------
def git(forest: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=forest, capture_output=True, text=True,
                          env=isolated_env(forest.parent / "home"))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def git_status(forest: Path) -> str:
    return git(forest, "status", "--porcelain").strip()


def commit_messages(forest: Path) -> list[str]:
    """Subjects, newest first."""
    return git(forest, "log", "--format=%s").splitlines()


def commit_count(forest: Path) -> int:
    return len(commit_messages(forest))


def frontmatter(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), path
    head = text[4:text.index("\n---\n", 4)]
    return yaml.safe_load(head)


def node(forest: Path, node_id: str) -> dict[str, Any]:
    return frontmatter(forest / f"{node_id}.md")


def body(forest: Path, node_id: str) -> str:
    text = (forest / f"{node_id}.md").read_text(encoding="utf-8")
    return text[text.index("\n---\n", 4) + 5:]


def manual_queries(body: str) -> list[str]:
    """Every backticked SELECT/WITH statement in the ``## Query manual`` section."""
    match = re.search(r"^## Query manual\n(.*?)(?=^## |\Z)", body, re.S | re.M)
    assert match, body
    return [q for q in re.findall(r"`([^`]+)`", match.group(1)) if re.match(r"(?i)(SELECT|WITH)\s", q)]


def node_ids(forest: Path) -> set[str]:
    """Every node file except the forest's own (_index, _meta)."""
    out = set()
    for path in forest.rglob("*.md"):
        rel = path.relative_to(forest).as_posix()
        if rel.startswith((".git/", "_meta/", "_derived/")) or rel == "_index.md" or path.name.startswith("."):
            continue
        out.add(rel[:-3])
    return out


def snapshot(forest: Path) -> dict[str, bytes]:
    """Every file of the forest except git internals and the derived layer."""
    out = {}
    for path in sorted(forest.rglob("*")):
        rel = path.relative_to(forest).as_posix()
        if path.is_file() and not rel.startswith((".git/", "_derived/")) and rel != ".vine.lock":
            out[rel] = path.read_bytes()
    return out


def report_rel(line: str) -> str:
    """The source path of an ``unsupported``/``errors`` line (``rel: reason``)."""
    return line.split(": ", 1)[0]


def lists_by_file(forest: Path, report: Mapping[str, Any]) -> dict[str, list[str]]:
    """For each source file named in the report, the lists it appears in."""
    seen: dict[str, list[str]] = {}
    for name in ("planted", "updated", "unchanged", "stale"):
        for node_id in report[name]:
            rel = node(forest, node_id)["source_path"]
            seen.setdefault(rel, []).append(name)
    for name in ("unsupported", "errors"):
        for line in report[name]:
            seen.setdefault(report_rel(line), []).append(name)
    return seen


def source_files(source: Path) -> set[str]:
    return {p.relative_to(source).as_posix() for p in source.rglob("*") if p.is_file() or p.is_symlink()}


# -- export folders made in code ------------------------------------------------------------
NOTE_WITH_FRONTMATTER = """---
title: Board meeting, March 2026
tags: [board, governance]
aliases: [March board]
secret_key: FRONTMATTER-ONLY-VALUE
---

# Board meeting

The board approved the Falcon rollout for Q2 2026 with a budget of 120k EUR.
Maria Lopez presented the hiring plan for the support team.
"""


def write_png(path: Path, size: tuple[int, int] = (8, 6), color: str = "red") -> None:
    from PIL import Image
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path, format="PNG")


def write_wav(path: Path, frames: int = 800, *, rate: int = 8000, channels: int = 1, sample_width: int = 2) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(sample_width)
        out.setframerate(rate)
        out.writeframes(b"\x00\x01" * (frames * channels * sample_width // 2))
    return path


def write_sqlite(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, city TEXT)")
    db.executemany("INSERT INTO customers (name, city) VALUES (?, ?)",
                   [("Northwind", "Lisbon"), ("Contoso", "Porto"), ("Fabrikam", "Braga"), ("Initech", "Faro")])
    db.commit()
    db.close()


def install_dists(folder: Path, dists: Mapping[str, tuple[str, str, str]]) -> Path:
    """Install distributions for real into ``folder`` (put it on PYTHONPATH): for each
    name, ``(module, module source, entry_points.txt)`` becomes the module plus a
    ``*.dist-info`` with its METADATA and entry points."""
    import textwrap
    folder.mkdir(parents=True, exist_ok=True)
    for dist, (module, source, entry_points) in dists.items():
        (folder / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        info = folder / f"{dist.replace('-', '_')}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n", encoding="utf-8")
        (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")
    return folder


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


INVOICES_CSV = "invoice_id,customer,total_usd,status\nINV-1,Northwind,1240.0,F\nINV-2,Contoso,880.5,A\nINV-3,Fabrikam,15300.0,F\n"

# source path -> the list it must end in after a first adopt (None: a branch-only folder)
RICH_EXPORT: dict[str, str] = {
    "notes/Board Meeting 2026-03.md": "planted",
    "notes/archive/old plan.md": "planted",
    "data/invoices.csv": "planted",
    "data/customers.json": "planted",
    "data/crm.db": "planted",
    "media/photo.png": "planted",
    "media/beep.wav": "planted",
    "misc/mystery.qqq": "unsupported",
    "misc/broken.json": "errors",
}
# misc/ holds only an unsupported file and a failure: it gets no branch
RICH_BRANCHES = {"notes/_index", "notes/archive/_index", "data/_index", "media/_index"}


def make_rich_export(root: Path) -> Path:
    write(root / "notes/Board Meeting 2026-03.md", NOTE_WITH_FRONTMATTER)
    write(root / "notes/archive/old plan.md",
          "# Old plan\n\nThe 2025 plan moved the warehouse to Porto in September 2025.\n")
    write(root / "data/invoices.csv", INVOICES_CSV)
    write(root / "data/customers.json",
          json.dumps([{"id": 1, "name": "Northwind"}, {"id": 2, "name": "Contoso"}]))
    write_sqlite(root / "data/crm.db")
    write_png(root / "media/photo.png")
    write_wav(root / "media/beep.wav")
    write(root / "misc/mystery.qqq", "what am I?\n")
    write(root / "misc/broken.json", '[{"id": 1, "name": "trunc')
    return root


def bump_mtime(path: Path, seconds: float = 10.0) -> None:
    """A later mtime, as an editor saving the file would leave (the fast path keys on it)."""
    st = path.stat()
    os.utime(path, (st.st_atime, st.st_mtime + seconds))

