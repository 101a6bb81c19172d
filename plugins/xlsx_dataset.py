"""Built-in converter: an Excel ``.xlsx``/``.xlsm`` workbook becomes a dataset.

The sheet rules (one table per worksheet, where the table starts, when the first row
is a header, types, the comments table, the empty workbook) are shared with the
``.xls`` converter and stated in ``kit.sheets``. Specifics of this format:

- Container first: ``check_zip_container`` refuses encrypted workbooks, legacy ``.xls``
  renamed, truncated zips and zip bombs before openpyxl opens anything.
- One table per worksheet, named from the sheet name (``table_name_from``; a name
  already taken gets ``_2``, ``_3``...). Empty worksheets are skipped and named in the
  notes; chartsheets are skipped with a warning.
- The sheet's declared dimension is ignored (it can claim A1:XFD1048576): only rows
  present in the sheet XML are read.
- Values come from openpyxl with ``data_only=True``: a formula gives its cached
  value. A formula cell saved without a cached value (files written by scripts) is
  NULL, and a warning counts them. The sheet XML is scanned once, streaming, to count
  those cells and the merged ranges, which ``read_only`` mode does not expose.
- Merged cells: the value stays in the top-left cell of the range, the other cells of
  the range are NULL (that is how Excel stores them); the notes say so when a sheet has
  merged ranges.
- Comments: ``read_only`` mode does not load them, so when the zip lists a comments
  part at all (no cost otherwise), each worksheet's comments part is found through
  its relationships and parsed with openpyxl's own ``CommentSheet``. Modern Excel's
  threaded comments (openpyxl does not read them) come from the sheet's
  threadedComments part, each reply one more comment, authors named from the
  persons part; the legacy note Excel writes as a copy of each thread is dropped.
- openpyxl's ``UserWarning``s are recorded and become the file's warnings.
"""
from __future__ import annotations

import warnings as _warnings
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from monkeyllm_plugins._container import check_zip_container
from monkeyllm_plugins._extras import INGEST_HINT
from monkeyllm_plugins._sheets_calamine import (
    FastSheet,
    FastWorkbook,
    lists_comment_parts,
    open_calamine,
    plan_fast_read,
)

from monkeyllm_gardener import Conversion, ConversionError, hookimpl
from monkeyllm_gardener.kit import (
    MERGED_NOTE,
    CellComment,
    PlannedTable,
    SheetPlan,
    chatter_warnings,
    describe_tables,
    empty_workbook_conversion,
    sheet_label,
    stopped_warning,
    table_name_from,
    unique_name,
    with_warnings,
    workbook_conversion,
)
from monkeyllm_gardener.kit.sheets import CACHE_CELLS_LIMIT, rendered_rows, survey_sheet_keeping_rows


# ---------------------------------------------------------------- xlsx specifics


@dataclass(frozen=True, kw_only=True)
class SheetXmlFacts:
    formulas_without_value: int
    merged_ranges: int


def scan_sheet_xml(archive: zipfile.ZipFile, member: str) -> SheetXmlFacts:
    """Count formula cells with no cached value and merged ranges, streaming."""
    formulas_without_value = merged = 0
    with archive.open(member) as source:
        for _event, element in ET.iterparse(source, events=("end",)):
            tag = element.tag.rpartition("}")[2]
            if tag == "c":
                has_formula, value_missing = False, True
                for child in element:
                    child_tag = child.tag.rpartition("}")[2]
                    if child_tag == "f":
                        has_formula = True
                    elif child_tag in ("v", "is") and (child.text or len(child)):
                        value_missing = False
                if has_formula and value_missing:
                    formulas_without_value += 1
                element.clear()
            elif tag == "row":
                element.clear()
            elif tag == "mergeCell":
                merged += 1
    return SheetXmlFacts(formulas_without_value=formulas_without_value, merged_ranges=merged)


