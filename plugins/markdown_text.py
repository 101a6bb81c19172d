"""Built-in converter for markdown and plain text (.md .markdown .txt .text).

The generic fallback for text: registered with a high ``priority`` number so any
other converter claiming these extensions goes first.

Decoding: ``kit.read_text`` (UTF-8, BOMs, UTF-16/32; a legacy 8-bit fallback
is stated in a warning). Newlines become ``\\n``.

Markdown files may carry their own YAML frontmatter (Obsidian, Hugo, Jekyll):
- a leading ``---`` ... ``---`` block that parses as a mapping is taken out of the
  body, so it never reaches the summary (simple ``key: value`` blocks are read
  without the YAML parser, to the same values: ``_simple_frontmatter``);
- ``title`` (a scalar), ``tags`` (a list, or a comma/space separated string; a
  leading ``#`` is dropped) and ``aliases`` (a list or one string) go to
  ``Conversion.frontmatter``, as plain strings; so do the source's dates and author:
  ``created`` (or Hugo/Jekyll's ``date``) and ``modified`` (or ``updated``,
  ``lastmod``) when they are dates or strings (the Gardener keeps only real ISO
  dates), ``author`` when it is a string;
- every other key is never passed on as a passport key (a file's content must not
  become a YAML key of ours). So that nothing is lost, when such keys exist (or a
  known key held a value that was not carried, such as a list of authors) the
  original block is kept verbatim at the end of the body in a fenced ``yaml`` code
  block after an HTML comment saying what it is (the summary deriver skips both);
- a block that does not parse, or is not a mapping, stays in the body as written,
  with a warning when it does not parse.

Title: frontmatter ``title``, else the first H1, else None (the file name).
``.txt``/``.text`` files are kept verbatim: no frontmatter handling, title None.
An empty or whitespace-only file converts to an empty body with an ``empty file``
warning; the Gardener then derives a title-based summary.
"""
from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from monkeyllm_gardener import Conversion, hookimpl
from monkeyllm_gardener.kit import first_h1, read_text, split_frontmatter

MARKDOWN_EXTENSIONS = (".md", ".markdown")
TEXT_EXTENSIONS = (".txt", ".text")
PRIORITY = 100.0  # generic fallback: any converter at the default 0.0 goes first

_TAG_SPLIT = re.compile(r"[,\s]+")
# Frontmatter that ``_simple_frontmatter`` reads without the YAML parser: ``key: value``
# lines at the margin, a value being empty, a plain scalar of letters, digits, ``._/+-``
# and single spaces, or a ``[a, b]`` list of such scalars. Nothing in it can be an
# indicator, a comment, a quote, a tab or a line break YAML knows and Python's split
# does not; a line is at most 1,000 characters, under YAML's 1,024 for a simple key.
_PLAIN = r"[A-Za-z0-9][A-Za-z0-9._/+-]*(?: [A-Za-z0-9._/+-]+)*"
_SIMPLE_LIST = rf"\[(?P<items>{_PLAIN}(?:, {_PLAIN})*)?\]"
_SIMPLE_VALUE = rf"(?P<plain>{_PLAIN})|(?P<list>{_SIMPLE_LIST})"
_SIMPLE_LINE = re.compile(rf"(?P<key>[A-Za-z_][A-Za-z0-9_-]*):(?: +(?:{_SIMPLE_VALUE}))? *")
_SIMPLE_LINE_CHARS = 1_000
# Conversion.frontmatter key -> the source keys that may hold it, first found wins.
_DATE_KEYS = {"created": ("created", "date"), "modified": ("modified", "updated", "lastmod")}


class MarkdownTextConverter:
    name = "markdown"
    extensions = MARKDOWN_EXTENSIONS + TEXT_EXTENSIONS

    def convert(self, path: Path) -> Conversion:
        path = path if isinstance(path, Path) else Path(path)  # the host passes a Path: not parsed again
        text, encoding_warning = read_text(path)
        warnings: list[str] = []
        if encoding_warning:
            warnings.append(f"{path.name}: {encoding_warning}")
        if "\r" in text:  # one search instead of two when there is none (the usual note)
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        text = text.lstrip("\ufeff")
        if not text.strip():
            warnings.append(f"{path.name}: empty file; planted with a summary made from its title")
            return Conversion(kind="markdown", node_type="note", markdown="", warnings=tuple(warnings))
        if path.suffix.lower() in TEXT_EXTENSIONS:
            return Conversion(kind="markdown", node_type="note", markdown=text, warnings=tuple(warnings))

        frontmatter: dict[str, Any] = {}
        body = text
        split = split_frontmatter(text)
        if split is not None:
            block, rest = split
            try:
                data = _simple_frontmatter(block) if block.strip() else {}
                if data is None:
                    data = yaml.safe_load(block)
            except (yaml.YAMLError, ValueError, RecursionError) as exc:
                # ValueError: an integer over Python's 4,300-digit limit; RecursionError:
                # nesting deeper than the parser's stack. Neither is a YAMLError.
                mark = getattr(exc, "problem_mark", None)
                where = f" (line {mark.line + 2})" if mark is not None else ""
                warnings.append(
                    f"{path.name}: its YAML frontmatter does not parse{where}; kept it in the body as text"
                )
                data = None
            if isinstance(data, dict):
                frontmatter, carried = kept_frontmatter(data)
                body = rest.lstrip("\n")
                if any(key not in carried for key in data):
                    body = append_source_frontmatter(body, block)
        title = frontmatter.get("title") or first_h1(body)
        return Conversion(
            kind="markdown",
            node_type="note",
            markdown=body,
            title=title,
            frontmatter=frontmatter,
            warnings=tuple(warnings),
        )


