"""Maximum power, each figure defined by its window (method-notes §10, issue 42).

The highest single reading depends on how often the meter reads: a synthetic 40-minute phase
of one SUT put it from +2.1 % to +30.9 % over the phase's mean between a 5 s and a 50 ms
update period (issue 42). The definitions in use elsewhere do not move with it, so StorWatt
states three figures, each naming its window and the sampling period it was read at:

* the **highest 1 s window average** (OCP datacenter NVMe SSD specification's power
  measurement: the average over a 1 s window) — the mean of ``n = round(1 s / period)``
  consecutive usable readings of one phase with no gap between them; a period longer than the
  window makes the window one reading, and the figure says so (its window is the period);
* the **highest phase average** (EU ecodesign rule for servers, Regulation (EU) 2019/424:
  maximum power as the highest average over a workload) — the mean of a phase's usable readings;
* the **highest single reading**, kept and labelled as such (the figure issue 24 printed).

A reading enters only if the method's rules let it into an average (no flag that excludes it).
The sampling period is the median spacing of the readings' times, so a station and an auditor
derive the same window from the same readings (the verifier repeats this, stdlib only). Pure
numbers: the caller names the readings (the SUT's input, later each device).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol, TypeVar

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

class _Figure(Protocol):
    @property
    def watts(self) -> float: ...


T = TypeVar("T", bound=_Figure)

#: the window of the windowed maximum (s): the OCP datacenter SSD power measurement's
WINDOW_S = 1.0
#: two readings further apart than this many periods are not consecutive (a gap)
GAP_PERIODS = 1.5


@dataclass(frozen=True)
class PeakSample:
    """One highest usable reading: where (a phase name, or "overall"), its watts and time."""

    where: str
    watts: float
    t_s: float  # run-relative seconds


@dataclass(frozen=True)
class WindowPeak:
    """The highest average over ``readings`` consecutive usable readings in one phase."""

    where: str
    watts: float
    t_first_s: float  # the window's first and last reading (run-relative s)
    t_last_s: float
    readings: int

    def window_s(self, period_s: float) -> float:
        """The window's length: its readings × the sampling period."""
        return self.readings * period_s


@dataclass(frozen=True)
class PhaseAverage:
    """One phase's average over its usable readings."""

    where: str
    watts: float
    readings: int
    t_first_s: float
    t_last_s: float


@dataclass(frozen=True)
class MaximumPower:
    """The three maxima of one set of readings, overall and per phase (phase order)."""

    period_s: float  # median spacing of the readings (NaN with fewer than two)
    window_s: float  # the window asked for (WINDOW_S)
    readings_per_window: int  # max(1, round(window_s / period_s))
    single: PeakSample | None
    single_per_phase: tuple[PeakSample, ...]
    window: WindowPeak | None
    window_per_phase: tuple[WindowPeak, ...]
    phase_average: PhaseAverage | None
    phase_averages: tuple[PhaseAverage, ...]

    @property
    def effective_window_s(self) -> float:
        """The window the windowed figure really averages: never shorter than one reading."""
        return self.readings_per_window * self.period_s

    @property
    def window_label(self) -> str:
        """``1 s window (20 readings of 0.05 s)``, or why the window is longer than asked."""
        n, p = self.readings_per_window, self.period_s
        if not np.isfinite(p):
            return f"{self.window_s:g} s window (fewer than two readings)"
        if n == 1 and p > self.window_s * 1.5:
            return (f"one reading of {p:g} s (the sampling period is longer than the "
                    f"{self.window_s:g} s window)")
        return f"{n * p:g} s window ({n} reading{'s' if n > 1 else ''} of {p:g} s)"


def sampling_period(t: np.ndarray) -> float:
    """The median spacing of consecutive readings (s), NaN with fewer than two."""
    steps = np.diff(np.asarray(t, dtype=float))
    steps = steps[steps > 0]
    return float(np.median(steps)) if steps.size else float("nan")


def readings_per_window(window_s: float, period_s: float) -> int:
    """How many consecutive readings make the window: at least one."""
    return max(1, round(window_s / period_s)) if np.isfinite(period_s) else 1


def maximum_power(t: np.ndarray, watts: np.ndarray, usable: np.ndarray,
                  phase_index: np.ndarray, phase_names: Mapping[int, str],
                  window_s: float = WINDOW_S) -> MaximumPower:
    """The three maxima of the readings (``usable``: the mask of readings an average may
    take), per phase in phase order and overall."""
    period = sampling_period(t)
    n = readings_per_window(window_s, period)
    ok = usable & np.isfinite(watts)
    singles, windows, averages = [], [], []
    for index in sorted({int(i) for i in phase_index[ok]}):
        name = phase_names.get(index, f"phase {index}")
        inside = phase_index == index
        pt, pw, pu = t[inside], watts[inside], ok[inside]
        k = int(np.flatnonzero(pu)[int(np.argmax(pw[pu]))])
        singles.append(PeakSample(name, float(pw[k]), float(pt[k])))
        averages.append(PhaseAverage(name, float(np.mean(pw[pu])), int(pu.sum()),
                                     float(pt[pu][0]), float(pt[pu][-1])))
        window = _highest_window(name, pt, pw, pu, n, period)
        if window is not None:
            windows.append(window)
    return MaximumPower(
        period, window_s, n,
        _overall(singles, lambda p: PeakSample("overall", p.watts, p.t_s)), tuple(singles),
        _overall(windows, lambda w: WindowPeak("overall", w.watts, w.t_first_s, w.t_last_s,
                                               w.readings)), tuple(windows),
        _overall(averages, lambda a: a), tuple(averages))


def _highest_window(name: str, t: np.ndarray, watts: np.ndarray, ok: np.ndarray, n: int,
                    period: float) -> WindowPeak | None:
    """The highest mean of ``n`` consecutive readings of one phase, all usable and with no gap
    (consecutive times at most GAP_PERIODS periods apart); the first of equals."""
    if len(t) < n:
        return None
    valid = sliding_window_view(ok, n).all(axis=1)
    if n > 1:
        gaps = np.diff(t) > GAP_PERIODS * period
        valid &= ~sliding_window_view(gaps, n - 1).any(axis=1)
    if not valid.any():
        return None
    sums = sliding_window_view(np.where(ok, watts, 0.0), n).sum(axis=1) / n
    j = int(np.flatnonzero(valid)[int(np.argmax(sums[valid]))])
    return WindowPeak(name, float(sums[j]), float(t[j]), float(t[j + n - 1]), n)


def _overall(items: list[T], relabel: Callable[[T], T]) -> T | None:
    """The highest of ``items`` (first of equals) relabelled as overall, or None."""
    return relabel(max(items, key=lambda x: x.watts)) if items else None
