"""Issue 16, worker CPU on CSV and JSON: a small CSV's records are parsed once (the
first pass keeps them for the load), a JSON file is parsed once (``JsonRows`` keeps the
converter's parse), and JSON is typed and loaded a column at a time
(``TypeTracker.observe_value_columns``, ``convert_value_column``). Nothing a user sees
may change, so each fast path is checked against the general one it stands beside:
the kept records against the file read again (a pickled row source), the column
survey against ``observe_value_row`` row by row, the column loader against
``convert_value`` value by value; on files and values made in code with the cases
that go wrong first (ragged rows, blank lines and cells, quoted newlines and CRLF,
NUL, a BOM, cp1252 and UTF-16 text, integers past 2**53 and 2**63, leading zeros,
nested values, booleans, nulls, missing keys, a table split by width)."""
from __future__ import annotations

import csv
import io
import json
import pickle
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from monkeyllm_core.data.dataset import create_dataset
from monkeyllm_gardener.kit.tabular import (
    NumberToken,
    TypeTracker,
    classify_value,
    convert_value,
    convert_value_column,
)
from monkeyllm_plugins import csv_dataset
from monkeyllm_plugins.csv_dataset import CsvConverter
from monkeyllm_plugins.json_data import JsonConverter

TOKENS = [
    "0", "7", "-7", "42", "123456789012345", "1234567890123456", str(2**53), str(2**53 + 1),
    str(2**63 - 1), str(2**63), "1" * 25, "1.5", "1.50", "-0.25", ".5", "0.1",
    "0.10000000000000000001", "1e3", "2.5E-3", "1e400", "6399.87", "100.0", "-0", "-0.0", "NaN", "Infinity",
]
CELLS = TOKENS + ["", " ", "\t", "00501", "007.5", "+5", " 7", "N/A", "null", "名前", "a \"quoted\" cell",
                  "line\nbreak", "cr\r\nlf", "nul\x00here", "José €", "🙂"]


def stored(tmp_path: Path, conversion: Any, name: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every table of the dataset the conversion describes, loaded into real SQLite
    and read back with each value's SQLite type."""
    db = tmp_path / f"{name}.db"
    create_dataset(db, conversion.schema, conversion.rows)
    tables = {}
    with sqlite3.connect(db) as connection:
        for table, spec in conversion.schema.items():
            picks = ", ".join(f'"{column}", typeof("{column}")' for column in spec["columns"])
            tables[table] = connection.execute(f'SELECT {picks} FROM "{table}" ORDER BY rowid').fetchall()
    return tables


def reread(conversion: Any) -> Any:
    """The conversion as another process gets it: its row sources read the file again."""
    return pickle.loads(pickle.dumps(conversion))


# ---------------------------------------------------------------- CSV: records kept from the first pass


def write_csv(path: Path, header: list[str], records: list[list[str]], *, encoding: str = "utf-8",
              newline: str = "\n", blank_lines: tuple[int, ...] = ()) -> Path:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator=newline).writerow(header)
    for number, record in enumerate(records):
        if number in blank_lines:
            buffer.write(newline)
        csv.writer(buffer, lineterminator=newline).writerow(record)
    path.write_bytes(buffer.getvalue().encode(encoding))
    return path


def odd_records(rng: random.Random, width: int, count: int, cells: list[str]) -> list[list[str]]:
    records = []
    for _ in range(count):
        record = [rng.choice(cells) for _ in range(width)]
        if rng.random() < 0.05:  # ragged: short or long
            record = record[: rng.randint(1, width)] if rng.random() < 0.5 else record + [rng.choice(cells)]
        records.append(record)
    return records


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp1252", "utf-16"])
def test_kept_records_load_what_the_file_read_again_loads(tmp_path: Path, encoding: str) -> None:
    rng = random.Random(encoding)
    usable = [cell for cell in CELLS if cell.encode(encoding, "ignore").decode(encoding, "ignore") == cell]
    pools = [TOKENS[:11], TOKENS, usable, ["1", "2", "", " "], ["", " "], TOKENS[11:21] + [""]]
    header = [f"Col {n}" for n in range(len(pools))]
    records = [[rng.choice(pool) for pool in pools] for _ in range(700)]  # more than one batch
    records[300] = records[300][:2]  # a short row
    records[400] = records[400] + ["extra"]  # a long one
    path = write_csv(tmp_path / f"odd-{encoding}.csv", header, records, encoding=encoding,
                     newline="\r\n", blank_lines=(0, 256, 699))
    conversion = CsvConverter().convert(path)
    assert all(rows.kept is not None for rows in conversion.rows.values())
    clone = reread(conversion)
    assert all(rows.kept is None for rows in clone.rows.values())
    assert clone.schema == conversion.schema and clone.manual_notes == conversion.manual_notes
    kept_tables = stored(tmp_path, conversion, "kept")
    assert kept_tables == stored(tmp_path, clone, "reread")
    assert len(kept_tables[next(iter(kept_tables))]) == 700


