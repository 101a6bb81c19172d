"""Row writes into a dataset payload: the engine side of the ``tend`` primitive.

One INSERT, UPDATE or DELETE (also ``INSERT OR ...`` and ``REPLACE``), run in its
own transaction with a two-second limit; any failure rolls back, so the payload is
byte-for-byte unchanged unless the statement succeeded. Schema changes, pragmas,
attaching files and transaction control are refused, and an UPDATE or DELETE must
say which rows it means with a WHERE clause.

The same work limits and denied functions as ``query`` apply (see sqlquery): no
value, row or statement over 1 MiB, no more result columns than the widest table
(or 256), no ``fts3_tokenizer`` or ``load_extension``. A ``RETURNING`` clause is
drained without being held.
"""
from __future__ import annotations

import os
import sqlite3
from typing import Any

from .sqltext import bare_words, first_word, has_outer_word, split_trailing_semicolon
from ..errors import VineError
from .query import (
    BUSY_TIMEOUT_S,
    DEFAULT_TIMEOUT_S,
    _require_file,
    _tokens_or_invalid,
    apply_work_limits,
    database_uri,
    denied_function,
    statement_deadline,
    timeout_error,
    vine_error_from_sqlite,
)

TEND_VERBS = ("INSERT", "UPDATE", "DELETE", "REPLACE")
TEND_FORBIDDEN_WORDS = frozenset(
    {
        "CREATE", "DROP", "ALTER", "PRAGMA", "ATTACH", "DETACH", "VACUUM", "REINDEX", "ANALYZE",
        "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "TRANSACTION",
    }
)

# Second line of defence behind the word checks: SQLite itself refuses these
# actions while the tended statement is prepared.
_DENIED_ACTIONS = frozenset(
    getattr(sqlite3, name)
    for name in dir(sqlite3)
    if name.startswith(("SQLITE_CREATE_", "SQLITE_DROP_"))
    or name in ("SQLITE_ATTACH", "SQLITE_DETACH", "SQLITE_TRANSACTION", "SQLITE_SAVEPOINT",
                "SQLITE_ALTER_TABLE", "SQLITE_REINDEX", "SQLITE_ANALYZE")
)


def prepare_write_statement(sql: str) -> tuple[str, str]:
    """Check ``sql`` against the tend rules; return (statement, VERB)."""
    if not isinstance(sql, str):
        raise VineError("E_QUERY_INVALID", "the statement must be text", "Pass one INSERT, UPDATE or DELETE statement as a string.")
    sql, tokens, has_inner_semicolon = split_trailing_semicolon(sql, _tokens_or_invalid(sql))
    verb = first_word(tokens)
    if not verb:
        raise VineError("E_QUERY_INVALID", "the statement is empty", "Write one INSERT, UPDATE or DELETE statement.")
    if verb not in TEND_VERBS:
        raise VineError(
            "E_QUERY_FORBIDDEN",
            f"tend runs only INSERT, UPDATE or DELETE statements, not {verb}",
            "tend writes rows (INSERT, INSERT OR REPLACE, REPLACE, UPDATE, DELETE); read with query. The schema of a dataset is fixed at plant.",
        )
    if has_inner_semicolon:
        raise VineError("E_QUERY_FORBIDDEN", "the statement contains ';': one statement per tend", "Send one statement per call, without ';' inside it.")
    for token in bare_words(tokens):
        if token.upper in TEND_FORBIDDEN_WORDS:
            raise VineError(
                "E_QUERY_FORBIDDEN",
                f"{token.upper} is not allowed in tend",
                "tend runs one row write in its own transaction; schema changes, pragmas, attached files and transaction control are refused.",
            )
    if verb in ("UPDATE", "DELETE") and not has_outer_word(tokens, "WHERE"):
        raise VineError(
            "E_QUERY_FORBIDDEN",
            f"{verb} without WHERE would change every row",
            f"Add a WHERE clause naming the rows to {verb.lower()}; if every row is really meant, say so with WHERE 1 = 1.",
        )
    return sql, verb


def run_tend(db_path: str | os.PathLike[str], sql: str, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> tuple[str, int]:
    """Run one row write on ``db_path``; return (VERB, rows_affected).

    VERB is INSERT (also for ``INSERT OR ...``), REPLACE, UPDATE or DELETE.
    Raises VineError E_QUERY_FORBIDDEN, E_QUERY_INVALID, E_TIMEOUT or E_NOT_FOUND;
    on any error the transaction is rolled back and the file is unchanged.
    """
    statement, verb = prepare_write_statement(sql)
    _require_file(db_path)
    guard = {"active": False}

    def refuse_schema_changes(action: int, _arg1: str | None, arg2: str | None, *_: Any) -> int:
        if (guard["active"] and action in _DENIED_ACTIONS) or denied_function(action, arg2):
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    connection = sqlite3.connect(database_uri(db_path, mode="rw"), uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    try:
        apply_work_limits(connection)
        connection.set_authorizer(refuse_schema_changes)
        failure: VineError | None = None
        with statement_deadline(connection, timeout_s) as deadline:
            try:
                connection.execute("BEGIN IMMEDIATE")
                guard["active"] = True
                cursor = connection.execute(statement)
                for _ in cursor:  # drains a RETURNING clause so rowcount is final, holding no row
                    pass
                guard["active"] = False
                affected = cursor.rowcount
                connection.execute("COMMIT")
            except (sqlite3.Error, sqlite3.Warning) as error:
                guard["active"] = False
                connection.set_progress_handler(None, 1)  # the rollback itself must not be interrupted
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                failure = timeout_error(timeout_s) if deadline.expired else vine_error_from_sqlite(connection, statement, error)
        if failure is not None:
            raise failure
    finally:
        connection.close()
    return verb, max(affected, 0)
