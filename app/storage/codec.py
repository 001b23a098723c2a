"""Conversions between record values and their compact stored form.

Power samples are the bulk of a run (≈100 000 rows), so their flags are stored as a short code
string (one letter per known flag, sorted) rather than JSON, and "no value" (NaN or ``None``)
is SQL ``NULL``. Unknown flags (a newer driver) are kept verbatim after a ``|`` so nothing
a meter reported is ever dropped.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from drivers import interfaces as di

FLAG_CODES: dict[str, str] = {
    di.FLAG_NO_DATA: "N",
    di.FLAG_OVERRANGE: "O",
    di.FLAG_RANGE_CHANGE: "R",
    di.FLAG_INVALID: "I",
    di.FLAG_UNCERTAINTY_HIGH: "U",
    di.FLAG_UNCERTAINTY_UNKNOWN: "K",
    di.FLAG_SENSOR_ERROR: "S",
    di.FLAG_GARBAGE: "G",
    di.FLAG_VOLTAGE_OUT_OF_RANGE: "V",
    di.FLAG_FREQUENCY_OUT_OF_RANGE: "F",
    di.FLAG_INPUT_MISSING: "X",
    di.FLAG_INPUTS_MISALIGNED: "A",
    di.FLAG_LOW_CURRENT: "L",
    di.FLAG_FREQUENCY_NOT_MEASURED: "H",
    di.FLAG_STALE: "Z",  # frozen
    di.FLAG_IMPLAUSIBLE: "P",  # physically impossible
}
CODE_FLAGS: dict[str, str] = {code: flag for flag, code in FLAG_CODES.items()}
NO_FLAGS: frozenset[str] = frozenset()
_decoded: dict[str | None, frozenset[str]] = {None: NO_FLAGS, "": NO_FLAGS}


def encode_flags(flags: Iterable[str]) -> str | None:
    """``{"overrange", "no_data"}`` → ``"NO"``; no flags → ``None`` (stored as NULL)."""
    if not flags:
        return None
    known = sorted(FLAG_CODES[f] for f in flags if f in FLAG_CODES)
    unknown = sorted(f for f in flags if f not in FLAG_CODES)
    text = "".join(known)
    if unknown:
        text += "|" + ",".join(unknown)
    return text


def decode_flags(text: str | None) -> frozenset[str]:
    """Inverse of :func:`encode_flags`; results are cached (a run uses few distinct sets)."""
    cached = _decoded.get(text)
    if cached is None:
        codes, _, rest = text.partition("|")  # type: ignore[union-attr]
        names = {CODE_FLAGS[c] for c in codes}
        names.update(n for n in rest.split(",") if n)
        cached = _decoded[text] = frozenset(names)
    return cached


def opt_float(value: float | None) -> float | None:
    """NaN and ``None`` both mean "no value": store ``NULL``."""
    if value is None or math.isnan(value):
        return None
    return float(value)


def nan_if_none(value: float | None) -> float:
    return float("nan") if value is None else float(value)
