"""CSV/TSV files become datasets: one table, typed columns, rows streamed from the file.

Two streamed passes, so memory does not grow with the file: ``convert`` reads the
file once to sniff the delimiter, repair the header, infer column types and count
rows; the returned ``CsvRows`` re-reads it when the engine loads the rows. A file of
at most ``_KEPT_FILE_BYTES`` (most exports' CSVs) is parsed once: the first pass keeps
its records for the load, which uses them while the file still holds the bytes they
were parsed from (in this process only: a pickled ``CsvRows`` reads the file again).

Decoding is ``kit.detect_encoding`` (shared with the JSON and markdown
converters); the file is then read with ``newline=""``, so a quoted CRLF inside a
field reaches the table as ``\r\n``, byte for byte. Types follow ``kit.tabular``.

The query manual notes say only what is true of this file and changes how an agent
writes SQL or reads a value: renamed headers, a table split by width, ragged rows
padded or kept in ``extra_N`` columns, cells holding NUL, columns read as decimal.
The general typing and NULL rules live in the forest's dialect; the encoding and the
delimiter are not notes (a legacy encoding is a run-report warning).
"""
from __future__ import annotations

import csv
import io
import os
from collections import Counter
from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path
from typing import Any, Iterable, Iterator

from monkeyllm_gardener import Conversion, ConversionError, UnsupportedFile, hookimpl
from monkeyllm_gardener.kit import (
    SqlType,
    TypeTracker,
    decimal_notes,
    detect_encoding,
    is_blank_file,
    repair_headers,
    table_name_from,
    text_rows_converter,
    unique_name,
    wide_table_schema,
)

# A 200 KB (or 200 MB) field is data, not an attack on a converter: lift the 128 KB
# default. 2**31 - 1 is the largest value every platform's C long accepts.
csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))

CANDIDATE_DELIMITERS = (",", ";", "\t", "|")
_SNIFF_LINES = 50
# Records read, typed and loaded together: a column at a time within a batch (C-level
# loops), while memory stays bounded whatever the file's size.
_BATCH = 256
# Files up to this size keep the records the first pass parsed, for the load: about
# twenty times the file's size as Python objects (20 MiB at most, per process, until
# the rows are loaded); larger ones are parsed again, streamed.
_KEPT_FILE_BYTES = 1 << 20
# Files that are not text at all, misnamed .csv (an exported workbook, a database).
_BINARY_SIGNATURES = {
    b"PK\x03\x04": "a zip archive (an .xlsx workbook?)",
    b"\xd0\xcf\x11\xe0": "an OLE document (an .xls workbook?)",
    b"SQLite format 3\x00": "a SQLite database",
    b"%PDF": "a PDF document",
}


@dataclass(frozen=True)
class _KeptRecords:
    """A small file's records below the header, blank lines left out, and the bytes
    they were parsed from."""

    source: bytes
    batches: list[list[list[str]]]


@dataclass(frozen=True, kw_only=True)
class CsvRows:
    """The data rows of one CSV file, re-read on every iteration unless the records
    the first pass kept are still the file's (picklable)."""

    path: Path
    encoding: str
    delimiter: str
    column_types: tuple[SqlType, ...]  # of the columns start..stop
    width: int  # of the whole source
    start: int = 0  # a wide source is split into tables of at most 50 columns
    stop: int | None = None
    single_column: bool = False  # the header has one name: see _is_blank_record
    # a small file's records, in this process only (``__getstate__`` leaves them behind)
    kept: _KeptRecords | None = field(default=None, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "kept": None}

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        width = self.width
        padding: list[str | None] = [None] * width
        start, stop = self.start, width if self.stop is None else self.stop
        whole = start == 0 and stop == width
        convert = text_rows_converter(self.column_types)
        for records in self._batches():
            if min(map(len, records)) != width or max(map(len, records)) != width:
                records = [record if len(record) == width else (record + padding[len(record):])[:width]
                           for record in records]
            yield from convert(records if whole else [record[start:stop] for record in records])

    def _batches(self) -> Iterable[list[list[str]]]:
        kept = self.kept
        # the file is loaded as it is now: kept records stand for it while its bytes are the same
        if kept is not None and _read_small(self.path) == kept.source:
            return kept.batches
        return _data_batches(self.path, self.encoding, self.delimiter, self.single_column)


