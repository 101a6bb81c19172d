"""The CSV converter on real files made in code, loaded into real SQLite."""
from __future__ import annotations

import csv
import io
import pickle
import sqlite3
import tracemalloc
from pathlib import Path
from typing import Any

import pluggy
import pytest

from monkeyllm_core.data.dataset import create_dataset
from monkeyllm_gardener import hookspecs
from monkeyllm_gardener.conversion import Conversion, ConversionError, UnsupportedFile
from monkeyllm_plugins import csv_dataset
from monkeyllm_gardener.kit import detect_encoding, read_text
from monkeyllm_plugins.csv_dataset import CsvConverter

from _conversions import load, only_table, write_source  # tests/plugins is on sys.path


def write_csv(tmp_path: Path, name: str, rows: list[list[str]], delimiter: str = ",") -> Path:
    buffer = io.StringIO(newline="")
    csv.writer(buffer, delimiter=delimiter).writerows(rows)
    return write_source(tmp_path, name, buffer.getvalue())


def convert(path: Path) -> Conversion:
    return CsvConverter().convert(path)


def rows_of(conversion: Conversion) -> list[tuple]:
    table, _ = only_table(conversion)
    return list(conversion.rows[table])


# ---------------------------------------------------------------- encodings

ENCODED_FILES = [
    # (description, bytes, codec detected, warned)
    ("plain utf-8", "name,city\nJosé,Zürich\n".encode("utf-8"), "utf-8", False),
    ("utf-8 with BOM", "name,city\nJosé,Zürich\n".encode("utf-8-sig"), "utf-8-sig", False),
    ("utf-16 with BOM", "name,city\nJosé,Zürich\n".encode("utf-16"), "utf-16", False),
    ("utf-16 BE with BOM", b"\xfe\xff" + "name,city\nJosé,Zürich\n".encode("utf-16-be"), "utf-16", False),
    ("utf-16 LE without BOM", "name,city\nJosé,Zürich\n".encode("utf-16-le"), "utf-16-le", True),
    ("utf-16 BE without BOM", "name,city\nJosé,Zürich\n".encode("utf-16-be"), "utf-16-be", True),
    ("cp1252", "name,city\nJosé “Zé”,Zürich €\n".encode("cp1252"), "cp1252", True),
    # latin-1 text without C1 control bytes reads identically as cp1252
    ("latin-1", "name,city\nJosé,Zürich\n".encode("latin-1"), "cp1252", True),
]


@pytest.mark.parametrize(("label", "data", "codec", "warned"), ENCODED_FILES, ids=[e[0] for e in ENCODED_FILES])
def test_encodings_are_detected_and_decoded_exactly(tmp_path, label, data, codec, warned) -> None:
    path = write_source(tmp_path, "people.csv", data)
    assert detect_encoding(path)[0] == codec
    conversion = convert(path)
    _, columns = only_table(conversion)
    assert list(columns) == ["name", "city"]  # no BOM in the first column's name
    expected = data.decode(codec).splitlines()[1].split(",")
    assert load(tmp_path, conversion) == [tuple(expected)]
    assert bool(conversion.warnings) == warned
    if warned:
        assert any(codec in w.lower() and "re-save as UTF-8" in w and "people.csv" in w for w in conversion.warnings)
    # the encoding is a fact about the file, not about how to query it: never in the manual
    assert not any(codec in note.lower() or "decoded" in note for note in conversion.manual_notes)


def test_non_ascii_byte_far_past_4kb_is_seen(tmp_path) -> None:
    lines = ["id,word"] + [f"{n},plain" for n in range(2000)] + ["2000,Zoë"]
    text = "\n".join(lines) + "\n"
    path = write_source(tmp_path, "late.csv", text, encoding="cp1252")
    assert path.stat().st_size > 20_000
    codec, warning = detect_encoding(path)
    assert codec == "cp1252" and "not valid UTF-8" in warning
    assert rows_of(convert(path))[-1] == (2000, "Zoë")


def test_utf8_with_non_ascii_far_past_4kb_is_utf8(tmp_path) -> None:
    text = "id,word\n" + "".join(f"{n},plain\n" for n in range(2000)) + "2000,Zoë\n"
    path = write_source(tmp_path, "late.csv", text)
    assert detect_encoding(path) == ("utf-8", None)
    assert convert(path).warnings == ()


def test_read_text_decodes_the_whole_file_without_bom(tmp_path) -> None:
    path = write_source(tmp_path, "note.md", "# Título\n\nçà\n", encoding="utf-8-sig")
    assert read_text(path) == ("# Título\n\nçà\n", None)


