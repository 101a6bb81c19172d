"""Typed questions become FTS5 terms that cannot be a syntax error (read/words.py)."""
from __future__ import annotations

import sqlite3

import pytest

from monkeyllm_core.read.words import fold, query_terms, stem
from _read_forest import NASTY


def test_questions_keep_their_content_words_stemmed_as_prefixes():
    terms = query_terms("which region closed the most orders in 2026?")
    assert [t.match() for t in terms] == ['"region"*', '"clos"*', '"order"*', '"2026"']


def test_portuguese_accents_fold_and_plurals_meet_their_singular():
    assert [t.stem for t in query_terms("Relatórios de exportações")] == [t.stem for t in query_terms("relatorio exportacao")]
    assert fold("Preço Açúcar ÉÇÃ") == "preco acucar eca"


def test_only_latin_accents_fold_like_the_index_does():
    assert fold("Привет й") == "привет й"  # the tokenizer keeps Cyrillic as it is
    assert fold("名前") == "名前"


@pytest.mark.parametrize("pair", [("orders", "order"), ("closed", "close"), ("closing", "closed"),
                                  ("policies", "policy"), ("prices", "price"), ("deadlines", "deadline"),
                                  ("exportações", "exportação"), ("vendas", "venda"), ("nacionais", "nacional")])
def test_word_variants_share_a_stem(pair):
    a, b = (query_terms(word)[0].stem for word in pair)
    assert a == b


def test_stems_never_go_under_four_letters_and_numbers_match_whole():
    assert stem("data") == "data" and stem("total") == "total"
    (year,) = query_terms("2026")
    assert year.match() == '"2026"' and not year.prefix
    (short,) = query_terms("usd")
    assert short.match() == '"usd"'


def test_a_query_of_stop_words_still_searches_for_them():
    assert [t.stem for t in query_terms("The Who")] == ["the", "who"]
    assert query_terms("?! -- ...") == []


def test_no_typed_text_is_an_fts_syntax_error():
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(a, tokenize = 'unicode61 remove_diacritics 2')")
    db.execute("INSERT INTO t VALUES ('an order')")
    for text in NASTY:
        terms = query_terms(text)
        for joiner in (" AND ", " OR "):
            if terms:
                db.execute("SELECT * FROM t WHERE t MATCH ?", (joiner.join(t.match() for t in terms),)).fetchall()
