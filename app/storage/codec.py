"""Conversions between record values and their compact stored form.

Power samples are the bulk of a run (≈100 000 rows), so their flags are stored as a short code
string (one letter per known flag, sorted) rather than JSON, and "no value" (NaN or ``None``)
is SQL ``NULL``. Unknown flags (a newer driver) are kept verbatim after a ``|`` so nothing
a meter reported is ever dropped.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from app.metrics.steady_state import SteadyStateVerdict
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
        codes, _, rest = text.partition("|")  # type: ignore[union-attr]  # None is cached
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


def generator_to_json(g: di.GeneratorCeiling) -> dict[str, Any]:
    """A generator ceiling as ``search_results.generator`` holds it (one per listed step)."""
    return {"step": g.step, "iops": opt_float(g.iops), "mib_s": opt_float(g.mib_s),
            "asked_iops": opt_float(g.asked_iops), "share_error_pts": g.share_error_pts,
            "seconds": g.seconds}


def generator_from_json(profile: str, row: dict[str, Any]) -> di.GeneratorCeiling:
    asked = row.get("asked_iops")
    return di.GeneratorCeiling(profile, int(row["step"]), nan_if_none(row["iops"]),
                            nan_if_none(row["mib_s"]), None if asked is None else float(asked),
                            float(row.get("share_error_pts", 0.0)), float(row.get("seconds", 0.0)))


def pattern_to_json(p: di.MeasuredPattern | None) -> dict[str, Any] | None:
    """A measured access pattern as ``search_results.access_pattern`` holds it (NaN as null)."""
    if p is None:
        return None
    return {"profile": p.profile, "ios": p.ios, "seconds": opt_float(p.seconds),
            "read_pct": p.read_pct, "sequential_pct": p.sequential_pct, "aligned": p.aligned,
            "uniformity_p": opt_float(p.uniformity_p), "low_pct": p.low_pct,
            "high_pct": p.high_pct, "source": p.source,
            **({} if p.distinct_pct is None else {"distinct_pct": p.distinct_pct}),
            "streams": [{"name": t.name, "share_pct": t.share_pct, "read_pct": t.read_pct,
                         "low_pct": t.low_pct, "high_pct": t.high_pct,
                         "sequential_pct": t.sequential_pct,
                         "uniformity_p": opt_float(t.uniformity_p),
                         "curve": [list(c) for c in t.curve]} for t in p.streams]}


def pattern_from_json(row: dict[str, Any] | None) -> di.MeasuredPattern | None:
    if row is None:
        return None
    streams = tuple(di.StreamPattern(
        t["name"], float(t["share_pct"]), float(t["read_pct"]), float(t["low_pct"]),
        float(t["high_pct"]), float(t["sequential_pct"]), nan_if_none(t["uniformity_p"]),
        tuple((float(x), float(m), float(r)) for x, m, r in t["curve"]))
        for t in row["streams"])
    return di.MeasuredPattern(row["profile"], int(row["ios"]), nan_if_none(row["seconds"]),
                              float(row["read_pct"]), float(row["sequential_pct"]),
                              bool(row["aligned"]), nan_if_none(row["uniformity_p"]),
                              float(row["low_pct"]), float(row["high_pct"]), streams,
                              str(row["source"]),
                              None if row.get("distinct_pct") is None
                              else float(row["distinct_pct"]))


def steady_to_json(v: SteadyStateVerdict | None) -> dict[str, Any] | None:
    """A PTS steady-state verdict as ``phases.steady_state`` holds it (NaN as null, 0020)."""
    if v is None:
        return None
    return {"steady": v.steady, "round_index": v.round_index,
            "window_average": opt_float(v.window_average), "range_pct": opt_float(v.range_pct),
            "slope_excursion_pct": opt_float(v.slope_excursion_pct), "gave_up": v.gave_up,
            "reason": v.reason}


def steady_from_json(row: dict[str, Any] | None) -> SteadyStateVerdict | None:
    if row is None:
        return None
    index = row["round_index"]
    return SteadyStateVerdict(bool(row["steady"]), None if index is None else int(index),
                              nan_if_none(row["window_average"]), nan_if_none(row["range_pct"]),
                              nan_if_none(row["slope_excursion_pct"]), bool(row["gave_up"]),
                              str(row["reason"]))
