"""Decoding meter replies into numbers or flagged NaNs (method-notes §3, §8).

A special value (NAN, INF, 9.9E37, Hioki ±999.99E+9, Chroma -1/-2/-3, PTD -1, "Error") must
never reach an average as a number: it becomes ``nan`` plus the flag that says why.
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
_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z%]*)\s*$")


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


def parse_number(text: str) -> float | None:
    """An NR1/NR2/NR3 number with an optional unit suffix ("300V", "+22.2500C"), else None."""
    m = _NUMBER.match(text)
    return float(m.group(1)) if m else None


def reading_resolution(text: str) -> float | None:
    """The value of one step in the last digit of a number as sent: a meter prints the digits
    its range resolves, so this is its reading resolution (method-notes §3). ``592.7`` → 0.1,
    ``47.51E+00`` → 0.01, ``0.59E+03`` → 10; None when ``text`` is no number."""
    m = _NUMBER.match(text)
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
        value = parse_number(text)
        if value is None:
            flag = FLAG_GARBAGE
        else:
            flag = specials.match(value)
            if flag is None:
                return Decoded(value, resolution=reading_resolution(text))
    if sensor and flag in (FLAG_OVERRANGE, FLAG_NO_DATA, FLAG_INVALID):
        flag = FLAG_SENSOR_ERROR
    return Decoded(NAN, frozenset({flag}))


def decode_fields(reply: str, count: int, specials: SpecialValues = GENERIC,
                  separator: str = ",") -> list[Decoded]:
    """A separated reply of ``count`` fields; a wrong field count is garbage in every field."""
    tokens = reply.split(separator)
    if len(tokens) != count:
        return [Decoded(NAN, frozenset({FLAG_GARBAGE}))] * count
    return [decode(t, specials) for t in tokens]
