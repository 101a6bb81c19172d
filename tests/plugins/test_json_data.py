"""The JSON converter: arrays of objects become datasets, other JSON documents."""
from __future__ import annotations

import json
import pickle
from pathlib import Path

import pluggy
import pytest

from monkeyllm_gardener import hookspecs
from monkeyllm_gardener.conversion import Conversion, ConversionError
from monkeyllm_plugins import json_data
from monkeyllm_plugins.json_data import MAX_DOCUMENT_CHARS, JsonConverter

from _conversions import load, only_table, write_source  # tests/plugins is on sys.path


def write_json(tmp_path: Path, name: str, data) -> Path:
    return write_source(tmp_path, name, json.dumps(data, ensure_ascii=False, indent=1))


def convert(path: Path) -> Conversion:
    return JsonConverter().convert(path)


def test_array_of_objects_becomes_a_dataset_with_keys_in_first_seen_order(tmp_path) -> None:
    path = write_json(tmp_path, "orders-2026.json", [
        {"id": 1, "customer": "Northwind", "total": 12.5},
        {"id": 2, "note": "rush", "customer": "Contoso"},
    ])
    conversion = convert(path)
    assert conversion.kind == "dataset" and conversion.title == "orders-2026"
    assert only_table(conversion) == (
        "orders_2026",
        {"id": "INTEGER", "customer": "TEXT", "total": "REAL", "note": "TEXT"},
    )
    assert load(tmp_path, conversion) == [(1, "Northwind", 12.5, None), (2, "Contoso", None, "rush")]
    # a missing key is NULL by the forest's general rule, stated once in its dialect
    assert conversion.manual_notes == ()


def test_nested_values_are_stored_as_json_text_and_stated(tmp_path) -> None:
    path = write_json(tmp_path, "nested.json", [
        {"id": 1, "tags": ["a", "ü"], "meta": {"k": [1, 2]}},
        {"id": 2, "tags": [], "meta": None},
    ])
    conversion = convert(path)
    assert load(tmp_path, conversion) == [(1, '["a", "ü"]', '{"k": [1, 2]}'), (2, "[]", None)]
    assert len(conversion.manual_notes) == 1
    assert any("`tags`, `meta`" in note and "JSON text" in note for note in conversion.manual_notes)


def test_booleans_are_integers_unless_the_column_holds_text(tmp_path) -> None:
    path = write_json(tmp_path, "flags.json", [
        {"active": True, "mixed": True},
        {"active": False, "mixed": "maybe"},
    ])
    conversion = convert(path)
    assert only_table(conversion)[1] == {"active": "INTEGER", "mixed": "TEXT"}
    assert load(tmp_path, conversion) == [(1, "true"), (0, "maybe")]
    assert any("`active` are stored as 1/0" in note for note in conversion.manual_notes)
    assert any("`mixed`" in note and "text" in note for note in conversion.manual_notes)


@pytest.mark.parametrize(
    ("values", "sql_type", "stored"),
    [
        ([1, 2], "INTEGER", [1, 2]),
        ([1, 2.5], "REAL", [1.0, 2.5]),
        ([1e3, 4], "REAL", [1000.0, 4.0]),
        (["00501", "90210"], "TEXT", ["00501", "90210"]),
        (["42", 7], "TEXT", ["42", "7"]),
        ([12345678901234567890123, 1], "TEXT", ["12345678901234567890123", "1"]),
        ([2**60 + 1, 0.5], "TEXT", [str(2**60 + 1), "0.5"]),
        (["N/A", 3], "TEXT", ["N/A", "3"]),
        (["", None], "TEXT", ["", None]),
    ],
)
def test_column_types_follow_the_declared_rules(tmp_path, values, sql_type, stored) -> None:
    path = write_json(tmp_path, "typed.json", [{"v": value} for value in values])
    conversion = convert(path)
    assert only_table(conversion)[1] == {"v": sql_type}
    assert load(tmp_path, conversion) == [(value,) for value in stored]


