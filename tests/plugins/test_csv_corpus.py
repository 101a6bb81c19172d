"""csv-spectrum (tests/corpus/csv, BSD-2-Clause): every file round trips exactly.

Every value of the table the engine builds equals the csv module's parse of the same
file: TEXT character for character (quoted commas, quotes, LF and CRLF newlines inside
fields), INTEGER as the very digits written, and an empty field NULL by the one NULL
rule. The upstream JSON parses are a second, independent expectation."""
from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from monkeyllm_core.data.dataset import create_dataset
from monkeyllm_plugins.csv_dataset import CsvConverter

from cli_helpers import NO_THIRD_PARTY_PLUGINS

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "csv"
FILES = sorted(CORPUS.glob("*.csv"))
# Upstream's location_coordinates.json holds another phone number than its CSV (and is
# not an array): the csv module's parse is the expectation there.
UPSTREAM_DISAGREES = {"location_coordinates"}


def csv_module_parse(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="", encoding="utf-8") as stream:
        header, *records = list(csv.reader(stream))
    return header, records


def table_of(tmp_path: Path, path: Path) -> tuple[dict[str, str], list[tuple]]:
    conversion = CsvConverter().convert(path)
    ((table, spec),) = conversion.schema.items()
    db_path = tmp_path / f"{path.stem}.db"
    create_dataset(db_path, conversion.schema, conversion.rows)
    with sqlite3.connect(db_path) as db:
        rows = db.execute(f'SELECT * FROM "{table}" ORDER BY rowid').fetchall()
    return dict(spec["columns"]), rows


def as_written(value: object) -> str | None:
    """A stored value as the text it came from (None for NULL)."""
    if value is None or isinstance(value, str):
        return value
    assert isinstance(value, int), f"{value!r}: no REAL column in this corpus"
    return str(value)


def test_the_corpus_is_there_with_its_license() -> None:
    assert len(FILES) == 12
    assert "BSD-2-Clause" in (CORPUS / "LICENSES.md").read_text(encoding="utf-8")
    assert b"\r\n" in (CORPUS / "newlines_crlf.csv").read_bytes()  # kept as CRLF bytes


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_every_value_equals_the_csv_modules_parse(tmp_path: Path, path: Path) -> None:
    header, records = csv_module_parse(path)
    columns, rows = table_of(tmp_path, path)
    assert len(columns) == len(header) and len(rows) == len(records)
    for record, row in zip(records, rows):
        assert [as_written(value) for value in row] == [cell if cell.strip() else None for cell in record]


@pytest.mark.parametrize("path", [p for p in FILES if p.stem not in UPSTREAM_DISAGREES],
                         ids=[p.stem for p in FILES if p.stem not in UPSTREAM_DISAGREES])
def test_every_value_equals_upstreams_expected_parse(tmp_path: Path, path: Path) -> None:
    expected = json.loads((CORPUS / "json" / f"{path.stem}.json").read_text(encoding="utf-8"))
    _, rows = table_of(tmp_path, path)
    assert [[as_written(v) for v in row] for row in rows] == [
        [value if value else None for value in record.values()] for record in expected
    ]


def test_a_quoted_crlf_reaches_the_table_as_crlf(tmp_path: Path) -> None:
    _, rows = table_of(tmp_path, CORPUS / "newlines_crlf.csv")
    assert rows[1][0] == "Once upon \r\na time"


def test_the_corpus_adopted_by_the_cli_plants_every_file_and_its_manual_queries_run(vine_cli: Any,
                                                                                   tmp_path: Path) -> None:
    export = tmp_path / "export"
    export.mkdir()
    for path in FILES:
        (export / path.name).write_bytes(path.read_bytes())
    forest = vine_cli.init(tmp_path / "forest", title="Corpus")
    report = vine_cli.adopt(export, forest, expect=None, env=NO_THIRD_PARTY_PLUGINS, timeout=300).json()
    assert sorted(report["planted"]) == sorted(p.stem.replace("_", "-") for p in FILES), report
    assert report["errors"] == [] and report["warnings"] == []
    for node_id in report["planted"]:
        body = (forest / f"{node_id}.md").read_text(encoding="utf-8")
        manual = body.split("## Query manual", 1)[1].split("## Sample rows", 1)[0]
        queries = [q for q in manual.split("`") if q.startswith("SELECT")]
        assert len(queries) >= 2, manual
        for sql in queries:
            proc = vine_cli("query", node_id, sql, "--forest", forest, timeout=300)
            assert proc.returncode == 0, f"{node_id}: {sql}\n{proc.stderr}"
