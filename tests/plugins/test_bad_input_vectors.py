"""Bad inputs, one vector per interesting case per format, through the real ``vine``.

Every vector is a file built in code. All of them sit in ONE export folder that is
adopted ONCE by a real ``vine adopt --json`` subprocess (module-scoped fixture);
each vector is then checked on its own: which report list its file landed in,
what its node body or report line says (and must not say), and for datasets the
exact rows read back through ``vine query``. The forest must be valid and the git
tree clean afterwards, and every example query any dataset manual offers must run.
"""
from __future__ import annotations

import codecs
import csv
import datetime as dt
import io
import json
import re
import sqlite3
import struct
import wave
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

from _containers import ole_container  # tests/plugins is on sys.path
from cli_helpers import SENTINEL, VineRunner, body, frontmatter, git, manual_queries


# -- builders: each writes one file at ``path`` -------------------------------------------
def text(content: str, encoding: str = "utf-8") -> Callable[[Path], None]:
    return lambda path: path.write_bytes(content.encode(encoding))


def raw(content: bytes) -> Callable[[Path], None]:
    return lambda path: path.write_bytes(content)


def csv_rows(rows: list[list[str]], delimiter: str = ",") -> Callable[[Path], None]:
    def build(path: Path) -> None:
        buffer = io.StringIO(newline="")
        csv.writer(buffer, delimiter=delimiter).writerows(rows)
        path.write_bytes(buffer.getvalue().encode("utf-8"))
    return build


def sqlite_db(*statements: str) -> Callable[[Path], None]:
    def build(path: Path) -> None:
        db = sqlite3.connect(path)
        for statement in statements:
            db.execute(statement)
        db.commit()
        db.close()
    return build


def xlsx(fill: Callable[[Any], None]) -> Callable[[Path], None]:
    def build(path: Path) -> None:
        import openpyxl
        workbook = openpyxl.Workbook()
        fill(workbook)
        workbook.save(path)
    return build


def _merged(workbook: Any) -> None:
    sheet = workbook.active
    sheet.title = "Regions"
    for row in (["region", "quarter", "sales"], ["North", "Q1", 10], [None, "Q2", 20], ["South", "Q1", 5]):
        sheet.append(row)
    sheet.merge_cells("A2:A3")


def _dates(workbook: Any) -> None:
    sheet = workbook.active
    sheet.title = "Payments"
    sheet.append(["paid_on", "stamp", "amount"])
    sheet.append([dt.date(2026, 1, 4), dt.datetime(2026, 1, 4, 9, 30), 12.5])
    sheet.append([dt.date(2026, 2, 28), dt.datetime(2026, 2, 28, 17, 0), 7.0])


def _formula(workbook: Any) -> None:
    sheet = workbook.active
    sheet.title = "Totals"
    sheet.append(["a", "b", "total"])
    sheet.append([1, 2, "=A2+B2"])  # openpyxl saves no cached value
    sheet.append([3, 4, "=A3+B3"])


def _plain(workbook: Any) -> None:
    sheet = workbook.active
    sheet.title = "Items"
    sheet.append(["sku", "qty"])
    sheet.append(["A-1", 3])
    sheet.append(["B-2", 5])


def _with_chartsheet(workbook: Any) -> None:
    from openpyxl.chart import BarChart, Reference
    _plain(workbook)
    chart = BarChart()
    chart.add_data(Reference(workbook.active, min_col=2, min_row=1, max_row=3), titles_from_data=True)
    workbook.create_chartsheet("Chart1").add_chart(chart)


