"""Read-only SQL over a dataset payload: the engine side of the ``query`` primitive.

Guarantees (ingestion.md, worked example; primitives.md, query):
- one statement starting with SELECT or WITH; a ``;`` inside is refused, and so is
  any of ATTACH DETACH PRAGMA INSERT UPDATE DELETE DROP ALTER CREATE VACUUM REINDEX
  as a bare word (string literals, quoted names and comments do not count);
- the connection is opened ``mode=ro`` through a percent-encoded ``file:`` URI, with
  ATTACH disabled, so neither the statement nor the path can reach another file;
- no outer LIMIT gets ``LIMIT 200`` appended, and ``limited`` says when it bit;
- two seconds, enforced by a progress handler on the connection (E_TIMEOUT);
- bounded memory per value and per result set: the progress handler counts VM
  instructions, and one ``hex(randomblob(450000000))`` is a single instruction that
  ran 20 s and took 2.6 GB, so time alone is no bound. SQLite's own limits are set
  on every connection that runs a caller's statement (``apply_work_limits``,
  shared with ``tend``; the catalog and sample reads keep the defaults): a string or
  blob, a stored row and the statement text stop at ``MAX_VALUE_BYTES`` (1 MiB;
  ``zeroblob``, ``randomblob``, ``hex``, ``replace``, ``group_concat`` and ``||``
  growth fail with E_QUERY_INVALID, ``printf('%.*c', ...)`` past it yields NULL),
  and a result set or subquery has at most ``MIN_COLUMN_LIMIT`` columns or as many
  as the widest table, so ``SELECT b, b, b, ...`` cannot multiply one value by two
  thousand. Rows are fetched one at a time. A stored value over 1 MiB cannot be
  read (a blob's ``length()`` still can). On Python 3.10 (no
  ``Connection.setlimit``) none of these limits apply: values are bounded only by
  SQLite's compiled-in maximum (usually 1 GB) and the deadline. What stays
  open: one call of a function that is quadratic in its inputs (``trim(x, y)``
  with a long ``y``, ``printf('%.*c', n, ...)`` with a huge ``n``) is still one
  instruction the deadline cannot interrupt; only a separate process could be
  killed mid-call;
- functions that reach past the dataset (``fts3_tokenizer``, which takes and
  returns raw pointers, ``load_extension`` and the file functions an extension may
  add) are denied by the authorizer with E_QUERY_FORBIDDEN naming the function;
- the response fits its token budget by dropping whole rows from the tail, and the
  hint then says first that the missing rows matched and exist.
"""
from __future__ import annotations

import json
import math
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .sqltext import (
    SqlTextError,
    Token,
    bare_words,
    first_word,
    has_outer_word,
    significant_tokens,
    split_trailing_semicolon,
    text_without_trailing_comments,
    tokenize,
)
from ..errors import VineError, estimate_tokens
from .sqlnames import SQL_KEYWORDS, quote_identifier

DEFAULT_LIMIT = 200
DEFAULT_TIMEOUT_S = 2.0
DEFAULT_BUDGET_TOKENS = 2000
QUERY_FORBIDDEN_WORDS = frozenset(
    {"ATTACH", "DETACH", "PRAGMA", "INSERT", "UPDATE", "DELETE", "DROP", "ALTER", "CREATE", "VACUUM", "REINDEX"}
)
PROGRESS_STEPS = 1000  # VM instructions between deadline checks: cheap, and well under a millisecond
# One string or blob, one stored row, one statement's text. An answer holds 2,000
# tokens (about 8 KB), so no value it shows comes near this; 1 MiB leaves room for
# intermediate values (a group_concat measured with length()) and keeps one VM
# instruction over such a value at a few milliseconds, so the deadline still bites.
MAX_VALUE_BYTES = 1 << 20
# Result columns per SELECT (raised to the widest table, so SELECT * always works).
# Columns alone fill the budget long before this; the cap bounds the copies of one
# large value a statement can ask for (256 x 1 MiB, not 2,000 x 1 MiB).
MIN_COLUMN_LIMIT = 256
# Functions no query or tend may call: fts3_tokenizer() hands out and accepts raw C
# pointers; the rest read or write files or load code when an extension adds them.
DENIED_FUNCTIONS = frozenset({"fts3_tokenizer", "load_extension", "readfile", "writefile", "edit"})
BUSY_TIMEOUT_S = 2.0
MAX_HINT_CHARS = 1500  # a hint naming every column of a 300-table database would cost more than the query


# --- connections -------------------------------------------------------------


