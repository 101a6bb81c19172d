"""Issue 16: ``survey_sheet`` types a sheet's columns a chunk of rows at a time (the
set of each column's Python types decides most of it), and the renderer copies the
values of a column where the survey saw nothing but the stored type. Both must give
exactly what the cell-by-cell rules give: each column's kind per ``classify_value``
(a date, time or duration is text), a time of day on any datetime, and every cell
written by ``write_cell``. The sheets are made in code, with the values that go wrong
first, over more rows than one chunk; the reference is those rules applied cell by
cell here."""
from __future__ import annotations

import datetime as dt
import math
import random
from typing import Any, Sequence

import pytest

from monkeyllm_gardener.kit.sheets import (
    CachedSheetRows,
    ColumnPlan,
    SheetPlan,
    rendered_rows,
    survey_sheet,
    survey_sheet_keeping_rows,
    write_cell,
)
from monkeyllm_gardener.kit.tabular import NumberToken, TypeTracker, classify_value

EXACT = 2**53
TEMPORAL = (dt.datetime, dt.date, dt.time, dt.timedelta)


class Stamp(dt.datetime):
    """A datetime subclass (a plugin's own value type)."""


class Label(str):
    """A str subclass."""


def reference_columns(rows: Sequence[Sequence[Any]], width: int) -> list[tuple[str, bool]]:
    """(SQL type, dates only) per column, every non-empty cell classified one by one."""
    tracker, with_time = TypeTracker(), set()
    for row in rows:
        for index, value in enumerate(row):
            if value is None or value == "":
                continue
            if isinstance(value, TEMPORAL):
                tracker.observe(index, "text")
                if isinstance(value, dt.datetime) and value.time() != dt.time(0):
                    with_time.add(index)
            else:
                tracker.observe(index, classify_value(value))
    return [(sql_type, index not in with_time) for index, sql_type in enumerate(tracker.types(width))]


