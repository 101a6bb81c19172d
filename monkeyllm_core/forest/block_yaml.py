"""A passport's YAML written in Python, byte for byte what PyYAML's libyaml dumper writes.

The writer renders a node's passport on every plant, and ``yaml.dump`` costs about
0.3 ms for the fifteen keys an adopted node has: most of it building PyYAML's
representer nodes and events, not libyaml's writing. The passports a writer makes
are few shapes: a block mapping of strings, numbers, dates, booleans, lists of those
and small link mappings. For those shapes this module applies libyaml's own rules
(``yaml_emitter_analyze_scalar`` and ``yaml_emitter_select_scalar_style`` in
libyaml's ``emitter.c``, with the dump options of ``passport._dump``: block style,
``allow_unicode``, a width no line reaches) and PyYAML's own resolver, so a string
is plain exactly when PyYAML writes it plain and single-quoted otherwise.

Anything outside those shapes returns None and the caller dumps with PyYAML: a
string with a line break, a tab, a control or non-BMP character or a BOM (libyaml
writes those double-quoted or across lines), a very long string (libyaml folds a
line past its width), a key longer than a simple key may be, a list inside a list,
a subclass of a built-in type, or one list, mapping or date object under two keys
(PyYAML writes an anchor and an alias). ``tests/core/test_block_yaml.py`` holds the
two to the same bytes on many generated values.
"""
from __future__ import annotations

import datetime as dt
import re
from typing import Any, Callable

# libyaml's IS_PRINTABLE without its line breaks (\n \r \x85 \u2028 \u2029): every
# other character sends a string to double quotes. No tab, no U+FEFF, nothing past
# the BMP (libyaml escapes those; PyYAML's pure-Python emitter does not, which is
# why this module is used with the libyaml dumper only).
_OUTSIDE_PLAIN_OR_SINGLE = re.compile("[^\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]")
# What makes libyaml's analysis forbid a plain scalar in block context, once the
# characters above are ruled out: a leading or trailing space, a document marker,
# an indicator first, ': ' (or ':' last) anywhere, ' #' anywhere.
_NOT_PLAIN = re.compile(r"""^(?:[-?:](?: |$)|[#,\[\]{}&*!|>'"%@`]|---|\.\.\.| )| $|: |:$| #""")
# Far below the dump's width (1,000,000 columns), past which libyaml folds a line.
_LONGEST = 100_000
_SHORT, _SHORT_KEPT = 64, 4096  # strings this long or shorter are remembered, this many at most
_SIMPLE_KEY_BYTES = 128  # libyaml's yaml_emitter_check_simple_key: longer keys are written '? key'

_STR = "tag:yaml.org,2002:str"
_TYPED_TAGS = {bool: "tag:yaml.org,2002:bool", int: "tag:yaml.org,2002:int",
               float: "tag:yaml.org,2002:float", type(None): "tag:yaml.org,2002:null",
               dt.date: "tag:yaml.org,2002:timestamp"}


