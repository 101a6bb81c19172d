"""The fast reader of ``.xlsx`` sheets: python-calamine (Rust) giving, cell for cell,
the Python value openpyxl (``read_only=True, data_only=True``) gives.

calamine reads a sheet some twenty times faster than openpyxl, but it does not see
everything openpyxl sees, so ``plan_fast_read`` first looks at the workbook's parts
(one zlib inflate and a few C-speed regex passes per sheet, no Python loop over the
cells) and returns None, meaning "read it with openpyxl", whenever calamine alone
could give another value or lose something:

- calamine is not installed, or the zip lists a comments part (comments are read with
  openpyxl's parsers, on the openpyxl path);
- error cells (``t="e"``: openpyxl keeps ``#DIV/0!``, calamine an empty cell), ISO
  date cells (``t="d"``), ``_xHHHH_`` escapes or phonetic runs in strings, number
  texts openpyxl cannot cast, a date serial openpyxl refuses;
- XML shaped unlike what the regex passes expect (namespace prefixes, a cell or row
  without its ``r`` reference), or a custom number format under a built-in id: such
  files are rare, and openpyxl reads them.

Otherwise calamine's values are turned into openpyxl's (``_as_openpyxl``): an empty
cell is None, a whole float up to 2**53 an ``int``, a date a midnight ``datetime``.
Two cases need the cell's own text, and only those cells are patched from the XML:

- numbers whose text says float while the value is whole (``1.0``, ``1E+3``) or whose
  digits a double does not hold (``12345678901234567890``): openpyxl's rule is
  ``float`` when the text has ``.``/``e``, else the exact ``int``;
- cells whose number format is not a plain one (dates, times, anything with letters
  outside quotes and ``[...]`` colours/locales): date-ness is decided by openpyxl's
  own stylesheet reading, and every such cell is converted by openpyxl's
  ``from_excel``/number rule, except a whole day from day 61 on in a format made of
  date tokens only (``yyyy-mm-dd``), where calamine agrees (elsewhere calamine rounds
  milliseconds differently, knows no negative serials, and its format rule is not
  openpyxl's: ``#,##0*d``, ``yyyy [h]``).

Whether a date is a date, and how it converts, is therefore always openpyxl's verdict;
``tests/plugins/test_xlsx_calamine.py`` proves both readers give identical datasets.
"""
from __future__ import annotations

import datetime as dt
import functools
import hashlib
import re
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

WORKBOOK_PART = "xl/workbook.xml"
STYLES_PART = "xl/styles.xml"  # where openpyxl's apply_stylesheet reads them
_EXACT_FLOAT_LIMIT = 2**53
# A serial from which openpyxl's and calamine's whole-day dates agree (below, the
# 1900 leap-year bug is handled differently).
_FIRST_AGREED_SERIAL = 61

# Reasons to leave a workbook to openpyxl, looked for in each sheet's XML. Each
# pattern that has to try every position of a part is guarded by one that starts with
# a literal (which the regex engine finds at memchr speed): a part without the
# guard's match has no match of the pattern (``_needs_openpyxl``).
_UNSEEN_BY_CALAMINE = re.compile(rb'\st="(?:e|d)"|_x[0-9A-Fa-f]{4}_')
_UNSEEN_GUARDS = (re.compile(rb't="[ed]"'), re.compile(rb"_x[0-9A-Fa-f]{4}_"))
_PREFIXED_TAG = re.compile(rb"<[A-Za-z_][\w.-]*:(?:c|row|v|sheetData)[\s>/]")
_PREFIXED_TAG_GUARD = re.compile(rb":(?:c|row|v|sheetData)[\s>/]")
_CELL_WITHOUT_REF = re.compile(rb'<c(?:\s(?![^>]*\br=")[^>]*)?/?>')
_ROW_WITHOUT_REF = re.compile(rb'<row(?:\s(?![^>]*\br=")[^>]*)?/?>')
# The guard of each: a tag whose head does not start `` r="`` (another attribute first,
# another space than " ", or none). One pass at the literal's speed; a part without
# its match has no match of the pattern, nor of ``_ODD_CELL_START`` (``_odd_cell_or_row``).
_UNUSUAL_HEAD = {b"<c": re.compile(rb'<c(?:[\t\r\n\x0b\x0c>/]| (?!r="))'),
                 b"<row": re.compile(rb'<row(?:[\t\r\n\x0b\x0c>/]| (?!r="))')}
