"""CSV/TSV files become datasets: one table, typed columns, rows streamed from the file.

Two streamed passes, so memory does not grow with the file: ``convert`` reads the
file once to sniff the delimiter, repair the header, infer column types and count
rows; the returned ``CsvRows`` re-reads it when the engine loads the rows.

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
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from monkeyllm_gardener import Conversion, ConversionError, UnsupportedFile, hookimpl
from monkeyllm_gardener.kit import (
    SqlType,
    TypeTracker,
    decimal_notes,
    detect_encoding,
    is_blank_file,
    repair_headers,
    table_name_from,
    text_row_converter,
    unique_name,
    wide_table_schema,
)

# A 200 KB (or 200 MB) field is data, not an attack on a converter: lift the 128 KB
# default. 2**31 - 1 is the largest value every platform's C long accepts.
csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))

CANDIDATE_DELIMITERS = (",", ";", "\t", "|")
_SNIFF_LINES = 50
# Files that are not text at all, misnamed .csv (an exported workbook, a database).
_BINARY_SIGNATURES = {
    b"PK\x03\x04": "a zip archive (an .xlsx workbook?)",
    b"\xd0\xcf\x11\xe0": "an OLE document (an .xls workbook?)",
    b"SQLite format 3\x00": "a SQLite database",
    b"%PDF": "a PDF document",
}


@dataclass(frozen=True, kw_only=True)
class CsvRows:
    """The data rows of one CSV file, re-read on every iteration (picklable)."""

    path: Path
    encoding: str
    delimiter: str
    column_types: tuple[SqlType, ...]  # of the columns start..stop
    width: int  # of the whole source
    start: int = 0  # a wide source is split into tables of at most 50 columns
    stop: int | None = None
    single_column: bool = False  # the header has one name: see _is_blank_record

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        width = self.width
        padding: list[str | None] = [None] * width
        start, stop = self.start, width if self.stop is None else self.stop
        whole = start == 0 and stop == width
        convert = text_row_converter(self.column_types)
        for record in _data_records(self.path, self.encoding, self.delimiter, self.single_column):
            if len(record) != width:
                record = (record + padding[len(record):])[:width]
            yield convert(record if whole else record[start:stop])


@dataclass(kw_only=True)
class _FirstPass:
    header: list[str] = field(default_factory=list)
    types: TypeTracker = field(default_factory=TypeTracker)
    row_count: int = 0
    max_row_width: int = 0
    short_rows: int = 0
    long_rows: int = 0
    cells_with_nul: int = 0


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
        scan = _first_pass(path, encoding, delimiter)

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


def _records(path: Path, encoding: str, delimiter: str) -> Iterator[list[str]]:
    with path.open("r", encoding=encoding, newline="") as stream:
        reader = csv.reader(stream, delimiter=delimiter)
        try:
            yield from reader
        except csv.Error as error:
            raise ConversionError(
                f"unreadable CSV: {path.name} line {reader.line_num}: {error}; "
                "fix the quoting there or re-export the file"
            ) from None


def _is_blank(record: list[str]) -> bool:
    return not record or (len(record) == 1 and not record[0].strip())


def _is_blank_record(record: list[str], *, single_column: bool) -> bool:
    """A blank line below the header. In a one-column file a record holding one empty
    or whitespace-only value is a row (its cell is NULL), not a blank line: that is
    how CSV writers spell an empty value there (``""``), so it must not be dropped."""
    return not record if single_column else _is_blank(record)


def _data_records(path: Path, encoding: str, delimiter: str, single_column: bool = False) -> Iterator[list[str]]:
    """Every record after the header, blank lines left out."""
    records = iter(_records(path, encoding, delimiter))
    for record in records:
        if not _is_blank(record):
            break  # the header
    for record in records:
        if not _is_blank_record(record, single_column=single_column):
            yield record


def _first_pass(path: Path, encoding: str, delimiter: str) -> _FirstPass:
    scan = _FirstPass()
    header_seen = False
    for record in _records(path, encoding, delimiter):
        if _is_blank(record) and (
            not header_seen or _is_blank_record(record, single_column=len(scan.header) == 1)
        ):
            continue  # blank lines hold no value: nothing is lost by skipping them
        if "\x00" in "".join(record):  # rare: count cells only when the record has one
            scan.cells_with_nul += sum("\x00" in cell for cell in record)
        if not header_seen:
            scan.header, header_seen = record, True
            continue
        scan.row_count += 1
        scan.max_row_width = max(scan.max_row_width, len(record))
        scan.short_rows += len(record) < len(scan.header)
        scan.long_rows += len(record) > len(scan.header)
        scan.types.observe_text_row(record)
    return scan


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