def test_kept_records_of_a_split_wide_file_fill_every_part(tmp_path: Path) -> None:
    rng = random.Random(51)
    header = [f"h{n}" for n in range(120)]
    path = write_csv(tmp_path / "wide.csv", header, odd_records(rng, 120, 300, TOKENS[:12] + ["", "x"]))
    conversion = CsvConverter().convert(path)
    assert len(conversion.schema) == 3
    assert stored(tmp_path, conversion, "kept") == stored(tmp_path, reread(conversion), "reread")


def test_a_one_column_file_keeps_its_empty_values_as_rows(tmp_path: Path) -> None:
    path = tmp_path / "single.csv"
    path.write_text('only\n""\n1\n \n\n2\n', encoding="utf-8")
    conversion = CsvConverter().convert(path)
    kept = stored(tmp_path, conversion, "kept")
    assert kept == stored(tmp_path, reread(conversion), "reread")
    assert kept["single"] == [(None, "null"), (1, "integer"), (None, "null"), (2, "integer")]


def test_random_files_load_the_same_kept_or_read_again(tmp_path: Path) -> None:
    rng = random.Random(23)
    for number in range(25):
        width = rng.randint(1, 6)
        cells = rng.choice([TOKENS, CELLS, ["1", "2", "", "3.5"], TOKENS[:8] + [""]])
        path = write_csv(tmp_path / f"r{number}.csv", [f"c{n}" for n in range(width)],
                         odd_records(rng, width, rng.choice([1, 255, 256, 257, 600]), cells),
                         newline=rng.choice(["\n", "\r\n"]))
        conversion = CsvConverter().convert(path)
        assert stored(tmp_path, conversion, f"k{number}") == stored(tmp_path, reread(conversion), f"r{number}")


def test_a_file_changed_after_the_first_pass_is_loaded_as_it_is_now(tmp_path: Path) -> None:
    path = tmp_path / "changed.csv"
    path.write_text("n,t\n1,a\n2,b\n", encoding="utf-8")
    conversion = CsvConverter().convert(path)
    path.write_text("n,t\n3,c\n4,d\n", encoding="utf-8")  # the same size: only the bytes tell
    assert stored(tmp_path, conversion, "changed")["changed"] == [
        (3, "integer", "c", "text"), (4, "integer", "d", "text")]


def csv_of_size(path: Path, size: int) -> Path:
    """A CSV of exactly ``size`` bytes: numbered rows, the last one's text padded."""
    rows, n, written = ["id,v\n"], 0, 5
    while written + 40 < size:
        rows.append(f"{n},{n}.5\n")
        written += len(rows[-1])
        n += 1
    room = size - written - len(f"{n},\n")
    rows.append(f"{n},{'x' * room}\n")
    path.write_text("".join(rows), encoding="utf-8")
    assert path.stat().st_size == size
    return path


def test_a_file_larger_than_the_kept_limit_is_read_again(tmp_path: Path) -> None:
    limit = csv_dataset._KEPT_FILE_BYTES
    large = CsvConverter().convert(csv_of_size(tmp_path / "large.csv", limit + 1))
    assert large.rows["large"].kept is None
    small = CsvConverter().convert(csv_of_size(tmp_path / "small.csv", limit))
    assert small.rows["small"].kept is not None
    # the same rows either way, but for the one padding byte of the last row
    read_again, kept = stored(tmp_path, large, "large")["large"], stored(tmp_path, small, "small")["small"]
    assert read_again[:-1] == kept[:-1] and len(read_again) == len(kept)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