def database_uri(db_path: str | os.PathLike[str], *, mode: str = "ro") -> str:
    """A ``file:`` URI for ``db_path`` with the path percent-encoded.

    Encoding every character outside ``/`` and the unreserved set means a ``#``,
    ``?`` or ``%`` in a folder name stays part of the path instead of starting a
    fragment or a query parameter.
    """
    posix = Path(os.path.abspath(db_path)).as_posix()
    if not posix.startswith("/"):  # a Windows drive path: file:///C:/...
        posix = "/" + posix
    return f"file://{quote(posix, safe='/')}?mode={mode}"


def denied_function(action: int, name: str | None) -> bool:
    """True when an authorizer callback asks to call one of DENIED_FUNCTIONS."""
    return action == sqlite3.SQLITE_FUNCTION and (name or "").lower() in DENIED_FUNCTIONS


def _authorize_read(action: int, _arg1: str | None, arg2: str | None, *_: Any) -> int:
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH) or denied_function(action, arg2):
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def _widest_table(connection: sqlite3.Connection) -> int:
    """The most columns any table or view has (0 when it cannot tell)."""
    try:
        row = connection.execute(
            "SELECT max(n) FROM (SELECT count(*) AS n FROM sqlite_master AS s, pragma_table_info(s.name) "
            "WHERE s.type IN ('table', 'view') GROUP BY s.name)"
        ).fetchone()
        return int(row[0] or 0)
    except sqlite3.Error:  # one broken view fails the join: ask object by object
        pass
    try:
        tables, views = describe_schema(connection)
    except sqlite3.Error:  # not a database at all: the statement will say so
        return 0
    return max((len(columns) for columns in (*tables.values(), *views.values())), default=0)


def apply_work_limits(connection: sqlite3.Connection) -> None:
    """Bound what one statement of a caller's SQL on ``connection`` can build (module doc).

    Only for connections that run a caller's statement (query, tend): the engine's
    own reads (catalog, sample rows) keep SQLite's defaults, and reading the schema
    here would leave -wal/-shm files beside a WAL catalog that is only opened.
    Loads the schema first: SQLite checks the column limit while it parses a table's
    CREATE statement too, so the limit must never be below the widest table. Does
    nothing on Python 3.10, whose sqlite3 has no ``setlimit``.
    """
    if not hasattr(connection, "setlimit"):  # Python 3.10
        return
    connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    connection.setlimit(sqlite3.SQLITE_LIMIT_COLUMN, max(MIN_COLUMN_LIMIT, _widest_table(connection)))
    connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    connection.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, MAX_VALUE_BYTES)


def _require_file(db_path: str | os.PathLike[str]) -> None:
    if not os.path.isfile(db_path):
        raise VineError("E_NOT_FOUND", f"payload {os.fspath(db_path)} does not exist", "The dataset's .db file is missing; run `vine validate` to find payload drift.")


def open_readonly(db_path: str | os.PathLike[str]) -> sqlite3.Connection:
    """A read-only connection to ``db_path`` that cannot attach other files or call denied functions."""
    _require_file(db_path)
    connection = sqlite3.connect(database_uri(db_path, mode="ro"), uri=True, timeout=BUSY_TIMEOUT_S)
    if hasattr(connection, "setlimit"):  # Python 3.11+
        connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    connection.set_authorizer(_authorize_read)
    return connection


class Deadline:
    # a plain class: opening the catalog read-only (this module) must not import dataclasses
    def __init__(self, *, timeout_s: float, started: float) -> None:
        self.timeout_s = timeout_s
        self.started = started
        self.expired = False

    def elapsed_ms(self) -> float:
        return round((time.monotonic() - self.started) * 1000, 2)


@contextmanager
def statement_deadline(connection: sqlite3.Connection, timeout_s: float) -> Iterator[Deadline]:
    """Interrupt any statement on ``connection`` that runs past ``timeout_s``.

    A progress handler runs inside SQLite's VM, so a recursive CTE or a cross join
    is stopped wherever it is, including while rows are being fetched.
    """
    deadline = Deadline(timeout_s=timeout_s, started=time.monotonic())

    def interrupt_when_late() -> int:
        if time.monotonic() - deadline.started > timeout_s:
            deadline.expired = True
            return 1
        return 0

    connection.set_progress_handler(interrupt_when_late, PROGRESS_STEPS)
    try:
        yield deadline
    finally:
        connection.set_progress_handler(None, PROGRESS_STEPS)


# --- error hints -------------------------------------------------------------


