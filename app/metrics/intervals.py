"""One-minute intervals from time-stamped samples (SPEC-NOTES §4).

The method computes every figure per one-minute interval: the interval's average power is the
mean of the meter samples whose time stamp lies in it, its operations rate the IO completed in
it. An interval without a usable sample gets NaN — a gap is explicit and never interpolated
(SPEC-NOTES §3: flagged samples are evidence, not numbers to average silently).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.metrics.errors import LengthMismatchError, MetricsError, NonMonotonicError

MIB = 2**20


def _check_times(t: np.ndarray) -> None:
    if t.size > 1 and np.any(np.diff(t) < 0):
        raise NonMonotonicError("sample time stamps are not in increasing order; sort them "
                                "before building intervals")
    if not np.all(np.isfinite(t)):
        raise MetricsError("sample time stamps contain NaN or infinity")


def interval_index(t: np.ndarray, start_s: float, interval_s: float, count: int) -> np.ndarray:
    """Index of the interval ``[start + i·L, start + (i+1)·L)`` each time falls in; -1 outside."""
    if interval_s <= 0:
        raise MetricsError(f"interval length must be positive, got {interval_s}")
    idx = np.floor((np.asarray(t, dtype=float) - start_s) / interval_s).astype(np.int64)
    return np.where((idx >= 0) & (idx < count), idx, -1)


def interval_means(t: np.ndarray, values: np.ndarray, usable: np.ndarray | None,
                   start_s: float, interval_s: float,
                   count: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean of the usable samples in each interval, and how many samples went into it.

    NaN/inf values are unusable whatever ``usable`` says. An interval with no usable sample has
    mean NaN and count 0.
    """
    t = np.asarray(t, dtype=float)
    v = np.asarray(values, dtype=float)
    if t.shape != v.shape or (usable is not None and np.shape(usable) != t.shape):
        raise LengthMismatchError(f"{t.size} time stamps but {v.size} values")
    _check_times(t)
    ok = np.isfinite(v) if usable is None else (np.asarray(usable, dtype=bool) & np.isfinite(v))
    idx = interval_index(t, start_s, interval_s, count)
    keep = ok & (idx >= 0)
    sums = np.bincount(idx[keep], weights=v[keep], minlength=count)[:count]
    counts = np.bincount(idx[keep], minlength=count)[:count]
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return means, counts


def interval_ops(wl_t_end: np.ndarray, wl_ios: np.ndarray, wl_bytes: np.ndarray,
                 start_s: float, interval_s: float, count: int) -> tuple[np.ndarray, np.ndarray]:
    """IOs and bytes per interval from workload slices, each allotted by its end time.

    A slice ending exactly on a boundary belongs to the interval it closes (end in (a, b]).
    """
    t = np.asarray(wl_t_end, dtype=float)
    ios = np.asarray(wl_ios, dtype=float)
    nbytes = np.asarray(wl_bytes, dtype=float)
    if not (t.shape == ios.shape == nbytes.shape):
        raise LengthMismatchError("workload arrays differ in length")
    _check_times(t)
    idx = np.ceil((t - start_s) / interval_s - 1e-9).astype(np.int64) - 1
    idx = np.where((idx >= 0) & (idx < count), idx, -1)
    keep = idx >= 0
    return (np.bincount(idx[keep], weights=ios[keep], minlength=count)[:count],
            np.bincount(idx[keep], weights=nbytes[keep], minlength=count)[:count])


@dataclass(frozen=True)
class IntervalFigures:
    """Figures of one interval (SPEC-NOTES §4)."""

    start_s: float
    end_s: float
    avg_power_w: float
    n_power: int
    ops_rate: float
    ops_unit: str
    ep: float


def build_intervals(power_t: np.ndarray, power_w: np.ndarray, usable: np.ndarray | None,
                    wl_t_end: np.ndarray, wl_ios: np.ndarray, wl_bytes: np.ndarray,
                    start_s: float, interval_s: float, count: int,
                    ops_unit: str) -> list[IntervalFigures]:
    """Complete intervals of a phase: power, operations rate (IOPS or MiB/s) and EP_i."""
    from app.metrics.efficiency import periodic_efficiency

    watts, n = interval_means(power_t, power_w, usable, start_s, interval_s, count)
    ios, nbytes = interval_ops(wl_t_end, wl_ios, wl_bytes, start_s, interval_s, count)
    rate = ios / interval_s if ops_unit == "IOPS" else nbytes / MIB / interval_s
    ep = periodic_efficiency(rate, watts)
    return [IntervalFigures(start_s + i * interval_s, start_s + (i + 1) * interval_s,
                            float(watts[i]), int(n[i]), float(rate[i]), ops_unit, float(ep[i]))
            for i in range(count)]
