from __future__ import annotations

import sqlite3

import pytest

from monkeyllm_core.data.sqltext import SqlTextError, bare_words, has_outer_word, tokenize
from monkeyllm_core.data.sqlnames import SQL_KEYWORDS, is_plain_identifier, quote_identifier

AWKWARD_TABLE_NAMES = [
    "order", "group", "select", "my table", "2026 sales", 'a"b', '""', "🍌 bananas",
    "Upper", "tab\tname", "semi;colon", "dash-name", "a`b", "[x]", "'quoted'", "x.y", " ",
]


def test_keyword_list_is_sqlites_lowercase_list():
    assert len(SQL_KEYWORDS) == 147
    assert {"order", "group", "select", "where", "returning", "materialized"} <= SQL_KEYWORDS
    assert all(word == word.lower() for word in SQL_KEYWORDS)


@pytest.mark.parametrize("name", ["orders", "total_usd", "_private", "a1", "value_cents"])
def test_plain_names_stay_bare(name):
    assert is_plain_identifier(name)
    assert quote_identifier(name) == name


@pytest.mark.parametrize("name", ["order", "group", "Orders", "1st", "my col", "", "ação"])
def test_keywords_and_non_plain_names_are_not_plain(name):
    assert not is_plain_identifier(name)
    assert quote_identifier(name).startswith('"')


def test_inner_double_quote_is_doubled():
    assert quote_identifier('a"b') == '"a""b"'


@pytest.mark.parametrize("name", AWKWARD_TABLE_NAMES)
def test_quoted_names_round_trip_through_sqlite_as_table_and_column(name):
    connection = sqlite3.connect(":memory:")
    quoted = quote_identifier(name)
    connection.execute(f"CREATE TABLE {quoted} ({quoted} TEXT)")
    connection.execute(f"INSERT INTO {quoted} VALUES ('v')")
    cursor = connection.execute(f"SELECT {quoted} FROM {quoted}")
    assert cursor.description[0][0] == name
    assert cursor.fetchall() == [("v",)]


def test_every_keyword_works_as_a_column_once_quoted():
    connection = sqlite3.connect(":memory:")
    columns = ", ".join(quote_identifier(word) for word in sorted(SQL_KEYWORDS))
    connection.execute(f"CREATE TABLE t ({columns})")
    names = [row[1] for row in connection.execute("PRAGMA table_info(t)")]
    assert names == sorted(SQL_KEYWORDS)


def test_tokenizer_hides_words_inside_literals_quotes_and_comments():
    sql = "SELECT 'drop table x', \"delete\", [update] /* insert */ FROM t -- pragma"
    assert [token.upper for token in bare_words(tokenize(sql))] == ["SELECT", "FROM", "T"]


def test_tokenizer_tracks_parenthesis_depth_for_outer_words():
    tokens = tokenize("WITH a AS (SELECT 1 LIMIT 3) SELECT * FROM a")
    assert not has_outer_word(tokens, "LIMIT")
    assert has_outer_word(tokenize("SELECT * FROM (SELECT 1) LIMIT 3"), "LIMIT")


def test_doubled_quotes_stay_inside_a_literal():
    tokens = tokenize("SELECT 'it''s; fine' AS x")
    assert [token.text for token in tokens if token.kind == "string"] == ["'it''s; fine'"]


def test_unterminated_string_is_an_error():
    with pytest.raises(SqlTextError):
        tokenize("SELECT 'open")
