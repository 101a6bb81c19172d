"""Commit messages git accepts and a terminal shows safely.

Messages carry user text (a node's title, an id, a caller's ``message=``): a NUL
makes a commit ``git fsck --strict`` rejects (``nulInCommit``); ANSI and OSC escape
sequences and bidi overrides reach ``git log`` and can drive the terminal or
reorder what a person reads; a 100,000-character title would become the subject
line. The Committer passes every message through ``commit_message``, at the lowest
level, so no caller can bypass it. Only the history gets the cleaned copy: the
passport keeps the title verbatim (YAML's safe dumper escapes its control
characters as ``\\0``, ``\\e``, ...).

The rules, in order:

- escape sequences are removed whole (CSI, OSC/DCS/SOS/PM/APC strings and
  two-byte ESC sequences, in their 7-bit and C1 forms), so no ``[31m`` is left behind;
- CR and CR LF, NEL and the Unicode line/paragraph separators become newlines;
  tab, VT and FF become spaces; every other C0/C1 control and DEL is dropped;
- bidi controls (U+061C, U+200E/F, U+202A-202E, U+2066-2069) are dropped;
- lone surrogates (from non-UTF-8 file names) become U+FFFD: the bytes are UTF-8;
- the subject, git's first paragraph, is one line of at most ``SUBJECT_MAX``
  characters; the body keeps its lines; the whole message is at most
  ``MESSAGE_MAX`` characters. A cut ends with ``…``.
"""
from __future__ import annotations

import re

SUBJECT_MAX = 120
MESSAGE_MAX = 10_000
ELLIPSIS = "\u2026"

# OSC, DCS, SOS, PM, APC: a string up to BEL or ST (ESC \ or U+009C); checked first,
# since ESC ] would otherwise match as a two-byte sequence and leave the string behind
_CONTROL_STRING = re.compile(r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)")
_CSI = re.compile(r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]")
_ESCAPE = re.compile(r"\x1b[\x20-\x2f]*[\x30-\x7e]")
_LINE_BREAKS = re.compile(r"\r\n?|[\x85\u2028\u2029]")
_SPACES = re.compile(r"[\t\x0b\x0c]")
_CONTROLS = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")
_BIDI = re.compile(r"[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_SURROGATES = re.compile(r"[\ud800-\udfff]")
_RUNS_OF_SPACES = re.compile(r" {2,}")


def clean_text(text: str) -> str:
    """``text`` without escape sequences, control characters (newline aside) or
    bidi controls, as valid UTF-8. Printable ASCII, most titles, ids and subjects,
    holds nothing the rules remove (escapes start with a control, line breaks and
    tabs are controls, bidi marks and surrogates are not ASCII): it is returned as
    it is, without the eight passes."""
    if text.isascii() and text.isprintable():
        return text
    return _by_the_rules(text)


def _by_the_rules(text: str) -> str:
    text = _CONTROL_STRING.sub("", text)
    text = _CSI.sub("", text)
    text = _ESCAPE.sub("", text)
    text = _LINE_BREAKS.sub("\n", text)
    text = _SPACES.sub(" ", text)
    text = _CONTROLS.sub("", text)
    text = _BIDI.sub("", text)
    return _SURROGATES.sub("\ufffd", text)


def one_line(text: object) -> str:
    """Cleaned ``text`` on one line: every run of whitespace becomes one space. The
    one rule for user text shown on a line of its own: a commit subject (a title, so
    a newline in it does not end the subject early), a branch entry line or quote
    repeating a summary, a title or summary the Gardener derives from a file."""
    return " ".join(clean_text(str(text)).split())


def commit_message(message: str) -> str:
    """The message a commit stores: cleaned, a one-line bounded subject, then the
    body (if any) after a blank line, bounded too; no final newline."""
    lines = [line.rstrip() for line in clean_text(message).split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    end = lines.index("") if "" in lines else len(lines)
    subject = _RUNS_OF_SPACES.sub(" ", " ".join(line.strip() for line in lines[:end])) or "(no subject)"
    subject = _cut(subject, SUBJECT_MAX)
    body = _collapse_blank_lines(lines[end:])
    if not body:
        return subject
    return subject + "\n\n" + _cut_lines(body, MESSAGE_MAX - len(subject) - 2)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + ELLIPSIS


def _collapse_blank_lines(lines: list[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    while out and not out[-1]:
        out.pop()
    return out


def _cut_lines(lines: list[str], limit: int) -> str:
    """The body's lines up to ``limit`` characters; whole lines where they fit, so
    a list of paths is cut between two paths, not in one."""
    text = "\n".join(lines)
    if len(text) <= limit:
        return text
    kept = text[:limit - 2]
    if "\n" in kept:
        kept = kept[:kept.rindex("\n")]
    return _cut(kept, limit - 2) + "\n" + ELLIPSIS
