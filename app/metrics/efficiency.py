"""Power efficiency, its weighted moving average, stability, and the reported metrics.

Rules from method-notes §4 (seed emerald-measurement-spec-training.txt, "Metric Stability":
"10 point weighted average of periodic power efficiency of one minute intervals through the
complete measurement interval"):

* periodic efficiency ``EP_i = O_i / P_i`` per interval;
* WMA_i = Σ w_k·EP_{i-k} / Σ w_k over the last ``len(weights)`` intervals, weights newest first
  (10, 9, …, 1 by default); early intervals use the available points with the leading weights;
* stable when every EP_i of the measurement interval lies within ±tolerance of WMA_i, and the
  EP_i did not drift across it by more than the method's drift limit (the project's reading,
  method-notes §4: a WMA that already contains EP_i lags a steady drift by ~3 intervals and
  would pass a 1 %/min drift);
* active metric = (operations in the measurement interval / its duration) / average power;
* EP_RI = raw capacity in GB (10⁹ B) / average ready-idle power.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.metrics.errors import (EmptySamplesError, LengthMismatchError, MetricsError,
                                NonFiniteError, NonPositivePowerError)

GB = 10**9


def efficiency_gaps(ops_rate: np.ndarray, avg_power_w: np.ndarray) -> list[str]:
    """Why each interval has no EP_i ("" where it has one).

    method-notes §3/§4: an interval without usable power samples is a gap to be named, never
    filled; the stability verdict and the reports quote these reasons.
    """
    o = np.asarray(ops_rate, dtype=float)
    p = np.asarray(avg_power_w, dtype=float)
    if o.shape != p.shape:
        raise LengthMismatchError(f"{o.size} operation rates but {p.size} power averages")
    reasons = []
    for rate, watts in zip(o.tolist(), p.tolist()):
        if not np.isfinite(watts):
            reasons.append("no usable power sample")
        elif watts <= 0:
            reasons.append(f"average power {watts:g} W is not positive")
        elif not np.isfinite(rate) or rate < 0:
            reasons.append(f"operations rate {rate:g} is not a non-negative number")
        else:
            reasons.append("")
    return reasons


def periodic_efficiency(ops_rate: np.ndarray, avg_power_w: np.ndarray) -> np.ndarray:
    """EP_i = O_i / P_i (method-notes §4); NaN where :func:`efficiency_gaps` names a reason
    (missing, non-finite or non-positive power, or a bad operations rate)."""
    o = np.asarray(ops_rate, dtype=float)
    p = np.asarray(avg_power_w, dtype=float)
    if o.shape != p.shape:
        raise LengthMismatchError(f"{o.size} operation rates but {p.size} power averages")
    valid = np.isfinite(o) & (o >= 0) & np.isfinite(p) & (p > 0)
    return np.divide(o, p, out=np.full(o.shape, np.nan), where=valid)


def _check_weights(weights: Sequence[float]) -> np.ndarray:
    """The WMA weights of the method file (§4: 10 … 1): finite and positive, or an error."""
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or w.size == 0 or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise MetricsError(f"WMA weights must be a non-empty list of positive numbers, got "
                           f"{list(np.atleast_1d(weights))}")
    return w


def weighted_moving_average(ep: np.ndarray, weights: Sequence[float]) -> np.ndarray:
    """WMA_i of ``ep`` with ``weights`` given newest first (method-notes §4: 10, 9, …, 1).

    WMA_i = Σ_k w_k·EP_{i-k} / Σ_k w_k for k < min(i + 1, len(weights)): before a full window
    exists the available points take the leading (newest) weights. A full convolution's first
    n terms are exactly these numerators; a NaN only spoils the windows that contain it.
    """
    x = np.asarray(ep, dtype=float)
    w = _check_weights(weights)
    if x.size == 0:
        return np.empty(0)
    numerators = np.convolve(x, w)[:x.size]
    denominators = np.cumsum(w)[np.minimum(np.arange(x.size), w.size - 1)]
    return numerators / denominators


@dataclass(frozen=True)
class StabilityVerdict:
    """Outcome of the stability rule over a phase's intervals (method-notes §4)."""

    stable: bool
    wma: np.ndarray
    deviation_pct: np.ndarray  # (EP_i − WMA_i) / WMA_i × 100, per interval (NaN: no figure)
    worst_index: int | None  # measurement interval with the largest |deviation|
    reason: str  # why not stable ("" when stable)


def drift_pct(values: np.ndarray) -> float:
    """Signed change of the least-squares line through ``values`` from the first to the last
    point, in % of their mean: how far a steady trend moved across the window (PTS's "slope
    excursion", method-notes §4, §5). Robust to one noisy end point, unlike first-to-last."""
    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return 0.0
    slope = float(np.polyfit(np.arange(v.size), v, 1)[0])
    return slope * (v.size - 1) / abs(float(v.mean())) * 100


