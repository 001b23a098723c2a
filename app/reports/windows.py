"""Which stored samples and intervals a phase's metric was computed from.

The sequencer's :class:`~app.sequencer.recorder.PhaseRecorder` computes a metric over a
*measurement window* of the phase's last attempt, on the station clock:

* intervals ``i`` cover ``[t_start + i·Δ, t_start + i·Δ + Δ)`` (Δ = the method's interval);
* active profiles: the window starts at ``t_start + stabilisation·Δ`` and lasts
  ``measurement·Δ``; ready idle: it starts at ``t_start`` (method-notes §2, §4);
* a power sample counts when ``start <= t < end`` and it is usable (no excluding flag, finite
  watts); workload slices count when their end lies in ``(start, end]``.

Storage keeps run-relative times (``t − t0``), so the boundaries are rebuilt here on the station
clock (``t_run + t0``) with the recorder's own arithmetic: the exported ``interval`` and
``in_window`` columns then select exactly the samples the recorder averaged, and QA can
recompute every figure from the workbook (docs/export-format.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.records import IntervalRecord, PhaseKind
from app.storage.stored import StoredPhase, StoredRun

#: the recorder's tolerance when it matches workload-slice ends to interval ends (s)
SLICE_END_TOLERANCE_S = 1e-9


@dataclass(frozen=True)
class PhaseWindow:
    """Measurement window of one phase attempt, in run-relative seconds.

    ``t_start_station`` is the recorder's own start (station clock) so boundaries can be
    rebuilt bit for bit; ``intervals`` are the records of the last attempt only.
    """

    phase_index: int
    attempt: int
    t_start_station: float
    interval_s: float
    first_measured: int  # index of the first interval inside the window
    measured: int  # number of intervals in the window
    intervals: tuple[IntervalRecord, ...]
    t0: float

    @property
    def start_station(self) -> float:
        return self.t_start_station + self.first_measured * self.interval_s

    @property
    def end_station(self) -> float:
        return self.start_station + self.measured * self.interval_s

    @property
    def start_s(self) -> float:
        return self.start_station - self.t0

    @property
    def end_s(self) -> float:
        return self.end_station - self.t0

    @property
    def duration_s(self) -> float:
        return self.end_station - self.start_station

    def interval_bounds_station(self, i: int) -> tuple[float, float]:
        start = self.t_start_station + i * self.interval_s
        return start, start + self.interval_s

    def contains_station(self, t_station: np.ndarray) -> np.ndarray:
        """Mask of station-clock times inside ``[start, end)``."""
        return (t_station >= self.start_station) & (t_station < self.end_station)

    def interval_of_station(self, t_station: np.ndarray) -> np.ndarray:
        """Interval index (0-based) of each time, −1 before the first or after the last."""
        index = np.full(len(t_station), -1, dtype=np.int64)
        for record in self.intervals:
            lo, hi = self.interval_bounds_station(record.index)
            index[(t_station >= lo) & (t_station < hi)] = record.index
        return index


def last_attempt_intervals(run: StoredRun, phase: StoredPhase) -> tuple[IntervalRecord, ...]:
    """Interval records of the phase's last attempt (an earlier, paused attempt's records are
    stored too; they start before the last attempt's ``t_start``)."""
    records = [r for r in run.intervals if r.phase_index == phase.index]
    if phase.t_start is not None:
        records = [r for r in records if r.start_s >= phase.t_start]
    by_index: dict[int, IntervalRecord] = {}
    for r in records:
        by_index[r.index] = r  # a duplicate index keeps the later record
    return tuple(by_index[i] for i in sorted(by_index))


def phase_window(run: StoredRun, phase: StoredPhase, interval_s: float) -> PhaseWindow | None:
    """The interval grid and measurement window of ``phase``'s last attempt (None for a phase
    that never started). Phases without a metric (pre-fill, conditioning …) get an empty
    window (``measured == 0``) but keep their interval grid."""
    intervals = last_attempt_intervals(run, phase)
    if intervals:
        first = intervals[0]
        t_start_station = (first.start_s + run.t0) - first.index * interval_s
    elif phase.t_start is not None:
        t_start_station = phase.t_start + run.t0
    else:
        return None
    first_measured = (phase.info.stabilisation_intervals
                      if phase.info.kind is PhaseKind.ACTIVE else 0)
    measured = (phase.info.measurement_intervals
                if phase.info.kind in (PhaseKind.ACTIVE, PhaseKind.READY_IDLE) else 0)
    return PhaseWindow(phase.index, phase.attempts, t_start_station, interval_s, first_measured,
                       measured, intervals, run.t0)


@dataclass(frozen=True)
class SampleWindows:
    """Per power sample: interval index in its phase's last attempt (−1 = none) and whether it
    lies in its phase's measurement window."""

    interval: np.ndarray
    in_window: np.ndarray


def assign_samples(run: StoredRun, windows: dict[int, PhaseWindow]) -> SampleWindows:
    """Mirror the recorder's sample selection for every stored power sample."""
    power = run.power
    t_station = power.t + run.t0
    interval = np.full(len(power), -1, dtype=np.int64)
    in_window = np.zeros(len(power), dtype=bool)
    for index, window in windows.items():
        mask = power.phase_index == index
        interval[mask] = window.interval_of_station(t_station[mask])
        in_window[mask] = window.contains_station(t_station[mask])
    return SampleWindows(interval, in_window)


def window_mean_power(run: StoredRun, window: PhaseWindow) -> tuple[float, int]:
    """Mean of the usable power samples of the window (the recorder's average power)."""
    power = run.power
    mask = ((power.phase_index == window.phase_index) & power.usable
            & window.contains_station(power.t + run.t0))
    count = int(mask.sum())
    return (float(np.mean(power.watts[mask])) if count else float("nan")), count
