"""Building a node from a conversion: the write request (passport, body and the
payload to install), and the rules a refresh follows for what people wrote (tags,
links, their own sections).

Pure functions: the worker stage calls ``title_and_summary`` and ``build_node``
(``worker.with_request``); the main process calls ``build_node`` for a result that
came without a request (a Dask worker's).
"""
from __future__ import annotations

import datetime as _dt
import re
from pathlib import Path
from typing import Any, Callable

from monkeyllm_core import NodeWrite, PayloadSpec
from monkeyllm_core.forest.sections import get_section, outline
from monkeyllm_core.store.messages import one_line

from .conversion import Conversion
from .origins import file_uri
from .prepared import Prepared, stage_dataset, stages_dataset
from .walk import SourceFile

INGEST_CONFIDENCE = 0.7
MAX_AUTHOR_CHARS = 200
_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


def title_of(conv: Conversion, rel: str, *, name_title: bool = False) -> str:
    """The source's own frontmatter title, else the converter's, else the file name.

    ``name_title``: the file shares its name with another one (``test.docx``,
    ``test.jpg``): a title that is only the file's name (its stem, or the readable
    form media converters make of it) becomes the whole name, ``test.docx``.
    """
    name = rel.rsplit("/", 1)[-1]
    stem = name.rsplit(".", 1)[0] if "." in name[1:] else name
    own = dict(conv.frontmatter or {})
    title = clean_title(own.get("title")) or clean_title(conv.title) or stem
    if name_title:
        from .kit.media import media_title
        if title in (stem, clean_title(media_title(name))):
            return clean_title(name) or title
    return title


def title_and_summary(conv: Conversion, rel: str, *, name_title: bool = False) -> tuple[str, str]:
    from .derive import derive_summary
    title = title_of(conv, rel, name_title=name_title)
    return title, derive_summary(conv.markdown or "", title=title, kind_hint=conv.node_type or "note")


def build_node(node_id: str, f: SourceFile, prep: Prepared, conv: Conversion, source: Path,
               new_tmp_db: Callable[[], Path], *, name_title: bool = False) -> NodeWrite:
    """A node's write request from a file's conversion: the passport (title, type,
    derived summary, payload name, the source's own tags and aliases, provenance),
    the body, and the payload the engine installs.

    A dataset's SQLite file is the one the worker stage made (``prep.dataset_db``);
    a conversion made without that stage is staged here, with ``new_tmp_db``, the
    same way (``stage_dataset``). Either way its rows were counted once, and the
    count travels in the ``PayloadSpec``."""
    from .derive import (
        derive_summary,
        summary_for_dataset,
        summary_for_media,
        title_sentence,
    )
    from .media import media_asset_name, media_summary_facts, render_media_body
    own = dict(conv.frontmatter or {})
    title = title_of(conv, f.rel, name_title=name_title)
    fields: dict[str, Any] = {"id": node_id, "title": title}
    path = f.path  # made once: each f.path is a new Path
    body = conv.markdown or ""
    payload: PayloadSpec | None = None
    if conv.kind == "markdown":
        fields["type"] = conv.node_type or "note"
        title, summary = prep.derived or title_and_summary(conv, f.rel, name_title=name_title)
        # the sections the source produced: on sync, any other section is a person's and stays
        produced = outline(body)
        if produced:
            fields["source_sections"] = produced
    elif stages_dataset(conv):
        if prep.dataset_db is not None:
            staged, counts = Path(prep.dataset_db), prep.row_counts
        else:  # a conversion made without the worker stage: staged here
            staged = new_tmp_db()
            counts = stage_dataset(conv, f.location, str(staged))
        # the staged file (for SQLite, the snapshot, -wal data included), never the source itself
        payload = PayloadSpec(source=staged, move=True, row_counts=None if counts is None else dict(counts),
                              manual_notes=tuple(conv.manual_notes))
        fields["type"] = "dataset"
        if conv.kind == "dataset":
            tables = {t: list((spec.get("columns") or {}).keys()) for t, spec in (conv.schema or {}).items()}
        else:
            tables = dict((conv.structure or {}).get("tables") or {})
        summary = summary_for_dataset(title, dict(counts or {}), tables)
        fields.update(payload_type="sqlite", payload=f"{node_id.rsplit('/', 1)[-1]}.db")
        body = f"# {title}\n\n{body}".rstrip() + "\n"
    elif conv.media is not None:
        fields["type"] = conv.node_type or "media"
        body = render_media_body(title, conv.media, prep.description)
        summary = summary_for_media(title, media_summary_facts(conv.media), kind=conv.media.kind)
        slug = node_id.rsplit("/", 1)[-1]
        fields.update(payload=f"_assets/{media_asset_name(slug, path.name)}", payload_type=conv.payload_type)
        payload = PayloadSpec(source=conv.payload_path or path)
    else:
        fields["type"] = conv.node_type or "document"
        # a payload that is not a database lives in _assets/ beside the node, like media:
        # gitignored, so it can never be committed by accident
        slug = node_id.rsplit("/", 1)[-1]
        fields.update(payload=f"_assets/{media_asset_name(slug, path.name)}", payload_type=conv.payload_type)
        payload = PayloadSpec(source=conv.payload_path or path)
        summary = derive_summary(body, title=title, kind_hint="document") if body else title_sentence(title, "document")
    fields["summary"] = summary
    fields["summary_source"] = "derived"
    tags = string_list(own.get("tags"))
    aliases = string_list(own.get("aliases"))
    if tags:
        fields["tags"] = tags
    if aliases:
        fields["aliases"] = aliases
    created = iso_date(own.get("created"))
    if created:
        fields["created"] = created  # the source's own date, not the day it was adopted
    modified = iso_date(own.get("modified"))
    if modified:
        fields["source_modified"] = modified
    author = clean_title(own.get("author"))
    if author:
        fields["source_author"] = author[:MAX_AUTHOR_CHARS]
    origin = file_uri(path if not path.is_symlink() else source / f.rel)
    fields.update(
        confidence=INGEST_CONFIDENCE, source="ingest", origin=origin,
        source_path=f.rel, source_hash=prep.sha256, source_size=f.size,
        source_mtime=round(f.mtime, 3),
    )
    return NodeWrite(passport=fields, body=body, payload=payload)


