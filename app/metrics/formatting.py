"""Number formatting for reports: the digits of every reported figure.

method-notes §4: figures are reported as the seed's sample Test Data Report prints them, three
decimals and at least three significant digits (592.692 W, 12.317 GB/W, 0.0123).
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Protocol

#: The seed's sample Test Data Report prints figures with three decimals (method-notes §4).
FIGURE_DECIMALS = 3
#: ... and a small figure with as many more as it takes to show three significant digits.
FIGURE_SIGNIFICANT = 3


def _decimal(value: float) -> Decimal:
    """The decimal number a float prints as (``repr``), so 9.1555 is 9.1555 and not the binary
    neighbour 9.15549999…: rounding half up must act on the value the reader sees."""
    return Decimal(repr(float(value)))


def figure_decimals(value: float) -> int:
    """How many decimals :func:`format_figure` prints for ``value``: three, or more where a
    small figure needs them to reach three significant digits (0.0123 → 4). The xlsx number
    format uses the same count, so a cell shows what the PDF prints."""
    d = _decimal(value)
    if d == 0 or not d.is_finite():
        return FIGURE_DECIMALS
    decimals = max(FIGURE_DECIMALS, FIGURE_SIGNIFICANT - 1 - d.adjusted())
    # rounding may carry into a new leading digit (0.00099995 → 0.001000): one decimal fewer
    if decimals > FIGURE_DECIMALS and _rounded(d, decimals).adjusted() > d.adjusted():
        decimals -= 1
    return decimals


def _rounded(d: Decimal, decimals: int) -> Decimal:
    return d.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


def format_figure(value: float | None) -> str:
    """A reported figure as the seed's sample Test Data Report prints it (method-notes §4):
    592.692 W, 12.317 GB/W, 0.0123, rounded half up on the decimal value (9.1555 → "9.156").

    The one formatter of metric, power and response-time figures for the PDF, the CLI, the GUI
    tables and the history views; storage and xlsx cells keep full precision. NaN, infinity and
    None give "—" so a missing figure never reads as a number.
    """
    if value is None or not math.isfinite(value):
        return "—"
    rounded = _rounded(_decimal(value), figure_decimals(value))
    return f"{abs(rounded) if rounded == 0 else rounded:f}"


def excel_number_format(value: float) -> str:
    """The xlsx number format that shows ``value`` with :func:`format_figure`'s decimals
    (Excel rounds half away from zero on display, as ROUND_HALF_UP does)."""
    return "0." + "0" * figure_decimals(value)


def format_duration(seconds: float | None) -> str:
    """A duration as every view writes it — ``1 h 05 min``, ``3 min 20 s``, ``12 s`` — in
    the run view, the history, the start page, ``storwatt`` commands, the PDF and the xlsx, so
    one run's duration reads alike everywhere (whole seconds; ``—`` when there is none)."""
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return "—"
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    if h:
        return f"{h} h {m:02d} min"
    if m:
        return f"{m} min {sec:02d} s"
    return f"{sec} s"


class ShownFigure(Protocol):
    """A metric as far as a view formats it: a stored ``MetricResult`` or a run list's
    ``KeyMetric``, so both read the same everywhere."""

    @property
    def value(self) -> float: ...

    @property
    def valid(self) -> bool: ...


def format_metric_value(m: ShownFigure) -> str:
    """The figure as the report prints it (method-notes §4); an invalid figure is never shown
    as a bare number."""
    text = format_figure(m.value)
    return text if m.valid or text == "—" else f"({text})"
