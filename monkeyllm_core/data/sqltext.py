"""A small SQL tokenizer: enough to see a statement's words outside literals.

``query`` and ``tend`` decide what a statement may do by its words: the first one,
any forbidden one, a ``;``, an outer ``LIMIT`` or ``WHERE``. Those checks must not be
fooled by a word inside a string literal (``'please DROP by'``), a quoted identifier
(a column named ``"delete"``) or a comment, so they run over these tokens, never over
the raw text. SQLite still parses the statement itself; this only classifies it.
"""
from __future__ import annotations

from typing import Literal, NamedTuple

TokenKind = Literal["word", "quoted", "string", "number", "punct", "comment", "space"]


class SqlTextError(ValueError):
    """The text cannot be tokenized (an unterminated string or quoted name)."""


class Token(NamedTuple):
    kind: TokenKind
    text: str
    start: int
    end: int
    depth: int  # parenthesis depth before this token; 0 is the outer statement

    @property
    def upper(self) -> str:
        return self.text.upper()

    @property
    def significant(self) -> bool:
        return self.kind not in ("comment", "space")

    @property
    def identifier(self) -> str | None:
        """The name this token spells when it is a bare or quoted identifier."""
        if self.kind == "word":
            return self.text
        if self.kind == "quoted":
            body, closer = self.text[1:-1], self.text[-1]
            return body.replace(closer * 2, closer) if closer in "\"`" else body
        return None


_QUOTE_CLOSERS = {"'": "'", '"': '"', "`": "`", "[": "]"}


def _is_word_start(char: str) -> bool:
    return char.isalpha() or char == "_" or ord(char) > 127


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char in "_$" or ord(char) > 127


def _quoted_end(sql: str, start: int) -> int:
    """Index after the literal opened at ``start``; a doubled closer stays inside."""
    closer = _QUOTE_CLOSERS[sql[start]]
    index = start + 1
    while True:
        found = sql.find(closer, index)
        if found < 0:
            what = "string literal" if closer == "'" else "quoted name"
            raise SqlTextError(f"unterminated {what} starting at character {start + 1}")
        if closer != "]" and sql.startswith(closer * 2, found):
            index = found + 2
            continue
        return found + 1


def tokenize(sql: str) -> list[Token]:
    """Split ``sql`` into tokens; raise SqlTextError on an unterminated literal.

    An unterminated ``/* comment`` runs to the end of the text, as in SQLite.
    """
    tokens: list[Token] = []
    depth = 0
    index = 0
    length = len(sql)
    while index < length:
        char = sql[index]
        kind: TokenKind
        if char.isspace():
            end = index + 1
            while end < length and sql[end].isspace():
                end += 1
            kind = "space"
        elif sql.startswith("--", index):
            newline = sql.find("\n", index)
            end = length if newline < 0 else newline
            kind = "comment"
        elif sql.startswith("/*", index):
            close = sql.find("*/", index + 2)
            end = length if close < 0 else close + 2
            kind = "comment"
        elif char in _QUOTE_CLOSERS:
            end = _quoted_end(sql, index)
            kind = "string" if char == "'" else "quoted"
        elif char.isdigit() or (char == "." and index + 1 < length and sql[index + 1].isdigit()):
            end = index + 1
            while end < length and (_is_word_char(sql[end]) or sql[end] == "."):
                end += 1
            kind = "number"
        elif _is_word_start(char):
            end = index + 1
            while end < length and _is_word_char(sql[end]):
                end += 1
            kind = "word"
        else:
            end = index + 1
            kind = "punct"
        if kind == "punct" and char == ")":
            depth = max(depth - 1, 0)
        tokens.append(Token(kind=kind, text=sql[index:end], start=index, end=end, depth=depth))
        if kind == "punct" and char == "(":
            depth += 1
        index = end
    return tokens


def significant_tokens(tokens: list[Token]) -> list[Token]:
    return [token for token in tokens if token.significant]


def first_word(tokens: list[Token]) -> str:
    """The statement's first significant token, uppercased ("" when there is none)."""
    for token in tokens:
        if token.significant:
            return token.upper
    return ""


def bare_words(tokens: list[Token]) -> list[Token]:
    """Unquoted words outside literals and comments: the only place a keyword acts."""
    return [token for token in tokens if token.kind == "word"]


def split_trailing_semicolon(sql: str, tokens: list[Token]) -> tuple[str, list[Token], bool]:
    """Drop one ``;`` that ends the statement (only comments/space may follow it).

    Returns the text and tokens without it, plus whether another ``;`` remains,
    which means the text holds more than one statement.
    """
    significant = significant_tokens(tokens)
    if significant and significant[-1].text == ";":
        last = significant[-1]
        sql = sql[: last.start]
        tokens = [token for token in tokens if token.end <= last.start]
    has_inner = any(token.kind == "punct" and token.text == ";" for token in tokens)
    return sql, tokens, has_inner


def text_without_trailing_comments(sql: str, tokens: list[Token]) -> str:
    """The text up to its last significant token, so appended SQL is never commented out."""
    significant = significant_tokens(tokens)
    return sql[: significant[-1].end] if significant else ""


def has_outer_word(tokens: list[Token], word: str) -> bool:
    """True when the bare ``word`` appears at parenthesis depth 0."""
    return any(token.depth == 0 and token.upper == word for token in bare_words(tokens))
