"""Number formatting for reports: significant digits and unambiguous capacity units.

method-notes §4: power-related numbers are reported with at least three significant digits (the
seed's sample report shows 592.692 W, 12.317 GB/W, 3.01 MiB/s/W); 1 GB = 10⁹ B, 1 GiB = 2³⁰ B,
and one figure never mixes the two.
"""

from __future__ import annotations

import math
import re

from app.metrics.errors import UnitMixError

GB = 10**9
GIB = 2**30

CAPACITY_UNITS = {"GB": GB, "TB": 10**12, "GiB": GIB, "TiB": 2**40}


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


DECIMAL_PREFIXED = ("kB", "MB", "GB", "TB", "PB")  # method-notes §4: 1 GB = 10⁹ B
BINARY_PREFIXED = ("KiB", "MiB", "GiB", "TiB", "PiB")  # 1 GiB = 2³⁰ B, 1 MiB = 2²⁰ B


def bytes_to_gb(n: int | float) -> float:
    """Bytes in decimal GB (10⁹ B), the unit of EP_RI (method-notes §4)."""
    return float(n) / GB


def bytes_to_gib(n: int | float) -> float:
    """Bytes in binary GiB (2³⁰ B) — never to be combined with GB in one figure (§4)."""
    return float(n) / GIB


def _unit_families(unit: str) -> set[str]:
    """Prefix families ("decimal", "binary") used by the parts of a unit like "GB/W" (§4)."""
    families = set()
    for part in re.findall(r"[A-Za-z]+", unit):
        if part in DECIMAL_PREFIXED:
            families.add("decimal")
        elif part in BINARY_PREFIXED:
            families.add("binary")
    return families


def format_capacity(n_bytes: int | float, unit: str = "GB", digits: int = 3) -> str:
    """Capacity in exactly one unit family, decimal GB/TB or binary GiB/TiB (method-notes §4)."""
    if unit not in CAPACITY_UNITS:
        raise UnitMixError(f"unknown capacity unit {unit!r}; use one of {', '.join(CAPACITY_UNITS)}")
    return f"{sig_digits(n_bytes / CAPACITY_UNITS[unit], digits)} {unit}"


def format_quantity(value: float, unit: str, digits: int = 3) -> str:
    """'12.3 GB/W' — refuses a unit that mixes decimal and binary prefixes (method-notes §4)."""
    if not isinstance(unit, str) or not unit.strip():
        raise UnitMixError(f"a quantity needs an explicit unit string, got {unit!r}")
    if len(_unit_families(unit)) > 1:
        raise UnitMixError(f"unit {unit!r} mixes decimal (GB, MB…) and binary (GiB, MiB…) "
                           f"prefixes; convert to one family first")
    return f"{sig_digits(value, digits)} {unit}"