def tidy(line: str, name: str) -> str:
    """Report lines already start with the file's path: drop the file name that
    converters and the host repeat (``xlsx failed on a.xlsx: a.xlsx: corrupt``)."""
    line = line.replace(f" failed on {name}: ", " failed: ", 1)
    for lead in (f"{name}: ", f"failed: {name}: "):
        if line.startswith(lead):
            line = line[len(lead):] if lead == f"{name}: " else "failed: " + line[len(lead):]
    return line.replace(f" failed: {name}: ", " failed: ", 1)


def clean_title(value: Any) -> str | None:
    """A title on one line, without escape sequences, controls or bidi characters."""
    if not isinstance(value, str):
        return None
    return one_line(value) or None


def iso_date(value: Any) -> str | None:
    """``YYYY-MM-DD`` from a date, a datetime or a string starting with a real ISO
    date (``2026-03-01T10:00:00Z``); None for anything else."""
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.strftime("%Y-%m-%d")
    if not isinstance(value, str):
        return None
    match = _ISO_DATE.match(value.strip())
    if match is None:
        return None
    try:
        return _dt.date(*(int(part) for part in match.groups())).isoformat()
    except ValueError:  # 2026-02-30
        return None


def string_list(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [v for v in value.replace(",", " ").split()]
    if not isinstance(value, list):
        return []
    return [str(v) for v in value if isinstance(v, (str, int, float)) and str(v).strip()]


def merge_tags(first: Any, second: Any) -> list[str]:
    out: list[str] = []
    for tag in list(first or []) + list(second or []):
        if tag not in out:
            out.append(tag)
    return out


def merge_links(old: Any, new: Any) -> list[dict[str, Any]]:
    out = [dict(link) for link in (old or [])]
    for link in new or []:
        if not any(l.get("rel") == link.get("rel") and l.get("target") == link.get("target") for l in out):
            out.append(dict(link))
    return out


def keep_human_sections(old_body: str, new_body: str, produced: Any) -> str:
    """The refreshed body: the new conversion, then every section of the old body a
    person wrote, i.e. that the previous conversion did not produce
    (``source_sections``; without that record, ``## Notes``). A person's section
    named like a new source section is kept too, after it: nothing a person wrote
    is dropped."""
    old_produced = set(produced) if isinstance(produced, list) else None
    new_headers = set(outline(new_body))
    kept = []
    for header in outline(old_body):
        if old_produced is not None:
            written_by_person = header not in old_produced
        else:  # a node planted without the record: only ## Notes is known to be a person's
            written_by_person = header == "Notes" and header not in new_headers
        if written_by_person:
            text = get_section(old_body, header)
            if text and text.strip("\n") not in new_body:
                kept.append(text.strip("\n"))
    if not kept:
        return new_body
    return new_body.rstrip("\n") + "\n\n" + "\n\n".join(kept) + "\n"