_LAST_ROW = re.compile(rb'<row\s[^>]*?\br="(\d+)"')
_MERGE = re.compile(rb"<mergeCell[\s/>]")
# Number texts whose double calamine would read as another value than openpyxl's:
# whole values spelt as floats, exponents, and more digits than a double keeps.
_RISKY_NUMBER = re.compile(rb"<v>(-?\d*\.0*|-?[\d.]*[eE][-+]?\d+|-?[\d.]{16,})</v>")
_CELL_START = b"<c "
_ATTRIBUTE = re.compile(rb'([A-Za-z:]+)="([^"]*)"')
_CELL_VALUE = re.compile(rb"<v>([^<]*)</v>")

# Number formats both libraries read as plain numbers: no letters once quoted text,
# [colour]/[$-locale]/[>=100] brackets and scientific E+/E- are set aside.
_QUOTED = re.compile(r'"[^"]*"')
_BRACKETED = re.compile(r"\[(?![hHmMsS]+\])[^\]]*\]")
_SCIENTIFIC = re.compile(r"[eE][-+]")
_LOCALE = re.compile(r"^\[\$-[0-9A-Fa-f]+\]")
_SIMPLE_DATE = re.compile(r"(?:[dmyhsDMYHS]+|[-/.:, ]|AM/PM|am/pm)+")
_CUSTOM_FORMAT_ID = re.compile(rb'<numFmt\s[^>]*?numFmtId="(\d+)"')
_FIRST_CUSTOM_ID = 164
_ODD_CELL_START = re.compile(rb"<c[\t\r\n]")


def lists_comment_parts(names: Iterable[str]) -> bool:
    """True when a part named in ``names`` can hold comments: the one test of both
    readers (such a workbook takes the openpyxl path, where comments are read)."""
    return any("comment" in name.lower() for name in names)


def calamine_installed() -> bool:
    try:
        import python_calamine  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass(frozen=True)
class _Styles:
    """The cell style (xf) indexes whose cells need their text: openpyxl's verdict."""

    dates: frozenset[int]
    timedeltas: frozenset[int]
    not_plain: frozenset[int]  # dates among them
    # date styles whose whole days calamine reads as openpyxl does: formats made of
    # date tokens and separators only, on which both libraries' rules agree
    simple_dates: frozenset[int]


@dataclass(frozen=True)
class FastSheet:
    """One sheet as the fast path reads it; picklable (rows are re-read from the file)."""

    index: int  # in calamine's sheet order, which is the workbook's
    title: str
    is_chartsheet: bool
    member: str | None  # the worksheet part in the zip
    last_xml_row: int  # openpyxl yields rows up to the last <row> element
    merged_ranges: int
    has_formulas: bool
    # row index -> {column index: openpyxl's value}: the cells calamine would read otherwise
    patches: dict[int, dict[int, Any]] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class FastWorkbook:
    path: Path
    sheets: tuple[FastSheet, ...]

    def rows(self, sheet: FastSheet, opened: Any = None) -> Iterator[list[Any]]:
        """The sheet's rows as openpyxl gives them (row 1 first, gaps as empty rows);
        ``opened``: the workbook open in calamine already (``open_calamine``)."""
        if opened is None:
            with open_calamine(self.path) as workbook:
                grid = workbook.get_sheet_by_index(sheet.index).to_python(skip_empty_area=False)
        else:
            grid = opened.get_sheet_by_index(sheet.index).to_python(skip_empty_area=False)
        # most sheets have no cell to patch: no look-up per row then
        yield from _patched_rows(grid, sheet.patches) if sheet.patches else map(_as_openpyxl_row, grid)
        # rows holding only empty (styled) cells: openpyxl yields them, and the
        # survey's empty-row run limit counts them
        for _ in range(len(grid), sheet.last_xml_row):
            yield []


