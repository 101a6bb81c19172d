"""A converter written as a third party writes one, installed the way pip installs
it, does what a built-in does.

Under tmp_path, the package ``acme_exports`` (a real package, imported by name
from nowhere but its own folder) uses only the plugin API (``monkeyllm_gardener``
and its kit): a ``.log`` converter makes a dataset with the kit's encoding
detection, header repair, type inference and schema (as the built-in CSV
converter does), and a ``.memo`` converter makes a note from markdown with YAML
frontmatter with the kit's frontmatter, title and tag helpers (as the built-in
markdown converter does). The distribution is what ``pip install`` leaves in
site-packages: the package plus ``acme_exports-1.0.dist-info`` with ``METADATA``
and ``entry_points.txt``, on PYTHONPATH. The real ``vine`` CLI, in a subprocess
with a clean environment, then lists it, adopts a folder with it (conversions in
worker processes, so its row source crosses a process boundary) and answers
queries on what it planted; the forest validates.
"""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from monkeyllm_core import parse_node
from monkeyllm_gardener.testing import isolated_env

VINE = [sys.executable, "-m", "monkeyllm_gardener.cli"]

PACKAGE: dict[str, str] = {
    "__init__.py": '''
        """Acme's exports for a MonkeyLLM forest: ops logs as datasets, memos as notes."""
        from monkeyllm_gardener import hookimpl

        from .logs import LogConverter
        from .memos import MemoConverter


        @hookimpl
        def register_converters(register):
            register(LogConverter(), priority=0.0)
            register(MemoConverter(), priority=0.0)
    ''',
    "logs.py": '''
        """``.log``: a header line, then one record per line, fields separated by `` | ``."""
        from __future__ import annotations

        from dataclasses import dataclass
        from pathlib import Path

        from monkeyllm_gardener import Conversion, ConversionError
        from monkeyllm_gardener.kit import (
            TypeTracker, decimal_notes, detect_encoding, repair_headers, table_name_from,
            text_converters, wide_table_schema,
        )

        SEPARATOR = " | "


        def records(path, encoding):
            with open(path, encoding=encoding) as stream:
                for line in stream:
                    if line.strip():
                        yield [field.strip() for field in line.rstrip("\\n").split(SEPARATOR)]


        @dataclass(frozen=True)
        class LogRows:
            """Re-reads the file on every iteration (picklable: it crosses to the writer)."""

            path: Path
            encoding: str
            types: tuple
            start: int
            stop: int

            def __iter__(self):
                convert = text_converters(self.types)
                lines = records(self.path, self.encoding)
                next(lines)  # the header
                for fields in lines:
                    cells = (fields + [None] * self.stop)[self.start:self.stop]
                    yield tuple(to(cell) for to, cell in zip(convert, cells))


        class LogConverter:
            name = "acme-log"
            extensions = (".log",)

            def convert(self, path: Path) -> Conversion:
                encoding, warning = detect_encoding(path)
                lines = records(path, encoding)
                header = next(lines, None)
                if header is None:
                    raise ConversionError(f"empty log: {path.name} has no header line; add one")
                names, notes = repair_headers(header)
                tracker = TypeTracker()
                for fields in lines:
                    tracker.observe_text_row(fields)
                types = tracker.types(len(names))
                parts, schema, split_note = wide_table_schema(path, table_name_from(path.stem), names, types,
                                                              fix="log fewer fields")
                notes += decimal_notes(names, tracker) + ([split_note] if split_note else [])
                rows = {part.name: LogRows(path.resolve(), encoding, tuple(types[part.start:part.stop]),
                                           part.start, part.stop) for part in parts}
                return Conversion(kind="dataset", title=path.stem, schema=schema, rows=rows,
                                  manual_notes=tuple(notes),
                                  warnings=(f"{path.name}: {warning}",) if warning else ())
    ''',
    "memos.py": '''
        """``.memo``: markdown with an optional YAML frontmatter block (title, keywords, date, author)."""
        from __future__ import annotations

        import datetime
        from pathlib import Path

        import yaml

        from monkeyllm_gardener import Conversion
        from monkeyllm_gardener.kit import first_h1, fold_tag, read_text, split_frontmatter


        class MemoConverter:
            name = "acme-memo"
            extensions = (".memo",)

            def convert(self, path: Path) -> Conversion:
                text, warning = read_text(path)
                declared, body = {}, text
                split = split_frontmatter(text)
                if split is not None:
                    declared, body = yaml.safe_load(split[0]) or {}, split[1].lstrip("\\n")
                fields = {}
                if declared.get("keywords"):
                    fields["tags"] = [tag for tag in map(fold_tag, declared["keywords"]) if tag]
                if isinstance(declared.get("date"), datetime.date):
                    fields["created"] = declared["date"]
                if isinstance(declared.get("author"), str):
                    fields["author"] = declared["author"]
                return Conversion(kind="markdown", node_type="document", markdown=body,
                                  title=declared.get("title") or first_h1(body), frontmatter=fields,
                                  warnings=(f"{path.name}: {warning}",) if warning else ())
    ''',
}