@dataclass(kw_only=True)
class _FirstPass:
    header: list[str] = field(default_factory=list)
    types: TypeTracker = field(default_factory=TypeTracker)
    row_count: int = 0
    max_row_width: int = 0
    short_rows: int = 0
    long_rows: int = 0
    cells_with_nul: int = 0
    batches: list[list[list[str]]] | None = None  # the records, when asked to keep them


class CsvConverter:
    name = "csv"
    extensions = (".csv", ".tsv")

    def convert(self, path: Path) -> Conversion:
        path = Path(path)
        _refuse_binary(path)
        encoding, encoding_warning = detect_encoding(path)
        if is_blank_file(path, encoding):
            raise ConversionError(
                f"empty file: {path.name} has no header or rows; add a header line or remove it"
            )
        default = "\t" if path.suffix.lower() == ".tsv" else ","
        delimiter = sniff_delimiter(path, encoding, default=default)
        source = _read_small(path)  # read before the pass: records kept stand for these bytes
        scan = _first_pass(path, encoding, delimiter, keep=source is not None,
                           may_hold_nul=_may_hold_nul(source, encoding))

        names, header_notes = repair_headers(scan.header)
        width = max(len(names), scan.max_row_width)
        extra_names: list[str] = []
        for number in range(1, width - len(names) + 1):
            extra_names.append(unique_name(f"extra_{number}", names + extra_names))
        columns = names + extra_names
        types = scan.types.types(width)
        table = table_name_from(path.stem)

        notes, warnings = _source_notes(path, encoding_warning, scan, extra_names)
        notes[:0] = header_notes
        notes.extend(decimal_notes(columns, scan.types))
        parts, schema, split_note = wide_table_schema(path, table, columns, types,
                                                      fix="split the file into narrower CSVs")
        if split_note:
            notes.insert(0, split_note)
        kept = _KeptRecords(source, scan.batches) if source is not None and scan.batches is not None else None
        rows = {
            part.name: CsvRows(
                path=path.resolve(),
                encoding=encoding,
                delimiter=delimiter,
                column_types=tuple(types[part.start:part.stop]),
                width=width,
                start=part.start,
                stop=part.stop,
                single_column=len(scan.header) == 1,
                kept=kept,
            )
            for part in parts
        }
        return Conversion(
            kind="dataset",
            title=path.stem,
            schema=schema,
            rows=rows,
            manual_notes=tuple(notes),
            warnings=tuple(warnings),
        )


def _source_notes(
    path: Path,
    encoding_warning: str | None,
    scan: _FirstPass,
    extra_names: list[str],
) -> tuple[list[str], list[str]]:
    """Manual notes (only what changes how an agent writes SQL or reads a value) and
    run-report warnings (what the user should act on) for this file."""
    notes: list[str] = []
    warnings: list[str] = []
    if encoding_warning:
        warnings.append(f"{path.name}: {encoding_warning}")
    notes.extend(_ragged_notes(scan, len(scan.header), extra_names))
    if scan.short_rows or scan.long_rows:
        warnings.append(
            f"{path.name}: {scan.short_rows + scan.long_rows} ragged rows kept "
            "(short rows padded with NULL, extra values in extra_N columns)"
        )
    if scan.cells_with_nul:
        cells = _count(scan.cells_with_nul, "cell")
        notes.append(
            f"NUL characters appear in {cells} and are kept as is; "
            "SQL string functions may stop at them."
        )
        warnings.append(
            f"{path.name}: NUL characters in {cells} kept as is; "
            "remove them from the source if they are corruption"
        )
    return notes, warnings


