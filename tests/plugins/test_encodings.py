"""Text in any encoding: every listed encoding, on realistic samples made in code, read
by the CSV, markdown, text and JSON converters through the one shared decoder; damaged
or undecodable bytes are an error naming the file, never mojibake with a warning."""
from __future__ import annotations

import codecs
import json
import random
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from monkeyllm_gardener.conversion import Conversion, ConversionError
from monkeyllm_gardener.kit import detect_encoding
from monkeyllm_plugins.csv_dataset import CsvConverter
from monkeyllm_plugins.json_data import JsonConverter
from monkeyllm_plugins.markdown_text import MarkdownTextConverter

from _conversions import load, write_source  # tests/plugins is on sys.path
from cli_helpers import NO_THIRD_PARTY_PLUGINS


# (label, codec used to write, CSV sample, prose sample): a few lines each, as exported.
SAMPLES = [
    ("shift_jis", "shift_jis", "名前,年齢,部署\n田中,30,営業\n鈴木,25,開発\n",
     "# 会議メモ\n\n田中さんは来週の予定を確認しました。\n"),
    ("gb18030", "gb18030", "姓名,城市,年龄\n张伟,北京,30\n王芳,上海,25\n李娜,广州,28\n",
     "# 会议记录\n\n我们讨论了下一季度的预算。\n"),
    ("euc_kr", "euc_kr", "이름,나이\n김철수,30\n이영희,25\n",
     "# 회의록\n\n다음 분기 예산을 논의했습니다.\n"),
    ("cp1251", "cp1251", "Имя,Город\nИван,Москва\nОльга,Санкт-Петербург\n",
     "# Отчёт\n\nПродажи выросли на 5% в марте.\n"),
    ("cp1252", "cp1252", "nome;cidade;preço\nJoão;São Paulo;5,00\nMaria;Belém;7,50\n",
     "# Réunion\n\nLe café coûte 2 € ; « très » bien.\n"),
    ("latin-1", "latin-1", "Name;Straße\nMüller;Hauptstraße 5\nJürgen;Königsallee 1\n",
     "# Übersicht\n\nDie Größe ist für alle gleich.\n"),
    ("utf-16 with BOM", "utf-16", "名前,年齢\n田中,30\n", "# Título\n\nLigne une, ligne deux.\n"),
    ("utf-16-le without BOM", "utf-16-le", "名前,年齢\n田中,30\n鈴木,25\n", "# Título\n\nLigne une, ligne deux.\n"),
    ("utf-16-be without BOM", "utf-16-be", "名前,年齢\n田中,30\n鈴木,25\n", "# Título\n\nLigne une, ligne deux.\n"),
]
IDS = [sample[0] for sample in SAMPLES]
COLUMNS = {"cp1252": ["nome", "cidade", "preco"], "latin-1": ["name", "strasse"]}
BOM_MARKED = {"utf-16"}


def assert_warned_or_not(conversion: Conversion, name: str, codec: str) -> None:
    if codec in BOM_MARKED:
        assert conversion.warnings == ()
    else:  # a legacy or unmarked encoding: the user is told, by file name
        (warning,) = conversion.warnings
        assert name in warning and "re-save as UTF-8" in warning and "\n" not in warning


@pytest.mark.parametrize(("label", "codec", "table", "prose"), SAMPLES, ids=IDS)
def test_a_csv_in_each_encoding_is_decoded_and_keeps_its_scripts_column_names(
        tmp_path, label, codec, table, prose) -> None:
    path = write_source(tmp_path, "people.csv", table.encode(codec))
    conversion = CsvConverter().convert(path)
    delimiter = ";" if ";" in table.splitlines()[0] else ","
    header, *rows = [line.split(delimiter) for line in table.splitlines()]
    (spec,) = conversion.schema.values()
    # 名前 stays 名前, Имя is имя; Latin letters fold to plain words (preço -> preco)
    assert list(spec["columns"]) == COLUMNS.get(label, [name.lower() for name in header])
    assert load(tmp_path, conversion) == [tuple(int(v) if v.isdigit() else v for v in row) for row in rows]
    assert_warned_or_not(conversion, "people.csv", codec)
    assert not any("decoded" in note or codec in note for note in conversion.manual_notes)


