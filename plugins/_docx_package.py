"""Opening a Word package, Strict OOXML included, and reading its core properties.

Strict OOXML (ISO/IEC 29500 Strict, Word's "Strict Open XML Document") names its XML
namespaces and relationship types under ``http://purl.oclc.org/ooxml/`` where the
usual, transitional flavour uses ``http://schemas.openxmlformats.org/.../2006/...``.
python-docx only knows the transitional names, so a strict package is rewritten in
memory, URI for URI, into a transitional one and that copy is parsed. The element
names and structure are the same in both flavours; only a few attribute values
differ (lengths written as ``595.30pt``), and the converter reads none of those.
The file on disk is never changed.

Core properties (``docProps/core.xml``) become the passport fields a source declares
(``Conversion.frontmatter``):

- ``created`` and ``modified``: the dates, as they are (the Gardener keeps the day);
- ``author``: the creator (``source_author``); ``lastModifiedBy`` is not kept;
- ``keywords``: split on ``;`` and ``,`` (Word's separators). A keyword that is one
  word becomes a tag (lowercased, as tags are); a keyword of several words becomes
  an alias, since a tag is a single word;
- ``title``: see ``core_frontmatter``: the title a reader sees on the first page wins.
"""
from __future__ import annotations

import datetime as _dt
import io
import re
import zipfile
from pathlib import Path
from typing import Any

STRICT_ROOT = "http://purl.oclc.org/ooxml/"
_TRANSITIONAL_ROOT = "http://schemas.openxmlformats.org/"
# wordprocessingml/main, drawingml/chart, officeDocument/relationships/styles, ...
_STRICT_URI = re.compile(
    rb"http://purl\.oclc\.org/ooxml/"
    rb"(wordprocessingml|spreadsheetml|presentationml|drawingml|officeDocument)/"
)
_XML_MEMBER = re.compile(r"(\.xml|\.rels|\.vml)$", re.IGNORECASE)
_KEYWORD_SPLIT = re.compile(r"[;,]")
_SINGLE_WORD = re.compile(r"^[\w-]+$")
MAX_KEYWORDS = 20


def is_strict(path: Path) -> bool:
    """True when the package's relationships use the Strict OOXML names."""
    with zipfile.ZipFile(path) as archive:
        try:
            rels = archive.read("_rels/.rels")
        except KeyError:
            return False
    return STRICT_ROOT.encode() in rels


def transitional_copy(path: Path) -> io.BytesIO:
    """The package with every Strict OOXML URI rewritten to its transitional name."""
    out = io.BytesIO()
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for member in source.infolist():
            data = source.read(member)
            if _XML_MEMBER.search(member.filename):
                data = _STRICT_URI.sub(_transitional_uri, data)
            target.writestr(member, data)
    out.seek(0)
    return out


def _transitional_uri(match: re.Match[bytes]) -> bytes:
    # Strict ``.../ooxml/drawingml/chart`` is transitional ``.../drawingml/2006/chart``.
    return _TRANSITIONAL_ROOT.encode() + match.group(1) + b"/2006/"


def open_document(path: Path) -> Any:
    """A python-docx ``Document`` for ``path``, strict or transitional."""
    import docx

    source: Any = transitional_copy(path) if is_strict(path) else str(path)
    return docx.Document(source)


# ---------------------------------------------------------------- core properties


def core_frontmatter(document: Any, body_title: str | None) -> dict[str, Any]:
    """Passport fields from the core properties (see the module docstring).

    The core ``title`` is the passport title only when the body has none (no Title
    paragraph, no heading): a reader sees the body's title, while the core one is
    often left over from a template. When both exist and differ, the core title is
    kept as an alias, so a search for either finds the node.
    """
    props = _core_properties(document)
    if props is None:
        return {}
    fields: dict[str, Any] = {}
    title = _clean(props.title)
    tags, aliases = _keywords(props.keywords)
    if title and not body_title:
        fields["title"] = title
    elif title and body_title and title.casefold() != body_title.casefold():
        aliases.insert(0, title)
    for key, value in (("created", props.created), ("modified", props.modified)):
        if isinstance(value, _dt.datetime):
            fields[key] = value
    author = _clean(props.author)
    if author:
        fields["author"] = author
    if tags:
        fields["tags"] = tags
    if aliases:
        fields["aliases"] = aliases
    return fields


def _core_properties(document: Any) -> Any | None:
    try:
        return document.core_properties
    except Exception:  # a malformed core.xml: the document itself is still readable
        return None


def _clean(value: Any) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


def _keywords(value: Any) -> tuple[list[str], list[str]]:
    tags: list[str] = []
    aliases: list[str] = []
    for keyword in _KEYWORD_SPLIT.split(_clean(value))[:MAX_KEYWORDS]:
        keyword = keyword.strip()
        if not keyword:
            continue
        if _SINGLE_WORD.match(keyword):
            tag = keyword.lower()
            if tag not in tags:
                tags.append(tag)
        elif keyword not in aliases:
            aliases.append(keyword)
    return tags, aliases
