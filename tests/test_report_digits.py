"""Report digits (issue 14 item 14, method-notes §4): figures print as the seed's sample Test
Data Report prints them, three decimals and at least three significant digits, rounded half up
on the decimal value — one function for the PDF, the CLI, the GUI tables and the xlsx display."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.cli.console import metrics_table
from app.metrics.formatting import excel_number_format, figure_decimals, format_figure
from app.core.records import MetricResult


@pytest.mark.parametrize("value,text", [
    (592.692, "592.692"), (12.317, "12.317"), (17.255, "17.255"),  # the seed's sample report
    (0.0123, "0.0123"), (9.1555, "9.156"), (0.0012345, "0.00123"), (1234.5678, "1234.568"),
    (0.0, "0.000"), (-0.0, "0.000"), (-12.3175, "-12.318"), (2.675, "2.675"), (1.0005, "1.001"),
    (0.00099995, "0.00100"), (7300, "7300.000"),
    (float("nan"), "—"), (float("inf"), "—"), (None, "—")])
def test_seed_digits(value: float | None, text: str) -> None:
    assert format_figure(value) == text


def test_half_up_acts_on_the_decimal_value_not_the_binary_float() -> None:
    # 9.1555 is stored as 9.15549999…; Python's own rounding gives the binary artefact
    assert f"{9.1555:.3f}" == "9.155"
    assert format_figure(9.1555) == "9.156"


def test_numpy_floats_print_like_python_floats() -> None:
    np = pytest.importorskip("numpy")
    assert format_figure(np.float64(9.1555)) == "9.156"
    assert format_figure(np.float32(0.5)) == "0.500"


finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12)


@given(finite)
def test_printed_value_is_the_half_up_quantization(value: float) -> None:
    text = format_figure(value)
    decimals = figure_decimals(value)
    expected = Decimal(repr(value)).quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP)
    assert Decimal(text) == expected
    assert len(text.partition(".")[2]) == decimals >= 3
    if expected != 0:  # at least three significant digits are shown
        assert len(text.lstrip("-").replace(".", "").lstrip("0")) >= 3


def test_xlsx_number_format_shows_the_same_decimals() -> None:
    assert excel_number_format(592.692) == "0.000"
    assert excel_number_format(0.0123) == "0.0000"
    assert excel_number_format(0.0012345) == "0.00000"


def test_cli_metrics_table_prints_power_with_the_report_digits() -> None:
    m = MetricResult(name="EP_RR", value=17.2551, unit="IOPS/W", valid=True, reason="",
                     avg_power_w=592.6925, ops_rate=10227.0, ops_unit="IOPS",
                     avg_response_ms=1.2345)
    table = metrics_table([m])
    assert "17.255" in table and "592.693 W" in table and "1.235 ms" in table