@dataclass(frozen=True, kw_only=True)
class XlsxSheetRows:
    """A sheet's rows, re-read from the file on every iteration (never held in memory)."""

    path: Path
    sheet_title: str
    plan: SheetPlan

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        import openpyxl

        with _warnings.catch_warnings():
            _warnings.simplefilter("ignore")  # said once already, when the workbook was surveyed
            workbook = openpyxl.load_workbook(self.path, read_only=True, data_only=True)
        try:
            sheet = workbook[self.sheet_title]
            sheet.reset_dimensions()  # never trust the declared dimension
            rows = sheet.iter_rows(
                min_row=self.plan.data_start,
                max_row=self.plan.last_row,
                max_col=self.plan.first_col + self.plan.width,
                values_only=True,
            )
            yield from rendered_rows(self.plan, rows)
        finally:
            workbook.close()


class XlsxConverter:
    name = "xlsx"
    extensions = (".xlsx", ".xlsm")
    requires: tuple[str, ...] = ("openpyxl",)
    install_hint = INGEST_HINT

    def __init__(self, *, use_calamine: bool = True, cache_cells: int = CACHE_CELLS_LIMIT) -> None:
        # False: openpyxl reads every workbook (what the fidelity tests compare against)
        self.use_calamine = use_calamine
        self.cache_cells = cache_cells  # sheets up to this many cells keep the rows the survey read

    def convert(self, path: Path) -> Conversion:
        path = Path(path)
        check_zip_container(path)
        with _warnings.catch_warnings(record=True) as said:
            _warnings.simplefilter("always")
            conversion = self._convert_file(path)
        # openpyxl talks to users through UserWarning; anything else (a DeprecationWarning
        # about openpyxl's own code) is for developers and goes on as usual
        for caught in said:
            if not issubclass(caught.category, UserWarning):
                _warnings.warn_explicit(caught.message, caught.category, caught.filename, caught.lineno)
        told = [str(w.message) for w in said if issubclass(w.category, UserWarning)]
        return with_warnings(conversion, chatter_warnings(path, "openpyxl", told))

    def _convert_file(self, path: Path) -> Conversion:
        fast = plan_fast_read(path) if self.use_calamine else None
        if fast is not None:
            with open_calamine(path) as opened:  # once for every sheet's survey
                return _convert_sheets(path, [_FastSheetSource(fast, sheet, opened) for sheet in fast.sheets],
                                       self.cache_cells)
        import openpyxl

        try:
            workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
        except Exception as error:  # openpyxl raises many types on malformed parts
            raise ConversionError(
                f"{path.name}: not a readable Excel workbook ({type(error).__name__}): "
                "open it in Excel and save it as .xlsx again"
            ) from None
        try:
            comment_parts = _lists_comment_parts(path)
            return _convert_sheets(path, [_OpenpyxlSheetSource(path, workbook, workbook[title], comment_parts)
                                          for title in workbook.sheetnames], self.cache_cells)
        finally:
            workbook.close()


class _OpenpyxlSheetSource:
    """One sheet read by openpyxl (the path every workbook can take)."""

    def __init__(self, path: Path, workbook: Any, sheet: Any, comment_parts: bool) -> None:
        self.path, self.workbook, self.sheet, self.comment_parts = path, workbook, sheet, comment_parts
        self.title = sheet.title
        self.is_chartsheet = not hasattr(sheet, "iter_rows")

    def comments(self, position: int, warnings: list[str]) -> list[CellComment]:
        if not self.comment_parts:
            return []
        return _sheet_comments(self.path, self.sheet, position, warnings)

    def rows(self) -> Iterable[Sequence[Any]]:
        self.sheet.reset_dimensions()  # a lying <dimension> must not drive the loop
        return self.sheet.iter_rows(values_only=True)

    def facts(self) -> SheetXmlFacts | None:
        return _sheet_facts(self.path, self.workbook, self.sheet)

    def rereader(self, plan: SheetPlan) -> XlsxSheetRows:
        return XlsxSheetRows(path=self.path, sheet_title=self.title, plan=plan)


