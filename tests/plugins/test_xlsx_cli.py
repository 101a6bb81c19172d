"""Workbooks through the real ``vine`` CLI: an empty workbook plants once and then
syncs clean, library chatter never breaks ``--json``, comments are queryable."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openpyxl
import xlwt
from openpyxl.comments import Comment

from cli_helpers import body, commit_messages, manual_queries


def test_an_empty_workbook_plants_once_with_a_warning_and_syncs_clean(vine_cli: Any, tmp_path: Path) -> None:
    source = tmp_path / "export"
    source.mkdir()
    workbook = openpyxl.Workbook()
    workbook.active.title = "Budget"
    workbook.create_sheet("Notes")
    workbook.save(source / "template.xlsx")
    forest = vine_cli.init(tmp_path / "forest", title="T")

    adopt = vine_cli("adopt", source, "--forest", forest, "--json")

    assert adopt.returncode == 0, adopt.stdout + adopt.stderr
    report = json.loads(adopt.stdout)
    assert report["planted"] == ["template"] and report["errors"] == []
    assert report["warnings"] == [
        "template.xlsx: workbook holds no data (every sheet is empty): planted as a dataset that "
        "lists its empty sheets"]
    text = body(forest, "template")
    assert "This workbook holds no data: none of its sheets has a cell value;" in text
    assert "### empty_sheets — 2 rows" in text
    commits = commit_messages(forest)

    sync = vine_cli("sync", "--forest", forest, "--json")

    assert sync.returncode == 0, sync.stdout + sync.stderr
    again = json.loads(sync.stdout)
    assert again["unchanged"] == ["template"]
    assert again["planted"] == again["updated"] == again["errors"] == again["warnings"] == []
    assert commit_messages(forest) == commits  # nothing new to commit
    validate = vine_cli("validate", "--forest", forest)
    assert " 0 error(s), 0 warning(s)" in validate.stdout, validate.stdout

    # filled in later: the next sync refreshes the node as the dataset it now is
    workbook["Budget"].append(["team", "usd"])
    workbook["Budget"].append(["Ops", 1200])
    workbook.save(source / "template.xlsx")
    filled = vine_cli("sync", "--forest", forest, "--json")
    assert json.loads(filled.stdout)["updated"] == ["template"], filled.stdout + filled.stderr
    text = body(forest, "template")
    assert "### budget — 1 row" in text
    assert "holds no data" not in text and "empty_sheets" not in text


def test_xlrd_chatter_never_reaches_stdout_with_json(vine_cli: Any, tmp_path: Path) -> None:
    source = tmp_path / "export"
    source.mkdir()
    for name in ("padded-a.xls", "padded-b.xls"):  # two files: the worker pool runs
        book = xlwt.Workbook()
        sheet = book.add_sheet("S")
        sheet.write(0, 0, "item")
        sheet.write(1, 0, "kept")
        book.save(str(source / name))
        with (source / name).open("ab") as handle:
            handle.write(bytes(100))  # xlrd prints "WARNING *** file size ..." for this
    forest = vine_cli.init(tmp_path / "forest", title="T")

    adopt = vine_cli("adopt", source, "--forest", forest, "--json")

    assert adopt.returncode == 0, adopt.stdout + adopt.stderr
    report = json.loads(adopt.stdout)  # one JSON document, nothing around it
    assert sorted(report["planted"]) == ["padded-a", "padded-b"]
    for name in ("padded-a.xls", "padded-b.xls"):
        (line,) = [w for w in report["warnings"] if w.startswith(f"{name}: ")]
        assert line.startswith(f"{name}: xlrd reported: file size (")
    assert "WARNING ***" not in adopt.stderr
    query = vine_cli("query", "padded-a", "SELECT item FROM s", "--forest", forest)
    assert json.loads(query.stdout)["rows"] == [["kept"]]


def test_cell_comments_are_queryable_and_every_manual_example_runs(vine_cli: Any, tmp_path: Path) -> None:
    source = tmp_path / "export"
    source.mkdir()
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Q1 Sales"
    for row in (["customer", "total"], ["Northwind", 1240.5], ["Contoso", 880]):
        sheet.append(row)
    sheet["B3"].comment = Comment("Discount agreed by phone", "Maria")
    workbook.save(source / "sales.xlsx")
    forest = vine_cli.init(tmp_path / "forest", title="T")

    adopt = vine_cli("adopt", source, "--forest", forest, "--json")

    assert adopt.returncode == 0, adopt.stdout + adopt.stderr
    text = body(forest, "sales")
    assert "Cell comments are in table `comments`" in text
    sql = ("SELECT s.customer, c.author, c.comment FROM comments c "
           "JOIN q1_sales s ON s.rowid = c.data_rowid WHERE c.column_name = 'total'")
    answer = vine_cli("query", "sales", sql, "--forest", forest)
    assert json.loads(answer.stdout)["rows"] == [["Contoso", "Maria", "Discount agreed by phone"]]
    queries = manual_queries(text)
    assert "SELECT * FROM comments LIMIT 5" in queries
    for query in queries:
        ran = vine_cli("query", "sales", query, "--forest", forest)
        assert ran.returncode == 0, f"{query}: {ran.stderr}"