def describe_schema(connection: sqlite3.Connection) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(tables, views), each name -> column names; SQLite's internal tables skipped."""
    tables: dict[str, list[str]] = {}
    views: dict[str, list[str]] = {}
    objects = connection.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view') "
        "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid"
    ).fetchall()
    for kind, name in objects:
        try:
            columns = [row[0] for row in connection.execute("SELECT name FROM pragma_table_info(?)", (name,))]
        except sqlite3.Error:  # a view over a table that no longer exists
            columns = []
        (tables if kind == "table" else views)[name] = columns
    return tables, views


def _capped_list(label: str, pieces: list[str], separator: str) -> str:
    text = ""
    for index, piece in enumerate(pieces):
        candidate = piece if not text else text + separator + piece
        if len(candidate) > MAX_HINT_CHARS and text:
            return f"{label}: {text}{separator}and {len(pieces) - index} more (see the Query manual)."
        text = candidate
    return f"{label}: {text}."


def tables_hint(tables: dict[str, list[str]], views: dict[str, list[str]]) -> str:
    if not tables and not views:
        return "This dataset has no tables."
    hint = _capped_list("Tables", [quote_identifier(name) for name in tables], ", ") if tables else "It has no tables."
    if views:
        hint += " " + _capped_list("Views", [quote_identifier(name) for name in views], ", ")
    return hint


def columns_hint(columns_by_table: dict[str, list[str]]) -> str:
    pieces = [
        f"{quote_identifier(table)}({', '.join(quote_identifier(column) for column in columns)})"
        for table, columns in columns_by_table.items()
    ]
    return _capped_list("Columns", pieces, "; ") if pieces else "This dataset has no tables."


def _tables_named_in(tokens: list[Token], missing: str, known: dict[str, list[str]]) -> list[str]:
    """The tables a failing column reference most likely meant.

    ``o.total`` names table ``o`` or the table aliased ``o``; a bare ``total`` means
    the tables the statement mentions. Empty when it cannot tell.
    """
    by_lower = {name.lower(): name for name in known}
    significant = significant_tokens(tokens)
    if "." in missing:
        qualifier = missing.rsplit(".", 1)[0].rsplit(".", 1)[-1].lower()
        if qualifier in by_lower:
            return [by_lower[qualifier]]
        for index, token in enumerate(significant):
            if (token.identifier or "").lower() != qualifier or index == 0:
                continue
            before = significant[index - 1]
            if before.upper == "AS" and index >= 2:
                before = significant[index - 2]
            name = (before.identifier or "").lower()
            if name in by_lower:
                return [by_lower[name]]
    mentioned: list[str] = []
    for token in significant:
        name = (token.identifier or "").lower()
        if name in by_lower and by_lower[name] not in mentioned:
            mentioned.append(by_lower[name])
    return mentioned


def vine_error_from_sqlite(connection: sqlite3.Connection, sql: str, error: BaseException) -> VineError:
    """Turn a SQLite error into E_QUERY_INVALID with a hint naming real tables or columns."""
    message = str(error)
    connection.set_progress_handler(None, PROGRESS_STEPS)  # the hint's own lookups must not be interrupted
    bounded = limit_error(message)
    if bounded is not None:
        return bounded
    if "not authorized" in message:
        return VineError("E_QUERY_FORBIDDEN", f"SQL refused: {message}", "Attaching other databases and changing the schema are not allowed.")
    try:
        tables, views = describe_schema(connection)
    except sqlite3.Error:
        return VineError("E_QUERY_INVALID", f"SQL error: {message}", "The payload could not be read as a SQLite database.")
    known = {**tables, **views}
    try:
        tokens = tokenize(sql)
    except SqlTextError:
        tokens = []
    lowered = message.lower()
    if lowered.startswith("no such table"):
        hint = tables_hint(tables, views)
    elif lowered.startswith("no such column") or lowered.startswith("ambiguous column"):
        missing = message.split(":", 1)[-1].strip()
        named = _tables_named_in(tokens, missing, known) or list(known)
        hint = columns_hint({name: known[name] for name in named})
    elif "syntax error" in lowered or "unrecognized token" in lowered:
        named = _tables_named_in(tokens, "", known) or list(known)
        hint = (
            "Names that are SQL keywords or not plain lowercase words must be double-quoted, "
            'as the Query manual writes them (e.g. "order"). ' + columns_hint({name: known[name] for name in named})
        )
    else:
        hint = tables_hint(tables, views)
    return VineError("E_QUERY_INVALID", f"SQL error: {message}", hint)