def stability(ep: np.ndarray, weights: Sequence[float], tolerance_pct: float,
              measurement_start: int = 0, max_drift_pct: float | None = None
              ) -> StabilityVerdict:
    """Stable when |EP_i − WMA_i| ≤ tolerance·WMA_i for every i ≥ ``measurement_start`` and,
    given ``max_drift_pct``, the EP_i of the window drift by at most that (:func:`drift_pct`).

    method-notes §4: the WMA runs over the whole phase, so the stabilisation intervals before
    ``measurement_start`` feed it without being judged. A NaN EP or a non-positive WMA in the
    measurement window makes the phase not stable, with the interval named (1-based).
    """
    x = np.asarray(ep, dtype=float)
    if x.size == 0:
        raise EmptySamplesError("no intervals to judge stability on")
    if not (np.isfinite(tolerance_pct) and tolerance_pct > 0):
        raise MetricsError(f"stability tolerance must be a positive percentage, got "
                           f"{tolerance_pct}")
    if measurement_start < 0:
        raise MetricsError(f"measurement start must be an interval index ≥ 0, got "
                           f"{measurement_start}")
    wma = weighted_moving_average(x, weights)
    judged = np.isfinite(x) & np.isfinite(wma) & (wma > 0)
    dev = np.divide(x - wma, wma, out=np.full(x.shape, np.nan), where=judged) * 100
    if measurement_start >= x.size:
        return StabilityVerdict(False, wma, dev, None,
                                f"no measurement interval yet ({x.size} of "
                                f"{measurement_start + 1} intervals)")
    unjudged = np.flatnonzero(~judged[measurement_start:])
    if unjudged.size:
        bad = measurement_start + int(unjudged[0])
        why = ("has no efficiency (no usable power)" if not np.isfinite(x[bad])
               else "has a weighted moving average of zero (no IO)")
        return StabilityVerdict(False, wma, dev, bad, f"interval {bad + 1} {why}")
    window = dev[measurement_start:]
    worst = measurement_start + int(np.argmax(np.abs(window)))
    if abs(x[worst] - wma[worst]) > tolerance_pct / 100 * wma[worst]:
        return StabilityVerdict(False, wma, dev, worst,
                                f"interval {worst + 1} deviates {dev[worst]:+.1f} % from the "
                                f"weighted moving average (limit ±{tolerance_pct:g} %)")
    drift = drift_pct(x[measurement_start:])
    if max_drift_pct is not None and abs(drift) > max_drift_pct:
        return StabilityVerdict(False, wma, dev, worst,
                                f"EP drifted {drift:+.1f} % across the measurement window "
                                f"({x.size - measurement_start} intervals, least-squares line; "
                                f"limit ±{max_drift_pct:g} %, stability.max_drift_pct)")
    return StabilityVerdict(True, wma, dev, worst, "")


def _require_power(avg_power_w: float) -> None:
    """A reported metric needs a real average power (method-notes §3: no silent numbers)."""
    if not np.isfinite(avg_power_w):
        raise NonFiniteError("average power is not a finite number (no usable samples?)")
    if avg_power_w <= 0:
        raise NonPositivePowerError(f"average power {avg_power_w} W is not positive")


def active_metric(total_ops: float, duration_s: float, avg_power_w: float) -> float:
    """(operations / duration) / average power: IOPS/W or MiB/s/W (method-notes §4)."""
    _require_power(avg_power_w)
    if not (np.isfinite(duration_s) and duration_s > 0):
        raise MetricsError(f"measurement duration must be a positive number of seconds, got "
                           f"{duration_s}")
    if not np.isfinite(total_ops):
        raise NonFiniteError(f"operation count {total_ops} is not a finite number")
    if total_ops < 0:
        raise MetricsError(f"operation count {total_ops} is negative")
    return float(total_ops / duration_s / avg_power_w)


def ready_idle_metric(raw_capacity_bytes: int, avg_power_w: float) -> float:
    """EP_RI in GB/W, GB = 10⁹ bytes (method-notes §4: 7300 GB at 592.692 W → 12.317 GB/W)."""
    _require_power(avg_power_w)
    whole = isinstance(raw_capacity_bytes, (int, np.integer)) or (
        isinstance(raw_capacity_bytes, float) and raw_capacity_bytes.is_integer())
    if isinstance(raw_capacity_bytes, bool) or not whole:
        raise MetricsError(f"raw capacity must be a whole number of bytes, got "
                           f"{raw_capacity_bytes!r}")
    if raw_capacity_bytes <= 0:
        raise MetricsError(f"raw capacity must be positive, got {raw_capacity_bytes} bytes")
    return float(raw_capacity_bytes / GB / avg_power_w)
