"""Passport fields a source declares for itself (``Conversion.frontmatter``)."""
from __future__ import annotations

import datetime as dt

import pytest

from monkeyllm_gardener.nodes import iso_date


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-03-01", "2026-03-01"),
        ("2026-03-01T10:15:00Z", "2026-03-01"),
        (" 2026-03-01 10:15:00 ", "2026-03-01"),
        (dt.date(2024, 2, 29), "2024-02-29"),
        (dt.datetime(2019, 12, 31, 23, 59), "2019-12-31"),
        ("2026-02-30", None),  # not a day of the calendar
        ("01/03/2026", None),  # ambiguous: day or month first
        ("March 2026", None),
        ("", None),
        (None, None),
        (20260301, None),
    ],
)
def test_iso_date_takes_only_real_iso_dates(value: object, expected: str | None) -> None:
    assert iso_date(value) == expected
