"""What a phase keeps in memory of its workload slices: bounded by the window, not the phase.

A one-second fio slice carries ~300 latency buckets (~26 KB as a dict). A 12 h conditioning
delivers 43,200 of them, and keeping them all made the station's memory grow with the phase
(issue 27). Every slice is still published to the store as it arrives (the record and its hash
need them all); in memory the recorder needs only:

* each slice's figures (times, IOs, bytes, response-time weight) until the intervals it
  overlaps are closed, and for the whole measurement window (the phase metric is taken over
  it, pro rata as the intervals are: method-notes §4) — a few floats per slice;
* the measurement window's response-time histogram (method-notes §5, §7), summed as it goes
  into count arrays on fio's bin values (``ResponseTimeHistogram``): bounded by fio's bucket
  layout, not by the number of slices.

A slice belongs to the histogram of the window holding most of it. While the stabilisation's
end is still undecided (method-notes §4) the window may move one interval later, so the slices
that could fall either way keep their buckets, as arrays, until the decision; there are only a
few (those arriving between the planned window start and the decision).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import numpy as np

from app.metrics.histogram import ResponseTimeHistogram
from drivers.interfaces import WorkloadInterval

#: time comparisons tolerate float noise from re-basing engine clocks to run time
EPS = 1e-9
#: bucket arrays summed together at once (one sort per batch, not per slice)
_FOLD_EVERY = 256


@dataclass(frozen=True, slots=True)
class SliceFigures:
    """The figures of one workload slice an interval or a phase metric needs."""

    t_start: float
    t_end: float
    ios: int
    nbytes: int
    resp_weight: float  # average response (ms) × IOs, to average by IO count

    @classmethod
    def of(cls, s: WorkloadInterval) -> SliceFigures:
        return cls(s.t_start, s.t_end, s.ios, s.read_bytes + s.write_bytes, s.avg_resp_ms * s.ios)


def overlap(s: SliceFigures | WorkloadInterval, start: float, end: float) -> float:
    """Fraction of slice ``s`` that lies inside [start, end)."""
    span = s.t_end - s.t_start
    if span <= 0:
        return 1.0 if start <= s.t_end < end else 0.0
    return max(0.0, min(s.t_end, end) - max(s.t_start, start)) / span


def in_histogram(s: SliceFigures | WorkloadInterval, start: float, end: float) -> bool:
    """Whether slice ``s`` counts in the histogram of window [start, end): it overlaps the
    window and most of it lies inside."""
    return (end > start and s.t_end > start + EPS and s.t_start < end - EPS
            and overlap(s, start, end) >= 0.5)


def _bucket_arrays(bins: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
    return (np.fromiter(bins.keys(), dtype=np.int64, count=len(bins)),
            np.fromiter(bins.values(), dtype=np.int64, count=len(bins)))


@dataclass
class HistogramSum:
    """Running sum of latency buckets as count arrays (exact int64, fio's bin values)."""

    total: ResponseTimeHistogram = field(
        default_factory=lambda: ResponseTimeHistogram.from_arrays([], []))
    _parts: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)

    def add(self, values: np.ndarray, counts: np.ndarray) -> None:
        if values.size:
            self._parts.append((values, counts))
        if len(self._parts) >= _FOLD_EVERY:
            self._fold()

    def _fold(self) -> None:
        if self._parts:
            self.total = ResponseTimeHistogram.from_arrays(
                np.concatenate([self.total.values_ns, *(v for v, _ in self._parts)]),
                np.concatenate([self.total.counts, *(c for _, c in self._parts)]))
            self._parts.clear()

    def histogram(self) -> ResponseTimeHistogram:
        self._fold()
        return self.total


@dataclass
class WorkloadWindow:
    """The slices of one phase attempt the recorder still needs, in arrival (time) order."""

    figures: list[SliceFigures] = field(default_factory=list)
    ends: list[float] = field(default_factory=list)  # t_end of each kept slice, for bisect
    last_end: float = -np.inf
    histogram_sum: HistogramSum = field(default_factory=HistogramSum)
    #: slices that may or may not fall in the histogram's window, with their buckets
    undecided: list[tuple[SliceFigures, np.ndarray, np.ndarray]] = field(default_factory=list)

    def add(self, s: WorkloadInterval, window: tuple[float, float], decided: bool) -> bool:
        """Keep slice ``s``'s figures and, if it counts in the measurement ``window``, its
        buckets; ``decided``: the window can no longer move. False for a late duplicate from
        a restarted engine stream (dropped, to keep time order)."""
        if s.t_end < self.last_end:
            return False
        figures = SliceFigures.of(s)
        self.figures.append(figures)
        self.ends.append(s.t_end)
        self.last_end = s.t_end
        start, end = window
        if decided:
            if in_histogram(figures, start, end):
                self.histogram_sum.add(*_bucket_arrays(s.latency_bins))
        elif s.t_end > start + EPS:  # the window only ever moves later (§4)
            self.undecided.append((figures, *_bucket_arrays(s.latency_bins)))
        return True

    def decide(self, window: tuple[float, float]) -> None:
        """The window is final: sum the buckets of the slices it holds, forget the others'."""
        start, end = window
        for figures, values, counts in self.undecided:
            if in_histogram(figures, start, end):
                self.histogram_sum.add(values, counts)
        self.undecided.clear()

    def overlapping(self, start: float, end: float) -> list[SliceFigures]:
        """Kept slices overlapping [start, end)."""
        lo = bisect.bisect_right(self.ends, start + EPS)
        out = []
        for s in self.figures[lo:]:
            if s.t_start >= end - EPS:
                break
            out.append(s)
        return out

    def forget_before(self, t: float) -> None:
        """Drop the figures of slices that end by ``t`` (no interval or window left needs
        them)."""
        k = bisect.bisect_right(self.ends, t + EPS)
        if k:
            del self.figures[:k]
            del self.ends[:k]