DISK_LOG = (
    "Time | Host | Level | Disk % | Free GB\n"
    "2026-03-14T09:00:01 | web-1 | WARN | 91.5 | 12\n"
    "2026-03-14T09:05:00 | web-2 | INFO | 40.25 | 120\n"
    "2026-03-14T09:10:00 | db-1 | WARN | 88.0 | 30\n"
    "2026-03-14T09:15:00 | caf\u00e9-1 | INFO | 12.0 | 410\n"
)
# the same table as a CSV: the built-in converter's dataset to compare with
DISK_CSV = DISK_LOG.replace(" | ", ",")
MEMO = """---
title: Quarterly review, Q1 2026
keywords: [Quarterly Review, Caf\u00e9 Ops, "  "]
date: 2026-03-31
author: Ana Silva
---
# Q1 in short

Disk pressure on the web tier was the main incident of the quarter.
"""


def install_like_pip(site: Path) -> None:
    """The package and its dist-info, as ``pip install acme-exports`` leaves them."""
    package = site / "acme_exports"
    package.mkdir(parents=True)
    for name, source in PACKAGE.items():
        (package / name).write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    info = site / "acme_exports-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-exports\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[monkeyllm]\nacme = acme_exports\n", encoding="utf-8")
    (info / "top_level.txt").write_text("acme_exports\n", encoding="utf-8")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment ``vine`` runs in: a fresh HOME, the site folder on PYTHONPATH."""
    root = tmp_path_factory.mktemp("acme")
    install_like_pip(root / "site-packages")
    return isolated_env(root / "home", {"PYTHONPATH": str(root / "site-packages")})


def vine(env: dict[str, str], *args: str | Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*VINE, *map(str, args)], env=env, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.fixture(scope="module")
def adopted(tmp_path_factory: pytest.TempPathFactory, installed: dict[str, str]) -> tuple[Path, dict[str, Any]]:
    """A forest that adopted an export of a log (in cp1252), its CSV twin and a memo
    (read-only for the tests that share it)."""
    tmp_path = tmp_path_factory.mktemp("adopted")
    export = tmp_path / "export"
    (export / "ops").mkdir(parents=True)
    (export / "ops" / "disk_usage.log").write_bytes(DISK_LOG.encode("cp1252"))
    (export / "ops" / "disk_usage_csv.csv").write_text(DISK_CSV, encoding="utf-8")
    (export / "memos").mkdir()
    (export / "memos" / "q1-review.memo").write_text(MEMO, encoding="utf-8")
    forest = tmp_path / "forest"
    init = vine(installed, "init", "--forest", forest, "--title", "Acme ops")
    assert init.returncode == 0, init.stderr
    adopt = vine(installed, "adopt", export, "--forest", forest, "--jobs", "2", "--json")
    assert adopt.returncode == 0, adopt.stdout + adopt.stderr
    return forest, json.loads(adopt.stdout)


def read_node(forest: Path, node_id: str) -> Any:
    return parse_node((forest / f"{node_id}.md").read_text(encoding="utf-8"), where=node_id)


def test_vine_plugins_lists_the_installed_distribution_and_its_converters(installed: dict[str, str]) -> None:
    listed = vine(installed, "plugins", "--json")
    assert listed.returncode == 0, listed.stderr
    report = json.loads(listed.stdout)
    [acme] = [plugin for plugin in report["plugins"] if plugin["name"] == "acme-exports"]
    assert acme["version"] == "1.0"
    assert {(c["name"], tuple(c["extensions"])) for c in acme["converters"]} == {
        ("acme-log", (".log",)), ("acme-memo", (".memo",))}
    assert report["extensions"][".log"] == ["acme-log"]
    assert report["load_errors"] == []


def test_the_log_plants_a_dataset_typed_and_queryable_like_the_builtin_csv(
    adopted: tuple[Path, dict[str, Any]], installed: dict[str, str]
) -> None:
    forest, report = adopted
    assert set(report["planted"]) == {"ops/disk-usage", "ops/disk-usage-csv", "memos/q1-review"}
    assert report["errors"] == []
    assert [w for w in report["warnings"] if "disk_usage.log" in w] == [
        "ops/disk_usage.log: decoded as cp1252 (not valid UTF-8); re-save as UTF-8 if characters look wrong"]

    log = read_node(forest, "ops/disk-usage")
    assert log.frontmatter["type"] == "dataset" and log.frontmatter["payload_type"] == "sqlite"
    manual = log.body[log.body.index("## Query manual"):]
    assert "`disk_pct`" in manual and "`free_gb`" in manual  # the repaired headers are stated
    answer = vine(installed, "query", "ops/disk-usage",
                  "SELECT host, disk_pct FROM disk_usage WHERE level = 'WARN' AND free_gb < 20",
                  "--forest", forest)
    assert answer.returncode == 0, answer.stderr
    assert json.loads(answer.stdout)["rows"] == [["web-1", 91.5]]
    decoded = vine(installed, "query", "ops/disk-usage", "SELECT host FROM disk_usage WHERE free_gb = 410",
                   "--forest", forest)
    assert json.loads(decoded.stdout)["rows"] == [["caf\u00e9-1"]]  # the legacy encoding was detected

    def columns(node_id: str, table: str) -> list[tuple[str, str]]:
        payload = forest / node_id.rsplit("/", 1)[0] / read_node(forest, node_id).frontmatter["payload"]
        with sqlite3.connect(f"file:{payload}?mode=ro", uri=True) as db:
            return [(row[1], row[2]) for row in db.execute(f"PRAGMA table_info({table})")]

    assert columns("ops/disk-usage", "disk_usage") == columns("ops/disk-usage-csv", "disk_usage_csv") == [
        ("time", "TEXT"), ("host", "TEXT"), ("level", "TEXT"), ("disk_pct", "REAL"), ("free_gb", "INTEGER")]


def test_the_memo_plants_a_note_with_the_passport_fields_it_declared(
    adopted: tuple[Path, dict[str, Any]], installed: dict[str, str]
) -> None:
    forest, _ = adopted
    memo = read_node(forest, "memos/q1-review")
    fm = memo.frontmatter
    assert fm["type"] == "document"
    assert fm["title"] == "Quarterly review, Q1 2026"
    assert fm["tags"] == ["quarterly-review", "cafe-ops"]
    assert fm["created"] == "2026-03-31"
    assert fm["source_author"] == "Ana Silva"
    assert fm["summary"] == "Disk pressure on the web tier was the main incident of the quarter."
    assert "keywords:" not in memo.body and memo.body.startswith("# Q1 in short")
    checked = vine(installed, "validate", "--forest", forest)
    assert checked.returncode == 0, checked.stdout + checked.stderr
