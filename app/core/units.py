"""Numbers with units as people type them: "7300 GB", "7300GB", "7.3 TB", "7,3 TB", "64M".

One parser for the wizard and the command line, so a capacity typed in either reads the same.
Capacities are decimal (1 GB = 10⁹ B, docs/method-notes.md §4) unless the binary unit is typed
(GiB, TiB). A scratch size reads the same way — "7.3 TB" is the same 7.3 × 10¹² B as the
capacity field's "7.3 TB", never 7.3 TiB — except fio's bare suffixes (64M, 1G), which are
binary as fio reads them (64M = 64 MiB). The station hands fio the byte count, so what fio
would make of a unit never changes the size.

The decimal separator is the caller's locale's (the GUI passes Qt's); a comma is also read as
a decimal comma wherever it cannot be a thousands separator ("7,3" but not "7,300" in an
English locale), so a technician never has to retype a figure in the other convention.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

#: capacity units, decimal unless the binary unit is written out (never mixed, §4)
CAPACITY_UNITS: Mapping[str, int] = {
    "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "PB": 10**15,
    "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40, "PIB": 2**50}
#: scratch sizes: the capacity units (GB decimal, GiB binary), and fio's bare suffixes K, M, G,
#: T, P as fio reads them (binary, its default kb_base=1024)
SIZE_UNITS: Mapping[str, int] = {
    **CAPACITY_UNITS, "": 1,
    **{prefix: 1024 ** power for power, prefix in enumerate(("K", "M", "G", "T", "P"), 1)}}

_QUANTITY = re.compile(r"^\s*([-+]?[0-9][0-9.,'\s\u00a0\u202f]*?)\s*([A-Za-z]*)\s*$")


class UnitError(ValueError):
    """A figure that cannot be read; the message quotes it and says what is accepted."""


def parse_number(text: str, decimal_point: str = ".") -> float:
    """'7,3' → 7.3 (decimal comma), '7 300' → 7300, '7,300' → 7300 with ``decimal_point``
    '.', but 7.3 with ``decimal_point`` ','; '7.300,5' → 7300.5 with ','."""
    digits = re.sub(r"[\s\u00a0\u202f']", "", text)
    group = "," if decimal_point == "." else "."
    whole, point, fraction = digits.rpartition(decimal_point) if decimal_point in digits \
        else (digits, "", "")
    if group in whole:
        if re.fullmatch(rf"[-+]?\d{{1,3}}(\{group}\d{{3}})+", whole):
            whole = whole.replace(group, "")  # thousands separators
        elif not point and whole.count(group) == 1:
            whole, point, fraction = whole.partition(group)  # the other decimal convention
        else:
            raise UnitError(f"{text.strip()!r} mixes decimal and thousands separators")
    if not re.fullmatch(r"[-+]?\d+", whole) or (point and not fraction.isdigit()):
        raise UnitError(f"{text.strip()!r} is not a number")
    return float(f"{whole}.{fraction or 0}")


def parse_quantity(text: str, units: Mapping[str, int], default_unit: str | None = None,
                   decimal_point: str = ".", allow_zero: bool = False) -> int:
    """``text`` (a number and an optional unit from ``units``, case-insensitive) in base units.

    Without a typed unit ``default_unit`` applies (e.g. the unit chosen beside the field).
    Raises :class:`UnitError` for empty, unreadable or negative figures, and for zero unless
    ``allow_zero``."""
    match = _QUANTITY.match(text or "")
    if not match:
        raise UnitError(f"{(text or '').strip()!r} is not a number with an optional unit "
                        f"({', '.join(sorted(units))})")
    number, unit = match.group(1), match.group(2).upper() or (default_unit or "").upper()
    if unit not in units:
        raise UnitError(f"unknown unit {match.group(2) or default_unit!r} in {text.strip()!r}; "
                        f"use one of {', '.join(sorted(units))}")
    result = round(parse_number(number, decimal_point) * units[unit])
    if result < 0 or (result == 0 and not allow_zero):
        raise UnitError(f"{text.strip()!r} must be greater than zero")
    return result


def parse_capacity(text: str, default_unit: str = "GB", decimal_point: str = ".") -> int:
    """A capacity in bytes: '7.3 TB' → 7 300 000 000 000; '7300' with default 'GB' → the same."""
    return parse_quantity(text, CAPACITY_UNITS, default_unit, decimal_point)


def parse_size(text: str, decimal_point: str = ".") -> int:
    """A scratch size in bytes: '64M' → 67 108 864 and '1,5 GiB' → 1 610 612 736 (binary), but
    '7.3 TB' → 7 300 000 000 000 (decimal, as the capacity field reads it); '0' is a size too
    (local-fio: create no scratch file)."""
    return parse_quantity(text, SIZE_UNITS, "B", decimal_point, allow_zero=True)