def same(left: Any, right: Any) -> bool:
    """Equal and of the same type (NaN equal to NaN)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, float) and math.isnan(left):
        return math.isnan(right)
    return left == right


def assert_plan_is_the_cell_by_cell_one(rows: list[list[Any]]) -> None:
    plan = survey_sheet(rows)
    assert plan is not None
    assert plan.has_header  # every sheet here starts with a text header
    data = [row for row in rows[plan.data_start - 1:plan.last_row]]
    expected = reference_columns([row[plan.first_col:] for row in data], plan.width)
    assert [(c.sql_type, c.dates_only) for c in plan.columns] == expected
    render = plan.renderer()
    for row in data:
        window = list(row[plan.first_col:plan.first_col + plan.width])
        window += [None] * (plan.width - len(window))
        got = render(row)
        if all(value is None or value == "" for value in window):
            assert got is None
            continue
        wanted = tuple(write_cell(value, column) for value, column in zip(window, plan.columns))
        assert got is not None and all(same(a, b) for a, b in zip(got, wanted)), (row, got, wanted)
    assert_kept_rows_render_as_row_by_row(rows)


def assert_kept_rows_render_as_row_by_row(rows: list[list[Any]]) -> None:
    """The kept rows (``CachedSheetRows``, rendered a column at a time) give, row for row
    and value for value, what ``rendered_rows`` gives streaming the same rows."""
    plan, kept = survey_sheet_keeping_rows(iter(rows))
    assert plan is not None and kept is not None
    streamed = list(rendered_rows(plan, rows[plan.data_start - 1:plan.last_row]))
    got = list(kept)
    assert len(got) == len(streamed)
    for mine, theirs in zip(got, streamed):
        assert type(mine) is tuple and len(mine) == len(theirs) and all(map(same, mine, theirs)), (mine, theirs)


VALUES: list[Any] = [
    None, "", " ", "00501", "名前", "x", 0, 7, -3, EXACT, -EXACT, EXACT + 1, -(EXACT + 1), 2**63, -(2**63) - 1,
    True, False, 1.5, 3.0, -0.0, 1e308, float("nan"), float("inf"), float("-inf"),
    dt.datetime(2026, 1, 4), dt.datetime(2026, 1, 4, 9, 30), dt.datetime(2026, 1, 4, 0, 0, 0, 1),
    dt.date(2026, 2, 1), dt.time(8, 15), dt.time(0), dt.timedelta(hours=-1, minutes=5),
    NumberToken("12"), NumberToken("1.50"), Label("tag"), Label(""), Stamp(2026, 3, 1), Stamp(2026, 3, 1, 12),
]
# columns of one kind each, so the shortcuts (a column of ints, of floats, of dates) are taken
PURE_COLUMNS: list[list[Any]] = [
    [None, 1, 2, 3], [1.5, 2.5, None], [1e308, 1e308], [EXACT, -EXACT, 5], [EXACT + 1, 3],
    [2**63, 1], ["a", "b", ""], ["", None], [dt.datetime(2026, 1, 1), None], [dt.datetime(2026, 1, 1, 0, 0, 1)],
    [True, False, None], [1, 2.5], [float("nan"), 1.0], [dt.date(2026, 1, 1), "later"], [Stamp(2026, 1, 1, 1)],
]


@pytest.mark.parametrize("seed", range(6))
def test_mixed_columns_over_several_chunks_are_typed_as_cell_by_cell(seed: int) -> None:
    rng = random.Random(seed)
    width = 9
    rows: list[list[Any]] = [[None] * width, [f"h{i}" for i in range(width)]]
    for _ in range(rng.choice([3, 700, 1300])):
        if rng.random() < 0.05:
            rows.append(rng.choice([[], [None] * width, ["", None, ""]]))  # empty rows between data rows
            continue
        row = [rng.choice(VALUES) if rng.random() < 0.7 else None for _ in range(rng.randint(1, width))]
        rows.append(row)
    rows.append([1])  # a data row at the end, so the empty ones above are between data rows
    assert_plan_is_the_cell_by_cell_one(rows)


@pytest.mark.parametrize("values", PURE_COLUMNS, ids=lambda v: type(v[0]).__name__ + repr(v[0])[:12])
def test_a_column_of_one_kind_is_typed_and_written_as_cell_by_cell(values: list[Any]) -> None:
    # the column alone, then beside a text column, then past a chunk boundary
    assert_plan_is_the_cell_by_cell_one([["c"]] + [[value] for value in values])
    assert_plan_is_the_cell_by_cell_one([["k", "c"]] + [["k", value] for value in values])
    assert_plan_is_the_cell_by_cell_one([["c"]] + [[value] for value in values] * 400)


def test_one_odd_value_deep_in_a_column_decides_its_type() -> None:
    # the 1,000th value of an integer column is wider than 2**53 in one case, a float in
    # another, text in a third; a datetime column gets one time of day on its last row
    for odd, sql_type in ((EXACT + 1, "INTEGER"), (0.5, "REAL"), ("n/a", "TEXT"), (2**64, "TEXT")):
        rows = [["n", "when"]] + [[i, dt.datetime(2026, 1, 1)] for i in range(999)] + [[odd, dt.datetime(2026, 1, 1, 9)]]
        plan = survey_sheet(rows)
        assert plan is not None
        assert [(c.sql_type, c.dates_only) for c in plan.columns] == [(sql_type, True), ("TEXT", False)]
        assert_plan_is_the_cell_by_cell_one(rows)


def test_a_float_column_with_one_infinity_is_text_and_finite_sums_that_overflow_stay_real() -> None:
    assert survey_sheet([["x"], [1e308], [1e308], [1.5]]).columns[0].sql_type == "REAL"  # type: ignore[union-attr]
    assert survey_sheet([["x"]] + [[1.5]] * 600 + [[float("inf")]]).columns[0].sql_type == "TEXT"  # type: ignore[union-attr]


def test_values_are_copied_as_read_only_where_the_survey_saw_the_stored_type() -> None:
    plan = survey_sheet([["id", "name", "price", "flag", "when", "note"],
                         [1, "a", 1.5, True, dt.date(2026, 1, 1), "x"],
                         [2, "b", 2.5, False, dt.date(2026, 1, 2), ""]])
    assert plan is not None
    assert [c.stored_as_read for c in plan.columns] == [True, True, True, False, False, False]
    render = plan.renderer()
    assert render([2, "b", 2.5, False, dt.date(2026, 1, 2), ""]) == (2, "b", 2.5, 0, "2026-01-02", None)
    assert render(["", None, "", None, "", None]) is None  # an empty row, even of "" in a copied column


def test_a_first_row_of_data_counts_in_its_columns_types_and_empties() -> None:
    # the first row is data (it holds numbers): its "" must still be written NULL
    plan = survey_sheet([[1, "", 2.5], [2, "b", 3.5], [3, "c", 4.5]])
    assert plan is not None and not plan.has_header
    assert list(rendered_rows(plan, [[1, "", 2.5], [2, "b", 3.5]])) == [(1, None, 2.5), (2, "b", 3.5)]


def test_a_column_empty_in_every_data_row_writes_its_empty_strings_as_null() -> None:
    plan = survey_sheet([["a", "b"], [1, ""], [2, ""]])
    assert plan is not None
    assert list(rendered_rows(plan, [[1, ""], [2, ""]])) == [(1, None), (2, None)]


def test_a_reader_that_reuses_its_row_object_is_surveyed_right() -> None:
    def reused() -> Any:
        row: list[Any] = []
        for values in (["n", "w"], [1, "a"], [2.5, "b"], ["x", 3]):
            row[:] = values
            yield row
    plan = survey_sheet(reused())
    assert plan is not None
    assert [c.sql_type for c in plan.columns] == ["TEXT", "TEXT"]


def test_kept_rows_are_the_rows_read_and_a_bigger_sheet_keeps_none() -> None:
    rows = [["n", "sq"]] + [[i, i * i] for i in range(1, 101)]
    plan, kept = survey_sheet_keeping_rows(iter(rows), keep_cells=1_000)
    assert isinstance(kept, CachedSheetRows) and plan == kept.plan
    assert list(kept) == [(i, i * i) for i in range(1, 101)]
    plan_again, none = survey_sheet_keeping_rows(iter(rows), keep_cells=100)
    assert none is None and plan_again == plan
    assert survey_sheet_keeping_rows(iter([[None], []]), keep_cells=100) == (None, None)


def test_a_plan_made_by_hand_writes_every_cell_by_its_rules() -> None:
    # a ColumnPlan without survey evidence (a plugin's own) is never copied as read
    column = ColumnPlan(sql_type="TEXT", dates_only=True)
    assert column.stored_as_read is False
    plan = SheetPlan(first_row=1, has_header=False, first_row_as_data=None, last_row=2, first_col=0,
                     names=("when", "n"), columns=(column, ColumnPlan(sql_type="INTEGER", dates_only=False)),
                     header_notes=(), row_count=2, skipped_rows=(), stopped_at_row=None)
    rows = [(dt.datetime(2026, 1, 2), "7"), (None, 8.0), ("", None)]
    assert list(rendered_rows(plan, rows)) == [
        tuple(write_cell(value, col) for value, col in zip(row, plan.columns)) for row in rows[:2]]
    assert list(rendered_rows(plan, rows)) == [("2026-01-02", 7), (None, 8)]


def test_kept_rows_shorter_than_the_header_and_off_the_first_column_render_as_row_by_row() -> None:
    # the header is wider than every data row (their missing cells are NULL), the table
    # starts in the third column, and empty rows sit between data rows
    rows: list[list[Any]] = [[], [None, None, "a", "b", "c", "d"], [None, None, 1, dt.datetime(2026, 1, 4)],
                             [None, None, "", None], [None, None, True], [], [None, None, None, "x", ""],
                             [None, 7, 2.5]]
    assert_kept_rows_render_as_row_by_row(rows)
    plan, kept = survey_sheet_keeping_rows(iter(rows))
    assert plan is not None and plan.first_col == 1 and plan.width == 5
    assert list(kept) == [(None, 1.0, "2026-01-04", None, None), (None, 1.0, None, None, None),
                          (None, None, "x", None, None), (7, 2.5, None, None, None)]


def test_a_kept_value_no_rule_can_write_fails_at_its_row_as_when_streamed() -> None:
    # a plugin's own object that no rule spells (json.dumps refuses it): the rows before
    # it still come first, then the error
    rows: list[list[Any]] = [["n"], ["a"], ["b"], [object()], ["c"]]
    plan, kept = survey_sheet_keeping_rows(iter(rows))
    assert plan is not None and kept is not None
    got: list[Any] = []
    with pytest.raises(TypeError):
        for row in kept:
            got.append(row)
    assert got == [("a",), ("b",)]