def test_a_lone_cut_byte_with_no_utf8_around_it_reads_as_legacy_text_with_a_warning(tmp_path) -> None:
    # b"a\n\xc3": no complete UTF-8 character anywhere, so nothing says it was UTF-8;
    # it is the cp1252 text "a\nÃ", and the warning says how it was read.
    path = write_source(tmp_path, "cut.csv", "a\né".encode("utf-8")[:-1])
    codec, warning = detect_encoding(path)
    assert codec == "cp1252" and "re-save as UTF-8" in warning


# ---------------------------------------------------------------- delimiters and quoting

@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_delimiter_is_sniffed_and_quoted_delimiters_do_not_fool_it(tmp_path, delimiter) -> None:
    rows = [["id", "label", "note"]] + [
        [str(n), f"a,b;c|d\te {n}", "plain"] for n in range(5)
    ]
    path = write_csv(tmp_path, "items.csv", rows, delimiter=delimiter)
    conversion = convert(path)
    assert list(only_table(conversion)[1]) == ["id", "label", "note"]
    assert load(tmp_path, conversion) == [(int(r[0]), r[1], r[2]) for r in rows[1:]]


@pytest.mark.parametrize("values", [["a;b", "c;d", "e;f"], ["x|y", "1|2", "3|4"], ["tab\there", "a\tb", "c\td"]])
def test_a_one_column_file_whose_values_hold_a_delimiter_stays_one_column(tmp_path, values) -> None:
    path = write_source(tmp_path, "notes.csv", "note\n" + "\n".join(values) + "\n")
    conversion = convert(path)
    assert list(only_table(conversion)[1]) == ["note"]
    assert load(tmp_path, conversion) == [(value,) for value in values]


def test_a_header_after_blank_and_whitespace_lines_still_decides_the_delimiter(tmp_path) -> None:
    path = write_source(tmp_path, "late.csv", "\n   \n\t\na;b\n1;2\n3;4\n")
    assert load(tmp_path, convert(path)) == [(1, 2), (3, 4)]


def test_tsv_extension_reads_tabs(tmp_path) -> None:
    path = write_source(tmp_path, "list.tsv", "name\tqty\nwidget, large\t3\n")
    assert rows_of(convert(path)) == [("widget, large", 3)]


def test_the_delimiter_is_not_a_manual_note(tmp_path) -> None:
    # the agent queries a table; how the source separated its fields changes no SQL
    conversion = convert(write_source(tmp_path, "eu.csv", "a;b\n1;2\n"))
    assert load(tmp_path, conversion) == [(1, 2)]
    assert conversion.manual_notes == ()


def test_quoted_newlines_commas_and_quotes_round_trip_exactly(tmp_path) -> None:
    originals = [
        ["multi\nline", 'she said "hi"', "a,b,c"],
        ["crlf\r\ninside", '""', "  spaced  "],
        ["trailing newline\n", "'single'", "tab\there"],
        ["ünïcødé ✓", "semi;colon", "pipe|pipe"],
    ]
    path = write_csv(tmp_path, "quoted.csv", [["x", "y", "z"]] + originals)
    conversion = convert(path)
    assert rows_of(conversion) == [tuple(row) for row in originals]
    assert load(tmp_path, conversion) == [tuple(row) for row in originals]


# ---------------------------------------------------------------- ragged rows

def test_short_rows_are_padded_with_null_and_stated(tmp_path) -> None:
    path = write_source(tmp_path, "short.csv", "a,b,c\n1,2,3\n4\n5,6\n")
    conversion = convert(path)
    assert load(tmp_path, conversion) == [(1, 2, 3), (4, None, None), (5, 6, None)]
    assert any("2 rows of 3 had fewer values" in note for note in conversion.manual_notes)
    assert any("ragged" in warning for warning in conversion.warnings)


def test_long_rows_keep_extra_values_in_extra_columns(tmp_path) -> None:
    path = write_source(tmp_path, "long.csv", "a,b\n1,2\n3,4,x,y\n5,6,z\n")
    conversion = convert(path)
    _, columns = only_table(conversion)
    assert list(columns) == ["a", "b", "extra_1", "extra_2"]
    assert load(tmp_path, conversion) == [(1, 2, None, None), (3, 4, "x", "y"), (5, 6, "z", None)]
    assert any("2 rows of 3 had more values" in n and "`extra_1`, `extra_2`" in n for n in conversion.manual_notes)


def test_extra_columns_do_not_collide_with_a_header_named_extra_1(tmp_path) -> None:
    path = write_source(tmp_path, "clash.csv", "extra_1\nA,B\n")
    assert list(only_table(convert(path))[1]) == ["extra_1", "extra_1_2"]


# ---------------------------------------------------------------- headers and names

