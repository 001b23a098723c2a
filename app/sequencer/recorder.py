"""Live bookkeeping of one phase: closes intervals as time passes and computes the phase metric.

The sequencer feeds it meter samples and workload slices in arrival order; it closes each
interval once its end (plus the engine's reporting latency) has passed, computing average
power, operations rate, periodic efficiency, the weighted moving average and the stability
verdict so far (method-notes §4), all through ``app.metrics`` so the live figures and the
reports share one implementation.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field

import numpy as np

from app.method.model import Method
from app.metrics.efficiency import (active_metric, periodic_efficiency, ready_idle_metric,
                                    stability)
from app.metrics.errors import MetricsError
from app.metrics.histogram import ResponseTimeHistogram
from app.metrics.intervals import interval_means
from app.records import IntervalRecord, MetricResult, PhaseInfo, PhaseKind
from drivers.interfaces import (FLAG_UNCERTAINTY_HIGH, PowerSample, WorkloadInterval,
                                WorkloadResult)

MIB = 2**20


@dataclass
class PhaseRecorder:
    """Samples, slices and closed intervals of the current attempt of one phase."""

    phase: PhaseInfo
    method: Method
    t_start: float  # station clock at the start of this attempt
    run_t0: float
    ops_unit: str = ""  # IOPS | MiB/s | "" (no workload)
    power_t: list[float] = field(default_factory=list)
    power_w: list[float] = field(default_factory=list)
    power_ok: list[bool] = field(default_factory=list)
    uncertainty_high: int = 0
    slices: list[WorkloadInterval] = field(default_factory=list)
    slice_end: list[float] = field(default_factory=list)
    intervals: list[IntervalRecord] = field(default_factory=list)
    eps: list[float] = field(default_factory=list)
    workload_result: WorkloadResult | None = None
    capacity_before: tuple[int, int] | None = None  # COM checks: SUT usage at phase start

    @property
    def interval_s(self) -> float:
        return self.method.interval_s

    @property
    def planned_intervals(self) -> int:
        return max(1, round(self.phase.planned_s / self.interval_s)) if self.phase.planned_s else 0

    # --- feeding -----------------------------------------------------------------------------
    def add_power(self, samples: list[PowerSample]) -> None:
        for s in samples:
            self.power_t.append(s.t)
            self.power_w.append(s.watts)
            self.power_ok.append(s.usable)
            self.uncertainty_high += FLAG_UNCERTAINTY_HIGH in s.flags

    def add_workload(self, slices: list[WorkloadInterval]) -> None:
        for s in sorted(slices, key=lambda s: s.t_end):
            if self.slice_end and s.t_end < self.slice_end[-1]:
                continue  # a late duplicate from a restarted engine stream; keep order
            self.slices.append(s)
            self.slice_end.append(s.t_end)

    # --- intervals ---------------------------------------------------------------------------
    def close_due(self, now: float, latency_s: float) -> list[IntervalRecord]:
        """Close every interval whose end + ``latency_s`` has passed (bounded by the plan)."""
        closed = []
        limit = self.planned_intervals or math.inf
        while len(self.intervals) < limit:
            end = self.t_start + (len(self.intervals) + 1) * self.interval_s
            if end + latency_s > now + 1e-9:
                break
            closed.append(self._close(len(self.intervals)))
        return closed

    def _window_power(self, start: float, end: float) -> tuple[float, int]:
        lo = bisect.bisect_left(self.power_t, start)
        hi = bisect.bisect_left(self.power_t, end)
        if hi <= lo:
            return math.nan, 0
        means, counts = interval_means(np.asarray(self.power_t[lo:hi]),
                                       np.asarray(self.power_w[lo:hi]),
                                       np.asarray(self.power_ok[lo:hi]), start, end - start, 1)
        return float(means[0]), int(counts[0])

    def _window_slices(self, start: float, end: float) -> list[WorkloadInterval]:
        """Workload slices overlapping [start, end) (slices arrive in time order)."""
        lo = bisect.bisect_right(self.slice_end, start + 1e-9)
        out = []
        for s in self.slices[lo:]:
            if s.t_start >= end - 1e-9:
                break
            out.append(s)
        return out

    def _window_ops(self, start: float, end: float) -> tuple[float, float]:
        """(operations, average response ms) in [start, end): operations are IOs for IOPS
        profiles and MiB for MiB/s profiles.

        A slice straddling a boundary contributes pro rata to its overlap: engines report on
        their own clock grid (fio's status interval starts when fio does), and allotting whole
        slices by their end would shift work between neighbouring intervals.
        """
        ios = nbytes = resp_weight = 0.0
        for s in self._window_slices(start, end):
            share = _overlap(s, start, end)
            ios += s.ios * share
            nbytes += (s.read_bytes + s.write_bytes) * share
            resp_weight += s.avg_resp_ms * s.ios * share
        resp = resp_weight / ios if ios else math.nan
        ops = ios if self.ops_unit == "IOPS" else nbytes / MIB
        return float(ops), resp

    def _close(self, i: int) -> IntervalRecord:
        start = self.t_start + i * self.interval_s
        end = start + self.interval_s
        watts, n = self._window_power(start, end)
        if self.ops_unit:
            ops, resp = self._window_ops(start, end)
            rate = ops / self.interval_s
            ep = float(periodic_efficiency(np.array([rate]), np.array([watts]))[0])
        else:
            rate, resp, ep = math.nan, math.nan, math.nan
        self.eps.append(ep)
        wma, stable = self._stability_so_far()
        in_meas = i >= self.phase.stabilisation_intervals
        record = IntervalRecord(self.phase.index, self.phase.profile, i, start - self.run_t0,
                                end - self.run_t0, watts, n, rate, self.ops_unit, resp, ep, wma,
                                in_meas, stable if in_meas else None)
        self.intervals.append(record)
        return record

    def _stability_so_far(self) -> tuple[float, bool | None]:
        if not self.ops_unit:
            return math.nan, None
        rule = self.method.stability
        verdict = stability(np.asarray(self.eps), rule.weights, rule.tolerance_pct,
                            measurement_start=min(self.phase.stabilisation_intervals,
                                                  len(self.eps) - 1))
        return float(verdict.wma[-1]), bool(verdict.stable)

    # --- phase result ------------------------------------------------------------------------
    def measurement_window(self) -> tuple[float, float]:
        start = self.t_start + self.phase.stabilisation_intervals * self.interval_s
        return start, start + self.phase.measurement_intervals * self.interval_s

    def histogram(self) -> ResponseTimeHistogram:
        """Response-time histogram of the measurement window (merged fio bins)."""
        start, end = self.measurement_window()
        values: list[int] = []
        counts: list[int] = []
        for s in self._window_slices(start, end):
            if _overlap(s, start, end) < 0.5:
                continue  # a slice belongs to the histogram of the window holding most of it
            values.extend(s.latency_bins)
            counts.extend(s.latency_bins.values())
        return ResponseTimeHistogram.from_arrays(np.array(values, dtype=np.int64),
                                                 np.array(counts, dtype=np.int64))

    def active_result(self, metric: str, unit: str, aborted: bool = False) -> MetricResult:
        """The profile's EP metric over its measurement interval, with validity and reason."""
        start, end = self.measurement_window()
        duration = end - start
        watts, n = self._window_power(start, end)
        ops, resp = self._window_ops(start, end)
        reasons = self._validity_problems(watts, n, aborted)
        rule = self.method.stability
        meas_first = self.phase.stabilisation_intervals
        if len(self.eps) >= self.phase.stabilisation_intervals + self.phase.measurement_intervals:
            verdict = stability(np.asarray(self.eps), rule.weights, rule.tolerance_pct,
                                measurement_start=meas_first)
            if not verdict.stable:
                reasons.append(f"not stable: {verdict.reason}")
        limit = self.method.response_time.max_avg_ms
        if self.ops_unit == "IOPS" and resp == resp and resp > limit:
            reasons.append(f"average response time {resp:.1f} ms exceeds the {limit:g} ms limit")
        value = math.nan
        try:
            value = active_metric(ops, duration, watts)
        except MetricsError as exc:
            reasons.append(str(exc))
        return MetricResult(metric, value, unit, not reasons and value == value,
                            "; ".join(reasons), duration, watts, ops / duration if duration else
                            math.nan, self.ops_unit, resp, self.phase.index)

    def ready_idle_result(self, raw_capacity_bytes: int, aborted: bool = False) -> MetricResult:
        """EP_RI = raw capacity (GB) / average ready-idle power (method-notes §4)."""
        start = self.t_start
        end = start + self.phase.measurement_intervals * self.interval_s
        watts, n = self._window_power(start, end)
        reasons = self._validity_problems(watts, n, aborted)
        value = math.nan
        try:
            value = ready_idle_metric(raw_capacity_bytes, watts)
        except MetricsError as exc:
            reasons.append(str(exc))
        return MetricResult("EP_RI", value, "GB/W", not reasons and value == value,
                            "; ".join(reasons), end - start, watts, raw_capacity_bytes / 1e9,
                            "GB", math.nan, self.phase.index)

    def _validity_problems(self, watts: float, n: int, aborted: bool) -> list[str]:
        problems = []
        if aborted:
            problems.append("phase did not complete (aborted or failed)")
        if n == 0 or watts != watts:
            problems.append("no usable power samples in the measurement interval")
        if self.uncertainty_high:
            problems.append(f"{self.uncertainty_high} power sample(s) above the "
                            f"{self.method.instruments.max_uncertainty_pct:g} % uncertainty limit")
        gap = self._longest_power_gap()
        if gap > self.method.instruments.max_power_interval_s:
            problems.append(f"power samples missing for {gap:.1f} s (limit "
                            f"{self.method.instruments.max_power_interval_s:g} s)")
        return problems

    def _longest_power_gap(self) -> float:
        start, end = self.measurement_window()
        if self.phase.kind is PhaseKind.READY_IDLE:
            start, end = self.t_start, self.t_start + self.phase.planned_s
        ts = [start] + [t for t, ok in zip(self.power_t, self.power_ok)
                        if ok and start <= t < end] + [end]
        return max(b - a for a, b in zip(ts, ts[1:]))


def _overlap(s: WorkloadInterval, start: float, end: float) -> float:
    """Fraction of slice ``s`` that lies inside [start, end)."""
    span = s.t_end - s.t_start
    if span <= 0:
        return 1.0 if start <= s.t_end < end else 0.0
    return max(0.0, min(s.t_end, end) - max(s.t_start, start)) / span
