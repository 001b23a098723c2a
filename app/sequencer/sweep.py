"""The steps of a plan's sweeps as the sequencer runs them (method-notes §6).

Every step is planned as its own ``sweep`` phase (``app.sequencer.plan``), so it is stored,
shown and reported like any measured phase. This module gives a step its workload and metric
name. A BSU sweep step runs ``unit_iops`` × n IOPS split by the profile's mix (jobs and load
hosts split it further, ``drivers.fio.jobs``) at the seed's queue depth, and after each
step's metric the stop rule applies (``app.metrics.sweep.stop_reason``): the steps after the
stop are recorded SKIPPED with the reason, never run. A demand-intensity cell runs the
profile unthrottled at its thread count × queue depth; the matrix runs whole. Before the
cells, the matrix's workload preconditioning runs one round per interval until the PTS steady
state (``app.metrics.steady_state``, method-notes §5) over the rounds' IOPS, then ends early.
"""

from __future__ import annotations

from app.method.model import STEADY_STATE_PHASE, Method, PhasePlan
from app.metrics.errors import MetricsError
from app.metrics.steady_state import SteadyStateVerdict, steady_state
from app.metrics.sweep import SweepPoint, stop_reason, sweep_point
from app.core.records import MetricResult, PhaseInfo, PhaseKind
from drivers.interfaces import WorkloadProfile


class SweepSteps:
    """The sweep of one run: which phase is which step, the points so far, the stop."""

    def __init__(self, method: Method, plan: PhasePlan, phases: tuple[PhaseInfo, ...],
                 drives: int) -> None:
        self.method = method
        self.sweep = plan.sweep
        self.matrix = plan.demand_intensity
        steps = [p.index for p in phases if p.kind is PhaseKind.SWEEP]
        units = list(self.sweep.units) if self.sweep else []
        self._units = dict(zip(steps, units))
        self._cells = dict(zip(steps[len(units):], self.matrix.cells() if self.matrix else ()))
        self._steady = next((p.index for p in phases if p.kind is PhaseKind.CONDITIONING
                             and p.name == STEADY_STATE_PHASE and self.matrix), None)
        self._drives = drives
        self.points: list[SweepPoint] = []
        #: why the sweep ended early (None while it goes on)
        self.stopped: str | None = None

    def units(self, phase: PhaseInfo) -> int:
        return self._units[phase.index]

    def metric_name(self, phase: PhaseInfo) -> str:
        if phase.index in self._cells:
            assert self.matrix is not None
            return self.matrix.metric(*self._cells[phase.index])
        assert self.sweep is not None
        return self.sweep.metric(self.units(phase))

    def skip_reason(self, phase: PhaseInfo) -> str | None:
        """Why ``phase`` (a step after the stop) is not run."""
        if phase.index not in self._units or self.stopped is None:
            return None
        return f"sweep stopped before {phase.name}: {self.stopped}"

    def owns(self, phase: PhaseInfo) -> bool:
        """Whether this module gives ``phase`` its workload (a step, a cell, the
        preconditioning)."""
        return phase.index in self._units or phase.index in self._cells or \
            phase.index == self._steady

    def judge(self, phase: PhaseInfo, rounds: list[float]) -> SteadyStateVerdict | None:
        """For the preconditioning phase, once a window of rounds is full: the PTS steady-state
        verdict over the rounds' IOPS so far (method-notes §5). This is the verdict's one
        author: the sequencer publishes it, storage keeps it with the phase, and the live plot
        and the reports only format it. A round without a figure is judged not steady, with
        the rule's reason, rather than ending the run. None for any other phase, or before a
        window is full."""
        if phase.index != self._steady or self.matrix is None:
            return None
        m = self.matrix
        if len(rounds) < m.steady_state_window:
            return None
        try:
            return steady_state(rounds, m.steady_state_window, m.steady_state_range_pct,
                                m.steady_state_slope_pct, m.steady_state_rounds)
        except MetricsError as exc:
            nan = float("nan")
            return SteadyStateVerdict(False, None, nan, nan, nan,
                                      len(rounds) >= m.steady_state_rounds, str(exc))

    def reached_text(self, verdict: SteadyStateVerdict) -> str:
        """The run log's words for a steady verdict (the verifier reads them back)."""
        m = self.matrix
        assert m is not None and verdict.round_index is not None
        return (f"reached after {verdict.round_index + 1} rounds: the last "
                f"{m.steady_state_window} average {verdict.window_average:.0f} IOPS, range "
                f"{verdict.range_pct:.1f} % (≤ {m.steady_state_range_pct:g} %), slope "
                f"{verdict.slope_excursion_pct:.1f} % (≤ {m.steady_state_slope_pct:g} %)")

    def workload(self, phase: PhaseInfo, duration_s: float) -> WorkloadProfile:
        """The step's profile at ``unit_iops`` × n IOPS, per direction by the profile's mix
        (fio needs ``rate_iops=R,W`` to keep a mix, method-notes §9); a demand-intensity cell
        at its threads × queue depth, no rate."""
        if phase.index in self._cells or phase.index == self._steady:
            assert self.matrix is not None
            threads, qd = self._cells.get(phase.index, (self.matrix.steady_state_threads,
                                                         self.matrix.steady_state_queue_depth))
            return self.method.profile(self.matrix.profile).to_workload(
                queue_depth=qd, jobs=threads, duration_s=duration_s, kind="sweep")
        assert self.sweep is not None
        units, profile = self.units(phase), self.method.profile(self.sweep.profile)
        total = self.sweep.rate_iops(units)
        reads = round(total * profile.read_pct / 100)
        return profile.to_workload(queue_depth=self.sweep.queue_depth(units), jobs=1,
                                   rate_iops=(reads, total - reads), duration_s=duration_s,
                                   kind="sweep")

    def record(self, phase: PhaseInfo, metric: MetricResult) -> str | None:
        """Add the step's figures; returns the stop reason when this step ends the sweep
        (never for a demand-intensity cell: the matrix runs whole)."""
        if phase.index in self._cells:
            return None
        assert self.sweep is not None
        units = self.units(phase)
        self.points.append(sweep_point(units, self.sweep.rate_iops(units), metric,
                                       self._drives))
        self.stopped = stop_reason(self.points, self.method.response_time.max_avg_ms,
                                   self.sweep.min_gain_pct)
        return self.stopped