def sniff_delimiter(path: Path, encoding: str, default: str = ",") -> str:
    """The candidate delimiter whose per-record count is most consistent and non-zero,
    among those that split the header.

    Parses the first ~50 lines once per candidate with the csv module, so
    delimiters inside quoted fields are not counted. Ties go to ``default``, then to
    the order of ``CANDIDATE_DELIMITERS``; no candidate at all gives ``default``.
    """
    lines: list[str] = []
    with path.open("r", encoding=encoding, newline="") as stream:
        for line in stream:
            lines.append(line)
            if len(lines) >= _SNIFF_LINES:
                break
        at_end = not stream.read(1)
    sample = "".join(lines)
    preference = (default,) + tuple(d for d in CANDIDATE_DELIMITERS if d != default)
    best, best_score = default, (0.0, 0)
    for delimiter in preference:
        if delimiter not in sample:
            continue  # every record would be one value: no count to weigh
        counts = _separator_counts(sample, delimiter)
        if not counts or counts[0] == 0:
            # the header names every column, so it holds the delimiter: values holding
            # ';' in a one-column file must not split it into columns
            continue
        if not at_end and len(counts) > 1:
            counts = counts[:-1]  # the last record may be cut mid-field
        usual = [(n, count) for count, n in Counter(counts).items() if count > 0]
        if not usual:
            continue
        frequency, typical = max(usual)
        score = (frequency / len(counts), typical)
        if score > best_score:
            best, best_score = delimiter, score
    return best


def _separator_counts(sample: str, delimiter: str) -> list[int]:
    try:
        records = list(csv.reader(io.StringIO(sample), delimiter=delimiter))
    except csv.Error:
        return []
    return [len(record) - 1 for record in records if not _is_blank(record)]


def _read_small(path: Path) -> bytes | None:
    """The file's bytes when its records may be kept (``_KEPT_FILE_BYTES``), else None."""
    with path.open("rb") as stream:
        if os.fstat(stream.fileno()).st_size > _KEPT_FILE_BYTES:
            return None  # a large file is never held in memory
        data = stream.read(_KEPT_FILE_BYTES + 1)
    return data if len(data) <= _KEPT_FILE_BYTES else None  # (it grew meanwhile)


def _may_hold_nul(source: bytes | None, encoding: str) -> bool:
    """False when the file's text has no NUL character, which UTF-8 spells only as a
    0x00 byte (one search of the bytes instead of every batch's cells)."""
    return source is None or encoding not in ("utf-8", "utf-8-sig") or b"\x00" in source


def _record_batches(path: Path, encoding: str, delimiter: str) -> Iterator[list[list[str]]]:
    """The file's records, in batches of ``_BATCH`` (the last may be shorter). A bad
    record ends the batch: the records before it come first, then the error."""
    with path.open("r", encoding=encoding, newline="") as stream:
        reader = csv.reader(stream, delimiter=delimiter)
        while True:
            batch: list[list[str]] = []
            try:
                batch.extend(islice(reader, _BATCH))  # keeps what it read when the reader raises
            except csv.Error as error:
                if batch:
                    yield batch
                raise ConversionError(
                    f"unreadable CSV: {path.name} line {reader.line_num}: {error}; "
                    "fix the quoting there or re-export the file"
                ) from None
            if not batch:
                return
            yield batch


def _is_blank(record: list[str]) -> bool:
    return not record or (len(record) == 1 and not record[0].strip())


def _is_blank_record(record: list[str], *, single_column: bool) -> bool:
    """A blank line below the header. In a one-column file a record holding one empty
    or whitespace-only value is a row (its cell is NULL), not a blank line: that is
    how CSV writers spell an empty value there (``""``), so it must not be dropped."""
    return not record if single_column else _is_blank(record)


