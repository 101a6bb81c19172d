"""How a failure reads in one line of the run report or of ``vine plugins``.

The report lists one line per failed file, so an exception becomes one line: the
engine's own errors as the CLI prints them (code, message, hint), a converter's
``ConversionError`` as its author wrote it, anything else led by its type so
``KeyError: 'customer_id'`` still says what happened. What a plugin raised may
quote a whole file or a tool's output, so that text is cut to ``MAX_ERROR_CHARS``.
"""
from __future__ import annotations

from monkeyllm_core import VineError

MAX_ERROR_CHARS = 300


def bounded_line(text: str) -> str:
    """The first line of ``text``, stripped, at most ``MAX_ERROR_CHARS`` characters
    (a cut one ends with ``...``)."""
    lines = str(text).strip().splitlines()
    first = lines[0].strip() if lines else ""
    return first if len(first) <= MAX_ERROR_CHARS else first[: MAX_ERROR_CHARS - 3] + "..."


def error_line(exc: BaseException) -> str:
    """``exc`` as one report line (see the module docstring)."""
    if isinstance(exc, VineError):
        return exc.one_line()  # ours: written to be read whole, hint included
    from .conversion import ConversionError  # here: importing this module costs no dataclasses
    first = bounded_line(str(exc))
    if isinstance(exc, ConversionError):
        return first
    return bounded_line(f"{type(exc).__name__}: {first}" if first else type(exc).__name__)