def xlsx_wrong_dimension(path: Path) -> None:
    """A sheet whose <dimension> claims the whole grid (A1:XFD1048576)."""
    xlsx(_plain)(path)
    rewritten = path.with_suffix(".tmp")
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(rewritten, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = re.sub(rb'<dimension ref="[^"]*"/>', b'<dimension ref="A1:XFD1048576"/>', data)
                assert b"XFD1048576" in data
            target.writestr(item, data)
    rewritten.replace(path)


def truncated_xlsx(path: Path) -> None:
    xlsx(_plain)(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def docx_rich(path: Path) -> None:
    import docx
    document = docx.Document()
    document.add_paragraph("Refund policy", style="Title")
    document.add_heading("Scope", level=1)
    document.add_paragraph("Refunds are granted within 30 days of purchase.")
    document.add_paragraph("Receipt required", style="List Bullet")
    document.add_paragraph("Original packaging", style="List Bullet")
    table = document.add_table(rows=2, cols=2)
    for r, row in enumerate([["Tier", "Days"], ["Gold", "60"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.save(path)


def xls_book(path: Path) -> None:
    import xlwt
    book = xlwt.Workbook()
    sheet = book.add_sheet("Stock")
    for r, row in enumerate([["item", "count"], ["bolts", 12], ["nuts", 7]]):
        for c, value in enumerate(row):
            sheet.write(r, c, value)
    book.save(str(path))


def png(size: tuple[int, int] = (8, 6)) -> Callable[[Path], None]:
    def build(path: Path) -> None:
        from PIL import Image
        Image.new("RGB", size, "red").save(path, format="PNG")
    return build


def truncated_png(path: Path) -> None:
    png((64, 64))(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def bomb_png(path: Path) -> None:
    """Only a header: 100000 x 100000 pixels (far over Pillow's limit), no pixel data."""
    ihdr = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr) + _png_chunk(b"IEND", b""))


def wav_file(frames: int = 8000) -> Callable[[Path], None]:
    def build(path: Path) -> None:
        with wave.open(str(path), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(8000)
            out.writeframes(b"\x00\x01" * frames)
    return build


def lying_wav(path: Path) -> None:
    """The data chunk claims ten seconds; one second of samples is present."""
    wav_file(8000)(path)
    data = bytearray(path.read_bytes())
    at = data.index(b"data")
    struct.pack_into("<I", data, at + 4, 160_000)
    struct.pack_into("<I", data, 4, 160_000 + 36)
    path.write_bytes(bytes(data))


# -- the vectors -------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class Vector:
    name: str  # the file name in the export folder (and the test id)
    build: Callable[[Path], None]
    lands_in: str  # planted | unsupported | errors
    must_include: tuple[str, ...] = ()  # in the node body (planted) or the report line
    must_not_include: tuple[str, ...] = ()
    warns: tuple[str, ...] = ()  # each in some report warning about this file
    query: str | None = None  # for datasets: read back through `vine query`...
    rows: list[list[Any]] | None = None  # ...and these exact rows


CSV_VECTORS = [
    Vector(name="latin1.csv", build=text("name,city\nJosé,Zürich\nÅsa,Malmö\n", "latin-1"), lands_in="planted",
           must_include=("José",), warns=("not valid UTF-8",),
           query="SELECT name, city FROM latin1", rows=[["José", "Zürich"], ["Åsa", "Malmö"]]),
    Vector(name="cp1252.csv", build=text("item,note\nmug,“curly” – €5\n", "cp1252"), lands_in="planted",
           warns=("cp1252",), query="SELECT item, note FROM cp1252", rows=[["mug", "“curly” – €5"]]),
    Vector(name="bom.csv", build=raw(codecs.BOM_UTF8 + b"id,name\n1,Ana\n2,Rui\n"), lands_in="planted",
           must_include=("`bom(id INTEGER, name TEXT)`",), must_not_include=("\ufeff",),
           query="SELECT id, name FROM bom", rows=[[1, "Ana"], [2, "Rui"]]),
    Vector(name="utf16.csv", build=text("id,city\n1,Łódź\n2,Kraków\n", "utf-16"), lands_in="planted",
           must_not_include=("\ufeff", "\x00"), query="SELECT id, city FROM utf16", rows=[[1, "Łódź"], [2, "Kraków"]]),
    Vector(name="semicolons.csv", build=text("product;price\nbolt;1,5\nnut;2\n"), lands_in="planted",
           must_include=("semicolons",),
           query="SELECT product, price FROM semicolons", rows=[["bolt", "1,5"], ["nut", "2"]]),
    Vector(name="tabs.csv", build=text("a\tb\n1\tx y\n2\tz\n"), lands_in="planted",
           query="SELECT a, b FROM tabs", rows=[[1, "x y"], [2, "z"]]),
    Vector(name="pipes.csv", build=text("a|b|c\n1|2|3\n4|5|6\n"), lands_in="planted",
           query="SELECT a, b, c FROM pipes", rows=[[1, 2, 3], [4, 5, 6]]),
    Vector(name="quoted.csv",
           build=csv_rows([["id", "text"], ["1", 'line one\nline two, with "quotes"'], ["2", ',"\n,']]),
           lands_in="planted",
           query="SELECT id, text FROM quoted", rows=[[1, 'line one\nline two, with "quotes"'], [2, ',"\n,']]),
    Vector(name="ragged.csv", build=text("a,b,c\n1,2\n3,4,5,6\n7,8,9\n"), lands_in="planted",
           must_include=("extra_1",), warns=("ragged",),
           query="SELECT a, b, c, extra_1 FROM ragged", rows=[[1, 2, None, None], [3, 4, 5, 6], [7, 8, 9, None]]),
    Vector(name="dup_headers.csv", build=text("a,a,A\n1,2,3\n"), lands_in="planted",
           must_include=("a_2", "a_3"), query="SELECT a, a_2, a_3 FROM dup_headers", rows=[[1, 2, 3]]),
    Vector(name="empty_header.csv", build=text("id,,name\n1,x,Ana\n"), lands_in="planted",
           must_include=("column_2",), query="SELECT id, column_2, name FROM empty_header", rows=[[1, "x", "Ana"]]),
    Vector(name="header_only.csv", build=text("a,b\n"), lands_in="planted",
           must_include=("_No rows._",), query="SELECT COUNT(*) FROM header_only", rows=[[0]]),
    Vector(name="empty.csv", build=raw(b""), lands_in="errors", must_include=("empty",)),
    Vector(name="blank.csv", build=raw(b"  \n\n \n"), lands_in="errors", must_include=("empty",)),
    Vector(name="select.csv", build=text("order,group,select,from\n1,2,3,4\n"), lands_in="planted",
           must_include=('"order"', '"select"'),
           query='SELECT "order", "group", "select", "from" FROM "select"', rows=[[1, 2, 3, 4]]),
    Vector(name="leading_zeros.csv", build=text("zip,phone,n\n00501,0612345678,7\n10001,0700000000,8\n"),
           lands_in="planted", must_include=("zip TEXT", "phone TEXT", "n INTEGER"),
           query="SELECT zip, phone, n FROM leading_zeros", rows=[["00501", "0612345678", 7], ["10001", "0700000000", 8]]),
    Vector(name="bigints.csv", build=text("big,small\n123456789012345678901234567890,1\n-99999999999999999999,2\n"),
           lands_in="planted", must_include=("big TEXT", "small INTEGER"),
           query="SELECT big, small FROM bigints",
           rows=[["123456789012345678901234567890", 1], ["-99999999999999999999", 2]]),
    Vector(name="specials.csv", build=text("v,r\nnan,1.5\ninf,1e3\n1_000,2\nN/A,-0.25\n-,.5\n"), lands_in="planted",
           must_include=("v TEXT", "r REAL"),
           query="SELECT v, r FROM specials",
           rows=[["nan", 1.5], ["inf", 1000.0], ["1_000", 2.0], ["N/A", -0.25], ["-", 0.5]]),
    Vector(name="nul_bytes.csv", build=text("id,note\n1,a\x00b\n"), lands_in="planted", warns=("NUL",),
           query="SELECT id, note FROM nul_bytes", rows=[[1, "a\x00b"]]),
    Vector(name="wide_field.csv", build=text("id,blob\n1," + "x" * 200_000 + "\n"), lands_in="planted",
           query="SELECT id, LENGTH(blob) FROM wide_field", rows=[[1, 200_000]]),
    Vector(name="Sales Report 2026 (€).csv", build=text("Total (€),Share %\n10,5\n"), lands_in="planted",
           must_include=("sales_report_2026_eur", "total_eur", "share_pct"),
           query="SELECT total_eur, share_pct FROM sales_report_2026_eur", rows=[[10, 5]]),
    Vector(name="misnamed_zip.csv", build=xlsx(_plain), lands_in="errors",
           must_include=("zip archive", "real extension")),
]

JSON_VECTORS = [
    Vector(name="nested.json",
           build=text(json.dumps([{"id": 1, "tags": ["a", "b"], "meta": {"k": "v"}, "ok": True},
                                  {"id": 2, "tags": [], "meta": None, "ok": False, "extra": "00501"}])),
           lands_in="planted",
           query="SELECT id, tags, meta, ok, extra FROM nested",
           rows=[[1, '["a", "b"]', '{"k": "v"}', 1, None], [2, "[]", None, 0, "00501"]]),
    Vector(name="settings.json", build=text(json.dumps({"service": "billing", "retries": 3})), lands_in="planted",
           must_include=("billing",)),
    Vector(name="invalid.json", build=text('[{"id": 1, "name": "trunc'), lands_in="errors",
           must_include=("invalid.json", "JSON")),
]

SQLITE_VECTORS = [
    Vector(name="keywords.db",
           build=sqlite_db('CREATE TABLE "order" ("group" TEXT, "select" INTEGER)',
                           """INSERT INTO "order" VALUES ('a', 1), ('b', 2)""",
                           'CREATE VIEW "where" AS SELECT "group" FROM "order" WHERE "select" > 1'),
           lands_in="planted", must_include=('"order"',),
           query='SELECT "group", "select" FROM "order" ORDER BY "select"', rows=[["a", 1], ["b", 2]]),
    Vector(name="view_rows.db",
           build=sqlite_db("CREATE TABLE t (x INTEGER)", "INSERT INTO t VALUES (1), (2), (3)",
                           "CREATE VIEW big_x AS SELECT x FROM t WHERE x >= 2"),
           lands_in="planted", query="SELECT x FROM big_x ORDER BY x", rows=[[2], [3]]),
    Vector(name="no_tables.db", build=sqlite_db("PRAGMA user_version = 1"), lands_in="errors",
           must_include=("no tables",)),
    Vector(name="not_sqlite.db", build=text("this is a text file, not a database\n"), lands_in="errors",
           must_include=("not a SQLite database",), must_not_include=("this is a text file",)),
]

OFFICE_VECTORS = [
    Vector(name="merged.xlsx", build=xlsx(_merged), lands_in="planted", must_include=("merged",),
           query="SELECT region, quarter, sales FROM regions",
           rows=[["North", "Q1", 10], [None, "Q2", 20], ["South", "Q1", 5]]),
    Vector(name="dates.xlsx", build=xlsx(_dates), lands_in="planted",
           query="SELECT paid_on, stamp, amount FROM payments",
           rows=[["2026-01-04", "2026-01-04T09:30:00", 12.5], ["2026-02-28", "2026-02-28T17:00:00", 7.0]]),
    Vector(name="formula.xlsx", build=xlsx(_formula), lands_in="planted", warns=("cached",),
           query="SELECT a, b, total FROM totals", rows=[[1, 2, None], [3, 4, None]]),
    Vector(name="dimension.xlsx", build=xlsx_wrong_dimension, lands_in="planted",
           query="SELECT sku, qty FROM items", rows=[["A-1", 3], ["B-2", 5]]),
    Vector(name="chartsheet.xlsx", build=xlsx(_with_chartsheet), lands_in="planted", warns=("chartsheet",),
           query="SELECT sku, qty FROM items", rows=[["A-1", 3], ["B-2", 5]]),
    Vector(name="locked.xlsx", build=raw(ole_container(["EncryptionInfo", "EncryptedPackage"])),
           lands_in="errors", must_include=("encrypted", "remove the password"), must_not_include=("corrupt",)),
    Vector(name="truncated.xlsx", build=truncated_xlsx, lands_in="errors", must_include=("truncated",)),
    Vector(name="stock.xls", build=xls_book, lands_in="planted",
           query="SELECT item, count FROM stock", rows=[["bolts", 12], ["nuts", 7]]),
    Vector(name="legacy.docx", build=raw(ole_container(["WordDocument", "1Table"])), lands_in="errors",
           must_include=("legacy Word .doc",), must_not_include=("corrupt",)),
    Vector(name="locked.docx", build=raw(ole_container(["EncryptionInfo", "EncryptedPackage"])),
           lands_in="errors", must_include=("encrypted",), must_not_include=("corrupt",)),
    Vector(name="policy.docx", build=docx_rich, lands_in="planted",
           must_include=("# Refund policy", "## Scope", "- Receipt required", "| Tier | Days |", "| Gold | 60 |",
                         "within 30 days")),
]

MEDIA_VECTORS = [
    Vector(name="photo.png", build=png(), lands_in="planted", must_include=("PNG", "8x6", SENTINEL)),
    Vector(name="cut.png", build=truncated_png, lands_in="planted", must_include=("truncated", SENTINEL),
           warns=("truncated",)),
    Vector(name="bomb.png", build=bomb_png, lands_in="planted", must_include=(SENTINEL,), warns=("pixel",)),
    Vector(name="tone.wav", build=wav_file(), lands_in="planted", must_include=("WAV", SENTINEL)),
    Vector(name="lying.wav", build=lying_wav, lands_in="planted", must_include=(SENTINEL,), warns=("header",)),
    Vector(name="silence.mp3", build=raw(b""), lands_in="planted", must_include=("empty", SENTINEL)),
]

OTHER_VECTORS = [
    Vector(name="contract.pdf", build=raw(b"%PDF-1.4\n%\xe2\xe3\n1 0 obj <<>> endobj\n%%EOF\n"),
           lands_in="unsupported", must_include=(".pdf",)),
    Vector(name="mystery.qqq", build=text("what am I?\n"), lands_in="unsupported", must_include=(".qqq",)),
]

VECTORS = OTHER_VECTORS + CSV_VECTORS + JSON_VECTORS + SQLITE_VECTORS + OFFICE_VECTORS + MEDIA_VECTORS


# -- one real adopt for the whole module ---------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class Adopted:
    vine_cli: VineRunner
    forest: Path
    report: dict[str, Any]
    node_by_file: dict[str, str]  # source file name -> node id

    def git(self, *args: str) -> str:
        return git(self.forest, *args)

    def body(self, name: str) -> str:
        return body(self.forest, self.node_by_file[name])

    def lines_about(self, list_name: str, name: str) -> list[str]:
        return [line for line in self.report[list_name] if line.split(": ", 1)[0] == name]


@pytest.fixture(scope="module")
def adopted_vectors(tmp_path_factory: pytest.TempPathFactory) -> Adopted:
    root = tmp_path_factory.mktemp("vectors")
    export = root / "export"
    export.mkdir()
    for vector in VECTORS:
        vector.build(export / vector.name)
    vine_cli = VineRunner(root)
    forest = vine_cli.init(root / "forest", title="Vectors", timeout=300)
    report = vine_cli.adopt(export, forest, "--jobs", "2", expect=1, timeout=300).json()  # some vectors must fail
    node_by_file = {frontmatter(forest / f"{node_id}.md")["source_path"]: node_id for node_id in report["planted"]}
    return Adopted(vine_cli=vine_cli, forest=forest, report=report, node_by_file=node_by_file)


def test_vectors_have_distinct_names() -> None:
    assert len({v.name for v in VECTORS}) == len(VECTORS)


def test_every_vector_lands_in_exactly_one_list(adopted_vectors: Adopted) -> None:
    seen: dict[str, list[str]] = {}
    for node_id in adopted_vectors.report["planted"]:
        seen.setdefault(frontmatter(adopted_vectors.forest / f"{node_id}.md")["source_path"], []).append("planted")
    for list_name in ("unsupported", "errors", "updated", "unchanged", "stale"):
        for line in adopted_vectors.report[list_name]:
            seen.setdefault(line.split(": ", 1)[0] if ": " in line else line, []).append(list_name)
    assert {name: lists for name, lists in seen.items() if len(lists) != 1} == {}
    assert set(seen) == {v.name for v in VECTORS}


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.name)
def test_vector(adopted_vectors: Adopted, vector: Vector) -> None:
    if vector.lands_in == "planted":
        assert vector.name in adopted_vectors.node_by_file, (adopted_vectors.lines_about("errors", vector.name)
                                                     + adopted_vectors.lines_about("unsupported", vector.name))
        shown = adopted_vectors.body(vector.name)
    else:
        lines = adopted_vectors.lines_about(vector.lands_in, vector.name)
        assert len(lines) == 1, (vector.lands_in, adopted_vectors.report)
        shown = lines[0]
        assert "\n" not in shown and "Traceback" not in shown
    for needle in vector.must_include:
        assert needle in shown, f"{needle!r} not in:\n{shown}"
    for needle in vector.must_not_include:
        assert needle not in shown, f"{needle!r} in:\n{shown}"
    warnings = adopted_vectors.lines_about("warnings", vector.name)
    for needle in vector.warns:
        assert any(needle in line for line in warnings), (needle, warnings)
    if vector.query is not None:
        proc = adopted_vectors.vine_cli("query", adopted_vectors.node_by_file[vector.name], vector.query,
                                        "--forest", str(adopted_vectors.forest))
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["rows"] == vector.rows


def test_forest_is_valid_and_git_tree_clean_after_adopt(adopted_vectors: Adopted) -> None:
    validate = adopted_vectors.vine_cli("validate", "--forest", str(adopted_vectors.forest))
    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert " 0 error(s), 0 warning(s)" in validate.stdout, validate.stdout
    assert adopted_vectors.git("status", "--porcelain") == ""
    tracked = adopted_vectors.git("ls-files").splitlines()
    assert not [path for path in tracked if not path.endswith((".md", ".gitignore"))], tracked


def test_every_example_query_in_every_dataset_manual_runs(adopted_vectors: Adopted) -> None:
    checked = 0
    for name, node_id in sorted(adopted_vectors.node_by_file.items()):
        if frontmatter(adopted_vectors.forest / f"{node_id}.md")["type"] != "dataset":
            continue
        queries = manual_queries(adopted_vectors.body(name))
        assert queries, f"{node_id}: its manual offers no example query"
        for sql in queries:
            proc = adopted_vectors.vine_cli("query", node_id, sql, "--forest", str(adopted_vectors.forest))
            assert proc.returncode == 0, f"{node_id}: {sql}\n{proc.stderr}"
            checked += 1
    assert checked >= 2 * sum(1 for v in VECTORS if v.query)
