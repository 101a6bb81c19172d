"""Issue 16: CSV is typed and loaded a batch of records at a time, a column at a time
(``TypeTracker.observe_text_rows``, ``text_rows_converter``). Nothing a user sees may
change, so each batch path is checked against the cell-by-cell rules it replaces
(``observe_text_row`` row by row, ``convert_text`` cell by cell) on columns made in
code with the cells that go wrong first: short and long numbers, 15 and 16
characters, integers past 2**53 and 2**63, negative zeros, exponents, leading zeros,
blanks and whitespace, a newline inside a cell, None cells, ragged rows, unicode;
and a whole file's stored values are read back from SQLite with ``typeof``."""
from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from monkeyllm_core.data.dataset import create_dataset
from monkeyllm_core.errors import VineError
from monkeyllm_gardener import ConversionError
from monkeyllm_gardener.kit.tabular import (
    TypeTracker,
    convert_text,
    text_row_converter,
    text_rows_converter,
)
from monkeyllm_plugins.csv_dataset import CsvConverter

# Cells the short-number regexes accept, and the ones next to them they must not.
NUMBERS = [
    "0", "7", "-7", "42", "100000", "123456789012345", "-12345678901234", "1234567890123456",
    "-123456789012345", str(2**53), str(2**53 + 1), str(-(2**53) - 1), str(2**63 - 1), str(2**63),
    "1" * 25, "1.5", "1.50", "-0.25", ".5", "-.5", "0.1", "12345678901.234", "123456789012.345",
    "0.10000000000000000001", "1e3", "2.5E-3", "1e400", "-1e-400", "6399.87", "100.0",
]
EDGES = [
    "", " ", "\t", "  7", "7 ", "+5", "-0", "-0.0", "-.0", "-0.000", "00501", "007.5", "1.", "1_000",
    "1,000", "nan", "inf", "-inf", "NaN", "N/A", "-", "?", "null", "1\n2", "3\n", "\n", "٣", "１２",
    "名前", "ñ", "🙂", "2021-09-28", "X12", "0x1F",
]


def reference_tracker(rows: list[list[Any]]) -> TypeTracker:
    tracker = TypeTracker()
    for row in rows:
        tracker.observe_text_row(row)
    return tracker


def batched_tracker(rows: list[list[Any]], size: int) -> TypeTracker:
    tracker = TypeTracker()
    for start in range(0, len(rows), size):
        tracker.observe_text_rows(rows[start:start + size])
    return tracker


def assert_same_verdict(rows: list[list[Any]], size: int) -> None:
    width = max(map(len, rows))
    slow, fast = reference_tracker(rows), batched_tracker(rows, size)
    assert fast.types(width) == slow.types(width)
    assert fast.rewritten_examples(width) == slow.rewritten_examples(width)
    # the evidence itself, not only the verdict: the next batch starts from it
    assert [c.seen for c in fast._columns] == [c.seen for c in slow._columns]
    assert [c.rewritten for c in fast._columns] == [c.rewritten for c in slow._columns]


@pytest.mark.parametrize("cell", NUMBERS + EDGES)
def test_one_odd_cell_in_a_column_of_numbers_types_it_as_cell_by_cell(cell: str) -> None:
    for filler in (["1", "2", "3"], ["1.25", "2.5", "3"], ["", "4", "0.5"]):
        for position in range(len(filler) + 1):
            column = filler[:position] + [cell] + filler[position:]
            for size in (1, 2, 100):
                assert_same_verdict([[value] for value in column], size)


def test_random_columns_of_every_kind_type_as_cell_by_cell() -> None:
    rng = random.Random(16)
    pool = NUMBERS + EDGES
    for _ in range(400):
        kinds = rng.choice([NUMBERS, pool, ["1", "2", "", "3.5"], ["", " "], NUMBERS[:8] + [""]])
        width = rng.randint(1, 5)
        rows = []
        for _ in range(rng.randint(1, 40)):
            row = [rng.choice(kinds) for _ in range(width)]
            if rng.random() < 0.1:  # ragged: short or long
                row = row[: rng.randint(0, width)] if rng.random() < 0.5 else row + [rng.choice(kinds)]
            rows.append(row)
        if not any(rows):
            rows.append(["1"])
        assert_same_verdict(rows, rng.choice([1, 3, 7, 256]))


def test_none_cells_and_repeats_type_as_cell_by_cell() -> None:
    rows = [["1", None, "1.5"], [None, "x", "1.5"], ["1", None, "1.50"], ["2", "", "7"]]
    assert_same_verdict(rows, 2)
    assert_same_verdict(rows, 4)


def test_the_decimal_note_names_the_first_rewritten_number_in_row_order() -> None:
    rows = [["6399.87"], ["100.5"], ["1.50"], ["7"], ["1.5"]]
    tracker = batched_tracker(rows, 2)
    assert tracker.types(1) == ["REAL"] and tracker.rewritten_examples(1) == ["1.50"]
    assert batched_tracker([["0.5"], [""], ["3"]], 3).rewritten_examples(1) == ["3"]


def _python_type(value: Any) -> str:
    return {type(None): "null", int: "integer", float: "real", str: "text"}[type(value)]