@pytest.mark.parametrize(("label", "codec", "table", "prose"), SAMPLES, ids=IDS)
@pytest.mark.parametrize("suffix", [".md", ".txt"])
def test_markdown_and_text_in_each_encoding_are_decoded(tmp_path, label, codec, table, prose, suffix) -> None:
    name = f"note{suffix}"
    conversion = MarkdownTextConverter().convert(write_source(tmp_path, name, prose.encode(codec)))
    assert conversion.markdown == prose
    if suffix == ".md":
        assert conversion.title == prose.splitlines()[0].removeprefix("# ")
    assert_warned_or_not(conversion, name, codec)


@pytest.mark.parametrize(("label", "codec", "table", "prose"), SAMPLES, ids=IDS)
def test_json_in_each_encoding_is_decoded(tmp_path, label, codec, table, prose) -> None:
    data = {"title": prose.splitlines()[0], "body": prose.splitlines()[2]}
    path = write_source(tmp_path, "doc.json", json.dumps(data, ensure_ascii=False).encode(codec))
    conversion = JsonConverter().convert(path)
    assert json.dumps(data, ensure_ascii=False, indent=2) in conversion.markdown
    assert_warned_or_not(conversion, "doc.json", codec)


@pytest.mark.parametrize(
    "text",
    ["Café;Preço\nJoão;5,00\n", "2000,Zoë\n", "# Réunion\n\nLe café coûte 2 €.\n", "nombre,ciudad\nNuño,Logroño\n",
     "item,note\nmug,“curly” – €5\n", "produto,preço\nCoca-Cola®,5 €\nSala 20°C,n° 3\n"],
)
def test_short_western_text_reads_as_cp1252_where_detectors_guess_otherwise(tmp_path, text) -> None:
    # On 20 bytes charset-normalizer alone answers johab, cp1006, cp1250 or cp437 for these.
    path = write_source(tmp_path, "short.csv", text.encode("cp1252"))
    codec, warning = detect_encoding(path)
    assert codec == "cp1252" and "short.csv" not in warning  # the converters add the name
    assert path.read_bytes().decode(codec) == text


@pytest.mark.parametrize("text", ["Imię,Miasto\nŁukasz,Łódź\nZofia,Kraków\nJerzy,Gdańsk\n",
                                  "Spotkanie było w Łodzi, są nowe plany.\n"])
def test_polish_text_is_not_forced_into_cp1252(tmp_path, text) -> None:
    path = write_source(tmp_path, "miasta.md", text.encode("cp1250"))
    assert MarkdownTextConverter().convert(path).markdown == text


def test_a_legacy_character_far_past_the_detectors_head_sample_is_decoded(tmp_path) -> None:
    lines = ["id,word"] + [f"{n},plain" for n in range(20_000)] + ["20000,Москва", "20001,Санкт-Петербург"]
    path = write_source(tmp_path, "late.csv", ("\n".join(lines) + "\n").encode("cp1251"))
    assert path.stat().st_size > 200_000
    conversion = CsvConverter().convert(path)
    assert list(conversion.rows["late"])[-2:] == [(20000, "Москва"), (20001, "Санкт-Петербург")]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (random.Random(1).randbytes(3000),
         r"^undecodable text: junk\.csv is not UTF-8 and its encoding could not be detected with "
         r"confidence; re-save it as UTF-8$"),
        ("name,city\nJosé,Zürich\n".encode() + b"bad\xff,x\n",
         r"^undecodable text: junk\.csv is UTF-8 with invalid bytes .*re-save the whole file as UTF-8$"),
        ("name,city\nJosé,Zürich\n".encode() + "Zoë,Köln\n".encode("cp1252"),
         r"^undecodable text: junk\.csv is UTF-8 with invalid bytes"),
        ("name,city\nJosé,Zürich\n".encode() + "São Paulo,日本".encode()[:-1],
         r"^undecodable text: junk\.csv ends in the middle of a UTF-8 character"),
        ("id,city\n1,Łódź\n".encode("utf-16")[:-1],
         r"^undecodable text: junk\.csv starts with a UTF-16 byte order mark but is not valid UTF-16"),
    ],
    ids=["random bytes", "utf-8 with a stray byte", "utf-8 and cp1252 mixed", "utf-8 cut mid-character",
         "utf-16 with a BOM, cut"],
)
@pytest.mark.parametrize("converter", [CsvConverter(), JsonConverter(), MarkdownTextConverter()],
                         ids=["csv", "json", "markdown"])