def _patched_rows(grid: list[list[Any]], patches: dict[int, dict[int, Any]]) -> Iterator[list[Any]]:
    for row_index, row in enumerate(grid):
        values = _as_openpyxl_row(row)
        for column, value in patches.get(row_index, {}).items():
            values.extend([None] * (column + 1 - len(values)))
            values[column] = value
        yield values


def open_calamine(path: Path) -> Any:
    """The workbook open in calamine (a context manager)."""
    import python_calamine

    return python_calamine.CalamineWorkbook.from_path(str(path))


def _as_openpyxl(value: Any) -> Any:
    """One calamine value as openpyxl gives it (for cells the XML patches leave alone)."""
    if value == "" and isinstance(value, str):
        return None
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) <= _EXACT_FLOAT_LIMIT else value
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return dt.datetime(value.year, value.month, value.day)
    return value


def _as_openpyxl_row(row: list[Any]) -> list[Any]:
    """``_as_openpyxl`` of each value, inlined (the one loop over every cell): calamine
    gives str, float, bool, date, datetime, time and timedelta values exactly."""
    limit = _EXACT_FLOAT_LIMIT
    return [(v or None) if (kind := type(v)) is str
            else (int(v) if v.is_integer() and -limit <= v <= limit else v) if kind is float
            else v if kind is not dt.date
            else dt.datetime(v.year, v.month, v.day)
            for v in row]


class _NeedsOpenpyxl(Exception):
    """The fast path cannot give openpyxl's value for this workbook."""


def plan_fast_read(path: Path) -> FastWorkbook | None:
    """The fast reading of ``path``, or None when only openpyxl reads it faithfully."""
    if not calamine_installed():
        return None
    # openpyxl's warnings while the package is read are said only when the fast path
    # reads it: on the openpyxl path, load_workbook says them (once)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        plan = _plan(path)
    if plan is not None:
        for caught in said:
            warnings.warn_explicit(caught.message, caught.category, caught.filename, caught.lineno)
    return plan


def _plan(path: Path) -> FastWorkbook | None:
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            if lists_comment_parts(names) or WORKBOOK_PART not in names:
                return None
            _check_strings(archive, names)
            epoch, styles, members = _open_package(archive, names)
            return _plan_sheets(path, archive, names, members, epoch, styles)
    except Exception:  # _NeedsOpenpyxl, or anything odd in the package: openpyxl's path reports it well
        return None


def _check_strings(archive: zipfile.ZipFile, names: set[str]) -> None:
    for name in names:
        if name.lower().endswith("sharedstrings.xml"):
            data = archive.read(name)
            if b"<rPh" in data or _unseen_by_calamine(data) or _prefixed_tag(data):
                raise _NeedsOpenpyxl


def _read_styles(workbook: Any) -> _Styles:
    """The verdicts of openpyxl's own stylesheet reading (``apply_stylesheet``)."""
    from openpyxl.styles.numbers import BUILTIN_FORMATS

    custom = list(workbook._number_formats)
    not_plain, simple = set(), set()
    for index, style in enumerate(workbook._cell_styles):
        number_format = style.numFmtId
        if number_format < _FIRST_CUSTOM_ID:
            code = BUILTIN_FORMATS.get(number_format, "General")
        else:
            code = custom[number_format - _FIRST_CUSTOM_ID]
        if not _is_plain_number_format(code):
            not_plain.add(index)
        if _SIMPLE_DATE.fullmatch(_LOCALE.sub("", code)):
            simple.add(index)
    dates = frozenset(workbook._date_formats)
    timedeltas = frozenset(workbook._timedelta_formats)
    return _Styles(dates, timedeltas, frozenset(not_plain | dates), frozenset((simple & dates) - timedeltas))


def _is_plain_number_format(code: str) -> bool:
    if code.strip().lower() == "general":
        return True
    rest = _SCIENTIFIC.sub("", _BRACKETED.sub("", _QUOTED.sub("", code)))
    return re.search(r"[A-Za-z]", rest) is None


