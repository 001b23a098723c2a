"""Accuracy specifications and per-sample uncertainty (method-notes §3, §8).

``u = (k_read·reading + k_range·range) / reading``; the power range is the product of the
voltage and current ranges. The k values are data in each driver (published-style figures for
45–66 Hz sine input); a lab with a different calibration certificate can pass its own spec.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Per-sample uncertainty limit of the method: 1 % of the reading (method-notes §3).
UNCERTAINTY_LIMIT_PCT = 1.0


@dataclass(frozen=True)
class RangeAccuracy:
    """Power accuracy on one current range: ±(k_read × reading + k_range × range)."""

    amps: float
    k_read: float
    k_range: float


@dataclass(frozen=True)
class AccuracySpec:
    volt_ranges: tuple[float, ...]
    per_amp_range: tuple[RangeAccuracy, ...]

    @property
    def amp_ranges(self) -> tuple[float, ...]:
        return tuple(r.amps for r in self.per_amp_range)

    def for_range(self, amps: float) -> RangeAccuracy | None:
        for r in self.per_amp_range:
            if math.isclose(r.amps, amps, rel_tol=1e-6):
                return r
        return None

    def power_uncertainty_pct(self, watts: float, range_v: float | None,
                              range_a: float | None) -> float | None:
        """Relative uncertainty of ``watts`` in %, or None when it cannot be evaluated."""
        if range_v is None or range_a is None or not math.isfinite(watts) or watts == 0:
            return None
        if not any(math.isclose(v, range_v, rel_tol=1e-6) for v in self.volt_ranges):
            return None
        acc = self.for_range(range_a)
        if acc is None:
            return None
        power_range = range_v * range_a
        return (acc.k_read * abs(watts) + acc.k_range * power_range) / abs(watts) * 100.0


def uniform(amp_ranges: tuple[float, ...], k_read: float, k_range: float) -> tuple[RangeAccuracy, ...]:
    """Same (k_read, k_range) on every listed current range."""
    return tuple(RangeAccuracy(a, k_read, k_range) for a in amp_ranges)