class _FastSheetSource:
    """One sheet read by calamine, values as openpyxl gives them (``_sheets_calamine``)."""

    def __init__(self, workbook: FastWorkbook, sheet: FastSheet, opened: Any) -> None:
        self.workbook, self.sheet, self.opened = workbook, sheet, opened
        self.title = sheet.title
        self.is_chartsheet = sheet.is_chartsheet

    def comments(self, position: int, warnings: list[str]) -> list[CellComment]:
        return []  # a workbook with comment parts takes the openpyxl path

    def rows(self) -> Iterable[Sequence[Any]]:
        return self.workbook.rows(self.sheet, self.opened)

    def facts(self) -> SheetXmlFacts | None:
        if not self.sheet.has_formulas:  # nothing to scan for: the one count known already
            return SheetXmlFacts(formulas_without_value=0, merged_ranges=self.sheet.merged_ranges)
        try:
            with zipfile.ZipFile(self.workbook.path) as archive:
                return scan_sheet_xml(archive, self.sheet.member)
        except (KeyError, ET.ParseError, zipfile.BadZipFile, OSError):
            return None

    def rereader(self, plan: SheetPlan) -> CalamineSheetRows:
        return CalamineSheetRows(workbook=self.workbook, sheet=self.sheet, plan=plan)


@dataclass(frozen=True, kw_only=True)
class CalamineSheetRows:
    """A large sheet's rows, re-read through calamine on every iteration; picklable."""

    workbook: FastWorkbook
    sheet: FastSheet
    plan: SheetPlan

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        rows = islice(self.workbook.rows(self.sheet), self.plan.data_start - 1, self.plan.last_row)
        yield from rendered_rows(self.plan, rows)


def _convert_sheets(path: Path, sources: Sequence[Any], cache_cells: int) -> Conversion:
    """The workbook's dataset from its sheets, whichever library reads them."""
    warnings: list[str] = []
    tables: list[PlannedTable] = []
    rows: dict[str, Any] = {}
    skipped_empty: list[str] = []
    merged_tables: list[str] = []
    sheets: list[tuple[int, str]] = []
    comments: list[CellComment] = []
    missing_values = 0
    for position, source in enumerate(sources, start=1):
        sheets.append((position, source.title))
        if source.is_chartsheet:
            warnings.append(
                f"{path.name}: sheet {position} is a chartsheet (a chart, no cells): skipped"
            )
            continue
        comments += source.comments(position, warnings)
        label = sheet_label(position, source.title)
        try:
            plan, kept = survey_sheet_keeping_rows(source.rows(), keep_cells=cache_cells)
        except Exception as error:  # one unreadable sheet must not sink the others
            warnings.append(
                f"{path.name}: sheet {position} could not be read ({type(error).__name__}): "
                "skipped; open and save the file in Excel"
            )
            continue
        if plan is None:
            skipped_empty.append(label)
            continue
        table = unique_name(
            table_name_from(source.title, fallback="sheet"), {t.table for t in tables}
        )
        facts = source.facts()
        if facts is not None:
            missing_values += facts.formulas_without_value
            if facts.merged_ranges:
                merged_tables.append(f"`{table}` ({facts.merged_ranges})")
        stopped = stopped_warning(path, position, table, plan)
        if stopped:
            warnings.append(stopped)
        tables.append(PlannedTable(table=table, position=position, sheet_label=label, plan=plan))
        rows[table] = kept if kept is not None else source.rereader(plan)
    if not tables:
        return empty_workbook_conversion(path, sheets, warnings=warnings, comments=comments)
    if missing_values:
        warnings.append(
            f"{path.name}: {missing_values} formula cell(s) had no cached value and are "
            "NULL: open and save the file in Excel to compute them, then sync again"
        )
    notes = describe_tables(tables, skipped_empty=skipped_empty)
    if merged_tables:
        notes.append(f"{MERGED_NOTE} Merged ranges per table: {', '.join(merged_tables)}.")
    if missing_values:
        notes.append(
            f"{missing_values} formula cell(s) were saved without a computed value "
            "and are NULL."
        )
    return workbook_conversion(path, tables, rows, notes=notes, warnings=warnings,
                               comments=comments)


def _lists_comment_parts(path: Path) -> bool:
    """True when the zip lists a part that can hold comments (a cheap first look)."""
    with zipfile.ZipFile(path) as archive:
        return lists_comment_parts(archive.namelist())


# Modern Excel's threaded comments (2019+): one part per sheet, authors in a persons part.
THREADED_COMMENT_REL = "http://schemas.microsoft.com/office/2017/10/relationships/threadedComment"
PERSON_REL = "http://schemas.microsoft.com/office/2017/10/relationships/person"
WORKBOOK_RELS = "xl/_rels/workbook.xml.rels"


