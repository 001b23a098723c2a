"""One-minute intervals from time-stamped samples (method-notes §4).

The method computes every figure per one-minute interval: the interval's average power is the
mean of the meter samples whose time stamp lies in it, its operations rate the IO completed in
it. An interval without a usable sample gets NaN — a gap is explicit and never interpolated
(method-notes §3: flagged samples are evidence, not numbers to average silently).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.metrics.errors import (LengthMismatchError, MetricsError, NonFiniteError,
                                NonMonotonicError)

MIB = 2**20  # method-notes §4: 1 MiB = 2²⁰ B

#: time stamps are float seconds; a phase end within 1 µs of a boundary closes that interval
#: (guards against 1799.9999999 s counting as a partial interval)
_BOUNDARY_SLACK_S = 1e-6

OPS_UNITS = ("IOPS", "MiB/s")  # method-notes §4: IOPS for random, MiB/s for sequential profiles


def _check_times(t: np.ndarray) -> None:
    """Time stamps must be finite and non-decreasing (method-notes §4 intervals go by time): ordering is the caller's job, and a
    backwards step means reordered samples or a clock jump, which must not be averaged over."""
    if not np.all(np.isfinite(t)):
        raise NonFiniteError("sample time stamps contain NaN or infinity")
    if t.size > 1 and np.any(np.diff(t) < 0):
        bad = int(np.flatnonzero(np.diff(t) < 0)[0]) + 1
        raise NonMonotonicError(f"sample time stamps go backwards at sample {bad} "
                                f"({t[bad - 1]} → {t[bad]} s); sort them before building "
                                f"intervals")


def _check_grid(start_s: float, interval_s: float, count: int) -> None:
    """A finite start, a positive interval length (the method's minute, §4), count ≥ 0."""
    if not np.isfinite(start_s):
        raise NonFiniteError(f"interval start must be a finite time, got {start_s}")
    if not (np.isfinite(interval_s) and interval_s > 0):
        raise MetricsError(f"interval length must be a positive number of seconds, got "
                           f"{interval_s}")
    if count < 0:
        raise MetricsError(f"interval count must be ≥ 0, got {count}")


def interval_index(t: np.ndarray, start_s: float, interval_s: float, count: int) -> np.ndarray:
    """Index of the interval ``[start + i·L, start + (i+1)·L)`` each time falls in; -1 outside
    (method-notes §4: a sample belongs to the interval holding its time stamp)."""
    _check_grid(start_s, interval_s, count)
    idx = np.floor((np.asarray(t, dtype=float) - start_s) / interval_s).astype(np.int64)
    return np.where((idx >= 0) & (idx < count), idx, -1)


def interval_means(t: np.ndarray, values: np.ndarray, usable: np.ndarray | None,
                   start_s: float, interval_s: float,
                   count: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean of the usable samples in each interval, and how many samples went into it.

    method-notes §4: P_i is the mean of the meter samples in interval i; §3: flagged samples
    (``usable`` False) are kept as evidence but never averaged.

    NaN/inf values are unusable whatever ``usable`` says. An interval with no usable sample has
    mean NaN and count 0.
    """
    t = np.asarray(t, dtype=float)
    v = np.asarray(values, dtype=float)
    if t.shape != v.shape or (usable is not None and np.shape(usable) != t.shape):
        raise LengthMismatchError(f"{t.size} time stamps, {v.size} values and "
                                  f"{'no' if usable is None else np.size(usable)} usable flags")
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

    The workload reports in slices (fio's one-second status snapshots, differenced — method-notes
    §9); O_i of method-notes §4 is the IO completed in interval i, so a slice counts wholly in
    the interval holding its end, and one ending exactly on a boundary belongs to the interval
    it closes (end in (a, b]). Slices are never split pro rata: that would invent IO timing.
    """
    t = np.asarray(wl_t_end, dtype=float)
    ios = np.asarray(wl_ios, dtype=float)
    nbytes = np.asarray(wl_bytes, dtype=float)
    if not (t.shape == ios.shape == nbytes.shape):
        raise LengthMismatchError(f"workload slices: {t.size} end times, {ios.size} IO counts, "
                                  f"{nbytes.size} byte counts")
    _check_times(t)
    _check_grid(start_s, interval_s, count)
    if not (np.all(np.isfinite(ios)) and np.all(np.isfinite(nbytes))):
        raise NonFiniteError("workload slice IO or byte counts contain NaN or infinity")
    if np.any(ios < 0) or np.any(nbytes < 0):
        raise MetricsError("workload slice IO or byte counts are negative: slices of "
                           "cumulative snapshots must be differenced in order")
    idx = np.ceil((t - start_s) / interval_s - 1e-9).astype(np.int64) - 1
    idx = np.where((idx >= 0) & (idx < count), idx, -1)
    keep = idx >= 0
    return (np.bincount(idx[keep], weights=ios[keep], minlength=count)[:count],
            np.bincount(idx[keep], weights=nbytes[keep], minlength=count)[:count])


@dataclass(frozen=True)
class IntervalFigures:
    """Figures of one complete interval (method-notes §4)."""

    start_s: float
    end_s: float
    avg_power_w: float  # NaN: no usable power sample in the interval
    n_power: int  # power samples averaged
    ops_rate: float  # IOPS or MiB/s, per ``ops_unit``
    ops_unit: str
    ep: float  # EP_i = ops_rate / avg_power_w; NaN when there is no power figure


@dataclass(frozen=True)
class PhaseIntervals:
    """The complete intervals of a phase and the partial tail left out of them (§4).

    A partial last interval is reported, never stretched to a full one: its length and the
    power samples in it are kept so a report can say what was not counted.
    """

    figures: tuple[IntervalFigures, ...]
    partial_s: float  # length of the excluded tail (0.0 when the phase ends on a boundary)
    partial_power_samples: int

    @property
    def has_partial(self) -> bool:
        """True when the phase did not end on an interval boundary."""
        return self.partial_s > 0


def complete_intervals(start_s: float, end_s: float, interval_s: float) -> tuple[int, float]:
    """How many whole intervals (§4: one minute by default) fit in [start, end), and the
    length of the remainder, which no figure includes."""
    _check_grid(start_s, interval_s, 0)
    if not np.isfinite(end_s) or end_s < start_s:
        raise MetricsError(f"phase must end after it starts, got {start_s} … {end_s} s")
    count = int(np.floor((end_s - start_s + _BOUNDARY_SLACK_S) / interval_s))
    partial = end_s - (start_s + count * interval_s)
    return count, (partial if partial > _BOUNDARY_SLACK_S else 0.0)


def operations_rate(ios: np.ndarray, nbytes: np.ndarray, interval_s: float,
                    ops_unit: str) -> np.ndarray:
    """IOPS (ios / L) or MiB/s (bytes / 2²⁰ / L), the operations rate O_i of method-notes §4."""
    if ops_unit == "IOPS":
        return np.asarray(ios, dtype=float) / interval_s
    if ops_unit == "MiB/s":
        return np.asarray(nbytes, dtype=float) / MIB / interval_s
    raise MetricsError(f"unknown operations unit {ops_unit!r}; use one of {', '.join(OPS_UNITS)}")


def build_intervals(power_t: np.ndarray, power_w: np.ndarray, usable: np.ndarray | None,
                    wl_t_end: np.ndarray, wl_ios: np.ndarray, wl_bytes: np.ndarray,
                    start_s: float, end_s: float, interval_s: float,
                    ops_unit: str) -> PhaseIntervals:
    """Complete intervals of the phase [start, end): power, operations rate and EP_i.

    method-notes §4: every figure is per one-minute interval (``interval_s`` is the method's
    length); the partial tail after the last whole interval is counted, not averaged.
    """
    from app.metrics.efficiency import periodic_efficiency

    count, partial = complete_intervals(start_s, end_s, interval_s)
    watts, n = interval_means(power_t, power_w, usable, start_s, interval_s, count)
    ios, nbytes = interval_ops(wl_t_end, wl_ios, wl_bytes, start_s, interval_s, count)
    rate = operations_rate(ios, nbytes, interval_s, ops_unit)
    ep = periodic_efficiency(rate, watts)
    tail_t = np.asarray(power_t, dtype=float)
    in_tail = (tail_t >= start_s + count * interval_s) & (tail_t < end_s)
    figures = tuple(IntervalFigures(start_s + i * interval_s, start_s + (i + 1) * interval_s,
                                    float(watts[i]), int(n[i]), float(rate[i]), ops_unit,
                                    float(ep[i]))
                    for i in range(count))
    return PhaseIntervals(figures, partial, int(np.count_nonzero(in_tail)) if partial else 0)