def _open_package(archive: zipfile.ZipFile,
                  names: set[str]) -> tuple[dt.datetime, _Styles, dict[str, str | None]]:
    """What openpyxl's ``load_workbook`` reads before any cell: the epoch, the styles'
    verdicts, and each sheet's title -> its worksheet part (None for a chartsheet).
    openpyxl's own functions, so it also warns as it would (the converter records it)."""
    parser = _workbook_parser_class()(archive)
    parser.parse()
    found = list(parser.find_sheets())
    members: dict[str, str | None] = {}
    for sheet, rel in found:
        kind = rel.Type.rpartition("/")[2]
        members[sheet.name] = rel.target if kind == "worksheet" else None
    # load_workbook binds the defined names to the sheets it loaded (each listed one
    # whose part exists), and warns of a name whose sheet index is not among them:
    # the same list, so the same warnings (a print area on sheet 2 is no warning);
    # ``names``: the package's parts (``archive.namelist()``), listed once by the caller
    parser.wb._sheets = [_SheetSlot() if rel.Type.rpartition("/")[2] == "worksheet" else _ChartsheetSlot()
                         for _sheet, rel in found if rel.target in names]
    styles = _stylesheet_verdict(archive, names)  # load_workbook applies the stylesheet here
    parser.assign_names()
    return parser.wb.epoch, styles, members


@functools.cache
def _workbook_parser_class() -> type:
    """``BareWorkbookParser``, made once openpyxl is imported (this module imports it
    only when a workbook is read)."""
    from openpyxl.reader.workbook import WorkbookParser
    from openpyxl.utils.datetime import WINDOWS_EPOCH
    from openpyxl.workbook.defined_name import DefinedNameDict, DefinedNameList

    class BareWorkbook:
        """What ``WorkbookParser.parse`` and ``assign_names`` set and read on their
        workbook, with ``Workbook()``'s starting values. A real ``Workbook()`` also
        builds default styles and a first worksheet, a third of the parse's time, and
        nothing here reads them (the stylesheet is read apart: ``_stylesheet_verdict``)."""

        def __init__(self) -> None:
            self.epoch = WINDOWS_EPOCH
            self.defined_names = DefinedNameDict()
            self._external_links: list[Any] = []
            self._sheets: list[Any] = []

    class BareWorkbookParser(WorkbookParser):
        """openpyxl's parser of the workbook part, on a ``BareWorkbook``."""

        def __init__(self, archive: zipfile.ZipFile) -> None:
            # WorkbookParser.__init__ as load_workbook calls it, but for the workbook
            self.archive = archive
            self.workbook_part_name = WORKBOOK_PART
            self.defined_names = DefinedNameList()
            self.wb = BareWorkbook()
            self.keep_links = True
            self.sheets: list[Any] = []

    return BareWorkbookParser


def _stylesheet_verdict(archive: zipfile.ZipFile, names: set[str]) -> _Styles:
    """openpyxl's verdicts on the styles part (``apply_stylesheet`` on a new workbook,
    as ``load_workbook`` does, then ``_read_styles``), and its warnings said again.
    Workbooks written by one tool share their styles part byte for byte: a part read
    once is known by its SHA-256 for the rest of the process."""
    data = archive.read(STYLES_PART) if STYLES_PART in names else None
    if data is not None and any(int(i) < _FIRST_CUSTOM_ID for i in _CUSTOM_FORMAT_ID.findall(data)):
        # a custom format under a built-in id: which of the two a library uses is its own choice
        raise _NeedsOpenpyxl
    key = hashlib.sha256(data).digest() if data is not None else None
    read = _STYLESHEETS_READ.get(key)
    if read is None:
        read = _read_stylesheet(archive)
        if len(_STYLESHEETS_READ) >= _KEPT_STYLESHEETS:
            del _STYLESHEETS_READ[next(iter(_STYLESHEETS_READ))]  # the oldest
        _STYLESHEETS_READ[key] = read
    styles, said = read
    for caught in said:
        warnings.warn_explicit(caught.message, caught.category, caught.filename, caught.lineno)
    return styles


def _read_stylesheet(archive: zipfile.ZipFile) -> tuple[_Styles, tuple[Any, ...]]:
    from openpyxl import Workbook
    from openpyxl.styles.stylesheet import apply_stylesheet

    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        workbook = Workbook()
        apply_stylesheet(archive, workbook)
    return _read_styles(workbook), tuple(said)


