"""Decoding meter replies into numbers or flagged NaNs (method-notes §3, §8).

A special value (NAN, INF, 9.9E37, Hioki ±999.99E+9, Chroma -1/-2/-3, PTD -1, "Error") must
never reach an average as a number: it becomes ``nan`` plus the flag that says why.

Numbers are parsed strictly as each manual prints them: an NR1/NR2/NR3 number and nothing
else, or with exactly the unit suffix a family's manual shows (the Watchport's ``C``). Any
other suffix (``654300.0MW``) is unreadable, never a number in the wrong unit; and a reply
with one unreadable field is unreadable in every field (a semicolon-locale reply split at
its decimal commas must not keep the fragments that happen to parse).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from drivers.interfaces import (FLAG_GARBAGE, FLAG_INVALID, FLAG_NO_DATA, FLAG_OVERRANGE,
                                FLAG_RANGE_CHANGE, FLAG_SENSOR_ERROR)

NAN = float("nan")
#: IEEE 488.2 / SCPI: 9.9E37 is "infinity" (over-range), 9.91E37 is "not a number" (§8 WT210).
SCPI_INF = 9.9e37
SCPI_NAN = 9.91e37
_NUMBER = re.compile(r"^([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)$")
#: a range reply may carry its unit (the WT210's ``:CONF:VOLT:RANG`` takes ``300V``)
_RANGE_UNIT = re.compile(r"(?<=\d)[VA]$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Decoded:
    value: float
    flags: frozenset[str] = frozenset()
    #: the step of the last digit the meter sent (``47.51E+00`` → 0.01), None for no number
    resolution: float | None = None


@dataclass(frozen=True, slots=True)
class SpecialValues:
    """A meter family's in-band markers: exact numbers (magnitude) → flag."""

    exact: tuple[tuple[float, str], ...] = ()
    #: magnitudes at or above this are over-range (SCPI 9.9E37); ``None`` disables the check
    overrange_at: float | None = SCPI_INF
    #: the unit suffix the family's manual prints after a number ("" = none)
    unit: str = ""

    def match(self, value: float) -> str | None:
        for marker, flag in self.exact:
            if math.isclose(value, marker, rel_tol=1e-6):
                return flag
        if self.overrange_at is not None and abs(value) >= self.overrange_at:
            return FLAG_NO_DATA if math.isclose(abs(value), SCPI_NAN, rel_tol=1e-4) \
                else FLAG_OVERRANGE
        return None


GENERIC = SpecialValues()
#: Hioki PW3335/PW3336: ±999.99E+9 over-range, ±888.88E+9 scaling error, ±777.77E+9 no data
HIOKI = SpecialValues(((999.99e9, FLAG_OVERRANGE), (-999.99e9, FLAG_OVERRANGE),
                       (888.88e9, FLAG_INVALID), (-888.88e9, FLAG_INVALID),
                       (777.77e9, FLAG_NO_DATA), (-777.77e9, FLAG_NO_DATA)))
#: Chroma 66203/66204: -1 first integration not done, -2 range change, -3 invalid (OVR/OCR/OCP)
CHROMA = SpecialValues(((-1.0, FLAG_NO_DATA), (-2.0, FLAG_RANGE_CHANGE), (-3.0, FLAG_INVALID)))
#: PTDaemon: -1.000000 is a bad sample
PTD = SpecialValues(((-1.0, FLAG_NO_DATA),))
#: Digi Watchport ``TC``: ``+22.2500C`` (degrees Celsius, the suffix its manual shows)
WATCHPORT = SpecialValues(unit="C")


def parse_number(text: str, unit: str = "") -> float | None:
    """An NR1/NR2/NR3 number, followed by exactly ``unit`` when one is given, else None."""
    m = _NUMBER.match(_without_unit(text, unit))
    return float(m.group(1)) if m else None


def parse_range(text: str) -> float | None:
    """A range setting as a meter reports it: a number, optionally with its V or A."""
    return parse_number(_RANGE_UNIT.sub("", text.strip()))


def _without_unit(text: str, unit: str) -> str:
    text = text.strip()
    if unit:
        if not text.endswith(unit):
            return ""
        text = text[:-len(unit)]
    return text


def reading_resolution(text: str, unit: str = "") -> float | None:
    """The value of one step in the last digit of a number as sent: a meter prints the digits
    its range resolves, so this is its reading resolution (method-notes §3). ``592.7`` → 0.1,
    ``47.51E+00`` → 0.01, ``0.59E+03`` → 10; None when ``text`` is no number."""
    m = _NUMBER.match(_without_unit(text, unit))
    if not m:
        return None
    mantissa, _, exponent = m.group(1).lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)


def decode(token: str, specials: SpecialValues = GENERIC, sensor: bool = False) -> Decoded:
    """One reply field → value or flagged NaN. ``sensor`` maps range/no-data to sensor error."""
    text = token.strip()
    upper = text.upper()
    flag: str | None
    if "ERROR" in upper:
        flag = FLAG_SENSOR_ERROR if sensor else FLAG_INVALID
    elif upper.lstrip("+-") in ("NAN", "NAN.0"):
        flag = FLAG_NO_DATA
    elif upper.lstrip("+-") in ("INF", "INFINITY"):
        flag = FLAG_OVERRANGE
    else:
        value = parse_number(text, specials.unit)
        if value is None:
            flag = FLAG_GARBAGE
        else:
            flag = specials.match(value)
            if flag is None:
                return Decoded(value, resolution=reading_resolution(text, specials.unit))
    if sensor and flag in (FLAG_OVERRANGE, FLAG_NO_DATA, FLAG_INVALID):
        flag = FLAG_SENSOR_ERROR
    return Decoded(NAN, frozenset({flag}))


def decode_fields(reply: str, count: int, specials: SpecialValues = GENERIC,
                  separator: str = ",") -> list[Decoded]:
    """A separated reply of ``count`` fields; a wrong field count, or one unreadable field,
    is garbage in every field (see the module docstring)."""
    tokens = reply.split(separator)
    decoded = [decode(t, specials) for t in tokens] if len(tokens) == count else []
    if not decoded or any(FLAG_GARBAGE in d.flags for d in decoded):
        return [Decoded(NAN, frozenset({FLAG_GARBAGE}))] * count
    return decoded
