"""The bundled fixtures/export, adopted the way scripts/demo.sh does it, keeps its promises.

One real ``vine adopt`` (module-scoped) with the PDF command hook of
fixtures/gardener.yaml copied into the forest's _meta/gardener.yaml, with absolute
paths. Then: every example query of every dataset manual runs, the worked example of
spec/ingestion.md answers as documented, the broken workbook is an error, the PDF
came through the hook, media nodes carry the sentinel, payloads stay out of git.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from cli_helpers import REPO, SENTINEL, Result, VineRunner, body, frontmatter, git, manual_queries

EXPORT = REPO / "fixtures" / "export"
PDF_TOOL = REPO / "fixtures" / "tools" / "pdf2md.py"
WORKED_EXAMPLE = ("SELECT customer, ROUND(SUM(total_usd), 2) AS billed FROM invoices_2026_q1 "
                  "WHERE status = 'F' GROUP BY customer ORDER BY billed DESC LIMIT 3")


@dataclass(frozen=True, kw_only=True)
class AdoptedExport:
    vine_cli: VineRunner
    forest: Path
    adopt: Result

    @property
    def report(self) -> dict[str, Any]:
        return self.adopt.json()

    def git(self, *args: str) -> str:
        return git(self.forest, *args)

    def frontmatter(self, node_id: str) -> dict[str, Any]:
        return frontmatter(self.forest / f"{node_id}.md")

    def body(self, node_id: str) -> str:
        return body(self.forest, node_id)

    def planted_of_type(self, node_type: str) -> list[str]:
        return [i for i in self.report["planted"] if self.frontmatter(i)["type"] == node_type]


@pytest.fixture(scope="module")
def adopted_fixture_export(tmp_path_factory: pytest.TempPathFactory) -> AdoptedExport:
    root = tmp_path_factory.mktemp("fixture-export")
    vine_cli = VineRunner(root)
    forest = vine_cli.init(root / "forest", title="Ops brain", timeout=300)
    # fixtures/gardener.yaml's hook, with absolute paths (the tool runs in a temporary cwd)
    example = yaml.safe_load((REPO / "fixtures" / "gardener.yaml").read_text(encoding="utf-8"))
    assert "fixtures/tools/pdf2md.py" in example["converters"][".pdf"]
    hook = f'"{sys.executable}" "{PDF_TOOL}" "{{input}}" "{{output}}"'
    (forest / "_meta" / "gardener.yaml").write_text(yaml.safe_dump({"converters": {".pdf": hook}}), encoding="utf-8")
    adopt = vine_cli.adopt(EXPORT, forest, expect=1, timeout=300)  # broken.xlsx fails, by design
    return AdoptedExport(vine_cli=vine_cli, forest=forest, adopt=adopt)


def test_fixture_plants_its_datasets(adopted_fixture_export: AdoptedExport) -> None:
    datasets = set(adopted_fixture_export.planted_of_type("dataset"))
    assert {"finance/invoices-2026-q1", "finance/crm", "finance/budget-2026", "data/customers"} <= datasets


def test_every_example_query_in_every_dataset_manual_runs(adopted_fixture_export: AdoptedExport) -> None:
    for node_id in adopted_fixture_export.planted_of_type("dataset"):
        queries = manual_queries(adopted_fixture_export.body(node_id))
        assert len(queries) >= 2, f"{node_id}: {queries}"
        for sql in queries:
            proc = adopted_fixture_export.vine_cli("query", node_id, sql, "--forest", adopted_fixture_export.forest)
            assert proc.returncode == 0, f"{node_id}: {sql}\n{proc.stderr}"
            assert "rows" in json.loads(proc.stdout)


# Sentences of the general typing and NULL rules (and of provenance) that belong to the
# forest's dialect, stated once, not to every dataset's manual.
GENERAL_SENTENCES = ("stored as NULL", "Column types were inferred", "Numbers keep their JSON type",
                     "decoded as", "separated by", "byte order mark", "blank line")


def test_csv_and_json_manuals_are_a_map_of_this_dataset_only(adopted_fixture_export: AdoptedExport) -> None:
    for node_id, table in (("finance/invoices-2026-q1", "invoices_2026_q1"), ("data/customers", "customers")):
        body = adopted_fixture_export.body(node_id)
        manual = re.search(r"^## Query manual\n(.*?)(?=^## |\Z)", body, re.S | re.M).group(1)
        assert "Tables:\n" in manual and "Example queries:\n" in manual, manual
        assert f"- `{table}(" in manual
        assert not [s for s in GENERAL_SENTENCES if s in manual], manual
    customers = adopted_fixture_export.body("data/customers")
    assert "JSON `true`/`false` in `active` are stored as 1/0." in customers  # specific to it: kept


def test_worked_example_of_the_ingestion_spec_answers_as_documented(adopted_fixture_export: AdoptedExport) -> None:
    proc = adopted_fixture_export.vine_cli("query", "finance/invoices-2026-q1", WORKED_EXAMPLE,
                                           "--forest", adopted_fixture_export.forest)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["columns"] == ["customer", "billed"]
    assert result["rows"] == [["Fabrikam", 184320.5], ["Northwind", 97110.0], ["Contoso", 64980.25]]
    assert result["row_count"] == 3 and result["limited"] is False


def test_the_broken_workbook_is_the_one_error(adopted_fixture_export: AdoptedExport) -> None:
    errors = adopted_fixture_export.report["errors"]
    assert len(errors) == 1 and errors[0].startswith("finance/broken.xlsx: "), errors
    assert "corrupt or truncated" in errors[0]
    assert adopted_fixture_export.report["unsupported"] == []


def test_the_pdf_is_planted_through_the_command_hook(adopted_fixture_export: AdoptedExport) -> None:
    assert "contracts/master-agreement" in adopted_fixture_export.report["planted"]
    tool = subprocess.run([sys.executable, str(PDF_TOOL), str(EXPORT / "contracts" / "master-agreement.pdf")],
                          capture_output=True, text=True, check=True)
    converted = tool.stdout.strip()
    title_line, _, rest = converted.partition("\n")
    fm = adopted_fixture_export.frontmatter("contracts/master-agreement")
    assert fm["title"] == title_line.removeprefix("# ").strip()  # the tool's first-line title became the title
    assert fm["source_path"] == "contracts/master-agreement.pdf"
    assert rest.strip() and rest.strip() in adopted_fixture_export.body("contracts/master-agreement")


def test_media_nodes_carry_the_sentinel_sentence(adopted_fixture_export: AdoptedExport) -> None:
    media = adopted_fixture_export.planted_of_type("media")
    assert set(media) == {"media/whiteboard-pricing", "media/standup"}
    for node_id in media:
        assert SENTINEL in adopted_fixture_export.body(node_id), node_id


def test_payloads_exist_on_disk_and_are_never_tracked_by_git(adopted_fixture_export: AdoptedExport) -> None:
    tracked = adopted_fixture_export.git("ls-files").splitlines()
    payloads = []
    for node_id in adopted_fixture_export.report["planted"]:
        payload = adopted_fixture_export.frontmatter(node_id).get("payload")
        if payload:
            path = (adopted_fixture_export.forest / node_id).parent / payload
            assert path.is_file(), path
            payloads.append(path.relative_to(adopted_fixture_export.forest).as_posix())
    assert len(payloads) >= 6  # four datasets, one image, one audio
    assert not set(payloads) & set(tracked)
    assert [p for p in tracked if not p.endswith((".md", ".gitignore"))] == []


def test_forest_is_valid_and_clean_after_the_adopt(adopted_fixture_export: AdoptedExport) -> None:
    validate = adopted_fixture_export.vine_cli("validate", "--forest", adopted_fixture_export.forest)
    assert validate.returncode == 0 and " 0 error(s), 0 warning(s)" in validate.stdout, validate.stdout
    assert adopted_fixture_export.git("status", "--porcelain") == ""


def manual_paragraphs(body: str) -> list[str]:
    """The ``## Query manual`` section as paragraphs (blank-line separated)."""
    match = re.search(r"^## Query manual\n(.*?)(?=^## |\Z)", body, re.S | re.M)
    assert match, body
    return [p.strip() for p in match.group(1).split("\n\n") if p.strip()]


def test_workbook_and_database_manuals_have_the_documented_shape_and_only_their_own_facts(
        adopted_fixture_export: AdoptedExport) -> None:
    budget = manual_paragraphs(adopted_fixture_export.body("finance/budget-2026"))
    assert budget[0].startswith("Tables:\n- `budget_2026(department TEXT, q1_usd INTEGER")
    assert budget[1].startswith("Example queries:\n- `SELECT * FROM budget_2026 LIMIT 5`")
    # general value rules (types, NULL, dates) live in the forest dialect, not here
    assert budget[2:] == ["Sheets as tables: sheet 1 `Budget 2026` -> `budget_2026`; "
                          "sheet 2 `Assumptions` -> `assumptions`."]
    crm = manual_paragraphs(adopted_fixture_export.body("finance/crm"))
    assert [p.split("\n", 1)[0] for p in crm] == [
        "Tables:", "Views (read-only, queried like tables):", "Example queries:"]