def _without_blank_records(batch: list[list[str]], *, single_column: bool) -> list[list[str]]:
    # a blank record has at most one value: a batch of wider records has none
    if min(map(len, batch)) > (0 if single_column else 1):
        return batch
    return [record for record in batch if not _is_blank_record(record, single_column=single_column)]


def _split_header(batches: Iterator[list[list[str]]]) -> tuple[list[str], Iterator[list[list[str]]]]:
    """The header (the first record that is not blank; [] when there is none) and
    the batches of the records after it."""
    for batch in batches:
        for position, record in enumerate(batch):
            if not _is_blank(record):
                return record, chain([batch[position + 1:]], batches)
    return [], iter(())


def _without_blank_lines(batches: Iterator[list[list[str]]], single_column: bool) -> Iterator[list[list[str]]]:
    """The batches below the header with blank lines left out; none is empty."""
    for batch in batches:
        if batch:
            batch = _without_blank_records(batch, single_column=single_column)
            if batch:
                yield batch


def _data_batches(path: Path, encoding: str, delimiter: str, single_column: bool = False) -> Iterator[list[list[str]]]:
    """Every record after the header, in batches, blank lines left out."""
    _, batches = _split_header(_record_batches(path, encoding, delimiter))
    return _without_blank_lines(batches, single_column)


def _first_pass(path: Path, encoding: str, delimiter: str, *, keep: bool = False,
                may_hold_nul: bool = True) -> _FirstPass:
    """The header, the column types and the counts the notes need, a batch of
    records at a time (``TypeTracker.observe_text_rows``); with ``keep``, the batches
    too (``scan.batches``). Cells are searched for NUL unless ``may_hold_nul`` is False."""
    scan = _FirstPass(batches=[] if keep else None)
    scan.header, batches = _split_header(_record_batches(path, encoding, delimiter))
    scan.cells_with_nul = _cells_with_nul([scan.header]) if may_hold_nul else 0
    header_width = len(scan.header)
    for batch in _without_blank_lines(batches, header_width == 1):
        if scan.batches is not None:
            scan.batches.append(batch)
        if may_hold_nul:
            scan.cells_with_nul += _cells_with_nul(batch)
        scan.row_count += len(batch)
        widths = list(map(len, batch))
        shortest, widest = min(widths), max(widths)
        scan.max_row_width = max(scan.max_row_width, widest)
        if shortest < header_width:
            scan.short_rows += sum(width < header_width for width in widths)
        if widest > header_width:
            scan.long_rows += sum(width > header_width for width in widths)
        scan.types.observe_text_rows(batch)
    return scan


def _cells_with_nul(records: list[list[str]]) -> int:
    if "\x00" not in "".join(map("".join, records)):  # rare: count cells only when there is one
        return 0
    return sum("\x00" in cell for record in records for cell in record)


def _ragged_notes(scan: _FirstPass, header_width: int, extra_names: list[str]) -> list[str]:
    notes = []
    if scan.short_rows:
        notes.append(
            f"{_count(scan.short_rows, 'row')} of {scan.row_count} had fewer values than "
            f"the {header_width} header columns; the missing cells are NULL."
        )
    if scan.long_rows:
        listed = ", ".join(f"`{name}`" for name in extra_names)
        notes.append(
            f"{_count(scan.long_rows, 'row')} of {scan.row_count} had more values than the "
            f"{header_width} header columns; the extra values are kept in {listed} "
            "(NULL in the other rows)."
        )
    return notes


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _refuse_binary(path: Path) -> None:
    with path.open("rb") as stream:
        head = stream.read(16)
    for signature, what in _BINARY_SIGNATURES.items():
        if head.startswith(signature):
            raise UnsupportedFile(
                f"{path.name} is {what}, not CSV text; give it its real extension"
            )


@hookimpl
def register_converters(register) -> None:
    register(CsvConverter(), priority=0.0)
