"""Live bookkeeping of one phase: closes intervals as time passes and computes the phase metric.

The sequencer feeds it meter samples and workload slices in arrival order, all in run-relative
seconds. Each sample is *placed* once, on arrival — attempt, interval index, stabilisation or
measurement window (:class:`~app.core.records.Placement`) — and every average is taken over the
samples so placed, so the stored tags select exactly the samples a figure came from. It
closes each interval once its end (plus the engine's reporting latency) has passed, computing
average power, operations rate, periodic efficiency, the weighted moving average and the
stability verdict so far (method-notes §4), all through ``app.metrics``. These figures are the
record's: reports and views only format them. A phase metric is also INVALID when its window's
readings break the method's rules on them — flagged power, supply, inlet temperature — which
``app.sequencer.conformance`` words with their evidence (method-notes §3, §10).

Stabilisation of an active profile extends one interval at a time while the WMA criterion fails
at its end (method-notes §4), so the measurement window starts where the record says it did.
Samples that arrive after the planned window start but before that decision are held back and
placed once it is taken: a tag is never published and then contradicted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from itertools import takewhile

import numpy as np

from app.method.model import Method
from app.metrics.efficiency import (active_metric, periodic_efficiency, ready_idle_metric,
                                    stability)
from app.metrics.errors import MetricsError
from app.metrics.histogram import ResponseTimeHistogram
from app.core.records import (IDLE_METRIC, IntervalRecord, MetricResult, PhaseInfo, PhaseKind,
                              Placement, Window)
from app.sequencer.conformance import (SiteRules, flagged_power_problem, grid_points, longest_gap,
                                       resolution_problem, supply_problems,
                                       temperature_problems)
from app.sequencer.workload_window import WorkloadWindow, overlap
from drivers.interfaces import (FLAG_UNCERTAINTY_HIGH, PowerSample, TemperatureSample,
                                WorkloadInterval, WorkloadResult)

MIB = 2**20
#: phases under a measured load: a stabilisation then a measurement window (§2, §6)
_LOADED = (PhaseKind.ACTIVE, PhaseKind.SWEEP)


@dataclass
class PhaseRecorder:
    """Samples, slices and closed intervals of the current attempt of one phase."""

    phase: PhaseInfo
    method: Method
    site: SiteRules  # the method's rules on the readings, bound to the SUT set-up
    t_start: float  # run-relative start of this attempt
    attempt: int = 1
    ops_unit: str = ""  # IOPS | MiB/s | "" (no workload)
    power_t: list[float] = field(default_factory=list)
    power_w: list[float] = field(default_factory=list)
    power_ok: list[bool] = field(default_factory=list)
    power_interval: list[int] = field(default_factory=list)
    power_flags: list[frozenset[str]] = field(default_factory=list)
    power_supply: list[tuple[float, float]] = field(default_factory=list)  # (volts, Hz)
    power_resolution: list[float | None] = field(default_factory=list)  # W, as the meter sent
    #: usable (t, °C, resolution °C as the thermometer stated it)
    inlet: list[tuple[float, float, float | None]] = field(default_factory=list)
    #: the slices' figures still needed and the window's histogram (not every slice: §4)
    workload: WorkloadWindow = field(default_factory=WorkloadWindow)
    #: the latest end of a workload slice received: how far the engine's figures have come
    workload_through: float = -math.inf
    intervals: list[IntervalRecord] = field(default_factory=list)
    eps: list[float] = field(default_factory=list)
    workload_result: WorkloadResult | None = None
    capacity_before: tuple[int, int] | None = None  # COM checks: SUT usage at phase start
    #: the engine reports while it runs, so the stabilisation's end can be judged on the fly
    live: bool = True
    #: stabilisation intervals added because the WMA criterion failed at the planned end (§4)
    extra_stabilisation: int = 0
    held_power: list[PowerSample] = field(default_factory=list)  # placed when decided
    held_temperature: list[TemperatureSample] = field(default_factory=list)

    @property
    def interval_s(self) -> float:
        return self.method.interval_s

    @property
    def planned_intervals(self) -> int:
        """The phase's intervals, including any stabilisation extension decided so far."""
        if not self.phase.planned_s:
            return 0
        return max(1, round(self.phase.planned_s / self.interval_s)) + self.extra_stabilisation

    @property
    def extension_s(self) -> float:
        """How much longer than planned the phase runs (stabilisation extension)."""
        return self.extra_stabilisation * self.interval_s

    @property
    def stabilisation_intervals(self) -> int:
        return self.phase.stabilisation_intervals + self.extra_stabilisation

    @property
    def may_extend(self) -> bool:
        """Whether the stabilisation can still grow (an active profile, below the method's
        limit, its last stabilisation interval not yet judged)."""
        return (self.live and self.phase.kind is PhaseKind.ACTIVE and bool(self.ops_unit)
                and 0 < self.stabilisation_intervals
                < self.method.stability.max_stabilisation_intervals
                and len(self.intervals) < self.stabilisation_intervals)

    @property
    def measured_intervals(self) -> range:
        """Indices of the intervals that form the metric's measurement window."""
        if self.phase.kind in _LOADED:
            first = self.stabilisation_intervals
            return range(first, first + self.phase.measurement_intervals)
        if self.phase.kind is PhaseKind.READY_IDLE:
            return range(self.phase.measurement_intervals)
        return range(0)

    # --- placement ---------------------------------------------------------------------------
    def interval_bounds(self, i: int) -> tuple[float, float]:
        """``[start, end)`` of interval ``i`` (the one formula every figure uses)."""
        start = self.t_start + i * self.interval_s
        return start, start + self.interval_s

    def interval_of(self, t: float) -> int:
        """Index of the interval holding ``t``, −1 before the first or past the plan."""
        i = math.floor((t - self.t_start) / self.interval_s)
        for candidate in (i - 1, i, i + 1):
            start, end = self.interval_bounds(candidate)
            if start <= t < end:
                i = candidate
                break
        else:
            return -1
        limit = self.planned_intervals
        return i if 0 <= i and (not limit or i < limit) else -1

    def window_of_interval(self, i: int) -> Window:
        if i < 0:
            return Window.OUTSIDE
        if i in self.measured_intervals:
            return Window.MEASUREMENT
        if self.phase.kind in _LOADED and i < self.stabilisation_intervals:
            return Window.STABILISATION
        return Window.OUTSIDE

    def place(self, t: float) -> Placement:
        i = self.interval_of(t)
        return Placement(self.attempt, i, self.window_of_interval(i))

    def _undecided(self, t: float) -> bool:
        """Whether ``t`` lies past the stabilisation whose end is still to be judged (its
        window tag depends on that verdict)."""
        return self.may_extend and (t - self.t_start) >= self.stabilisation_intervals \
            * self.interval_s - 1e-9

    # --- feeding -----------------------------------------------------------------------------
    def add_power(self, samples: list[PowerSample]
                  ) -> tuple[tuple[PowerSample, ...], tuple[Placement, ...]]:
        """Keep the samples, flagged for the declared supply, and return those whose window is
        decided with where each one lies (both published: the stored sample carries the supply
        flag); the others are held until :meth:`release_held`."""
        kept, placements = [], []
        for s in samples:
            flags = self.site.supply_flags(s)
            if flags != s.flags:
                s = replace(s, flags=flags)
            where = self.place(s.t)
            if self.held_power or self._undecided(s.t):
                self.held_power.append(s)
            else:
                kept.append(s)
                placements.append(where)
            self.power_t.append(s.t)
            self.power_w.append(s.watts)
            self.power_ok.append(s.usable)
            self.power_interval.append(where.interval)
            self.power_flags.append(s.flags)
            self.power_supply.append(self.site.supply_reading(s))
            self.power_resolution.append(s.resolution_w)
        return tuple(kept), tuple(placements)

    def add_temperature(self, samples: list[TemperatureSample]
                        ) -> tuple[tuple[TemperatureSample, ...], tuple[Placement, ...]]:
        """Keep the usable inlet readings; return the samples whose window is decided with
        where each lies (the others are held, as in :meth:`add_power`)."""
        self.inlet.extend((s.t, s.celsius, s.resolution_c) for s in samples if s.usable)
        decided = []
        for s in samples:
            if self.held_temperature or self._undecided(s.t):
                self.held_temperature.append(s)
            else:
                decided.append(s)
        return tuple(decided), tuple(self.place(s.t) for s in decided)

    def release_held(self) -> tuple[tuple[tuple[PowerSample, ...], tuple[Placement, ...]],
                                    tuple[tuple[TemperatureSample, ...], tuple[Placement, ...]]]:
        """The held samples with their placements, once the stabilisation's end is decided
        (empty tuples while it is not)."""
        if self.may_extend or not (self.held_power or self.held_temperature):
            return ((), ()), ((), ())
        power, temps = tuple(self.held_power), tuple(self.held_temperature)
        self.held_power.clear()
        self.held_temperature.clear()
        placed = tuple(self.place(s.t) for s in power)
        # once one sample is held every later one is, so those still kept (the columns forget
        # from the front as intervals close) are the columns' last entries: the averages take
        # what the stored tags say (a sample past the plan had no interval when it arrived,
        # and is now in the extension)
        if kept := min(len(placed), len(self.power_interval)):
            self.power_interval[-kept:] = [p.interval for p in placed[-kept:]]
        return (power, placed), (temps, tuple(self.place(s.t) for s in temps))

    def slice_window(self, s: WorkloadInterval) -> Window:
        """The window holding most of slice ``s`` (the histogram's rule)."""
        start, end = self.measurement_window()
        return Window.MEASUREMENT if end > start and overlap(s, start, end) >= 0.5 \
            else Window.OUTSIDE

    def add_workload(self, slices: list[WorkloadInterval]) -> None:
        """Keep what the intervals and the phase metric need of each slice (late duplicates
        from a restarted engine stream are dropped, to keep time order); the slices themselves
        are the store's."""
        self._decide_window()
        for s in sorted(slices, key=lambda s: s.t_end):
            self.workload.add(s, self.measurement_window(), decided=not self.may_extend)
            self.workload_through = max(self.workload_through, s.t_end)

    def _decide_window(self) -> None:
        if not self.may_extend and self.workload.undecided:
            self.workload.decide(self.measurement_window())

    # --- intervals ---------------------------------------------------------------------------
    def close_due(self, now: float, latency_s: float, hold_s: float = 0.0
                  ) -> list[IntervalRecord]:
        """Close every interval whose end + ``latency_s`` has passed (bounded by the plan) and,
        with ``hold_s``, whose workload figures have arrived: a slice ends at or after it, or
        ``hold_s`` more has passed. fio's status for the last second of an interval came later
        than ``latency_s`` on a loaded machine, and the interval closed with 0 IOPS although
        the slice was then stored (the verifier re-derived it from the bundle)."""
        closed = []
        limit = self.planned_intervals or math.inf
        while len(self.intervals) < limit:
            _, end = self.interval_bounds(len(self.intervals))
            if end + latency_s > now + 1e-9:
                break
            if (hold_s and self.workload_through < end - 1e-9
                    and end + latency_s + hold_s > now + 1e-9):
                break  # its figures are still on their way
            closed.append(self._close(len(self.intervals)))
        if closed:
            self._forget_unneeded()
        return closed

    def _power_columns(self) -> tuple[list, ...]:
        """The per-sample power lists, index-aligned: forgotten together."""
        return (self.power_t, self.power_w, self.power_ok, self.power_interval,
                self.power_flags, self.power_supply, self.power_resolution)

    def _forget_unneeded(self) -> None:
        """Forget readings and slice figures no open interval and no verdict of this phase
        needs any more: those before the next interval to close and before the evidence
        window (the measurement window, or all of ready idle), whose start only ever moves
        later. Memory then follows the window, not the phase's length (issue 27); every
        sample and slice is in the store."""
        keep_from = self.interval_bounds(len(self.intervals))[0]
        start, end = self._evidence_window()
        if end > start:
            keep_from = min(keep_from, start)
        self._decide_window()
        self.workload.forget_before(keep_from)
        k = _count_before(self.power_t, keep_from)
        if k:
            for column in self._power_columns():
                del column[:k]
        del self.inlet[:_count_before((t for t, *_ in self.inlet), keep_from)]

    def _placed_power(self, intervals: range) -> tuple[float, int]:
        """Mean of the usable samples placed in ``intervals`` (and how many there were)."""
        if not intervals:
            return math.nan, 0
        placed = np.asarray(self.power_interval, dtype=np.int64)
        mask = ((placed >= intervals.start) & (placed < intervals.stop)
                & np.asarray(self.power_ok, dtype=bool))
        count = int(mask.sum())
        return (float(np.mean(np.asarray(self.power_w)[mask])) if count else math.nan), count

    def _window_ops(self, start: float, end: float) -> tuple[float, float]:
        """(operations, average response ms) in [start, end): operations are IOs for IOPS
        profiles and MiB for MiB/s profiles.

        A slice straddling a boundary contributes pro rata to its overlap: engines report on
        their own clock grid (fio's status interval starts when fio does), and allotting whole
        slices by their end would shift work between neighbouring intervals.
        """
        ios = nbytes = resp_weight = 0.0
        for s in self.workload.overlapping(start, end):
            share = overlap(s, start, end)
            ios += s.ios * share
            nbytes += s.nbytes * share
            resp_weight += s.resp_weight * share
        resp = resp_weight / ios if ios else math.nan
        ops = ios if self.ops_unit == "IOPS" else nbytes / MIB
        return float(ops), resp

    def _close(self, i: int) -> IntervalRecord:
        start, end = self.interval_bounds(i)
        watts, n = self._placed_power(range(i, i + 1))
        if self.ops_unit:
            ops, resp = self._window_ops(start, end)
            rate = ops / self.interval_s
            ep = float(periodic_efficiency(np.array([rate]), np.array([watts]))[0])
        else:
            rate, resp, ep = math.nan, math.nan, math.nan
        self.eps.append(ep)
        wma, stable = self._stability_so_far()
        if self.may_extend and i == self.stabilisation_intervals - 1 \
                and not self._wma_holds(ep, wma):
            self.extra_stabilisation += 1
        in_meas = self.window_of_interval(i) is Window.MEASUREMENT
        if self.phase.kind is PhaseKind.CONDITIONING:  # shows whether the SUT has settled (§4)
            stable = self._wma_holds(ep, wma)
        record = IntervalRecord(self.phase.index, self.phase.profile, i, start, end, watts, n,
                                rate, self.ops_unit, resp, ep, wma, in_meas,
                                stable if in_meas or self.phase.kind is PhaseKind.CONDITIONING
                                else None, self.attempt)
        self.intervals.append(record)
        return record

    def _wma_holds(self, ep: float, wma: float) -> bool:
        """The WMA criterion at one interval: |EP_i − WMA_i| ≤ tolerance·WMA_i (§4)."""
        tolerance = self.method.stability.tolerance_pct / 100
        return math.isfinite(ep) and math.isfinite(wma) and wma > 0 \
            and abs(ep - wma) <= tolerance * wma

    def _stability_so_far(self) -> tuple[float, bool | None]:
        if not self.ops_unit:
            return math.nan, None
        rule = self.method.stability
        verdict = stability(np.asarray(self.eps), rule.weights, rule.tolerance_pct,
                            measurement_start=min(self.stabilisation_intervals,
                                                  len(self.eps) - 1),
                            max_drift_pct=rule.max_drift_pct)
        return float(verdict.wma[-1]), bool(verdict.stable)

    # --- phase result ------------------------------------------------------------------------
    def measurement_window(self) -> tuple[float, float]:
        """Run-relative ``[start, end)`` of the measured intervals (empty: start == end)."""
        window = self.measured_intervals
        if not window:
            return self.t_start, self.t_start
        return self.interval_bounds(window.start)[0], self.interval_bounds(window.stop - 1)[1]

    def histogram(self) -> ResponseTimeHistogram:
        """Response-time histogram of the measurement window (fio bins summed as the slices
        arrived; a slice belongs to the histogram of the window holding most of it)."""
        self.workload.decide(self.measurement_window())
        return self.workload.histogram_sum.histogram()

    def active_result(self, metric: str, unit: str, aborted: bool = False) -> MetricResult:
        """The profile's EP metric over its measurement interval, with validity and reason."""
        start, end = self.measurement_window()
        duration = end - start
        watts, n = self._placed_power(self.measured_intervals)
        ops, resp = self._window_ops(start, end)
        reasons = self._validity_problems(watts, n, aborted)
        rule = self.method.stability
        meas_first = self.stabilisation_intervals
        if len(self.eps) >= meas_first + self.phase.measurement_intervals:
            verdict = stability(np.asarray(self.eps), rule.weights, rule.tolerance_pct,
                                measurement_start=meas_first, max_drift_pct=rule.max_drift_pct)
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
        start, end = self.measurement_window()
        watts, n = self._placed_power(self.measured_intervals)
        reasons = self._validity_problems(watts, n, aborted)
        value = math.nan
        try:
            value = ready_idle_metric(raw_capacity_bytes, watts)
        except MetricsError as exc:
            reasons.append(str(exc))
        return MetricResult(IDLE_METRIC, value, "GB/W", not reasons and value == value,
                            "; ".join(reasons), end - start, watts, raw_capacity_bytes / 1e9,
                            "GB", math.nan, self.phase.index)

    def _validity_problems(self, watts: float, n: int, aborted: bool) -> list[str]:
        problems = []
        if aborted:
            problems.append("phase did not complete (aborted or failed)")
        if n == 0 or watts != watts:
            problems.append("no usable power samples in the measurement interval")
        high = sum(FLAG_UNCERTAINTY_HIGH in self.power_flags[i] for i in self._window_samples())
        if high:  # counted over the window every other flag is counted over
            problems.append(f"{high} power sample(s) above the "
                            f"{self.method.instruments.max_uncertainty_pct:g} % uncertainty limit")
        start, end = self._evidence_window()
        period = self.method.sample_period_s
        usable = grid_points((t for t, ok in zip(self.power_t, self.power_ok) if ok),
                             self.t_start, period)
        gap = longest_gap(usable, start, end)
        limit = self.method.instruments.max_power_interval_s
        if gap > limit * (1 + 1e-9):
            problems.append(f"power samples missing for {gap:.3f} s ({round(gap / period) - 1} "
                            f"grid point(s) of the {period:g} s sample period without a "
                            f"usable sample; limit {limit:g} s, "
                            "instruments.max_power_interval_s; method-notes §3)")
        return problems + self._reading_problems(start, end)

    def _reading_problems(self, start: float, end: float) -> list[str]:
        """The method's rules on the window's readings (``app.sequencer.conformance``):
        flagged power, the meter's resolution, the supply, the inlet temperature."""
        measured = self._window_samples()
        limits = self.site.limits
        flagged = flagged_power_problem([(self.power_interval[i], self.power_flags[i])
                                         for i in measured], limits.max_flagged_power_samples)
        coarse = resolution_problem([(self.power_w[i], self.power_resolution[i])
                                     for i in measured if self.power_ok[i]], limits)
        return ([p for p in (flagged, coarse) if p]
                + supply_problems([(*self.power_supply[i], self.power_flags[i])
                                   for i in measured], self.site)
                + temperature_problems(self.inlet, start, end, self.site))

    def _window_samples(self) -> list[int]:
        """Indices of the power samples in the measured intervals: the one window every rule
        on the readings counts over (flags, uncertainty, resolution, supply)."""
        window = self.measured_intervals
        return [i for i, interval in enumerate(self.power_interval) if interval in window]

    def _evidence_window(self) -> tuple[float, float]:
        """Where readings must be continuous: the measurement window, or the whole ready-idle
        phase (its metric is the phase's average)."""
        if self.phase.kind is PhaseKind.READY_IDLE:
            return self.t_start, self.t_start + self.phase.planned_s
        return self.measurement_window()




def _count_before(times: Iterable[float], t: float) -> int:
    """How many leading times (arrival order) lie before ``t``."""
    return sum(1 for _ in takewhile(lambda x: x < t, times))
