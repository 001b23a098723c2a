"""Accuracy specifications and per-sample uncertainty (method-notes §3, §8, §10).

``u = (k_read·reading + k_range·range) / reading``; the power range is the product of the
voltage and current ranges (times the number of elements a Σ value sums). The k values, the
crest factor and the current span in which the formula is trusted are data in each driver
(published-style figures for 45–66 Hz sine input), so a report can print the formula each input
was judged by and the run view can warn where a model is known to mislead (a WT310E below
0.2 A, method-notes §10). A lab with a different calibration certificate can pass its own spec.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class RangeAccuracy:
    """Power accuracy on one current range: ±(k_read × reading + k_range × range)."""

    amps: float
    k_read: float
    k_range: float

    @property
    def formula(self) -> str:
        """The formula as a data sheet words it: ``±(0.1 % of reading + 0.05 % of range)``."""
        return f"±({self.k_read * 100:g} % of reading + {self.k_range * 100:g} % of range)"


@dataclass(frozen=True)
class AccuracySpec:
    """One model's accuracy as data: the formula per current range, the crest factor the
    driver sets (None: the driver leaves the meter's own), and the current span (A) in which
    the formula is trusted (None: no limit known beyond the range list)."""

    volt_ranges: tuple[float, ...]
    per_amp_range: tuple[RangeAccuracy, ...]
    crest_factor: float | None = None
    valid_amps: tuple[float, float] | None = None

    @property
    def amp_ranges(self) -> tuple[float, ...]:
        return tuple(r.amps for r in self.per_amp_range)

    def for_range(self, amps: float) -> RangeAccuracy | None:
        for r in self.per_amp_range:
            if math.isclose(r.amps, amps, rel_tol=1e-6):
                return r
        return None

    def power_uncertainty_pct(self, watts: float, range_v: float | None,
                              range_a: float | None, elements: int = 1) -> float | None:
        """Relative uncertainty of ``watts`` in %, or None when it cannot be evaluated.
        ``elements``: how many elements a Σ reading sums (each adds its range term)."""
        if range_v is None or range_a is None or not math.isfinite(watts) or watts == 0:
            return None
        if not any(math.isclose(v, range_v, rel_tol=1e-6) for v in self.volt_ranges):
            return None
        acc = self.for_range(range_a)
        if acc is None:
            return None
        power_range = range_v * range_a * elements
        return (acc.k_read * abs(watts) + acc.k_range * power_range) / abs(watts) * 100.0

    def low_current(self, amps: float) -> bool:
        """A finite current below the span where the formula is trusted (a warning: the
        reading stays, its uncertainty may be understated)."""
        return self.valid_amps is not None and math.isfinite(amps) \
            and abs(amps) < self.valid_amps[0]

    def describe(self) -> str:
        """Every range's formula, ranges with the same formula grouped, then the crest factor
        and the trusted current span: what a report prints per input."""
        groups: dict[str, list[float]] = {}
        for r in self.per_amp_range:
            groups.setdefault(r.formula, []).append(r.amps)
        parts = [f"{formula} on the {_amps(min(a))}–{_amps(max(a))} ranges"
                 if len(a) > 1 else f"{formula} on the {_amps(a[0])} range"
                 for formula, a in groups.items()]
        parts.append(f"crest factor {self.crest_factor:g}" if self.crest_factor is not None
                     else "crest factor as set on the meter")
        if self.valid_amps is not None:
            low, high = self.valid_amps
            parts.append(f"trusted from {_amps(low)} to {_amps(high)}")
        return "; ".join(parts)


def _amps(value: float) -> str:
    return f"{value * 1000:g} mA" if value < 1 else f"{value:g} A"


def uniform(amp_ranges: tuple[float, ...], k_read: float,
            k_range: float) -> tuple[RangeAccuracy, ...]:
    """Same (k_read, k_range) on every listed current range."""
    return tuple(RangeAccuracy(a, k_read, k_range) for a in amp_ranges)
