"""Power efficiency, its weighted moving average, stability, and the reported metrics.

Rules from SPEC-NOTES §4 (seed emerald-measurement-spec-training.txt, "Metric Stability":
"10 point weighted average of periodic power efficiency of one minute intervals through the
complete measurement interval"):

* periodic efficiency ``EP_i = O_i / P_i`` per interval;
* WMA_i = Σ w_k·EP_{i-k} / Σ w_k over the last ``len(weights)`` intervals, weights newest first
  (10, 9, …, 1 by default); early intervals use the available points with the leading weights;
* stable when every EP_i of the measurement interval lies within ±tolerance of WMA_i;
* active metric = (operations in the measurement interval / its duration) / average power;
* EP_RI = raw capacity in GB (10⁹ B) / average ready-idle power.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.metrics.errors import (EmptySamplesError, MetricsError, NonFiniteError,
                                NonPositivePowerError)

GB = 10**9


def periodic_efficiency(ops_rate: np.ndarray, avg_power_w: np.ndarray) -> np.ndarray:
    """EP_i = O_i / P_i; NaN where the power is missing, non-finite or not positive (such an
    interval has no efficiency — the stability verdict then names it)."""
    o = np.asarray(ops_rate, dtype=float)
    p = np.asarray(avg_power_w, dtype=float)
    valid = np.isfinite(o) & np.isfinite(p) & (p > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(valid, o / np.where(valid, p, 1.0), np.nan)


def weighted_moving_average(ep: np.ndarray, weights: Sequence[float]) -> np.ndarray:
    """WMA_i of ``ep`` with ``weights`` given newest first (SPEC-NOTES §4)."""
    x = np.asarray(ep, dtype=float)
    w = np.asarray(weights, dtype=float)
    if w.size == 0 or np.any(w <= 0):
        raise MetricsError("WMA weights must be a non-empty list of positive numbers")
    n = x.size
    out = np.empty(n)
    for i in range(n):
        k = min(i + 1, w.size)
        window = x[i - k + 1:i + 1][::-1]  # newest first
        out[i] = float(np.dot(window, w[:k]) / w[:k].sum())
    return out


@dataclass(frozen=True)
class StabilityVerdict:
    """Outcome of the stability rule over a phase's intervals."""

    stable: bool
    wma: np.ndarray
    deviation_pct: np.ndarray  # (EP_i − WMA_i) / WMA_i × 100, per interval
    worst_index: int | None  # measurement interval with the largest |deviation|
    reason: str  # why not stable ("" when stable)


def stability(ep: np.ndarray, weights: Sequence[float], tolerance_pct: float,
              measurement_start: int = 0) -> StabilityVerdict:
    """Every EP_i with i ≥ ``measurement_start`` must lie within ±tolerance of WMA_i."""
    x = np.asarray(ep, dtype=float)
    if x.size == 0:
        raise EmptySamplesError("no intervals to judge stability on")
    wma = weighted_moving_average(x, weights)
    with np.errstate(invalid="ignore", divide="ignore"):
        dev = (x - wma) / wma * 100
    window = dev[measurement_start:]
    if window.size == 0:
        return StabilityVerdict(False, wma, dev, None, "no measurement interval yet")
    if not np.all(np.isfinite(window)):
        bad = measurement_start + int(np.flatnonzero(~np.isfinite(window))[0])
        return StabilityVerdict(False, wma, dev, bad,
                                f"interval {bad + 1} has no efficiency (no power or no IO)")
    worst = measurement_start + int(np.argmax(np.abs(window)))
    if abs(dev[worst]) > tolerance_pct:
        return StabilityVerdict(False, wma, dev, worst,
                                f"interval {worst + 1} deviates {dev[worst]:+.1f} % from the "
                                f"weighted moving average (limit ±{tolerance_pct:g} %)")
    return StabilityVerdict(True, wma, dev, worst, "")


def _require_power(avg_power_w: float) -> None:
    if not np.isfinite(avg_power_w):
        raise NonFiniteError("average power is not a finite number (no usable samples?)")
    if avg_power_w <= 0:
        raise NonPositivePowerError(f"average power {avg_power_w} W is not positive")


def active_metric(total_ops: float, duration_s: float, avg_power_w: float) -> float:
    """(operations / duration) / average power: IOPS/W or MiB/s/W (SPEC-NOTES §4)."""
    _require_power(avg_power_w)
    if not duration_s > 0:
        raise MetricsError(f"measurement duration must be positive, got {duration_s} s")
    if not np.isfinite(total_ops) or total_ops < 0:
        raise NonFiniteError(f"operation count {total_ops} is not a non-negative number")
    return float(total_ops / duration_s / avg_power_w)


def ready_idle_metric(raw_capacity_bytes: int, avg_power_w: float) -> float:
    """EP_RI in GB/W, GB = 10⁹ bytes (SPEC-NOTES §4: 7300 GB at 592.692 W → 12.317 GB/W)."""
    _require_power(avg_power_w)
    if raw_capacity_bytes <= 0:
        raise MetricsError(f"raw capacity must be positive, got {raw_capacity_bytes} bytes")
    return float(raw_capacity_bytes / GB / avg_power_w)
