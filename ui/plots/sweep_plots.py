"""Live plots of a plan's sweeps (method-notes §6): the BSU sweep against its unit count and
the demand-intensity curve.

The seed plots IOPS, response time, watts, mW/IOPS and W per drive against the BSU count;
the run view shows the same five, one point added as each step's stored metric is published
(``MetricComputed`` of ``<name>_<unit>_<n>``), so the operator sees the curve bend before the
stop rule ends the sweep. Hidden for a plan without a sweep.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import ClassVar

import pyqtgraph as pg
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.method.model import STEADY_STATE_PHASE, DemandIntensity, Method, Sweep
from app.metrics.steady_state import SteadyStateVerdict
from app.metrics.sweep import SweepPoint, sweep_point
from app.core.records import PhaseKind
from app.sequencer import events as ev
from app.sequencer.event_dispatch import EventTable
from ui.widgets.theme import PlotColours, plot_colours

#: (title, the point's figure, axis label) of each plot, in the seed's order
FIGURES = (("IOPS", lambda p: p.iops, "IOPS"),
           ("Average response time", lambda p: p.avg_response_ms, "ms"),
           ("Average power", lambda p: p.watts, "W"),
           ("Power per IO", lambda p: p.mw_per_iops, "mW/IOPS"),
           ("Power per drive", lambda p: p.w_per_drive, "W per drive"))


#: events the two plots take through the run view's start_run, and those they never draw
_STARTED = (ev.RunStarted, ev.RunResumed)
_NOT_DRAWN = (ev.InstrumentsIdentified, ev.PhaseStarted, ev.StabilisationExtended,
              ev.PhaseFinished, ev.PowerSamples, ev.TemperatureSamples, ev.WorkloadIntervals,
              ev.HostRates, ev.HistogramReady, ev.SearchResult, ev.RangesApplied,
              ev.RangePlanReady, ev.Progress, ev.LogMessage, ev.TeardownFailed, ev.RunFinished)


class SweepPlots(QWidget):
    """Five small plots against the sweep's unit count; feed it with :meth:`ingest`."""

    _events: ClassVar[EventTable[None]] = EventTable("sweep plots")
    _events.ignore(*_STARTED, why="the run view calls start_run with the method it resolved")
    _events.ignore(*_NOT_DRAWN, ev.IntervalClosed, ev.SteadyStateJudged,
                   why="a sweep point is drawn from its stored metric only")

    def __init__(self, parent: QWidget | None = None, colours: PlotColours | None = None
                 ) -> None:
        super().__init__(parent)
        self.colours = colours or plot_colours()
        self.sweep: Sweep | None = None
        self.points: list[SweepPoint] = []
        self._drives = 0
        self._limit_ms = float("nan")
        self.caption = QLabel("")
        self.layout_widget = pg.GraphicsLayoutWidget()
        self.layout_widget.setMinimumHeight(260)
        self._curves: list[pg.PlotDataItem] = []
        self._plots: list[pg.PlotItem] = []
        for k, (title, _figure, unit) in enumerate(FIGURES):
            plot = self.layout_widget.addPlot(row=k // 3, col=k % 3, title=title)
            plot.setLabel("left", unit)
            self._plots.append(plot)
            self._curves.append(plot.plot([], [], pen=pg.mkPen(self.colours.iops, width=2),
                                          symbol="o", symbolSize=6,
                                          symbolBrush=self.colours.iops))
        self._limit_line = pg.InfiniteLine(angle=0, pen=pg.mkPen(self.colours.ceiling,
                                                                  width=1.5))
        self._plots[1].addItem(self._limit_line)
        self._asked = self._plots[0].plot([], [], pen=pg.mkPen(self.colours.level, width=1,
                                                                style=pg.QtCore.Qt.DashLine))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.caption)
        layout.addWidget(self.layout_widget, 1)
        self.setVisible(False)

    def start_run(self, started: ev.RunStarted, method: Method | None) -> None:
        """Reset for a run; visible only when the run's plan has a sweep."""
        self.points = []
        self.sweep = None
        if method is not None:
            try:
                self.sweep = method.plan_for(started.config.category).sweep
            except KeyError:
                self.sweep = None
            self._limit_ms = method.response_time.max_avg_ms
        self._drives = started.config.sut.drive_count
        self.setVisible(self.sweep is not None)
        if self.sweep is not None:
            unit = f"{self.sweep.unit}s ({self.sweep.unit_iops:g} IOPS each)"
            for plot in self._plots:
                plot.setLabel("bottom", unit)
            self._limit_line.setPos(self._limit_ms)
            self.caption.setText(
                f"{self.sweep.name} sweep: stops when the average response time passes "
                f"{self._limit_ms:g} ms (red line) or IOPS rise < {self.sweep.min_gain_pct:g} %")
        self._redraw()

    def ingest(self, batch: Iterable[ev.RunEvent]) -> None:
        if self.sweep is None:
            return
        for event in batch:
            self._events.dispatch(event, self)

    @_events.on
    def _on_metric(self, e: ev.MetricComputed) -> None:
        sweep = self.sweep
        assert sweep is not None  # ingest only dispatches with a sweep
        prefix = f"{sweep.name}_{sweep.unit}_"
        if e.metric.name.startswith(prefix) and e.metric.name[len(prefix):].isdigit():
            units = int(e.metric.name[len(prefix):])
            self.points.append(sweep_point(units, sweep.rate_iops(units), e.metric,
                                           self._drives))
            self._redraw()

    def _redraw(self) -> None:
        x = [p.units for p in self.points]
        for curve, (_title, figure, _unit) in zip(self._curves, FIGURES):
            curve.setData(x, [figure(p) for p in self.points])
        self._asked.setData(x, [p.asked_iops for p in self.points])


