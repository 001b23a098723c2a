"""Number formatting for reports: significant digits and unambiguous capacity units.

SPEC-NOTES §4: power-related numbers are reported with at least three significant digits (the
seed's sample report shows 592.692 W, 12.317 GB/W, 3.01 MiB/s/W); 1 GB = 10⁹ B, 1 GiB = 2³⁰ B,
and one figure never mixes the two.
"""

from __future__ import annotations

import math

GB = 10**9
GIB = 2**30

CAPACITY_UNITS = {"GB": GB, "TB": 10**12, "GiB": GIB, "TiB": 2**40}


def sig_digits(value: float, n: int = 3) -> str:
    """``value`` with at least ``n`` significant digits, in plain notation.

    Integer digits are never dropped (123456 → "123456"); small values keep ``n`` significant
    digits (0.001234 → "0.00123"); NaN/inf give "—" so a missing figure never reads as a number.
    """
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


def bytes_to_gb(n: int | float) -> float:
    return float(n) / GB


def bytes_to_gib(n: int | float) -> float:
    return float(n) / GIB


def format_capacity(n_bytes: int | float, unit: str = "GB", digits: int = 3) -> str:
    """Capacity in exactly one unit family (decimal GB/TB or binary GiB/TiB)."""
    if unit not in CAPACITY_UNITS:
        raise ValueError(f"unknown capacity unit {unit!r}; use one of {', '.join(CAPACITY_UNITS)}")
    return f"{sig_digits(n_bytes / CAPACITY_UNITS[unit], digits)} {unit}"


def format_quantity(value: float, unit: str, digits: int = 3) -> str:
    """'12.3 GB/W' — refuses a unit that mixes decimal and binary prefixes."""
    if ("GB" in unit and "GiB" in unit) or ("MB" in unit and "MiB" in unit):
        raise ValueError(f"unit {unit!r} mixes decimal and binary prefixes")
    return f"{sig_digits(value, digits)} {unit}"