def _sheet_comments(path: Path, sheet: Any, position: int, warnings: list[str]) -> list[CellComment]:
    """The comments of one worksheet, in cell order: its threaded comments (each reply
    is one more comment), and its notes, except the note Excel writes as the legacy
    copy of a thread (the thread itself is kept, with its authors' names)."""
    member = getattr(sheet, "_worksheet_path", None)
    if not member:
        return []
    try:
        with zipfile.ZipFile(path) as archive:
            notes, threads = _comment_parts(archive, member, position, sheet.title)
    except Exception as error:  # a damaged comments part costs the comments, not the data
        warnings.append(f"{path.name}: sheet {position}: its cell comments could not be read "
                        f"({type(error).__name__}) and are not kept; open and save the file in Excel")
        return []
    threaded_cells = {c.cell for c in threads}
    kept = [c for c in notes if c.cell not in threaded_cells] + threads
    return sorted(kept, key=lambda c: (c.row, c.column))  # stable: a thread keeps its order


def _comment_parts(archive: zipfile.ZipFile, member: str, position: int,
                   title: str) -> tuple[list[CellComment], list[CellComment]]:
    """(notes, threaded comments) of the worksheet part ``member``."""
    from openpyxl.comments.comment_sheet import CommentSheet
    from openpyxl.packaging.relationship import get_dependents, get_rels_path
    from openpyxl.xml.constants import COMMENTS_NS
    from openpyxl.xml.functions import fromstring

    names = set(archive.namelist())
    rels_path = get_rels_path(member)
    if rels_path not in names:
        return [], []
    rels = get_dependents(archive, rels_path)
    notes: list[CellComment] = []
    for rel in rels.find(COMMENTS_NS):
        if rel.target in names:
            tree = fromstring(archive.read(rel.target))
            part = CommentSheet.from_tree(tree)
            # openpyxl turns an empty <author/> into the text "None": names come from the XML
            authors = [(el.text or "").strip() for el in tree.iter() if _local(el.tag) == "author"]
            for (ref, comment), record in zip(part.comments, part.commentList):
                author = authors[record.authorId] if 0 <= record.authorId < len(authors) else None
                notes.append(_comment(position, title, ref, author, comment.text))
    threads: list[CellComment] = []
    thread_parts = [rel.target for rel in rels.find(THREADED_COMMENT_REL) if rel.target in names]
    if thread_parts:
        people = _persons(archive, names)
        for target in thread_parts:
            for element in fromstring(archive.read(target)):
                if _local(element.tag) != "threadedComment" or not element.get("ref"):
                    continue
                text = "".join(t.text or "" for t in element.iter() if _local(t.tag) == "text")
                threads.append(_comment(position, title, element.get("ref"),
                                        people.get(element.get("personId", "")), text))
    return notes, threads


def _persons(archive: zipfile.ZipFile, names: set[str]) -> dict[str, str]:
    """Threaded-comment author ids -> display names, from the workbook's persons part."""
    from openpyxl.packaging.relationship import get_dependents
    from openpyxl.xml.functions import fromstring

    if WORKBOOK_RELS not in names:
        return {}
    people: dict[str, str] = {}
    for rel in get_dependents(archive, WORKBOOK_RELS).find(PERSON_REL):
        if rel.target in names:
            for person in fromstring(archive.read(rel.target)):
                if _local(person.tag) == "person" and person.get("id"):
                    people[person.get("id")] = person.get("displayName") or ""
    return people


def _comment(position: int, title: str, ref: str, author: str | None, text: str | None) -> CellComment:
    from openpyxl.utils.cell import coordinate_to_tuple

    row, column = coordinate_to_tuple(ref)
    return CellComment(position=position, sheet=title, cell=ref, row=row, column=column,
                       author=author or None, text=text or "")


def _local(tag: Any) -> str:
    return str(tag).rpartition("}")[2]


def _sheet_facts(path: Path, workbook: Any, sheet: Any) -> SheetXmlFacts | None:
    member = getattr(sheet, "_worksheet_path", None)
    archive = getattr(workbook, "_archive", None)
    if not member or archive is None:
        return None
    try:
        return scan_sheet_xml(archive, member)
    except (KeyError, ET.ParseError, zipfile.BadZipFile, OSError):
        return None


@hookimpl
def register_converters(register: Any) -> None:
    register(XlsxConverter(), priority=0.0)
