"""What a converter hands back: the value object at the heart of the plugin API.

A converter turns one source file into a `Conversion`. It never touches the forest,
so conversions can run in worker processes: every field must be picklable.

Three kinds exist:

- ``markdown``: ``markdown`` is the node body. ``node_type`` says what the node is
  (``note`` for notes and plain text, ``document`` for converted documents).
- ``dataset``: ``schema`` is the declarative schema of primitives.md
  (``{table: {"columns": {name: TYPE}, "primary_key": [...]}}``) and ``rows`` maps each
  table to its rows. Rows may stream: give a re-iterable, picklable object whose
  ``__iter__`` yields one sequence per row (reading the source file again), so a
  million-row CSV never sits in memory nor crosses a process boundary.
  ``manual_notes`` are sentences appended to the generated ``## Query manual``
  (header repairs, how nested values were stored, ...). ``markdown`` is optional
  text placed before the generated map.
- ``payload``: a file installed as it stands beside the passport. ``payload_path``
  is the file to copy (usually the source itself), ``payload_type`` one of
  ``sqlite | image | audio | pdf | docx``. A SQLite payload becomes a ``dataset``
  node whose map the engine generates from the copied database; an image or audio
  payload becomes a ``media`` node whose body is rendered from ``media``.
  ``structure`` carries what the converter learned about the payload without a
  model: for SQLite ``{"tables": {name: [columns]}, "views": {name: [columns]},
  "samples": {name: [first rows]}}`` (row counts are taken by the engine from the
  installed copy, when it writes the sample map).

``warnings`` are one-line, human-readable notes that reach the run report (the file
still plants). Never put file content in them: name the file, what happened, the fix.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping, Sequence

ConversionKind = Literal["markdown", "dataset", "payload"]
PayloadType = Literal["sqlite", "image", "audio", "pdf", "docx"]


@dataclass(frozen=True, kw_only=True)
class MediaInfo:
    """What is known about an image or audio file without a model."""

    kind: Literal["image", "audio"]
    filename: str  # the source file's name, e.g. "team_photo.png"
    format: str  # "PNG", "JPEG", "WAV", "MP3", ... or "unknown"
    size_bytes: int
    width: int | None = None
    height: int | None = None
    duration_seconds: float | None = None
    tags: Mapping[str, str] = field(default_factory=dict)  # title/artist/album ... (on the media line)
    problem: str | None = None  # why the file could not be fully read (corrupt, bomb, ...)
    # Where and when a photo was taken (its EXIF/XMP/IPTC), shown on the media line.
    taken: str | None = None  # "2024-06-01 14:03", plus its UTC offset (" +02:00") when the file gives one
    latitude: float | None = None  # decimal degrees, north positive
    longitude: float | None = None  # decimal degrees, east positive
    altitude_m: float | None = None  # metres above sea level, negative below
    # Text the file declares about itself, one "- Label: value" item each after the
    # media line; keys are the converter's own labels (title, description, author,
    # keywords, copyright), never a key read from the file.
    details: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Conversion:
    kind: ConversionKind
    title: str | None = None  # None: the Gardener uses the file name
    markdown: str = ""
    node_type: str | None = None  # None: note for markdown, dataset, media for image/audio
    schema: Mapping[str, Mapping[str, Any]] | None = None
    rows: Mapping[str, Iterable[Sequence[Any]]] | None = None
    manual_notes: Sequence[str] = ()
    payload_path: Path | None = None
    payload_type: PayloadType | None = None
    media: MediaInfo | None = None
    structure: Mapping[str, Any] | None = None  # a payload's tables, columns and samples
    # Passport fields the source itself declared (a markdown file's own YAML
    # frontmatter, a Word document's or a photo's properties). Only these keys are
    # kept by the Gardener: ``title``, ``tags`` and ``aliases`` (lists of strings),
    # ``created`` (a date, or a string starting ``YYYY-MM-DD``: the passport's
    # ``created``), ``modified`` (likewise: the provenance key ``source_modified``)
    # and ``author`` (a string: the provenance key ``source_author``).
    frontmatter: Mapping[str, Any] = field(default_factory=dict)
    warnings: Sequence[str] = ()

    def __post_init__(self) -> None:
        if self.kind == "dataset" and not self.schema:
            raise ValueError("a dataset Conversion needs a schema")
        if self.kind == "payload" and (self.payload_path is None or self.payload_type is None):
            raise ValueError("a payload Conversion needs payload_path and payload_type")


class ConversionError(Exception):
    """A converter could not convert a file. The message is one line naming the
    problem and, where there is one, the fix; it never contains file content."""


class UnsupportedFile(ConversionError):
    """The converter claims the extension but this file is not something it reads
    (e.g. an encrypted workbook). Reported as a failure with the message."""