class DemandIntensityPlot(QWidget):
    """The PTS demand-intensity curve live: IOPS against average response time, one line
    per thread loop, a point added as each cell's stored metric is published (method-notes
    §6); beside it the workload preconditioning's rounds with the PTS steady-state window
    (§5) as each round's interval closes. Hidden for a plan without a matrix."""

    _events: ClassVar[EventTable[None]] = EventTable("demand intensity plot")
    _events.ignore(*_STARTED, why="the run view calls start_run with the method it resolved")
    _events.ignore(*_NOT_DRAWN,
                   why="a cell is drawn from its stored metric, a round from its interval")

    def __init__(self, parent: QWidget | None = None, colours: PlotColours | None = None
                 ) -> None:
        super().__init__(parent)
        self.colours = colours or plot_colours()
        self.matrix: DemandIntensity | None = None
        self.cells: dict[int, list[tuple[int, float, float]]] = {}  # threads → (q, ms, IOPS)
        self.plot = pg.PlotWidget(title="Demand intensity: IOPS v average response time")
        self.plot.setLabel("bottom", "average response time (ms)")
        self.plot.setLabel("left", "IOPS")
        self.plot.addLegend(offset=(10, 10))
        self.plot.setMinimumHeight(240)
        self._curves: dict[int, pg.PlotDataItem] = {}
        self.steady = pg.PlotWidget(title="PTS steady state")
        self.steady.setLabel("bottom", "round")
        self.steady.setLabel("left", "IOPS")
        self.rounds: list[float] = []
        self._steady_phase: int | None = None
        #: the sequencer's latest verdict on the rounds (method-notes §5)
        self.verdict: SteadyStateVerdict | None = None
        self._round_curve = self.steady.plot([], [], pen=pg.mkPen(self.colours.iops, width=2),
                                             symbol="o", symbolSize=6,
                                             symbolBrush=self.colours.iops)
        self._window = [self.steady.plot([], [], pen=pg.mkPen(self.colours.wma, width=1.5,
                                                               style=pg.QtCore.Qt.DashLine))
                        for _ in range(3)]  # window average and its ± half-range limits
        row = QHBoxLayout()
        row.addWidget(self.plot, 3)
        row.addWidget(self.steady, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        self.setVisible(False)

    def start_run(self, started: ev.RunStarted, method: Method | None) -> None:
        self.cells = {}
        for curve in self._curves.values():
            self.plot.removeItem(curve)
        self._curves = {}
        self.matrix = None
        self.rounds = []
        self.verdict = None
        if method is not None:
            try:
                self.matrix = method.plan_for(started.config.category).demand_intensity
            except KeyError:
                self.matrix = None
        self._steady_phase = next((p.index for p in started.phases
                                   if p.kind is PhaseKind.CONDITIONING
                                   and p.name == STEADY_STATE_PHASE), None)
        self.steady.setVisible(self._steady_phase is not None)
        self._draw_rounds()
        self.setVisible(self.matrix is not None)

    def ingest(self, batch: Iterable[ev.RunEvent]) -> None:
        if self.matrix is None:
            return
        for event in batch:
            self._events.dispatch(event, self)

    @_events.on
    def _on_interval(self, e: ev.IntervalClosed) -> None:
        if e.interval.phase_index == self._steady_phase:
            self.rounds.append(e.interval.ops_rate)
            self._draw_rounds()

    @_events.on
    def _on_steady_state(self, e: ev.SteadyStateJudged) -> None:
        if e.phase_index == self._steady_phase:
            self.verdict = e.verdict
            self._draw_rounds()

    @_events.on
    def _on_metric(self, e: ev.MetricComputed) -> None:
        assert self.matrix is not None  # ingest only dispatches with a matrix
        m = re.match(rf"^{re.escape(self.matrix.name)}_T(\d+)_Q(\d+)$", e.metric.name)
        if m:
            threads = int(m.group(1))
            self.cells.setdefault(threads, []).append(
                (int(m.group(2)), e.metric.avg_response_ms, e.metric.ops_rate))
            self._draw(threads)

    def _draw(self, threads: int) -> None:
        if threads not in self._curves:
            colour = pg.intColor(len(self._curves), hues=5)
            self._curves[threads] = self.plot.plot([], [], pen=pg.mkPen(colour, width=2),
                                                   symbol="o", symbolSize=6,
                                                   symbolBrush=colour, name=f"T{threads}")
        points = self.cells[threads]
        self._curves[threads].setData([p[1] for p in points], [p[2] for p in points])

    def _draw_rounds(self) -> None:
        """The rounds and the sequencer's latest PTS verdict on them (``SteadyStateJudged``):
        its window's average ± half the allowed range, and the verdict in the title. The
        verdict is the station's, stored with the phase; this view only formats it."""
        x = list(range(1, len(self.rounds) + 1))
        self._round_curve.setData(x, self.rounds)
        m, v = self.matrix, self.verdict
        for line in self._window:
            line.setData([], [])
        if m is None or v is None:
            self.steady.setTitle("PTS steady state")
            return
        if not math.isfinite(v.window_average):
            self.steady.setTitle(f"PTS steady state: not reached — {v.reason}")
            return
        last = (v.round_index + 1 if v.steady and v.round_index is not None
                else len(self.rounds))
        xs = x[max(0, last - m.steady_state_window):last]
        half = m.steady_state_range_pct / 200 * v.window_average
        for line, y in zip(self._window, (v.window_average, v.window_average + half,
                                          v.window_average - half)):
            line.setData(xs, [y] * len(xs))
        state = (f"reached at round {last}" if v.steady
                 else "not reached" if v.gave_up else "not yet")
        self.steady.setTitle(f"PTS steady state: {state}<br>range {v.range_pct:.1f} % "
                             f"(≤ {m.steady_state_range_pct:g} %), slope "
                             f"{v.slope_excursion_pct:.1f} % (≤ {m.steady_state_slope_pct:g} %)")
        item = self.steady.getPlotItem()
        item.titleLabel.setMaximumHeight(44)  # room for the verdict's second line
        item.layout.setRowFixedHeight(0, 44)