def _simple_frontmatter(block: str) -> dict[Any, Any] | None:
    """What ``yaml.safe_load(block)`` returns, for a block of simple ``key: value``
    lines only (``_SIMPLE_LINE``, the frontmatter most notes carry); None for any
    other block, which the YAML parser reads.

    Parsing is the slow half of ``safe_load`` and the only part skipped: the nodes
    the parser would compose are built here, and SafeLoader's own resolver and
    constructor turn them into values, so ``2024-03-25`` is a date, ``yes`` a bool
    and a repeated key keeps its last value exactly as YAML has it."""
    lines = [line for line in block.split("\n") if line]
    matches = [_SIMPLE_LINE.fullmatch(line) for line in lines if len(line) <= _SIMPLE_LINE_CHARS]
    if len(matches) < len(lines) or None in matches:
        return None
    loader = yaml.SafeLoader("")
    try:
        pairs = [(_plain_node(loader, match["key"]), _value_node(loader, match)) for match in matches]
        return loader.construct_document(MappingNode(loader.resolve(MappingNode, None, True), pairs))
    finally:
        loader.dispose()


def _value_node(loader: yaml.SafeLoader, match: re.Match[str]) -> ScalarNode | SequenceNode:
    if match["list"] is not None:
        items = match["items"].split(", ") if match["items"] else []
        return SequenceNode(loader.resolve(SequenceNode, None, True), [_plain_node(loader, item) for item in items])
    return _plain_node(loader, match["plain"] or "")  # an empty value is YAML's null


def _plain_node(loader: yaml.SafeLoader, value: str) -> ScalarNode:
    return ScalarNode(loader.resolve(ScalarNode, value, (True, False)), value)


def _as_strings(value: Any) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, (list, tuple)) else [value]
    # Nested mappings/lists are not tags or aliases; scalars (numbers, dates) become text.
    return [str(item).strip() for item in items if not isinstance(item, (dict, list, tuple)) and str(item).strip()]


def kept_frontmatter(data: dict[Any, Any]) -> tuple[dict[str, Any], set[Any]]:
    """The passport fields a source declares (title, tags, aliases, created, modified,
    author) and the set of source keys whose values they carry in full."""
    kept: dict[str, Any] = {}
    title = data.get("title")
    if title is not None and not isinstance(title, (dict, list, tuple)) and str(title).strip():
        kept["title"] = " ".join(str(title).split())
    raw_tags = data.get("tags")
    if isinstance(raw_tags, str):
        raw_tags = _TAG_SPLIT.split(raw_tags)
    tags: list[str] = []
    for tag in _as_strings(raw_tags):
        tag = tag.lstrip("#").strip()
        if tag and tag not in tags:
            tags.append(tag)
    if tags:
        kept["tags"] = tags
    aliases: list[str] = []
    for alias in _as_strings(data.get("aliases")):
        alias = " ".join(alias.split())
        if alias not in aliases:
            aliases.append(alias)
    if aliases:
        kept["aliases"] = aliases
    carried = {key for key in ("title", "tags", "aliases") if key in data}
    for field_name, source_keys in _DATE_KEYS.items():
        for key in source_keys:
            if isinstance(data.get(key), (dt.date, str)):  # a datetime is a date too
                kept[field_name] = data[key]
                carried.add(key)
                break
    author = data.get("author")
    if isinstance(author, str) and author.strip():
        kept["author"] = " ".join(author.split())
        carried.add("author")
    return kept, carried


def append_source_frontmatter(body: str, block: str) -> str:
    """``body`` plus the source's own frontmatter, verbatim, in a fenced yaml block."""
    longest = max((len(run) for run in re.findall(r"`+", block)), default=0)
    fence = "`" * max(3, longest + 1)
    block = block if block.endswith("\n") else block + "\n"
    separator = "\n\n" if body.strip() else ""
    return (
        f"{body.rstrip()}{separator}"
        # An HTML comment, not prose, so the summary deriver never picks it up.
        "<!-- the source file's own frontmatter, kept as text (not passport fields) -->\n"
        f"{fence}yaml\n{block}{fence}\n"
    )


@hookimpl
def register_converters(register) -> None:  # type: ignore[no-untyped-def]
    register(MarkdownTextConverter(), priority=PRIORITY)
