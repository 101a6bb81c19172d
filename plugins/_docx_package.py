"""Opening a Word package, Strict OOXML included, and reading its core properties.

Packages python-docx refuses but Word opens are read through a repaired copy made
in memory (``_Repairs``): Strict OOXML, a template or macro-enabled document named
``.docx``, relationships to parts missing from the zip.

Strict OOXML (ISO/IEC 29500 Strict, Word's "Strict Open XML Document") names its XML
namespaces and relationship types under ``http://purl.oclc.org/ooxml/`` where the
usual, transitional flavour uses ``http://schemas.openxmlformats.org/.../2006/...``.
python-docx only knows the transitional names, so a strict package is rewritten in
memory, URI for URI, into a transitional one and that copy is parsed. The element
names and structure are the same in both flavours; only a few attribute values
differ (lengths written as ``595.30pt``), and the converter reads none of those.

Core properties (``docProps/core.xml``) become the passport fields a source declares
(``Conversion.frontmatter``):

- ``created`` and ``modified``: the dates, as they are (the Gardener keeps the day);
  a date before 1900 is a tool's "no date" (1601-01-01, 1899-12-30) and is left out;
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
import urllib.parse
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

STRICT_ROOT = "http://purl.oclc.org/ooxml/"
_TRANSITIONAL_ROOT = "http://schemas.openxmlformats.org/"
# wordprocessingml/main, drawingml/chart, officeDocument/relationships/styles, ...
_STRICT_URI = re.compile(
    rb"http://purl\.oclc\.org/ooxml/"
    rb"(wordprocessingml|spreadsheetml|presentationml|drawingml|officeDocument)/"
)
_XML_MEMBER = re.compile(r"(\.xml|\.rels|\.vml)$", re.IGNORECASE)
_RELATIONSHIP = re.compile(rb"<Relationship\s[^>]*>")
_DOCUMENT_MAIN_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
_OTHER_MAIN_TYPES = (
    "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml",
    "application/vnd.ms-word.document.macroEnabled.main+xml",
    "application/vnd.ms-word.template.macroEnabledTemplate.main+xml",
)
_KEYWORD_SPLIT = re.compile(r"[;,]")
_SINGLE_WORD = re.compile(r"^[\w-]+$")
MAX_KEYWORDS = 20
# Tools write 1601-01-01 or 1899-12-30 (a zero date) for "no date": not a real one.
_FIRST_REAL_YEAR = 1900


def open_document(path: Path) -> Any:
    """A python-docx ``Document`` for ``path``, read through an in-memory repaired
    copy when the package needs one (see ``_repairs``)."""
    import docx

    from monkeyllm_plugins._docx_styles import use_lazy_styles_parts

    use_lazy_styles_parts()
    with zipfile.ZipFile(path) as archive:
        repairs = _repairs(archive)
        source: Any = _repaired_copy(archive, repairs) if repairs else str(path)
    return docx.Document(source)


@dataclass(frozen=True, kw_only=True)
class _Repairs:
    """What the in-memory copy changes; the file on disk is never touched.

    - ``strict``: Strict OOXML names rewritten to transitional ones;
    - ``main_type``: a template (``.dotx``) or macro-enabled (``.docm``, ``.dotm``)
      main part renamed ``.docx`` declares its own content type, which python-docx
      refuses though the XML inside is the same: it is declared as a document;
    - ``dangling``: relationships to parts missing from the zip are dropped (Word
      shows a missing picture as an empty frame; python-docx refuses the package).
    """

    strict: bool
    main_type: bool
    dangling: dict[str, set[str]]  # .rels member -> relationship ids to drop

    def __bool__(self) -> bool:
        return self.strict or self.main_type or bool(self.dangling)


def _repairs(archive: zipfile.ZipFile) -> _Repairs | None:
    names = set(archive.namelist())
    package_rels = archive.read("_rels/.rels") if "_rels/.rels" in names else b""
    content_types = archive.read("[Content_Types].xml") if "[Content_Types].xml" in names else b""
    repairs = _Repairs(
        strict=STRICT_ROOT.encode() in package_rels,
        main_type=any(t.encode() in content_types for t in _OTHER_MAIN_TYPES),
        dangling=_dangling_relationships(archive, names),
    )
    return repairs if repairs else None


def _dangling_relationships(archive: zipfile.ZipFile, names: set[str]) -> dict[str, set[str]]:
    folded = {name.lower() for name in names}
    dangling: dict[str, set[str]] = {}
    for member in names:
        if not member.endswith(".rels"):
            continue
        base = PurePosixPath(member).parent.parent  # word/_rels/document.xml.rels -> word
        for match in _RELATIONSHIP.finditer(archive.read(member)):
            element = match.group(0)
            if b'TargetMode="External"' in element:
                continue
            target = _attribute(element, b"Target")
            rel_id = _attribute(element, b"Id")
            if target is None or rel_id is None:
                continue
            resolved = _resolve(base, target)
            if resolved is not None and resolved.lower() not in folded:
                dangling.setdefault(member, set()).add(rel_id)
    return dangling


def _attribute(element: bytes, name: bytes) -> str | None:
    match = _ATTRIBUTES[name].search(element)
    return match.group(1).decode("utf-8", "replace") if match else None


# the relationship attributes read, each pattern compiled once
_ATTRIBUTES = {name: re.compile(rb"\s" + name + rb'="([^"]*)"') for name in (b"Target", b"Id")}


def _resolve(base: PurePosixPath, target: str) -> str | None:
    """A relationship target as a zip member name (``../media/a.png`` from ``word``)."""
    target = urllib.parse.unquote(target)
    parts = list(base.parts) if not target.startswith("/") else []
    for piece in target.lstrip("/").split("/"):
        if piece == "..":
            if not parts:
                return None  # points outside the package: python-docx reports it itself
            parts.pop()
        elif piece and piece != ".":
            parts.append(piece)
    return "/".join(parts)


def _repaired_copy(archive: zipfile.ZipFile, repairs: _Repairs) -> io.BytesIO:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for member in archive.infolist():
            data = archive.read(member)
            if repairs.strict and _XML_MEMBER.search(member.filename):
                data = _STRICT_URI.sub(_transitional_uri, data)
            if repairs.main_type and member.filename == "[Content_Types].xml":
                for other in _OTHER_MAIN_TYPES:
                    data = data.replace(other.encode(), _DOCUMENT_MAIN_TYPE.encode())
            drop = repairs.dangling.get(member.filename)
            if drop:
                data = _RELATIONSHIP.sub(
                    lambda m: b"" if _attribute(m.group(0), b"Id") in drop else m.group(0), data
                )
            target.writestr(member, data)
    out.seek(0)
    return out


def _transitional_uri(match: re.Match[bytes]) -> bytes:
    # Strict ``.../ooxml/drawingml/chart`` is transitional ``.../drawingml/2006/chart``.
    return _TRANSITIONAL_ROOT.encode() + match.group(1) + b"/2006/"


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
        if isinstance(value, _dt.datetime) and value.year >= _FIRST_REAL_YEAR:
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
    """The core properties, or None when the package has none: python-docx would
    make up a default part (title "Word Document", modified now), which is not
    something the source declared."""
    from docx.opc.constants import RELATIONSHIP_TYPE as RT

    package = document.part.package
    if not any(rel.reltype == RT.CORE_PROPERTIES for rel in package.rels.values()):
        return None
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
