"""Library chatter caught while a converter runs: Python warnings (openpyxl's
``UserWarning``s) and anything printed to ``sys.stdout``/``sys.stderr`` (debug
prints). It becomes one-line warnings of that file's report entry instead of
text on the terminal, so ``vine adopt --json`` prints one JSON document and
nothing else on stdout (the CLI also keeps file descriptor 1 for the report, for
output that bypasses ``sys.stdout``).
"""
from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Iterator

MAX_LINE = 160
MAX_LINES = 5


@contextlib.contextmanager
def captured_chatter() -> Iterator[list[str]]:
    """Yields a list that, once the block ends, holds what was said, one line each
    (deduplicated, at most ``MAX_LINES``, each cut to ``MAX_LINE`` characters)."""
    said: list[str] = []
    printed = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, \
            contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        warnings.simplefilter("always")
        try:
            yield said
        finally:
            lines = [f"{w.category.__name__}: {w.message}" for w in caught]
            lines += [line for line in printed.getvalue().splitlines()]
            for line in lines:
                line = " ".join(line.split())
                if len(line) > MAX_LINE:
                    line = line[: MAX_LINE - 1] + "…"
                if line and line not in said:
                    said.append(line)
            if len(said) > MAX_LINES:
                more = len(said) - MAX_LINES
                del said[MAX_LINES:]
                said.append(f"... and {more} more message(s)")
