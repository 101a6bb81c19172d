"""SQL identifiers: when a name may stand bare in SQL, and how to quote it when not.

Every table and column name the engine writes into DDL, a query manual or an example
query goes through ``quote_identifier``, so a column called ``order`` or ``my table``
still produces SQL that runs.
"""
from __future__ import annotations

import re

# SQLite's keyword list (https://sqlite.org/lang_keywords.html, 147 words as of 3.40),
# lowercase. A keyword is always quoted: some parse bare as identifiers thanks to
# SQLite's fallback rules, but which ones differs between versions, so none is trusted.
SQL_KEYWORDS: frozenset[str] = frozenset(
    """
    abort action add after all alter always analyze and as asc attach autoincrement
    before begin between by cascade case cast check collate column commit conflict
    constraint create cross current current_date current_time current_timestamp
    database default deferrable deferred delete desc detach distinct do drop each else
    end escape except exclude exclusive exists explain fail filter first following for
    foreign from full generated glob group groups having if ignore immediate in index
    indexed initially inner insert instead intersect into is isnull join key last left
    like limit match materialized natural no not nothing notnull null nulls of offset on
    or order others outer over partition plan pragma preceding primary query raise range
    recursive references regexp reindex release rename replace restrict returning right
    rollback row rows savepoint select set table temp temporary then ties to transaction
    trigger unbounded union unique update using vacuum values view virtual when where
    window with without
    """.split()
)

_PLAIN_NAME = re.compile(r"[a-z_][a-z0-9_]*")


def is_plain_identifier(name: str) -> bool:
    """True when ``name`` can appear bare in SQL: a lowercase word that is no keyword."""
    return bool(_PLAIN_NAME.fullmatch(name)) and name not in SQL_KEYWORDS


def quote_identifier(name: str) -> str:
    """``name`` unchanged when plain, else double-quoted with inner ``"`` doubled.

    Works for any string (spaces, quotes, emoji, leading digits, keywords), because
    inside double quotes SQLite reads every character literally except ``"``.
    """
    if is_plain_identifier(name):
        return name
    return '"' + name.replace('"', '""') + '"'
