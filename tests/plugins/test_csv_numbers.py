"""Numbers and strings stay as written: no CSV value loses information on its way into
a typed column, and a column whose spelling does change (read as decimal) says so."""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from monkeyllm_core.data.dataset import create_dataset
from monkeyllm_gardener.conversion import Conversion
from monkeyllm_plugins.csv_dataset import CsvConverter



def convert_bytes(tmp_path: Path, name: str, data: bytes) -> Conversion:
    path = tmp_path / name
    path.write_bytes(data)
    return CsvConverter().convert(path)


def table(tmp_path: Path, conversion: Conversion) -> tuple[dict[str, str], list[tuple]]:
    ((name, spec),) = conversion.schema.items()
    db_path = tmp_path / "t.db"
    create_dataset(db_path, conversion.schema, conversion.rows)
    with sqlite3.connect(db_path) as db:
        return dict(spec["columns"]), db.execute(f'SELECT * FROM "{name}" ORDER BY rowid').fetchall()


@pytest.mark.parametrize(
    ("cells", "why"),
    [
        (["+5", "6"], "a plus sign is not how 5 is written"),
        ([" 5", "6"], "a leading space"),
        (["5 ", "6"], "a trailing space"),
        (["-0", "1"], "negative zero is not 0, and SQLite keeps no negative zero"),
        (["-0.0", "1.5"], "negative zero as a decimal"),
        (["1e400", "1.5"], "overflows to Infinity as a double"),
        (["0.10000000000000000001", "0.5"], "more digits than a double keeps"),
        (["9007199254740993", "0.5"], "an integer beyond 2**53 beside a decimal"),
        (["1.5", "N/A"], "a placeholder is text, not NULL"),
    ],
)
def test_a_value_that_a_number_column_would_change_keeps_the_column_text(tmp_path, cells, why) -> None:
    conversion = convert_bytes(tmp_path, "v.csv", ("v\n" + "\n".join(f'"{cell}"' for cell in cells) + "\n").encode())
    columns, rows = table(tmp_path, conversion)
    assert columns == {"v": "TEXT"}, why
    assert rows == [(cell,) for cell in cells], why
    assert conversion.manual_notes == ()


def test_decimals_are_real_and_the_manual_names_each_column_read_as_decimal(tmp_path) -> None:
    data = "sku,price,qty,sci,exact\nA,1.50,1,1e5,2.25\nB,2.25,2,3,0.5\n".encode()
    conversion = convert_bytes(tmp_path, "shop.csv", data)
    columns, rows = table(tmp_path, conversion)
    assert columns == {"sku": "TEXT", "price": "REAL", "qty": "INTEGER", "sci": "REAL", "exact": "REAL"}
    assert rows == [("A", 1.5, 1, 100000.0, 2.25), ("B", 2.25, 2, 3.0, 0.5)]
    assert conversion.manual_notes == (
        "`price` was read as decimal: `1.50` is stored as 1.5.",
        "`sci` was read as decimal: `1e5` is stored as 100000.0.",
    )


@pytest.mark.parametrize("codec", ["utf-8", "utf-16", "cp1252", "shift_jis"])
def test_a_quoted_crlf_inside_a_field_stays_crlf_whatever_the_encoding(tmp_path, codec) -> None:
    text = 'id,note\r\n1,"first line\r\nsecond line"\r\n2,"lone\nLF and lone\rCR"\r\n3,Zoë\r\n'
    if codec == "shift_jis":
        text = text.replace("Zoë", "田中")
    conversion = convert_bytes(tmp_path, "crlf.csv", text.encode(codec))
    _, rows = table(tmp_path, conversion)
    assert rows == [(1, "first line\r\nsecond line"), (2, "lone\nLF and lone\rCR"),
                    (3, "田中" if codec == "shift_jis" else "Zoë")]


def test_decimals_a_double_cannot_hold_keep_every_digit(vine_cli: Any, tmp_path: Path) -> None:
    export = tmp_path / "export"
    export.mkdir()
    (export / "readings.csv").write_text(
        "sensor,value\nA,1.5\nB,0.12345678901234567890\nC,3.14159265358979323846\n", encoding="utf-8"
    )
    forest, report = vine_cli.adopt_into_new_forest(export)
    assert report["planted"] == ["readings"]
    with sqlite3.connect(forest / "readings.db") as db:
        values = [row[0] for row in db.execute("SELECT value FROM readings ORDER BY rowid")]
    assert [str(v) for v in values] == ["1.5", "0.12345678901234567890", "3.14159265358979323846"]