def test_bytes_that_cannot_be_decoded_with_confidence_are_an_error_naming_the_file(
        tmp_path, data, message, converter) -> None:
    path = write_source(tmp_path, "junk.csv", data)
    with pytest.raises(ConversionError, match=message):
        converter.convert(path)


def test_a_shift_jis_csv_plants_and_every_example_query_of_its_manual_runs(vine_cli: Any, tmp_path) -> None:
    export = tmp_path / "export"
    export.mkdir()
    (export / "社員.csv").write_bytes("名前,年齢,order\n田中,30,1\n鈴木,25,2\n".encode("shift_jis"))
    forest = vine_cli.init(tmp_path / "forest", title="JP")
    report = vine_cli.adopt(export, forest, expect=None, env=NO_THIRD_PARTY_PLUGINS).json()
    (node_id,) = report["planted"]
    assert any("社員.csv" in line and "cp932" in line for line in report["warnings"]), report
    text = (forest / f"{node_id}.md").read_text(encoding="utf-8")
    passport = yaml.safe_load(text.split("---\n", 2)[1])
    manual = text.split("## Query manual", 1)[1].split("## Sample rows", 1)[0]
    assert '`"社員"("名前" TEXT, "年齢" INTEGER, "order" INTEGER)`' in manual  # quoted where SQL needs it
    queries = [q for q in manual.split("`") if q.startswith("SELECT")]
    assert queries
    for sql in queries + ['SELECT "名前" FROM "社員" WHERE "年齢" > 26']:
        proc = vine_cli("query", node_id, sql, "--forest", forest)
        assert proc.returncode == 0, f"{sql}\n{proc.stderr}"
    assert json.loads(proc.stdout)["rows"] == [["田中"]]
    assert passport["type"] == "dataset"


@pytest.mark.parametrize(
    ("text", "codec"),
    [
        ("名前,年齢,部署\n田中,30,営業\n", "shift_jis"),  # also decodes as rare cp949 syllables: 뼹멟
        ("姓名,城市,年龄\n李娜,广州,28\n", "gb18030"),  # also decodes as Hanja-heavy Korean: 檎츰
        ("# 보고서\n\n이번 분기 매출은 작년보다 증가했습니다.\n똠방각하 뷁\n", "cp949"),  # real cp949-only syllables
        ("Имя,Город\nИван,Москва\nОльга,Санкт-Петербург\n", "koi8_r"),
    ],
)
def test_cjk_readings_that_the_language_would_not_give_are_not_chosen(tmp_path, text, codec) -> None:
    path = write_source(tmp_path, "cjk.md", text.encode(codec))
    assert MarkdownTextConverter().convert(path).markdown == text


def test_when_every_reading_is_implausible_the_file_is_an_error_not_mojibake(tmp_path) -> None:
    # Two lines of KOI8-R: the detector offers only Shift-JIS, which reads them as
    # half-width katakana (酤ﾍﾅﾔﾋﾁ); no candidate is left, so the user is asked to re-save.
    path = write_source(tmp_path, "memo.md", "# Заметка\nВстреча в 10:00 в переговорной.\n".encode("koi8_r"))
    with pytest.raises(ConversionError, match=r"^undecodable text: memo\.md .*re-save it as UTF-8$"):
        MarkdownTextConverter().convert(path)