@pytest.mark.parametrize("sql_types", [["TEXT"], ["INTEGER"], ["REAL"], ["INTEGER", "TEXT", "REAL", "TEXT"]])
def test_a_batch_loads_the_values_convert_text_gives_cell_by_cell(sql_types: list[str]) -> None:
    usable = {"TEXT": NUMBERS + EDGES, "INTEGER": ["0", "7", "-7", str(2**63 - 1), "", " ", "\t"],
              "REAL": ["1.5", "7", "-0.25", "1e3", "6399.87", "", "  "]}
    rng = random.Random(len(sql_types))
    batch_of = text_rows_converter(sql_types)
    for _ in range(200):
        rows = [[rng.choice(usable[t]) for t in sql_types] for _ in range(rng.randint(1, 12))]
        if rng.random() < 0.2:
            rows[rng.randrange(len(rows))][rng.randrange(len(sql_types))] = None  # a ragged row's padding
        expected = [tuple(convert_text(cell, t) for cell, t in zip(row, sql_types)) for row in rows]
        got = list(batch_of(rows))
        assert got == expected
        assert [[_python_type(v) for v in row] for row in got] == [[_python_type(v) for v in row] for row in expected]


def test_a_batch_that_fails_fails_at_its_row() -> None:
    rows = [["1"], ["2"], ["x"], ["4"]]
    loaded = text_rows_converter(["INTEGER"])(rows)
    assert next(loaded) == (1,) and next(loaded) == (2,)
    with pytest.raises(ValueError, match="'x'"):
        next(loaded)
    assert list(text_rows_converter(["TEXT"])([])) == []
    assert text_row_converter(["INTEGER"])(["7"]) == (7,)


# ---------------------------------------------------------------- whole files


def stored_with_types(tmp_path: Path, path: Path) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    conversion = CsvConverter().convert(path)
    db = tmp_path / (path.stem + ".db")
    create_dataset(db, conversion.schema, conversion.rows)
    ((table, spec),) = conversion.schema.items()
    picks = ", ".join(f'"{name}", typeof("{name}")' for name in spec["columns"])
    with sqlite3.connect(db) as connection:
        rows = connection.execute(f'SELECT {picks} FROM "{table}" ORDER BY rowid').fetchall()
    return conversion, rows


def test_a_file_of_many_batches_stores_what_the_cell_by_cell_rules_give(tmp_path: Path) -> None:
    rng = random.Random(21)
    header = ["id", "amount", "code", "note", "sparse", "mixed", "wide"]
    records = []
    for n in range(1, 2000):
        records.append([
            str(n), f"{rng.uniform(1, 20000):.2f}", str(rng.randint(100, 99999)),
            rng.choice(["Ünïcødé 名前", "", " ", "a \"quoted\" cell", "line\nbreak", "🙂"]),
            rng.choice(["", "", "0.075", "7"]),
            rng.choice(["1", "2"]) if n != 1500 else "N/A",  # one text cell, deep in the file
            str(2**53 + n) if n % 500 else "1.5",  # wide integers, and a real: TEXT
        ])
    records.insert(700, [])  # a blank line: not a row
    records.insert(900, ["1", "2"])  # a short row: padded with NULL
    path = tmp_path / "many.csv"
    import csv
    with path.open("w", newline="", encoding="utf-8") as stream:
        csv.writer(stream).writerows([header] + records)

    conversion, rows = stored_with_types(tmp_path, path)
    data = [record for record in records if record]
    reference = reference_tracker(data)
    types = reference.types(len(header))
    assert list(conversion.schema["many"]["columns"].values()) == types == [
        "INTEGER", "REAL", "INTEGER", "TEXT", "REAL", "TEXT", "TEXT"]
    assert "`sparse` was read as decimal: `7` is stored as 7.0." in conversion.manual_notes
    assert len(rows) == len(data) == 2000
    for record, row in zip(data, rows):
        padded = record + [None] * (len(header) - len(record))
        expected = [convert_text(cell, t) for cell, t in zip(padded, types)]
        assert list(row[0::2]) == expected
        assert list(row[1::2]) == [_python_type(value) for value in expected]


def test_a_value_that_changed_between_the_passes_is_refused_where_row_by_row_refused_it(tmp_path: Path) -> None:
    # The feed counts the rows handed to SQLite, so a row source failing at its row
    # 300 is reported as "row 299" (as main's row-at-a-time loader reports it): a
    # batch that fails is loaded again row by row to keep that number.
    path = tmp_path / "changed.csv"
    path.write_text("n\n" + "".join(f"{n}\n" for n in range(1, 601)), encoding="utf-8")
    conversion = CsvConverter().convert(path)
    path.write_text("n\n" + "".join(f"{n if n != 300 else 'abc'}\n" for n in range(1, 601)), encoding="utf-8")
    with pytest.raises(VineError, match=r"table changed, row 299: invalid literal for int\(\) with base 10: 'abc'"):
        create_dataset(tmp_path / "changed.db", conversion.schema, conversion.rows)


def test_an_unreadable_record_deep_in_the_file_names_its_line(tmp_path: Path) -> None:
    import csv
    path = tmp_path / "broken.csv"
    path.write_text("a,b\n" + "1,2\n" * 600 + "3," + "x" * 5000 + "\n" + "4,5\n", encoding="utf-8")
    limit = csv.field_size_limit(1000)  # the one error Python's csv reader still raises here
    try:
        with pytest.raises(ConversionError, match=r"^unreadable CSV: broken.csv line 602: field larger than field limit"):
            CsvConverter().convert(path)
    finally:
        csv.field_size_limit(limit)