def test_nan_and_infinity_make_a_column_text(tmp_path) -> None:
    path = write_source(tmp_path, "nan.json", '[{"v": NaN}, {"v": 1.5}, {"v": -Infinity}]')
    conversion = convert(path)
    assert only_table(conversion)[1] == {"v": "TEXT"}
    assert load(tmp_path, conversion) == [("NaN",), ("1.5",), ("-Infinity",)]


def test_keys_are_repaired_like_headers(tmp_path) -> None:
    path = write_json(tmp_path, "keys.json", [{"a": 1, "A": 2, "": 3, "Total (€)": 4, "order": 5, "1st": 6}])
    conversion = convert(path)
    assert list(only_table(conversion)[1]) == ["a", "a_2", "column_3", "total_eur", "order", "c_1st"]
    assert "Header `A` repeats `a` and is named `a_2`." in conversion.manual_notes
    assert load(tmp_path, conversion) == [(1, 2, 3, 4, 5, 6)]


def test_repeated_keys_inside_an_object_are_reported(tmp_path) -> None:
    conversion = convert(write_source(tmp_path, "dup.json", '[{"a": 1, "a": 2}]'))
    assert load(tmp_path, conversion) == [(2,)]
    assert any("repeated key" in warning and "dup.json" in warning for warning in conversion.warnings)


@pytest.mark.parametrize(
    ("data", "must_include"),
    [
        ({"name": "config", "debug": True}, ["`name`", "`debug`", '"name": "config"']),
        ([], ["An empty JSON array."]),
        ([{"a": 1}, 2], ["not all objects", '"a": 1']),
        ([{}, {}], ["empty objects"]),
        ("just text", ['"just text"']),
        (42, ["42"]),
    ],
)
def test_other_json_becomes_a_readable_document(tmp_path, data, must_include) -> None:
    conversion = convert(write_json(tmp_path, "thing.json", data))
    assert conversion.kind == "markdown" and conversion.node_type == "document"
    assert conversion.title == "thing"
    assert "```json\n" in conversion.markdown
    for text in must_include:
        assert text in conversion.markdown


def test_backticks_in_content_cannot_close_the_fence(tmp_path) -> None:
    conversion = convert(write_json(tmp_path, "ticks.json", {"code": "```python\nx\n```"}))
    assert "````json\n" in conversion.markdown


def test_huge_document_is_cut_and_the_cut_is_stated(tmp_path) -> None:
    data = {f"key_{n}": "value " * 10 for n in range(5_000)}
    conversion = convert(write_json(tmp_path, "huge.json", data))
    assert len(conversion.markdown) < MAX_DOCUMENT_CHARS + 2_000
    assert "_Cut: the first" in conversion.markdown and "5,002 lines" in conversion.markdown
    assert any("cut" in warning and "huge.json" in warning for warning in conversion.warnings)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('[{"a": 1},\n {"a": 2}\n {"a": 3}]', r"^invalid JSON at line 3, column 2: Expecting ',' delimiter in bad\.json"),
        ('{"a": }', r"^invalid JSON at line 1, column 7: Expecting value in bad\.json"),
        ("", r"^empty file: bad\.json"),
        ("  \n ", r"^empty file: bad\.json"),
        ("[" * 100_000, r"bad\.json"),
    ],
)
def test_invalid_json_fails_naming_line_and_column(tmp_path, content, message) -> None:
    with pytest.raises(ConversionError, match=message):
        convert(write_source(tmp_path, "bad.json", content))


@pytest.mark.parametrize("codec", ["utf-8-sig", "utf-16", "cp1252"])
def test_json_encodings_are_detected(tmp_path, codec) -> None:
    path = write_source(tmp_path, "enc.json", '[{"name": "José €"}]', encoding=codec)
    conversion = convert(path)
    assert load(tmp_path, conversion) == [("José €",)]
    assert bool(conversion.warnings) == (codec == "cp1252")


