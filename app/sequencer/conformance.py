"""The method's rules on the samples themselves: flagged power, supply, inlet temperature.

A metric is only as good as the readings under it. Beside the arithmetic in ``app.metrics``,
the method sets conditions on the readings (method-notes §3): no flagged power sample averaged
away, the SUT on a nominal supply, the inlet read at 0.1 °C at least every minute and inside
the SUT's declared ASHRAE class (method-notes §10). The phase recorder keeps the samples of
each window and asks this module whether they meet those rules; each function returns the
reasons a metric is INVALID, each naming the rule, its source and the evidence, so a reader of
the report can check the verdict without the code.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.method.model import (InletClass, InstrumentLimits, Method, VoltageRange,
                              derived_target)
from app.core.records import SutDescription
from drivers.interfaces import (FLAG_FREQUENCY_NOT_MEASURED, FLAG_FREQUENCY_OUT_OF_RANGE,
                                FLAG_GARBAGE, FLAG_IMPLAUSIBLE, FLAG_INPUT_MISSING,
                                FLAG_INPUTS_MISALIGNED, FLAG_INVALID, FLAG_NO_DATA,
                                FLAG_OVERRANGE, FLAG_RANGE_CHANGE, FLAG_STALE,
                                FLAG_UNCERTAINTY_UNKNOWN, FLAG_VOLTAGE_OUT_OF_RANGE, PowerSample)

#: the flags the method's tolerance counts (``instruments.max_flagged_power_samples``), in the
#: words a report uses; the high-uncertainty flag has its own rule (the 1 % limit)
COUNTED_FLAGS: dict[str, str] = {
    FLAG_OVERRANGE: "over-range",
    FLAG_NO_DATA: "no-data",
    FLAG_INVALID: "invalid",
    FLAG_RANGE_CHANGE: "range-change",
    FLAG_GARBAGE: "unreadable",
    FLAG_UNCERTAINTY_UNKNOWN: "uncertainty-not-evaluable",
    FLAG_INPUT_MISSING: "power-input-missing",
    FLAG_INPUTS_MISALIGNED: "power-inputs-misaligned",
    FLAG_STALE: "stale",
    FLAG_IMPLAUSIBLE: "implausible",
}

@dataclass(frozen=True)
class SiteRules:
    """The method's limits on the readings, bound to what the SUT set-up declared."""

    supply: VoltageRange
    inlet: InletClass
    limits: InstrumentLimits

    @classmethod
    def declared(cls, method: Method, sut: SutDescription) -> "SiteRules":
        """Raises KeyError (listing the choices) for a supply or class the method lacks."""
        limits = method.instruments
        return cls(limits.supply(sut.supply), limits.inlet_class(sut.ashrae_class), limits)

    def supply_flags(self, sample: PowerSample) -> frozenset[str]:
        """The sample's flags plus a supply flag for volts or Hz outside the declared range
        or not measured (a reading the meter could not take is not checked here: its own
        flag already keeps it out of every average). A sum of power inputs is checked on
        every input (each is wired to the supply).

        Row 5 (docs/conformance.md; method-notes §3 "not measured by this interface"): a
        quantity the interface cannot give at all (``FLAG_FREQUENCY_NOT_MEASURED``, PTDaemon's
        ``RL``) is not judged, and the report discloses it; one the interface can give but
        did not (NaN without that flag) fails the rule as before."""
        if not sample.usable:
            return sample.flags
        volts, hz = self.supply_reading(sample)
        added = set()
        if not self.supply.min_v <= volts <= self.supply.max_v:  # NaN fails too
            added.add(FLAG_VOLTAGE_OUT_OF_RANGE)
        low, high = self.limits.frequency_hz
        if not low <= hz <= high and not _frequency_unmeasurable(sample):
            added.add(FLAG_FREQUENCY_OUT_OF_RANGE)
        return sample.flags | added

    def supply_reading(self, sample: PowerSample) -> tuple[float, float]:
        """(volts, Hz) the supply rule judges and quotes: the sample's own, or of a sum of
        power inputs the input volts and the input hertz farthest outside the allowed range."""
        if not sample.inputs:
            return sample.volts, sample.freq_hz
        parts = sample.inputs
        low, high = self.limits.frequency_hz
        hertz = [p.freq_hz for p in parts if FLAG_FREQUENCY_NOT_MEASURED not in p.flags]
        return (max((p.volts for p in parts),
                    key=lambda v: _outside(v, self.supply.min_v, self.supply.max_v)),
                max(hertz, key=lambda f: _outside(f, low, high)) if hertz else math.nan)