@pytest.mark.parametrize(
    ("header", "columns", "note"),
    [
        ("a,a", ["a", "a_2"], "Header `a` repeats `a` and is named `a_2`."),
        ("a,A", ["a", "a_2"], "Header `A` repeats `a` and is named `a_2`."),
        ("a,,c", ["a", "column_2", "c"], "Column 2 had no header and is named `column_2`."),
        ("order,group", ["order", "group"], None),
        ('"say ""hi""",x', ["say_hi", "x"], 'Header `say "hi"` is named `say_hi`.'),
        ("first name,x", ["first_name", "x"], "Header `first name` is named `first_name`."),
        ("2024,x", ["c_2024", "x"], "Header `2024` is named `c_2024`."),
    ],
)
def test_headers_are_repaired_and_stated_in_the_manual(tmp_path, header, columns, note) -> None:
    path = write_source(tmp_path, "h.csv", f"{header}\n1,2{',3' * (len(columns) - 2)}\n")
    conversion = convert(path)
    assert list(only_table(conversion)[1]) == columns
    if note:
        assert note in conversion.manual_notes
    load(tmp_path, conversion)  # every name is usable by the engine's DDL


def test_keyword_columns_load_and_query(tmp_path) -> None:
    path = write_source(tmp_path, "select.csv", "order,select,group\n1,2,3\n")
    conversion = convert(path)
    assert only_table(conversion)[0] == "select"
    assert load(tmp_path, conversion) == [(1, 2, 3)]


def test_table_name_and_title_come_from_the_file_stem(tmp_path) -> None:
    conversion = convert(write_source(tmp_path, "invoices-2026-q1.csv", "id\n1\n"))
    assert conversion.title == "invoices-2026-q1"
    assert only_table(conversion)[0] == "invoices_2026_q1"
    assert conversion.kind == "dataset"


# ---------------------------------------------------------------- degenerate files

def test_header_only_file_is_an_empty_table(tmp_path) -> None:
    conversion = convert(write_source(tmp_path, "empty_table.csv", "id,name\n"))
    assert only_table(conversion)[1] == {"id": "TEXT", "name": "TEXT"}
    assert rows_of(conversion) == []
    assert load(tmp_path, conversion) == []


@pytest.mark.parametrize("content", [b"", b"   \n\n\t \r\n", "\n  ".encode("utf-16")])
def test_empty_or_whitespace_file_fails_naming_the_file(tmp_path, content) -> None:
    path = write_source(tmp_path, "blank.csv", content)
    with pytest.raises(ConversionError, match=r"^empty file: blank\.csv"):
        convert(path)


def test_blank_lines_between_rows_are_skipped_without_a_note(tmp_path) -> None:
    # a blank line holds no value, so skipping it loses nothing an agent could query
    conversion = convert(write_source(tmp_path, "gaps.csv", "a,b\n1,2\n\n3,4\n\n"))
    assert rows_of(conversion) == [(1, 2), (3, 4)]
    assert conversion.manual_notes == ()


def test_a_200kb_field_is_read_whole(tmp_path) -> None:
    big = "x" * 200_000 + ",\n\"quoted\""
    path = write_csv(tmp_path, "big.csv", [["id", "body"], ["1", big], ["2", "small"]])
    conversion = convert(path)
    assert load(tmp_path, conversion) == [(1, big), (2, "small")]


def test_nul_bytes_are_kept_and_reported(tmp_path) -> None:
    path = write_source(tmp_path, "nul.csv", b"id,name\n1,ab\x00cd\n2,ok\n")
    conversion = convert(path)
    assert load(tmp_path, conversion) == [(1, "ab\x00cd"), (2, "ok")]
    assert any("NUL" in warning and "nul.csv" in warning for warning in conversion.warnings)
    assert any("NUL" in note for note in conversion.manual_notes)


def test_a_workbook_renamed_to_csv_is_unsupported_not_garbage(tmp_path) -> None:
    path = write_source(tmp_path, "report.csv", b"PK\x03\x04" + b"\x00" * 100)
    with pytest.raises(UnsupportedFile, match="report.csv"):
        convert(path)


# ---------------------------------------------------------------- types

def test_types_follow_the_declared_rules_end_to_end(tmp_path) -> None:
    rows = [
        ["zip", "phone", "big", "qty", "price", "sci", "odd", "placeholder", "dash", "sep"],
        ["00501", "+351 912 345 678", "123456789012345678901234567890", "3", "1.5", "1e3", "nan", "N/A", "-", "1_000"],
        ["90210", "912345678", "1", "-4", "2", "2.5E-3", "inf", "7", "8", "1,000"],
    ]
    conversion = convert(write_csv(tmp_path, "types.csv", rows))
    assert only_table(conversion)[1] == {
        "zip": "TEXT", "phone": "TEXT", "big": "TEXT", "qty": "INTEGER", "price": "REAL",
        "sci": "REAL", "odd": "TEXT", "placeholder": "TEXT", "dash": "TEXT", "sep": "TEXT",
    }
    assert load(tmp_path, conversion) == [
        ("00501", "+351 912 345 678", "123456789012345678901234567890", 3, 1.5, 1000.0, "nan", "N/A", "-", "1_000"),
        ("90210", "912345678", "1", -4, 2.0, 0.0025, "inf", "7", "8", "1,000"),
    ]
    assert conversion.manual_notes == (
        "`price` was read as decimal: `2` is stored as 2.0.",
        "`sci` was read as decimal: `1e3` is stored as 1000.0.",
    )