def test_conversion_pickles_and_rows_reiterate(tmp_path) -> None:
    conversion = convert(write_json(tmp_path, "p.json", [{"a": 1}, {"a": 2}]))
    clone = pickle.loads(pickle.dumps(conversion))
    assert list(clone.rows["p"]) == list(conversion.rows["p"]) == [(1,), (2,)]


def test_converter_registers_through_the_hook(tmp_path) -> None:
    manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    manager.add_hookspecs(hookspecs)
    manager.register(json_data)
    registered = []
    manager.hook.register_converters(register=lambda converter, priority=0.0: registered.append(converter))
    (converter,) = registered
    assert converter.name == "json" and tuple(converter.extensions) == (".json",)


def test_objects_with_more_than_50_keys_are_split_into_tables(tmp_path) -> None:
    records = [{f"k{n}": r * 100 + n for n in range(60)} for r in range(2)]
    conversion = convert(write_json(tmp_path, "wide.json", records))
    assert [len(spec["columns"]) for spec in conversion.schema.values()] == [50, 10]
    assert list(conversion.rows["wide_part_2"]) == [tuple(r[f"k{n}"] for n in range(50, 60)) for r in records]
    assert any("60 columns" in note for note in conversion.manual_notes)


def test_a_document_body_shows_numbers_as_the_file_wrote_them(tmp_path) -> None:
    source = '{"price": 1.50, "big": 1e5, "zero": -0, "exact": 0.10000000000000000001, "huge": 1e400, "n": 42}'
    conversion = convert(write_source(tmp_path, "prices.json", source))
    assert conversion.kind == "markdown"
    for line in ['"price": 1.50,', '"big": 1e5,', '"zero": -0,', '"exact": 0.10000000000000000001,',
                 '"huge": 1e400,', '"n": 42']:
        assert line in conversion.markdown
    assert "Infinity" not in conversion.markdown and "100000.0" not in conversion.markdown


def test_a_document_body_is_laid_out_like_json_dumps(tmp_path) -> None:
    data = {"a": [1, {"b": None, "c": [True, False]}, [], {}], "ü": "x\"y"}
    conversion = convert(write_json(tmp_path, "layout.json", data))
    assert json.dumps(data, ensure_ascii=False, indent=2) in conversion.markdown


@pytest.mark.parametrize(
    ("tokens", "sql_type", "stored"),
    [
        (["1e400", "1.5"], "TEXT", ["1e400", "1.5"]),  # overflows to Infinity as a float
        (["0.10000000000000000001", "2"], "TEXT", ["0.10000000000000000001", "2"]),  # loses digits
        (["-0", "1"], "TEXT", ["-0", "1"]),
        (["1.50", "2.25"], "REAL", [1.5, 2.25]),
    ],
)
def test_dataset_numbers_never_lose_information(tmp_path, tokens, sql_type, stored) -> None:
    path = write_source(tmp_path, "nums.json", "[" + ", ".join(f'{{"v": {t}}}' for t in tokens) + "]")
    conversion = convert(path)
    assert only_table(conversion)[1] == {"v": sql_type}
    assert load(tmp_path, conversion) == [(value,) for value in stored]


def test_a_real_column_read_as_decimal_is_named_in_the_manual(tmp_path) -> None:
    conversion = convert(write_source(tmp_path, "shop.json", '[{"sku": "A", "price": 1.50}, {"sku": "B", "price": 2.25}]'))
    assert conversion.manual_notes == ("`price` was read as decimal: `1.50` is stored as 1.5.",)


def test_nested_values_keep_their_number_tokens(tmp_path) -> None:
    conversion = convert(write_source(tmp_path, "n.json", '[{"id": 1, "meta": {"price": 1.50, "qty": [1e5, -0]}}]'))
    assert load(tmp_path, conversion) == [(1, '{"price": 1.50, "qty": [1e5, -0]}')]
