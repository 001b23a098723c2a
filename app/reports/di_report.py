"""What the reports show of a PTS demand-intensity matrix (docs/method-notes.md §6).

From the stored record only: the cells are the run's ``<name>_T<t>_Q<q>`` metrics, the
histograms the ones stored for their phases, the rules ``app.metrics.demand_intensity``'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.method.model import STEADY_STATE_PHASE, DemandIntensity
from app.metrics.demand_intensity import DiPoint, loops, saturation, stored_cells, sweet_spot
from app.metrics.steady_state import SteadyStateVerdict
from app.core.records import PhaseKind
from app.sequencer.events import HistogramReady
from app.storage.stored import StoredPhase, StoredRun

CELL_COLUMNS = ("threads", "queue depth", "outstanding IO", "IOPS", "avg response (ms)",
                "avg power (W)", "IOPS/W", "saturation point")
SWEET_COLUMNS = ("response-time ceiling (ms)", "sweet spot", "IOPS", "avg response (ms)")


@dataclass(frozen=True)
class DiReport:
    matrix: DemandIntensity
    cells: tuple[DiPoint, ...]
    saturated: dict[int, DiPoint | None]  # thread count → its loop's saturation point
    histograms: dict[int, HistogramReady]  # phase index → the cell's histogram
    ceiling_ms: float  # the method's histogram ceiling
    #: the workload preconditioning's rounds (IOPS per interval) and the PTS verdict the
    #: station stored for them (None: fewer rounds than a window, or stored before 0020)
    rounds: tuple[float, ...] = ()
    steady: SteadyStateVerdict | None = None

    @property
    def title(self) -> str:
        return f"{self.matrix.name} demand-intensity matrix ({self.matrix.profile})"

    def loops(self) -> dict[int, list[DiPoint]]:
        return loops(list(self.cells))

    def cell_rows(self) -> list[list]:
        marked = {id(p) for p in self.saturated.values() if p is not None}
        return [[c.threads, c.queue_depth, c.outstanding, c.iops, c.avg_response_ms, c.watts,
                 c.ep, "SATURATION" if id(c) in marked else ""] for c in self.cells]

    def sweet_rows(self) -> list[list]:
        rows = []
        for ceiling in self.matrix.ceilings_ms:
            best = sweet_spot(list(self.cells), ceiling)
            rows.append([ceiling, best.label if best else "none within the ceiling",
                         best.iops if best else None, best.avg_response_ms if best else None])
        return rows

    def steady_text(self) -> str:
        """The preconditioning's outcome in words (method-notes §5), from the verdict the
        station stored with the phase; this view never judges the rounds itself."""
        m, v = self.matrix, self.steady
        if not m.steady_state_rounds:
            return "no workload preconditioning in this plan"
        if v is None:
            if len(self.rounds) < m.steady_state_window:
                return f"preconditioning ran {len(self.rounds)} rounds, too few to judge"
            return (f"preconditioning ran {len(self.rounds)} rounds; steady-state verdict not "
                    "recorded (the run was stored before the station kept it, revision 0020)")
        if not v.steady:
            return f"steady state NOT reached: {v.reason}"
        return (f"steady state reached at round {v.round_index + 1} of at most "
                f"{m.steady_state_rounds} (T{m.steady_state_threads}Q"
                f"{m.steady_state_queue_depth}): window average {v.window_average:.0f} IOPS, "
                f"range {v.range_pct:.1f} % (≤ {m.steady_state_range_pct:g} %), slope "
                f"{v.slope_excursion_pct:.1f} % (≤ {m.steady_state_slope_pct:g} %)")

    def saturation_text(self) -> str:
        return "; ".join(f"T{t}: {p.label}" if p else f"T{t}: not saturated"
                         for t, p in self.saturated.items())


def di_report(run: StoredRun) -> DiReport | None:
    """The run's demand-intensity matrix, or None when its plan has none."""
    method = run.method
    if method is None:
        return None
    try:
        matrix = method.plan_for(run.config.category).demand_intensity
    except KeyError:
        return None
    if matrix is None:
        return None
    cells = stored_cells(run.metrics, matrix.name)
    saturated = {t: saturation(loop, matrix.saturation_gain_pct)
                 for t, loop in loops(cells).items()}
    indices = {c.phase_index for c in cells}
    histograms = {h.phase_index: h for h in run.histograms if h.phase_index in indices}
    phase = _preconditioning(run)
    rounds = () if phase is None else tuple(r.ops_rate for r in run.attempt_intervals(
        phase.index))
    return DiReport(matrix, tuple(cells), saturated, histograms,
                    method.response_time.ceiling_ms, rounds,
                    None if phase is None else phase.steady_state)


def _preconditioning(run: StoredRun) -> StoredPhase | None:
    return next((p for p in run.phases if p.info.kind is PhaseKind.CONDITIONING
                 and p.info.name == STEADY_STATE_PHASE), None)