def test_empty_and_whitespace_cells_become_null_and_the_general_rules_stay_out_of_the_manual(tmp_path) -> None:
    conversion = convert(write_source(tmp_path, "nulls.csv", "a,b\n1,\n,  \n3,x\n"))
    assert only_table(conversion)[1] == {"a": "INTEGER", "b": "TEXT"}
    assert load(tmp_path, conversion) == [(1, None), (None, None), (3, "x")]
    # the NULL and typing rules are the forest's dialect, not this dataset's manual
    assert conversion.manual_notes == ()


# ---------------------------------------------------------------- streaming and plumbing

def test_conversion_pickles_and_rows_reiterate(tmp_path) -> None:
    conversion = convert(write_source(tmp_path, "p.csv", "a,b\n1,x\n2,y\n"))
    clone = pickle.loads(pickle.dumps(conversion))
    assert rows_of(clone) == rows_of(conversion) == [(1, "x"), (2, "y")]
    assert rows_of(conversion) == rows_of(conversion)


def test_a_large_csv_streams_without_holding_rows(tmp_path) -> None:
    path = tmp_path / "large.csv"
    with path.open("w", newline="") as stream:
        stream.write("id,name,amount\n")
        stream.writelines(f"{n},customer {n},{n}.25\n" for n in range(100_000))
    assert path.stat().st_size > 2_500_000
    tracemalloc.start()
    try:
        conversion = convert(path)
        count = sum(1 for _ in conversion.rows["large"])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 100_000
    assert peak < 1_000_000  # far below the file's size: nothing accumulates
    assert len(pickle.dumps(conversion)) < 4_000
    assert only_table(conversion)[1] == {"id": "INTEGER", "name": "TEXT", "amount": "REAL"}


def test_converter_registers_through_the_hook(tmp_path) -> None:
    manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    manager.add_hookspecs(hookspecs)
    manager.register(csv_dataset)
    registered = []
    manager.hook.register_converters(register=lambda converter, priority=0.0: registered.append(converter))
    (converter,) = registered
    assert converter.name == "csv" and set(converter.extensions) == {".csv", ".tsv"}
    assert converter.convert(write_source(tmp_path, "x.csv", "a\n1\n")).kind == "dataset"


def test_a_csv_wider_than_50_columns_is_split_into_tables_joined_by_rowid(tmp_path) -> None:
    header = [f"q{n}" for n in range(1, 121)]
    rows = [[str(r * 1000 + n) for n in range(1, 121)] for r in range(3)]
    conversion = convert(write_csv(tmp_path, "survey.csv", [header] + rows))
    assert [(t, len(spec["columns"])) for t, spec in conversion.schema.items()] == [
        ("survey", 50), ("survey_part_2", 50), ("survey_part_3", 20)
    ]
    assert any("120 columns" in note and "rowid" in note for note in conversion.manual_notes)
    db_path = tmp_path / "wide.db"
    create_dataset(db_path, conversion.schema, conversion.rows)
    with sqlite3.connect(db_path) as connection:
        joined = connection.execute(
            'SELECT * FROM survey JOIN survey_part_2 ON survey_part_2.rowid = survey.rowid '
            'JOIN survey_part_3 ON survey_part_3.rowid = survey.rowid ORDER BY survey.rowid'
        ).fetchall()
    assert joined == [tuple(int(v) for v in row) for row in rows]


def test_a_csv_too_wide_for_ten_tables_fails_with_the_fix(tmp_path) -> None:
    path = write_csv(tmp_path, "huge.csv", [[f"c{n}" for n in range(501)]])
    with pytest.raises(ConversionError, match=r"^too wide: huge\.csv has 501 columns"):
        convert(path)


def test_single_column_csv_keeps_rows_whose_value_is_empty(vine_cli: Any, tmp_path: Path) -> None:
    export = tmp_path / "export"
    export.mkdir()
    with (export / "codes.csv").open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([["code"], ["A1"], [""], ["B2"], ["   "], ["C3"]])
    forest, report = vine_cli.adopt_into_new_forest(export)
    assert report["planted"] == ["codes"]
    with sqlite3.connect(forest / "codes.db") as db:
        values = [row[0] for row in db.execute("SELECT code FROM codes ORDER BY rowid")]
    assert values == ["A1", None, "B2", None, "C3"]