@pytest.mark.parametrize("name", ["junk.csv", "junk.json", "junk.md"])
def test_megabytes_of_undecodable_bytes_fail_fast_with_one_line_naming_the_file(vine_cli: Any, tmp_path: Path,
                                                                                name: str) -> None:
    export = tmp_path / "export"
    export.mkdir()
    (export / name).write_bytes(random.Random(3).randbytes(5_000_000))
    started = time.monotonic()
    forest, report = vine_cli.adopt_into_new_forest(export, timeout=60)
    assert time.monotonic() - started < 30
    assert report["planted"] == []
    (line,) = report["errors"]
    assert line.startswith(f"{name}: ") and "re-save it as UTF-8" in line and "\n" not in line


def test_a_one_line_json_of_megabytes_in_cp1251_is_decoded(vine_cli: Any, tmp_path: Path) -> None:
    export = tmp_path / "export"
    export.mkdir()
    records = [{"id": n, "city": "Москва" if n % 2 else "Санкт-Петербург"} for n in range(100_000)]
    (export / "cities.json").write_bytes(json.dumps(records, ensure_ascii=False).encode("cp1251"))
    assert (export / "cities.json").stat().st_size > 2_000_000
    forest, report = vine_cli.adopt_into_new_forest(export, timeout=120)
    assert report["planted"] == ["cities"], report
    assert any("cities.json" in line and "cp1251" in line for line in report["warnings"]), report
    with sqlite3.connect(forest / "cities.db") as db:
        assert db.execute("SELECT city FROM cities WHERE id IN (0, 1) ORDER BY id").fetchall() == [
            ("Санкт-Петербург",), ("Москва",)]


@pytest.mark.parametrize(
    "data",
    [
        b"# Plain\n\nASCII text.\n",
        "# Caf\u00e9 \u2014 \u65e5\u672c\n\nUTF-8 text.\n".encode(),
        b"# CRLF\r\n\r\nline\rold mac line\r\n",
        codecs.BOM_UTF8 + b"# BOM\n\ntext\n",
        codecs.BOM_UTF8 + codecs.BOM_UTF8 + b"two BOMs\n",
        "# UTF-16\n\nwith BOM\n".encode("utf-16"),
        "# UTF-16\n\nno BOM, little endian\n".encode("utf-16-le"),
        "# UTF-16\n\nno BOM, big endian\n".encode("utf-16-be"),
        "# UTF-32\n\ntext\n".encode("utf-32"),
        "# cp1252\n\nCaf\u00e9 \u201ccurly\u201d \u20ac5\n".encode("cp1252"),
        b"a NUL\x00 in ASCII text\n",
        b"x" * 5000 + b"\x00 a NUL past the first 4 KB\n",
        b"\xef\xbb",  # half a BOM
        "# Caf\u00e9 na\u00efve r\u00e9sum\u00e9\n".encode() + b"\xff\n",  # damaged UTF-8: refused
        "# Caf\u00e9\n".encode()[:-2],  # cut in a character: refused
        b"",
        b"   \n\t\n",
    ],
)
def test_one_read_of_plain_utf8_decodes_as_the_detected_reading(tmp_path: Path, data: bytes) -> None:
    # read_text's one-read path for plain UTF-8 gives what detect_encoding and text mode give
    from monkeyllm_gardener.conversion import ConversionError
    from monkeyllm_gardener.kit.encoding import _read_detected, read_text

    path = tmp_path / "note.md"
    path.write_bytes(data)

    def outcome(read: Any) -> Any:
        try:
            text, warning = read(path)
        except ConversionError as exc:
            return "error", str(exc)
        return text, warning

    assert outcome(read_text) == outcome(_read_detected)