_KEPT_STYLESHEETS = 16
# the styles part's SHA-256 (None: no styles part) -> (its verdicts, what openpyxl said)
_STYLESHEETS_READ: dict[bytes | None, tuple[_Styles, tuple[Any, ...]]] = {}


class _SheetSlot:
    """What ``WorkbookParser.assign_names`` binds a worksheet's defined names to (as
    on openpyxl's read-only worksheet)."""

    def __init__(self) -> None:
        self.defined_names: dict[str, Any] = {}


class _ChartsheetSlot:
    """A chartsheet's place: no ``defined_names``, as on openpyxl's ``Chartsheet``."""


def _plan_sheets(path: Path, archive: zipfile.ZipFile, names: set[str], members: dict[str, str | None],
                 epoch: dt.datetime, styles: _Styles) -> FastWorkbook:
    import python_calamine

    with open_calamine(path) as workbook:
        metadata = workbook.sheets_metadata
    if [m.name for m in metadata] != list(members):
        raise _NeedsOpenpyxl  # another sheet list than openpyxl's: let openpyxl read it
    sheets = []
    for index, meta in enumerate(metadata):
        member = members[meta.name]
        is_chart = meta.typ == python_calamine.SheetTypeEnum.ChartSheet
        if is_chart != (member is None) or (member is not None and member not in names):
            raise _NeedsOpenpyxl
        if member is None:
            sheets.append(FastSheet(index=index, title=meta.name, is_chartsheet=True,
                                    member=None, last_xml_row=0, merged_ranges=0, has_formulas=False))
            continue
        data = archive.read(member)
        if _unseen_by_calamine(data) or _prefixed_tag(data) or _odd_cell_or_row(data):
            raise _NeedsOpenpyxl
        sheets.append(FastSheet(index=index, title=meta.name, is_chartsheet=False,
                                member=member, last_xml_row=_last_row(data),
                                merged_ranges=_merged_ranges(data), has_formulas=b"<f" in data,
                                patches=_cell_patches(data, styles, epoch)))
    return FastWorkbook(path=path, sheets=tuple(sheets))


def _unseen_by_calamine(data: bytes) -> bool:
    if not any(guard.search(data) for guard in _UNSEEN_GUARDS):
        return False
    return _UNSEEN_BY_CALAMINE.search(data) is not None


def _prefixed_tag(data: bytes) -> bool:
    return _PREFIXED_TAG_GUARD.search(data) is not None and _PREFIXED_TAG.search(data) is not None


def _odd_cell_or_row(data: bytes) -> bool:
    """True when a cell starts ``<c`` and a tab or line break (``_ODD_CELL_START``), or
    a cell or row lacks its ``r`` reference (``_CELL_WITHOUT_REF``, ``_ROW_WITHOUT_REF``).
    Each precise pattern runs only where its tag's guard (``_UNUSUAL_HEAD``) finds a
    head not starting `` r="``: in the usual part, one pass per tag."""
    if _UNUSUAL_HEAD[b"<c"].search(data) is not None and (
            _ODD_CELL_START.search(data) is not None or _CELL_WITHOUT_REF.search(data) is not None):
        return True
    return _UNUSUAL_HEAD[b"<row"].search(data) is not None and _ROW_WITHOUT_REF.search(data) is not None


def _merged_ranges(data: bytes) -> int:
    # most parts have none: a plain substring search (faster than the pattern's pass) says so
    return len(_MERGE.findall(data)) if b"<mergeCell" in data else 0


def _last_row(data: bytes) -> int:
    start = data.rfind(b"<row ")
    if start < 0:
        return 0
    found = _LAST_ROW.match(data, start)
    if found is None:
        raise _NeedsOpenpyxl
    return int(found.group(1))


