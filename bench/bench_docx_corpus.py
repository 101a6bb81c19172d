#!/usr/bin/env python3
"""Benchmark: how many of a Word document's words reach its node (issue 9).

    .venv/bin/python bench/bench_docx_corpus.py DIR [--no-markitdown]

Every ``.docx`` under DIR (recursively) is adopted by the real pipeline
(``Gardener(forest).adopt``, in-process, into a fresh forest under a temporary
folder), and, when markitdown is installed and not switched off, converted by
markitdown in the same run. For each file it prints:

- the words in the document's text parts: every ``w:t`` of the body (text boxes
  included, a box's VML fallback copy left out), the headers, footers (a text that
  several header or footer parts repeat counts once), footnotes, endnotes and
  comments, read straight from the zip (the converter's code is not
  used to count, so a part it forgets is a part it loses);
- the share of those words found in the planted node's body (``ours``) and in
  markitdown's markdown (``markitdown``). A word counts as kept as many times as it
  appears in both (multiset intersection), case-folded; words are runs of letters
  and digits. Emphasis markers and backslash escapes are removed from the markdown
  first (``abc**de**fg`` is the one word a reader sees), an escaped ``\\*`` counts
  as the separator it is in the document. Text a reader no longer
  sees (tracked deletions, text moved away) is not counted;
- where the file landed when it was not planted, and the report's warnings.

A summary line follows: files, words, planted, failures, the lowest and the mean
share per file and the share of all words for both converters, and the files where
ours keeps fewer words than markitdown.
``document_words`` and ``kept_share`` are imported by the tests.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import re
import sys
import tempfile
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

from lxml import etree

_WORD = re.compile(r"[^\W_]+")
_TEXT_PART = re.compile(r"^word/(document|header\d*|footer\d*|footnotes|endnotes|comments)\.xml$")
_MAIN = ("http://schemas.openxmlformats.org/wordprocessingml/2006/main",
         "http://purl.oclc.org/ooxml/wordprocessingml/main")
_MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
# Elements that end a word where they stand (a paragraph, a tab, a note mark, ruby).
_SEPARATORS = {"p", "tab", "ptab", "br", "cr", "footnoteReference", "endnoteReference", "rt", "rubyBase"}
# Emphasis markers can sit inside a word (abc**de**fg): a reader sees one word.
_EMPHASIS = re.compile(r"\*+|~~|</?u>|\\(?=[^\w\s])")
# A literal * the converter escaped separates words, as it does in the document.
_ESCAPED_STAR = re.compile(r"\\\*")
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


def words(text: str) -> Counter[str]:
    return Counter(_WORD.findall(text.casefold()))


def document_words(path: Path) -> Counter[str]:
    """The words of every text part of a .docx (see the module docstring)."""
    found: Counter[str] = Counter()
    running_texts: set[str] = set()
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            match = _TEXT_PART.match(name)
            if not match:
                continue
            text = " ".join(_text_pieces(etree.fromstring(archive.read(name), _PARSER)))
            if match.group(1).startswith(("header", "footer")):
                # Each distinct header or footer is written once (odd and even pages alike).
                if " ".join(text.split()) in running_texts:
                    continue
                running_texts.add(" ".join(text.split()))
            found += words(text)
    return found


def _text_pieces(element: Any) -> list[str]:
    """``w:t`` texts in order; a paragraph, tab or break separates words."""
    out: list[str] = []

    def walk(node: Any) -> None:
        tag = node.tag if isinstance(node.tag, str) else ""
        namespace, _, local = tag[1:].partition("}")
        if namespace == _MC and local == "Fallback":
            return  # the same content again, for older readers
        if namespace in _MAIN and local in ("moveFrom", "del"):
            return  # tracked changes: text no longer in the document
        if namespace in _MAIN and local == "t":
            out.append(node.text or "")
            return
        if namespace in _MAIN and local in _SEPARATORS:
            out.append(" ")
        for child in node:
            walk(child)
        if namespace in _MAIN and local in _SEPARATORS:
            out.append(" ")

    walk(element)
    return ["".join(out)]


def kept_share(expected: Counter[str], markdown: str) -> float:
    """The share of ``expected`` words found in ``markdown`` (1.0 when none expected)."""
    total = sum(expected.values())
    if not total:
        return 1.0
    got = words(_EMPHASIS.sub("", _ESCAPED_STAR.sub(" ", markdown)))
    return sum(min(n, got[w]) for w, n in expected.items()) / total


def node_bodies(forest: Path) -> dict[str, str]:
    """source_path -> node body, for every node in ``forest``."""
    import yaml

    bodies = {}
    for node in forest.rglob("*.md"):
        text = node.read_text(encoding="utf-8")
        if not text.startswith("---\n"):
            continue
        end = text.index("\n---\n", 4)
        meta = yaml.safe_load(text[4:end]) or {}
        if meta.get("source_path"):
            bodies[meta["source_path"]] = text[end + 5:]
    return bodies


def markitdown_text(path: Path) -> str | None:
    try:
        from markitdown import MarkItDown
    except ImportError:
        return None
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return MarkItDown().convert(str(path)).text_content
    except Exception:  # markitdown fails on some files: it kept nothing
        return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--no-markitdown", action="store_true")
    args = parser.parse_args(argv)
    from monkeyllm_core import init_forest
    from monkeyllm_gardener.pipeline import Gardener

    source = args.dir.resolve()
    files = sorted(p for p in source.rglob("*.docx") if p.is_file())
    with tempfile.TemporaryDirectory(prefix="bench-docx-") as tmp:
        forest = init_forest(Path(tmp) / "forest", "docx corpus")
        report = Gardener(forest).adopt(source, jobs=1)
        bodies = node_bodies(forest)
    failed = {line.split(": ", 1)[0]: line for line in report.errors + report.unsupported
              if line.split(": ", 1)[0].lower().endswith(".docx")}
    print(f"{'file':<58} {'words':>6} {'ours':>7} {'markitdown':>10}  notes")
    ours_all, theirs_all, behind = [], [], []
    weighted = {"words": 0, "ours": 0.0, "markitdown": 0.0}
    for path in files:
        rel = path.relative_to(source).as_posix()
        try:
            expected = document_words(path)
        except (zipfile.BadZipFile, etree.XMLSyntaxError, OSError, ValueError) as exc:
            note = failed.get(rel, "not planted")
            print(f"{rel:<58} {'-':>6} {'-':>7} {'-':>10}  not a readable zip ({type(exc).__name__}); {note}")
            continue
        body = bodies.get(rel)
        ours = kept_share(expected, body or "")  # a file not planted kept nothing
        theirs_text = None if args.no_markitdown else markitdown_text(path)
        theirs = kept_share(expected, theirs_text) if theirs_text is not None else None
        notes = [failed[rel]] if rel in failed else []
        notes += [w.split(": ", 1)[1] for w in report.warnings if w.startswith(rel + ": ")]
        ours_all.append(ours)
        total = sum(expected.values())
        weighted["words"] += total
        weighted["ours"] += ours * total
        if theirs is not None:
            theirs_all.append(theirs)
            weighted["markitdown"] += theirs * total
            if ours < theirs:
                behind.append(rel)
        shown = f"{theirs:>10.1%}" if theirs is not None else f"{'-':>10}"
        print(f"{rel:<58} {sum(expected.values()):>6} {ours:>7.1%} {shown}  {'; '.join(notes)}")
    words_total = max(weighted["words"], 1)
    summary = (f"summary: {len(files)} files, {weighted['words']:,} words, {sum(1 for p in files if p.relative_to(source).as_posix() in bodies)} planted, {len(failed)} not planted; "
               f"ours min {min(ours_all, default=1):.1%} mean {sum(ours_all) / max(len(ours_all), 1):.1%} "
               f"all words {weighted['ours'] / words_total:.2%}")
    if theirs_all:
        summary += (f"; markitdown min {min(theirs_all):.1%} mean {sum(theirs_all) / len(theirs_all):.1%} "
                    f"all words {weighted['markitdown'] / words_total:.2%}; "
                    f"files where ours keeps fewer words: {len(behind)}{' ' + ', '.join(behind) if behind else ''}")
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
