"""sniff's folding: case and accents go, lines and the way back to the original stay."""
from __future__ import annotations

import sqlite3

from monkeyllm_core.read.folding import _fold_char, fold, original_span
from monkeyllm_core.read.wordplan import Piece, pieces_of, word_lines


def test_case_and_accents_fold_away():
    assert fold("Relatório de Exportações") == "relatorio de exportacoes"
    assert fold("NF-4412") == "nf-4412"
    assert fold("ÀÉÎÕÜ çÇ ñ") == "aeiou cc n"


def test_full_case_folding_and_compatibility_forms():
    assert fold("Straße") == "strasse" == fold("STRASSE")
    assert fold("ﬁle") == "file"              # a ligature is its letters
    assert fold("ＡＢＣ１２３") == "abc123"      # full-width forms
    assert fold("İstanbul") == "istanbul"     # case folding's dot above is a mark too


def test_a_decomposed_accent_folds_like_a_precomposed_one():
    assert fold("cafe\u0301") == fold("café") == "cafe"


def test_hangul_and_cjk_keep_their_characters():
    assert fold("한국") == "한국"
    assert "하" not in fold("한")  # a syllable is not its jamo
    assert fold("東京都の会社") == "東京都の会社"


def test_folding_never_makes_or_removes_a_line_break():
    for code in range(0x10000):  # the BMP: all of Unicode takes seconds
        if 0xD800 <= code <= 0xDFFF:
            continue
        ch = chr(code)
        assert ("\n" in fold(ch)) == (ch == "\n"), hex(code)


def test_the_fast_fold_is_the_per_character_fold_over_the_bmp():
    for code in range(0x80, 0x10000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        ch = chr(code)
        assert fold(ch) == _fold_char(ch), hex(code)
        assert fold(fold(ch)) == fold(ch), hex(code)  # a fold is a fixed point
    assert fold("ΟΔΟΣ ΣΑΣ") == _fold_char("ο") + "δοσ σασ"  # a final sigma is a sigma


def test_folding_a_line_is_folding_its_characters():
    line = "Relatório — Straße ﬁ cafe\u0301 ＡＢ 한국"
    assert fold(line) == "".join(fold(ch) for ch in line)


def test_a_folded_span_maps_back_to_the_original_characters():
    line = "A Straße near the Café"
    folded = fold(line)
    start = folded.index("cafe")
    assert line[slice(*original_span(line, start, start + 4))] == "Café"
    start = folded.index("strasse")
    assert line[slice(*original_span(line, start, start + 7))] == "Straße"
    start = folded.index("ss")  # half of what ß folds to still points at ß
    assert line[slice(*original_span(line, start, start + 1))] == "ß"


def test_words_are_what_the_fts5_ascii_tokenizer_cuts():
    text = fold("Relatório—São Paulo NF-4412 a_b \u00a0x\u3000y 東京都の会社 emoji🙂ok ÀÉ ﬁle "
                "Straße x\x00z tab\there ÿ.ž R$ 1.234,56 e-mail (x) a/b")
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(w, tokenize = 'ascii', detail = none)")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, row)")
    db.execute("INSERT INTO t VALUES (?)", (text,))
    assert {row[0] for row in db.execute("SELECT term FROM v")} == set(word_lines(text))


def test_a_term_says_which_words_a_body_holding_it_holds():
    assert pieces_of("nf-4412") == [Piece(word="nf", kind="suffix"), Piece(word="4412", kind="prefix")]
    assert pieces_of("xchang") == [Piece(word="xchang", kind="infix")]
    assert pieces_of("-4412-") == [Piece(word="4412", kind="exact")]
    assert pieces_of("of the year") == [Piece(word="of", kind="suffix"), Piece(word="the", kind="exact"),
                                        Piece(word="year", kind="prefix")]
    assert pieces_of("->") == []