DENIED_FUNCTION_HINT = "It reaches outside the dataset (raw pointers, files or extensions); use SQL's ordinary functions."


def limit_error(message: str) -> VineError | None:
    """The error for a statement stopped by a denied function or a work limit, else None."""
    lowered = message.lower()
    cap = f"{MAX_VALUE_BYTES >> 20} MiB"
    if lowered.startswith("not authorized to use function:"):
        name = lowered.split(":", 1)[1].strip()
        return VineError("E_QUERY_FORBIDDEN", f"SQL refused: {name}() is not allowed", DENIED_FUNCTION_HINT)
    if lowered.startswith("unsafe use of"):  # SQLite's own refusal of such a function inside a view or trigger
        return VineError("E_QUERY_FORBIDDEN", f"SQL refused: {message}", DENIED_FUNCTION_HINT)
    if "string or blob too big" in lowered:
        return VineError(
            "E_QUERY_INVALID",
            f"SQL error: a value would exceed {cap} (string or blob too big)",
            f"One string, blob or row is capped at {cap}: build smaller values, or measure with "
            f"length(); a stored text over {cap} cannot be read here.",
        )
    if "query string is too large" in lowered or "statement too long" in lowered:
        return VineError(
            "E_QUERY_INVALID",
            f"SQL error: the statement is longer than {cap}",
            "Send a shorter statement; write many rows over several tend calls.",
        )
    if lowered.startswith("too many columns"):
        return VineError(
            "E_QUERY_INVALID",
            f"SQL error: {message}",
            f"A SELECT returns at most {MIN_COLUMN_LIMIT} columns (or as many as the widest table): "
            "name fewer columns.",
        )
    return None


def timeout_error(timeout_s: float) -> VineError:
    return VineError(
        "E_TIMEOUT",
        f"statement stopped after {timeout_s:g} s",
        "Narrow it with a WHERE filter, aggregate, or add a smaller LIMIT; a recursive CTE needs a stop condition.",
    )


# --- statement checks --------------------------------------------------------


def _tokens_or_invalid(sql: str) -> list[Token]:
    try:
        return tokenize(sql)
    except SqlTextError as error:
        raise VineError("E_QUERY_INVALID", f"SQL error: {error}", "Close every quote: a ' inside a string literal is written ''.") from None


def prepare_read_statement(sql: str, *, limit: int = DEFAULT_LIMIT) -> tuple[str, bool]:
    """Check ``sql`` against the read-only rules; return (statement to run, LIMIT injected?)."""
    if not isinstance(sql, str):
        raise VineError("E_QUERY_INVALID", "the statement must be text", "Pass one SELECT statement as a string.")
    sql, tokens, has_inner_semicolon = split_trailing_semicolon(sql, _tokens_or_invalid(sql))
    first = first_word(tokens)
    if not first:
        raise VineError("E_QUERY_INVALID", "the statement is empty", "Write one SELECT statement; the dataset's Query manual has examples.")
    if first not in ("SELECT", "WITH"):
        code = "E_QUERY_FORBIDDEN" if first.lower() in SQL_KEYWORDS else "E_QUERY_INVALID"
        raise VineError(code, f"query runs only SELECT or WITH statements, not {first}", "query is read-only; rows are written with tend.")
    if has_inner_semicolon:
        raise VineError("E_QUERY_FORBIDDEN", "the statement contains ';': one statement per query", "Send one SELECT per call, without ';' inside it.")
    for token in bare_words(tokens):
        if token.upper in QUERY_FORBIDDEN_WORDS:
            raise VineError(
                "E_QUERY_FORBIDDEN",
                f"{token.upper} is not allowed in a read-only query",
                "query is read-only; rows are written with tend. To use the word as a name, double-quote it.",
            )
    if has_outer_word(tokens, "LIMIT"):
        return sql, False
    return f"{text_without_trailing_comments(sql, tokens)} LIMIT {limit}", True


# --- results and the budget ---------------------------------------------------