def _frequency_unmeasurable(sample: PowerSample) -> bool:
    """No reading of the sample's frequency could exist: its meter (or, for a sum, every
    input's meter) has no frequency in its protocol."""
    if sample.inputs:
        return all(FLAG_FREQUENCY_NOT_MEASURED in p.flags for p in sample.inputs)
    return FLAG_FREQUENCY_NOT_MEASURED in sample.flags


def flagged_power_problem(flags_by_interval: Sequence[tuple[int, frozenset[str]]],
                          tolerance: int) -> str | None:
    """Flagged samples of a window (interval index, flags) beyond the method's tolerance."""
    per_interval: dict[int, int] = Counter()
    by_flag: Counter[str] = Counter()
    for interval, flags in flags_by_interval:
        counted = [f for f in COUNTED_FLAGS if f in flags]
        if counted:
            per_interval[interval] += 1
            by_flag.update(counted)
    total = sum(per_interval.values())
    if total <= tolerance:
        return None
    kinds = ", ".join(f"{by_flag[f]} {word}" for f, word in COUNTED_FLAGS.items() if by_flag[f])
    where = ", ".join(f"#{i + 1}: {n}" for i, n in sorted(per_interval.items()))
    return (f"{total} flagged power sample(s) in the measurement window ({kinds}; per interval "
            f"{where}), beyond the method's tolerance of {tolerance} "
            "(instruments.max_flagged_power_samples; method-notes §3)")


def resolution_problem(readings: Sequence[tuple[float, float | None]],
                       limits: InstrumentLimits) -> str | None:
    """Usable (watts, resolution the meter sent) of a window against the "Minimum Accuracy"
    table read as the required resolution (method-notes §3); readings whose resolution the
    driver could not tell are not judged here."""
    coarse = []
    for watts, resolution in readings:
        need = limits.required_resolution_w(watts) if resolution is not None else None
        if need is not None and resolution > need * (1 + 1e-9):
            coarse.append((watts, resolution, need))
    if not coarse:
        return None
    watts, resolution, need = max(coarse, key=lambda c: c[1] / c[2])
    return (f"{len(coarse)} of {len(readings)} power sample(s) of the measurement window read "
            f"coarser than the method's minimum-accuracy table, read as the meter's resolution "
            f"(worst {resolution:g} W at {watts:.1f} W where {need:g} W is required; "
            "instruments.min_accuracy; method-notes §3)")


def supply_problems(samples: Sequence[tuple[float, float, frozenset[str]]],
                    rules: SiteRules) -> list[str]:
    """(volts, Hz, flags) of a window's samples: one reason per supply quantity out of range."""
    problems = []
    low_hz, high_hz = rules.limits.frequency_hz
    checks = ((FLAG_VOLTAGE_OUT_OF_RANGE, 0, "V", "voltage", rules.supply.min_v,
               rules.supply.max_v, f"the declared supply {rules.supply.id} "
               f"({rules.supply.describe()})", "voltage_ranges"),
              (FLAG_FREQUENCY_OUT_OF_RANGE, 1, "Hz", "frequency", low_hz, high_hz,
               f"{low_hz:g}–{high_hz:g} Hz", "frequency_hz"))
    for flag, column, unit, quantity, low, high, allowed, key in checks:
        values = [s[column] for s in samples if flag in s[2]]
        if values:
            problems.append(f"supply {quantity} outside {allowed} in {len(values)} of "
                            f"{len(samples)} power sample(s) of the measurement window, worst "
                            f"{_worst(values, low, high, unit)} (instruments.{key}; "
                            "method-notes §3)")
    return problems


def _worst(values: Iterable[float], low: float, high: float, unit: str) -> str:
    measured = [v for v in values if v == v]
    if not measured:
        return "not measured by the meter"
    worst = max(measured, key=lambda v: max(low - v, v - high))
    return f"{worst:.1f} {unit}"


def _outside(value: float, low: float, high: float) -> float:
    """How far ``value`` lies outside [low, high] (negative inside; NaN farthest)."""
    return math.inf if value != value else max(low - value, value - high)


def grid_points(times: Iterable[float], t0: float, period: float) -> list[float]:
    """Each sample time as the scheduled grid point ``t0 + k·period`` it was taken for.

    The sampler polls on that grid and stamps a sample with the time it was polled, a few ms
    after its grid point under load (``app.sequencer.sampler``); the latest point not after
    the stamp is the one it belongs to. Judged on these points, a sample late by jitter is
    on time, and only a grid point without a sample is a gap (issue 24 item 4)."""
    return [t0 + math.floor((t - t0) / period + 1e-9) * period for t in times]