def test_nul_cells_are_counted_whether_the_bytes_or_the_cells_are_searched(tmp_path: Path, encoding: str) -> None:
    # UTF-8 is searched as bytes once; UTF-16 (NUL bytes in every ASCII character) cell by cell
    path = write_csv(tmp_path / "nul.csv", ["a\x00b", "c"], [["x\x00", "1"], ["y", "\x00\x00"], ["z", "2"]],
                     encoding=encoding)
    conversion = CsvConverter().convert(path)
    assert any("NUL characters appear in 3 cells" in note for note in conversion.manual_notes)
    clean = write_csv(tmp_path / "clean.csv", ["a", "c"], [["x", "1"]], encoding=encoding)
    assert not any("NUL" in note for note in CsvConverter().convert(clean).manual_notes)


def test_a_column_of_many_distinct_numbers_types_as_row_by_row() -> None:
    # the distinct cells are matched a slice at a time: an odd cell in one slice, before or after the rest
    numbers = [str(n) for n in range(1, 1200)] + [f"{n}.25" for n in range(300)]
    for odd, position in [("N/A", 700), ("1.50", 1000), ("", 5), ("00501", 1400), (str(2**53 + 1), 100)]:
        column = numbers[:position] + [odd] + numbers[position:]
        rows = [[cell] for cell in column]
        reference, batched = TypeTracker(), TypeTracker()
        for row in rows:
            reference.observe_text_row(row)
        batched.observe_text_rows(rows)
        assert batched.types(1) == reference.types(1)
        assert batched.rewritten_examples(1) == reference.rewritten_examples(1)
        assert batched._columns[0].seen == reference._columns[0].seen


# ---------------------------------------------------------------- JSON: one parse, a column at a time


def value_pool() -> list[Any]:
    return ([NumberToken(token) for token in TOKENS] + [None, True, False, "", "12", "text", {"a": NumberToken("1.50")},
            [NumberToken("1"), "x"], 7, 2**60, 2**63, 1.5, float("nan")])


def test_a_column_survey_types_as_observe_value_row_row_by_row() -> None:
    rng = random.Random(16)
    pool = value_pool()
    numbers_and_nulls = [NumberToken(token) for token in TOKENS[:12]] + [None, True, False]
    for _ in range(400):
        kinds = rng.choice([pool, numbers_and_nulls, numbers_and_nulls[:8], [None], [True, None, NumberToken("1.5")]])
        width = rng.randint(1, 5)
        rows = [[rng.choice(kinds) for _ in range(width)] for _ in range(rng.randint(1, 40))]
        reference = TypeTracker()
        for row in rows:
            reference.observe_value_row(row)
        by_column = TypeTracker()
        middle = rng.randint(0, len(rows))
        for part in (rows[:middle], rows[middle:]):  # evidence carries over from one call to the next
            by_column.observe_value_columns([[row[index] for row in part] for index in range(width)])
        assert by_column.types(width) == reference.types(width)
        assert by_column.rewritten_examples(width) == reference.rewritten_examples(width)


@pytest.mark.parametrize("sql_type", ["TEXT", "INTEGER", "REAL"])
def test_a_column_loads_what_convert_value_gives_value_by_value(sql_type: str) -> None:
    usable = {
        "TEXT": value_pool(),
        "INTEGER": [NumberToken("0"), NumberToken("-7"), NumberToken(str(2**63 - 1)), True, False, None, 7, 2**60],
        "REAL": [NumberToken("1.5"), NumberToken("7"), NumberToken("1e3"), NumberToken("-0.25"), True, None, 2.5, 3],
    }[sql_type]
    rng = random.Random(sql_type)
    for _ in range(300):
        values = [rng.choice(usable) for _ in range(rng.randint(0, 12))]
        if rng.random() < 0.3:
            values = [value for value in values if value is not None]
        expected = [convert_value(value, sql_type) for value in values]
        got = list(convert_value_column(values, sql_type))
        assert [(type(value), value) for value in got] == [(type(value), value) for value in expected] or (
            repr(got) == repr(expected))  # NaN is never equal to itself