class BlockYaml:
    """Renders a mapping as ``yaml.dump(..., Dumper=CSafeDumper, sort_keys=False,
    allow_unicode=True, default_flow_style=False, width=1_000_000)`` does, or says
    it cannot (None)."""

    def __init__(self, implicit_resolvers: dict[Any, list[tuple[str, Any]]]) -> None:
        """``implicit_resolvers``: the dumper's ``yaml_implicit_resolvers`` (first
        character -> [(tag, pattern)]), which decide what a plain scalar would load as."""
        wildcard = list(implicit_resolvers.get(None, []))
        self._wildcard = tuple(wildcard)
        self._by_first = {first: tuple(resolvers + wildcard)
                          for first, resolvers in implicit_resolvers.items() if first is not None}
        # short strings recur (keys, types, dates, sources): their YAML is remembered
        self._short: dict[str, str | None] = {}

    def _implicit_tag(self, text: str) -> str:
        """The tag PyYAML's resolver gives ``text`` written plain."""
        for tag, pattern in self._by_first.get(text[:1], self._wildcard):
            if pattern.match(text):
                return tag
        return _STR

    def _string(self, value: str) -> str | None:
        short = len(value) <= _SHORT
        if short and value in self._short:
            return self._short[value]
        if len(value) > _LONGEST or _OUTSIDE_PLAIN_OR_SINGLE.search(value):
            text = None
        elif not value or _NOT_PLAIN.search(value) or self._implicit_tag(value) != _STR:
            text = "'" + value.replace("'", "''") + "'"
        else:
            text = value
        if short:
            if len(self._short) >= _SHORT_KEPT:
                self._short.clear()
            self._short[value] = text
        return text

    def _typed(self, value: Any, kind: type, seen: set[int]) -> str | None:
        """A scalar PyYAML represents with its own tag: plain when the resolver gives
        that tag back (else PyYAML would write the tag: not handled here)."""
        if kind is bool:
            text = "true" if value else "false"
        elif kind is int:
            text = str(value)
        elif kind is float:
            text = _float_text(value)
        elif kind is dt.date:
            if not _first_visit(value, seen):
                return None  # PyYAML would write an alias
            text = value.isoformat()
        else:
            text = "null"
        if _NOT_PLAIN.search(text) or self._implicit_tag(text) != _TYPED_TAGS[kind]:
            return None
        return text

    def _scalar(self, value: Any, seen: set[int]) -> str | None:
        kind = type(value)
        if kind is str:
            return self._string(value)
        if kind in _TYPED_TAGS:
            return self._typed(value, kind, seen)
        return None

    def _key(self, key: Any) -> str | None:
        if type(key) is not str or len(key.encode("utf-8")) > _SIMPLE_KEY_BYTES:
            return None
        return self._string(key)

    def _flat_mapping(self, mapping: dict[Any, Any], indent: str, first_indent: str,
                      seen: set[int]) -> list[str] | None:
        """A mapping of scalars, its first line after ``first_indent``."""
        lines = []
        for key, value in mapping.items():
            key_text, text = self._key(key), self._scalar(value, seen)
            if key_text is None or text is None:
                return None
            lines.append(f"{first_indent if not lines else indent}{key_text}: {text}\n")
        return lines

    def _sequence(self, items: list[Any], seen: set[int]) -> list[str] | None:
        """A block sequence under a top-level key: libyaml writes it indentless."""
        lines: list[str] = []
        for item in items:
            kind = type(item)
            if kind is dict:
                if not _first_visit(item, seen):
                    return None
                if not item:
                    lines.append("- {}\n")
                    continue
                entry = self._flat_mapping(item, "  ", "- ", seen)
                if entry is None:
                    return None
                lines += entry
            elif kind is list:
                if item or not _first_visit(item, seen):
                    return None  # a list inside a list: left to PyYAML
                lines.append("- []\n")
            else:
                text = self._scalar(item, seen)
                if text is None:
                    return None
                lines.append(f"- {text}\n")
        return lines

    def render(self, mapping: dict[Any, Any]) -> str | None:
        """The YAML of a non-empty top-level mapping, or None for a shape not proven here."""
        seen: set[int] = set()  # ids of the lists, mappings and dates met: a second meeting is an alias
        out: list[str] = []
        for key, value in mapping.items():
            key_text = self._key(key)
            if key_text is None:
                return None
            kind = type(value)
            if kind is list or kind is dict:
                if not _first_visit(value, seen):
                    return None
                if not value:
                    out.append(f"{key_text}: {'[]' if kind is list else '{}'}\n")
                    continue
                lines = (self._sequence(value, seen) if kind is list
                         else self._flat_mapping(value, "  ", "  ", seen))
                if lines is None:
                    return None
                out.append(f"{key_text}:\n")
                out += lines
            else:
                text = self._scalar(value, seen)
                if text is None:
                    return None
                out.append(f"{key_text}: {text}\n")
        return "".join(out) if out else None


def _first_visit(obj: Any, seen: set[int]) -> bool:
    if id(obj) in seen:
        return False
    seen.add(id(obj))
    return True


def _float_text(value: float) -> str:
    """``SafeRepresenter.represent_float``'s text."""
    if value != value:
        return ".nan"
    if value == float("inf"):
        return ".inf"
    if value == -float("inf"):
        return "-.inf"
    text = repr(value).lower()
    if "." not in text and "e" in text:  # 1e17 is no YAML float: PyYAML writes 1.0e17
        text = text.replace("e", ".0e", 1)
    return text


def block_yaml_renderer(dumper: Any) -> Callable[[dict[Any, Any]], str | None] | None:
    """A renderer for ``dumper``'s output, or None when the dumper is not libyaml's
    safe dumper (whose rules this module follows)."""
    import yaml
    if getattr(yaml, "CSafeDumper", None) is not dumper:
        return None
    return BlockYaml(dumper.yaml_implicit_resolvers).render