def longest_gap(times: Iterable[float], start: float, end: float) -> float:
    """Longest stretch of [start, end) without a time in ``times`` (the edges count)."""
    inside = sorted(t for t in times if start <= t < end)
    edges = [start, *inside, end]
    return max(b - a for a, b in zip(edges, edges[1:]))


def temperature_problems(readings: Sequence[tuple[float, float, float | None]], start: float,
                         end: float, rules: SiteRules) -> list[str]:
    """Usable inlet readings (t, °C, stated resolution °C) against the rules for the window
    [start, end)."""
    inside = [r for r in readings if start <= r[0] < end]
    if end <= start:
        return []
    if not inside:
        return ["no inlet temperature reading in the measurement window: a thermometer at the "
                "SUT inlet is required (method-notes §3)"]
    problems = []
    gap = longest_gap((r[0] for r in inside), start, end)
    limit = rules.limits.max_temperature_interval_s
    if gap > limit:
        problems.append(f"inlet temperature missing for {gap:.1f} s (limit {limit:g} s, "
                        "instruments.max_temperature_interval_s; method-notes §3)")
    celsius = [r[1] for r in inside]
    coarse = resolution_of_inlet([r[2] for r in inside], rules.limits.temperature_resolution_c)
    if coarse:
        problems.append(coarse)
    inlet = rules.inlet
    outside = [c for c in celsius if not inlet.min_c <= c <= inlet.max_c]
    if outside:
        worst = max(outside, key=lambda c: max(inlet.min_c - c, c - inlet.max_c))
        problems.append(f"inlet {worst:.1f} °C outside ASHRAE {inlet.name}'s allowable "
                        f"{inlet.min_c:g}–{inlet.max_c:g} °C in {len(outside)} of "
                        f"{len(celsius)} reading(s) of the measurement window "
                        "(instruments.inlet_classes; method-notes §10)")
    return problems


def resolution_of_inlet(resolutions: Sequence[float | None], required: float) -> str | None:
    """Row 6c: the thermometer's resolution as it stated it with each reading (its reply's
    last digit, or its driver's statement for the configured mode), never the steps the
    readings happen to show: a steady inlet read at 0.1 °C is as good as a wandering one."""
    unknown = sum(r is None for r in resolutions)
    stated = [r for r in resolutions if r is not None]
    if stated and (worst := max(stated)) > required * (1 + 1e-9):
        coarse = sum(r > required * (1 + 1e-9) for r in stated)
        return (f"the inlet thermometer resolves {worst:g} °C in {coarse} of "
                f"{len(resolutions)} reading(s) (as its replies state); the method requires "
                f"{required:g} °C (instruments.temperature_resolution_c; method-notes §3)")
    if unknown:
        return (f"the inlet thermometer stated no resolution for {unknown} of "
                f"{len(resolutions)} reading(s), so the method's {required:g} °C cannot be "
                "shown (instruments.temperature_resolution_c; method-notes §3)")
    return None


def derived_rate_problem(name: str, achieved: float, reference: str, reference_rate: float,
                         share_pct: float, tolerance_pct: float) -> str | None:
    """Whether a profile run at a share of another's measured rate (MW2 at 25 % of MW1) held
    it over its measurement interval: what ran is judged, not what was asked — a load host
    that does not hold its cap, or a generator that falls behind, otherwise leaves a VALID
    EP_MW2 at any rate (method-notes §2, "What ran is judged"). The reason names both rates,
    the share and the tolerance. The verifier applies the same rule
    (``check_derived_rate``)."""
    if not reference_rate > 0:
        return (f"{reference} measured no IO, so {name}'s rate ({share_pct:g} % of "
                f"{reference}'s) has no reference to be judged against (method-notes §2)")
    target = derived_target(reference_rate, share_pct)
    if abs(achieved - target) <= target * tolerance_pct / 100:
        return None
    return (f"achieved rate {achieved:.1f} is {achieved / reference_rate * 100:.2f} % of "
            f"{reference}'s {reference_rate:.1f}, outside ± {tolerance_pct:g} % of its target "
            f"{target} ({share_pct:g} % of {reference}; search.derived_rate_tolerance_pct, "
            "method-notes §2)")