def test_json_rows_kept_from_the_parse_load_what_the_file_parsed_again_loads(tmp_path: Path) -> None:
    rng = random.Random(5)
    text_values = ['"x"', '""', '"12"', '{"a": 1.50, "b": [1, 2e400]}', "[]", "null", "true", "-0", "1e400"]
    number_values = ["1", "-7", str(2**53 + 1), str(2**63 - 1), "1.50", "0.1", "1e3", "null", "true", "false"]
    records = []
    for _ in range(2500):  # more than one load batch
        fields = {f"k{n}": rng.choice(number_values if n % 2 else text_values) for n in range(6)}
        kept = [f'"{key}": {value}' for key, value in fields.items() if rng.random() < 0.9]
        records.append("{" + ", ".join(kept) + "}")
    path = tmp_path / "mixed.json"
    path.write_text("[" + ",\n".join(records) + "]", encoding="utf-8")
    conversion = JsonConverter().convert(path)
    assert conversion.rows["mixed"].parsed is not None
    clone = reread(conversion)
    assert clone.rows["mixed"].parsed is None
    kept = stored(tmp_path, conversion, "kept")
    assert kept == stored(tmp_path, clone, "reread")
    # and what the value-by-value rules give, read back from SQLite with its type
    data = json.loads(path.read_text(), parse_int=NumberToken, parse_float=NumberToken, parse_constant=NumberToken)
    keys = list(conversion.schema["mixed"]["columns"])
    types = list(conversion.schema["mixed"]["columns"].values())
    from monkeyllm_plugins.json_data import _cell
    for record, row in zip(data, kept["mixed"]):
        expected = [convert_value(_cell(record.get(key)), sql_type) for key, sql_type in zip(keys, types)]
        assert list(row[0::2]) == expected


def test_a_json_file_changed_after_convert_is_loaded_as_it_is_now(tmp_path: Path) -> None:
    # as the CSV converter's kept records: the parse stands for the file while its bytes are the same
    path = tmp_path / "changed.json"
    path.write_text('[{"n": 1}, {"n": 2}]', encoding="utf-8")
    conversion = JsonConverter().convert(path)
    path.write_text('[{"n": 3}, {"n": 4}]', encoding="utf-8")  # the same size: only the bytes tell
    assert stored(tmp_path, conversion, "changed")["changed"] == [(3, "integer"), (4, "integer")]


def test_json_rows_of_a_split_wide_file_fill_every_part(tmp_path: Path) -> None:
    path = tmp_path / "wide.json"
    path.write_text(json.dumps([{f"k{n}": (n * row if n % 3 else f"t{row}") for n in range(120)} for row in range(30)]),
                    encoding="utf-8")
    conversion = JsonConverter().convert(path)
    assert len(conversion.schema) == 3
    assert stored(tmp_path, conversion, "kept") == stored(tmp_path, reread(conversion), "reread")


def test_a_json_column_of_numbers_and_nulls_keeps_its_decimal_note(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text('[{"p": 2.25}, {"p": null}, {"p": 1.50}, {}, {"p": 3}, {"p": true}]', encoding="utf-8")
    conversion = JsonConverter().convert(path)
    assert conversion.schema["prices"]["columns"] == {"p": "REAL"}
    assert "`p` was read as decimal: `1.50` is stored as 1.5." in conversion.manual_notes
    assert [kind for kind in map(classify_value, [NumberToken("1.50"), True, None])] == ["real", "integer", "null"]


def test_numbers_said_to_keep_their_spelling_read_back_from_a_double_as_written() -> None:
    # _keep_their_spelling spares a REAL column's repr(float(n)) of every number; it may
    # only say so of numbers that do keep it (when it says "maybe not", repr decides)
    from monkeyllm_gardener.kit.tabular import _SHORT_NUMBER_LINES, _keep_their_spelling

    rng = random.Random(53)
    kept = 0
    for _ in range(100_000):
        whole = rng.choice(["0", "", str(rng.randint(1, 9)), str(rng.randint(1, 10 ** rng.randint(1, 14)))])
        fraction = "0" * rng.randint(0, 5) + "".join(rng.choice("0001234567899") for _ in range(rng.randint(0, 14)))
        number = rng.choice(["", "-"]) + whole + ("." + fraction if fraction or rng.random() < 0.2 else "")
        if not _SHORT_NUMBER_LINES.fullmatch(number) or number in ("", "-"):
            continue
        if _keep_their_spelling([number]):
            kept += 1
            assert repr(float(number)) == number
    assert kept > 10_000
    for number in ["6399.87", "0.0", "10.0", "-0.5", "0.0001", "12345678901.25"]:
        assert _keep_their_spelling([number]) and repr(float(number)) == number
    for number in ["1.50", "7", ".5", "-.5", "0.00001", "100.10", "1.00"]:
        assert not _keep_their_spelling([number]) and repr(float(number)) != number
    assert not _keep_their_spelling(["6399.87", "1.50"])
