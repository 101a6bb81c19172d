"""A failure as one line of the report: ours as they read, others typed, bounded."""
from __future__ import annotations

from monkeyllm_core import VineError
from monkeyllm_gardener.conversion import ConversionError
from monkeyllm_gardener.error_lines import MAX_ERROR_CHARS, bounded_line, error_line


def test_an_engine_error_reads_as_the_cli_prints_it() -> None:
    error = VineError("E_CONFLICT", "notes/a is a dataset node", "Rename the source file.")
    assert error_line(error) == "error E_CONFLICT: notes/a is a dataset node (Rename the source file.)"


def test_a_conversion_error_reads_as_its_author_wrote_it() -> None:
    assert error_line(ConversionError("corrupt workbook in a.xlsx\nTraceback ...")) == "corrupt workbook in a.xlsx"


def test_any_other_error_is_led_by_its_type() -> None:
    assert error_line(KeyError("customer_id")) == "KeyError: 'customer_id'"
    assert error_line(SystemExit()) == "SystemExit"


def test_what_a_plugin_raised_is_cut_to_the_bound() -> None:
    line = error_line(ValueError("x" * 5000))
    assert len(line) == MAX_ERROR_CHARS and line.startswith("ValueError: xxx") and line.endswith("...")
    assert bounded_line("  first line  \nsecond") == "first line"