def json_safe(value: Any) -> Any:
    """A cell as the response carries it: a blob becomes ``<blob N bytes>``."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<blob {len(value)} bytes>"
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)  # 'inf' / '-inf': JSON has no infinity
    return value


def response_tokens(response: dict[str, Any]) -> int:
    return estimate_tokens(json.dumps(response))


def truncation_hint(*, shown: int, total: int, budget_tokens: int, column_count: int, row_cost: int, limited: bool, limit: int) -> str:
    if shown:
        text = (
            f"Showing {shown} of {total} rows. The other {total - shown} matched your query and exist: "
            f"they were dropped by the {budget_tokens}-token response budget, not by your filter, "
            f"do NOT report these {shown} as the complete result."
        )
    else:
        text = (
            f"Showing 0 of {total} rows. All {total} matched your query and exist: "
            f"they were dropped by the {budget_tokens}-token response budget, not by your filter, "
            f"do NOT report an empty result. One row of this statement costs about {row_cost} tokens, "
            "more than the budget leaves for rows."
        )
    text += f" This statement returns {column_count} column(s); ask again with fewer columns to fit more rows, or aggregate."
    if limited:
        text += f" The statement had no LIMIT, so LIMIT {limit} was added: more rows may match; SELECT COUNT(*) gives the real total."
    return text


def fit_to_budget(
    *, columns: list[str], rows: list[list[Any]], total: int, limited: bool, elapsed_ms: float,
    budget_tokens: int, limit: int = DEFAULT_LIMIT,
) -> dict[str, Any]:
    """The response, with whole rows dropped from the tail until it fits ``budget_tokens``.

    ``rows`` may hold fewer than ``total`` rows when fetching already stopped
    storing them past the budget; those count as dropped.
    """
    response: dict[str, Any] = {"columns": columns, "rows": rows, "row_count": len(rows), "limited": limited, "elapsed_ms": elapsed_ms}
    if len(rows) == total and response_tokens(response) <= budget_tokens:
        return response
    row_chars = [len(json.dumps(row)) for row in rows]
    prefix = [0]
    for chars in row_chars:
        prefix.append(prefix[-1] + chars)
    row_cost = estimate_tokens(json.dumps(rows[0])) if rows else 0

    def truncated(shown: int, with_rows: bool) -> dict[str, Any]:
        hint = truncation_hint(
            shown=shown, total=total, budget_tokens=budget_tokens, column_count=len(columns),
            row_cost=row_cost, limited=limited, limit=limit,
        )
        return {
            "columns": columns, "rows": rows[:shown] if with_rows else [], "row_count": shown,
            "limited": limited, "elapsed_ms": elapsed_ms, "truncated": True, "hint": hint,
        }

    budget_chars = budget_tokens * 4
    shown = len(rows)
    while shown > 0:
        # The serialized size is the skeleton plus the rows and their ", " separators,
        # so each candidate costs one small json.dumps instead of re-serializing rows.
        chars = len(json.dumps(truncated(shown, with_rows=False))) + prefix[shown] + 2 * (shown - 1)
        if chars <= budget_chars:
            break
        shown -= 1
    return truncated(shown, with_rows=True)


def run_query(
    db_path: str | os.PathLike[str],
    sql: str,
    *,
    limit: int = DEFAULT_LIMIT,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
) -> dict[str, Any]:
    """Run one read-only statement; return ``{columns, rows, row_count, limited, elapsed_ms}``.

    Adds ``truncated: True`` and a ``hint`` when rows were dropped by the budget.
    Raises VineError E_QUERY_FORBIDDEN, E_QUERY_INVALID, E_TIMEOUT or E_NOT_FOUND.
    """
    statement, injected = prepare_read_statement(sql, limit=limit)
    connection = open_readonly(db_path)
    try:
        apply_work_limits(connection)
        with statement_deadline(connection, timeout_s) as deadline:
            try:
                cursor = connection.execute(statement)
                columns = [description[0] for description in cursor.description or ()]
                rows: list[list[Any]] = []
                stored_chars = 0
                total = 0
                # One row at a time: a batch of 256 rows of 1 MiB values would hold
                # 256 MiB before the budget could drop any of them.
                for row in cursor:
                    total += 1
                    # Past the budget no further row can be shown, so only count it:
                    # memory stays bounded even under a user's LIMIT 1000000.
                    if stored_chars <= budget_tokens * 4:
                        converted = [json_safe(value) for value in row]
                        stored_chars += len(json.dumps(converted)) + 2
                        rows.append(converted)
            except (sqlite3.Error, sqlite3.Warning) as error:
                if deadline.expired:
                    raise timeout_error(timeout_s) from None
                raise vine_error_from_sqlite(connection, statement, error) from None
            elapsed_ms = deadline.elapsed_ms()
    finally:
        connection.close()
    limited = injected and total == limit
    return fit_to_budget(
        columns=columns, rows=rows, total=total, limited=limited, elapsed_ms=elapsed_ms,
        budget_tokens=budget_tokens, limit=limit,
    )