def _cell_patches(data: bytes, styles: _Styles, epoch: dt.datetime) -> dict[int, dict[int, Any]]:
    """row index -> {column index: openpyxl's value} for the cells whose
    value calamine would give otherwise (see the module docstring)."""
    patches: dict[int, dict[int, Any]] = {}
    seen: set[int] = set()
    for found in _RISKY_NUMBER.finditer(data):
        _patch_cell(data, data.rfind(_CELL_START, 0, found.start()), styles, epoch, patches, seen)
    # A whole day from day 61 on, in a style made of date tokens only, is the common
    # date cell, and calamine's date is openpyxl's. When every ``s="N"`` of those styles
    # in the part ends such a cell's head (`` s="N"[ t="n"]><v>45000</v></c>``: the two
    # counts agree), none of those cells is looked at one by one.
    looked_at = styles.not_plain
    if styles.simple_dates:
        agreed = re.compile(rb' s="' + _styles_pattern(styles.simple_dates) + rb'"(?: t="n")?><v>'
                            + _AGREED_DAY + rb"</v></c>")
        if sum(data.count(b's="%d"' % i) for i in styles.simple_dates) == len(agreed.findall(data)):
            looked_at = styles.not_plain - styles.simple_dates
    if looked_at:
        for found in re.finditer(_STYLED_CELL % _styles_pattern(looked_at), data):
            _patch_cell(data, found.start(), styles, epoch, patches, seen)
    return patches


_STYLED_CELL = rb'<c\s[^>]*?\bs="(?:%b)"'
_AGREED_DAY = rb"(?:[1-9][0-9]{2,}|6[1-9]|[7-9][0-9])"  # a whole number >= 61 (_whole_agreed_day)


def _styles_pattern(indexes: frozenset[int]) -> bytes:
    return b"(?:" + b"|".join(str(i).encode() for i in sorted(indexes)) + b")"


def _patch_cell(data: bytes, start: int, styles: _Styles, epoch: dt.datetime,
                patches: dict[int, dict[int, Any]], seen: set[int]) -> None:
    if start < 0 or start in seen:
        return
    seen.add(start)
    head_end = data.find(b">", start)
    head = data[start:head_end]
    if head.endswith(b"/"):
        return  # an empty cell
    attributes = dict(_ATTRIBUTE.findall(head))
    if attributes.get(b"t", b"n") != b"n":
        return  # a string, boolean or formula string: calamine's value is openpyxl's
    end = data.find(b"</c>", head_end)
    found = _CELL_VALUE.search(data, head_end, end if end >= 0 else len(data))
    if found is None or not found.group(1):
        return
    text = found.group(1).decode("ascii", "replace")
    style = int(attributes.get(b"s", b"0"))
    if style in styles.simple_dates and _whole_agreed_day(text):
        return  # calamine's date, read as midnight, is openpyxl's datetime
    value = _openpyxl_number(text, style, styles, epoch)
    if style not in styles.not_plain:  # calamine reads a plain style's cell as a float
        as_calamine = _as_openpyxl(float(text))
        if as_calamine == value and type(as_calamine) is type(value):
            return
    row, column = _coordinate(attributes.get(b"r", b""))
    patches.setdefault(row, {})[column] = value


def _whole_agreed_day(text: str) -> bool:
    try:
        serial = float(text)
    except ValueError:
        return False
    return serial.is_integer() and serial >= _FIRST_AGREED_SERIAL


def _openpyxl_number(text: str, style: int, styles: _Styles, epoch: dt.datetime) -> Any:
    """What openpyxl's sheet reader makes of a number cell's text (its own functions)."""
    from openpyxl.utils.datetime import from_excel
    from openpyxl.worksheet._reader import _cast_number

    try:
        value = _cast_number(text)
        if style in styles.dates:
            value = from_excel(value, epoch, timedelta=style in styles.timedeltas)
    except (ValueError, OverflowError):
        raise _NeedsOpenpyxl from None  # openpyxl warns and keeps an error text
    return value


def _coordinate(reference: bytes) -> tuple[int, int]:
    """``b"C12"`` -> (11, 2): 0-based row and column."""
    letters = reference.rstrip(b"0123456789")
    digits = reference[len(letters):]
    if not letters or not digits:
        raise _NeedsOpenpyxl
    column = 0
    for letter in letters.upper():
        column = column * 26 + letter - 64
    return int(digits) - 1, column - 1
