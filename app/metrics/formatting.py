"""Number formatting for reports: significant digits.

method-notes §4: power-related numbers are reported with at least three significant digits (the
seed's sample report shows 592.692 W, 12.317 GB/W, 3.01 MiB/s/W).
"""

from __future__ import annotations

import math


def sig_digits(value: float, n: int = 3) -> str:
    """``value`` with at least ``n`` significant digits, in plain notation (method-notes §4:
    592.692 W → "593", 12.317 GB/W → "12.3", 3.01 MiB/s/W → "3.01").

    Integer digits are never dropped (123456 → "123456"); small values keep ``n`` significant
    digits (0.001234 → "0.00123"); NaN/inf give "—" so a missing figure never reads as a number.
    """
    if n < 1:
        raise ValueError(f"significant digits must be ≥ 1, got {n}")
    if value is None or not math.isfinite(value):
        return "—"
    if value == 0:
        return "0." + "0" * (n - 1) if n > 1 else "0"
    magnitude = math.floor(math.log10(abs(value)))
    decimals = max(0, n - 1 - magnitude)
    text = f"{value:.{decimals}f}"
    # rounding may carry into a new digit (9.996 → "10.00"): recompute once
    if decimals and len(text.replace("-", "").replace(".", "").lstrip("0")) > n:
        text = f"{value:.{decimals - 1}f}"
    return text

