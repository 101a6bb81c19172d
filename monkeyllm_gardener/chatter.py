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
from collections.abc import Iterable, Iterator

MAX_LINE = 200
MAX_LINES = 5
# how libraries decorate a log line (xlrd: "WARNING *** ..."): the report says who spoke
_MARKERS = ("WARNING *** ", "NOTE *** ", "ERROR *** ", "*** ")


def bounded_lines(messages: Iterable[object]) -> tuple[list[str], int]:
    """What a library said as report lines: one line each, its log markers dropped,
    deduplicated, each cut to ``MAX_LINE`` characters, at most ``MAX_LINES`` of them.
    Returns (lines, how many more were left out). The one rule for library chatter:
    the host's safety net below and converters that capture their library's log
    themselves (the workbook converters) both use it."""
    seen: list[str] = []
    for message in messages:
        text = " ".join(str(message).split()).lstrip("*# ").strip()
        for marker in _MARKERS:
            text = text.removeprefix(marker)
        if not text:
            continue
        if len(text) > MAX_LINE:
            text = text[: MAX_LINE - 1] + "…"
        if text not in seen:
            seen.append(text)
    return seen[:MAX_LINES], max(len(seen) - MAX_LINES, 0)


@contextlib.contextmanager
def captured_chatter() -> Iterator[list[str]]:
    """Yields a list that, once the block ends, holds what was said (``bounded_lines``,
    plus "... and N more message(s)" when some were left out)."""
    said: list[str] = []
    printed = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, \
            contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        warnings.simplefilter("always")
        try:
            yield said
        finally:
            messages = [f"{w.category.__name__}: {w.message}" for w in caught]
            messages += printed.getvalue().splitlines()
            lines, more = bounded_lines(messages)
            said += lines
            if more:
                said.append(f"... and {more} more message(s)")
