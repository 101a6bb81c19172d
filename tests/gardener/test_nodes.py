"""Passport fields a source declares for itself (``Conversion.frontmatter``), and the
write request a conversion becomes."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from monkeyllm_gardener.host import HostSpec
from monkeyllm_gardener.nodes import build_node, iso_date
from monkeyllm_gardener.walk import SourceFile
from monkeyllm_gardener.worker import prepare_file


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


# -- the write request a conversion becomes ------------------------------------------


def _orders_csv(tmp_path: Path) -> SourceFile:
    csv = tmp_path / "src" / "orders.csv"
    csv.parent.mkdir()
    csv.write_text("id,total\n1,2.5\n2,4\n3,1\n", encoding="utf-8")
    st = csv.stat()
    return SourceFile(rel="orders.csv", location=str(csv), size=st.st_size, mtime=st.st_mtime)


def test_a_dataset_request_carries_the_worker_stage_count_beside_the_passport(tmp_path: Path) -> None:
    f = _orders_csv(tmp_path)
    (tmp_path / "tmp").mkdir()
    prep = prepare_file(HostSpec(load_entry_points=False), str(f.path), f.rel, None, str(tmp_path / "tmp"))
    assert prep.result is not None and prep.result.conversion is not None

    request = build_node("orders", f, prep, prep.result.conversion, f.path.parent,
                         lambda: pytest.fail("the worker stage staged the dataset already"))

    assert request.payload is not None
    assert (request.payload.source, request.payload.move) == (Path(str(prep.dataset_db)), True)
    assert request.payload.row_counts == prep.row_counts == {"orders": 3}
    assert request.passport["payload"] == "orders.db" and request.passport["payload_type"] == "sqlite"
    assert not {"payload_source", "payload_move", "row_counts", "manual_notes"} & set(request.passport)
    assert "3 rows" in request.passport["summary"]


def test_a_conversion_made_without_the_worker_stage_is_staged_and_counted_once_here(tmp_path: Path) -> None:
    f = _orders_csv(tmp_path)
    prep = prepare_file(HostSpec(load_entry_points=False), str(f.path), f.rel, None)  # no tmp dir: nothing staged
    assert prep.dataset_db is None and prep.result is not None and prep.result.conversion is not None
    staged = tmp_path / "staged.db"

    request = build_node("orders", f, prep, prep.result.conversion, f.path.parent, lambda: staged)

    assert request.payload is not None and request.payload.source == staged and staged.is_file()
    assert request.payload.row_counts == {"orders": 3}
