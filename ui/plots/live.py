"""Live plots of a run: power and inlet temperature, IO rate, periodic efficiency with its
stability band, and the response-time histogram.

Events only append to :class:`~ui.plots.series.GrowableSeries` buffers and mark the plots dirty; a
QTimer redraws at most a few times a second from buffer views, with clip-to-view and peak
downsampling so a 24 h run (86 400 points per curve) redraws as fast as a short one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import ClassVar

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QTimer
from PySide6.QtGui import QPainterPath
from PySide6.QtWidgets import QComboBox, QGridLayout, QLabel, QVBoxLayout, QWidget

from app.metrics.histogram_basis import TOTAL_LATENCY, HistogramBasis, histogram_basis
from app.method.model import Method
from app.metrics.histogram import ceiling_meaning
from app.core.records import IntervalRecord, PhaseInfo, PhaseKind
from app.sequencer import events as ev
from app.sequencer.event_dispatch import EventTable
from drivers.interfaces import HostRate, WorkloadInterval
from ui.plots.input_plots import InputPlots
from ui.plots.envelope import Envelope
from ui.plots.live_curve import draw, live_curve as _curve, on_view_change
from ui.plots.live_rates import LIVE_NOTE, LIVE_TIP, LiveHostRates
from ui.plots.series import GrowableSeries
from ui.widgets.theme import (PLOT_MIN_HEIGHT, PlotColours, apply_plot_theme, plot_colours,
                              system_is_dark)

REDRAW_INTERVAL_MS = 250
#: response-time axis ticks (log10 view coordinates → label in ms), 1-2-5 per decade
LOG_MS_TICKS = [(math.log10(m * 10.0**k), f"{m * 10.0**k:g}")
                for k in range(-3, 6) for m in (1, 2, 5)]
LOG_COUNT_TICKS = [(math.log10(m * 10**k), f"{m * 10**k:,}") for k in range(0, 10)
                   for m in (1, 2, 5)]
STEM_BASE = 0.8  # stems start just under one IO on the log count axis
SYMBOL_LIMIT = 600  # EP intervals drawn with markers up to this many points
HIST_TITLE = "Response-time histogram (measurement interval)"
HIST_WAITING = ("No histogram yet: one appears when an active profile's measurement interval "
                "completes.")


#: tick steps of the run-time axis (s): whole seconds, minutes and hours only, so two ticks
#: never print the same h:mm:ss label
TIME_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600,
              43200, 86400)
EMPTY_SPAN_S = 60.0  # the run-time axes before any data: 0:00 … 1:00
LEVEL_LABEL_TOP, LEVEL_LABEL_STEP, CEILING_LABEL_AT = 0.95, 0.12, 0.06
IO_TITLE = "IO rate"
#: load hosts' IO series are told apart by line style (their colours stay IOPS/MiB/s), with
#: the mark the plot's title shows for each
HOST_STYLES = ((pg.QtCore.Qt.PenStyle.SolidLine, "━"), (pg.QtCore.Qt.PenStyle.DashLine, "╍"),
               (pg.QtCore.Qt.PenStyle.DotLine, "┉"), (pg.QtCore.Qt.PenStyle.DashDotLine, "━·"))


def time_step(span_s: float, pixels: float, min_px: float = 70.0) -> float:
    """The smallest step of :data:`TIME_STEPS` leaving ``min_px`` pixels per label."""
    wanted = span_s * min_px / max(pixels, 1.0)
    return next((s for s in TIME_STEPS if s >= wanted), TIME_STEPS[-1])


def _empty_time_range(plot: pg.PlotItem) -> None:
    """0:00 … 1:00 until data arrives (pyqtgraph's empty view is -0.5 … 0.5, which the time
    axis would print as a negative time), then the x range follows the data again."""
    plot.setXRange(0, EMPTY_SPAN_S, padding=0)
    plot.enableAutoRange(axis="x")


class DurationAxis(pg.AxisItem):
    """Run time as h:mm:ss (seconds alone are unreadable once a run passes an hour), ticks on
    whole seconds/minutes/hours and no SI scaling ("(x0.001)" means nothing for a time)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.enableAutoSIPrefix(False)

    def tickSpacing(self, minVal, maxVal, size):  # noqa: N802, N803 (pyqtgraph naming)
        major = time_step(maxVal - minVal, size)
        minor = next((s for s in reversed(TIME_STEPS) if s < major and major % s == 0), major)
        return [(major, 0), (minor, 0)]

    def tickStrings(self, values, scale, spacing):  # noqa: N802 (Qt naming)
        out = []
        for v in values:
            s = int(round(v * scale))
            sign = "-" if s < 0 else ""
            h, rem = divmod(abs(s), 3600)
            m, sec = divmod(rem, 60)
            out.append(f"{sign}{h}:{m:02d}:{sec:02d}" if h else f"{sign}{m}:{sec:02d}")
        return out


def phase_units(method: Method | None, phases: Sequence[PhaseInfo]) -> dict[int, str]:
    """IOPS for random profiles, MiB/s for sequential ones and for pre-fill / COM writes
    (256 KiB sequential, method-notes §2)."""
    units: dict[int, str] = {}
    for p in phases:
        if p.kind in (PhaseKind.PREFILL, PhaseKind.COM_CHECK):
            units[p.index] = "MiB/s"
        elif p.profile and method is not None:
            try:
                units[p.index] = method.profile(p.profile).ops_unit
            except KeyError:
                units[p.index] = "IOPS"
        else:
            units[p.index] = "IOPS"
    return units


class _DualAxisPlot:
    """A PlotItem with a second, independently scaled y axis on the right."""

    def __init__(self, widget: pg.PlotWidget, left: str, left_unit: str, right: str,
                 right_unit: str, non_negative: bool = False) -> None:
        """``non_negative``: both scales stop at 0 (an IO rate is never negative; a padded
        auto-range or a single point would otherwise show −2000 MiB/s)."""
        self.item = widget.getPlotItem()
        self.item.setLabel("left", left, units=left_unit)
        self.item.showAxis("right")
        self.item.setLabel("right", right, units=right_unit)
        for side in ("left", "right"):  # "kMiB/s" or "mW" would only confuse
            self.item.getAxis(side).enableAutoSIPrefix(False)
        self.right = pg.ViewBox()
        self.item.scene().addItem(self.right)
        self.item.getAxis("right").linkToView(self.right)
        self.right.setXLink(self.item)
        self.item.vb.sigResized.connect(self._sync)
        self._sync()
        if non_negative:
            for vb in (self.item.vb, self.right):
                vb.setLimits(yMin=0)
        # the x range follows both axes' data until the technician zooms or pans by hand
        self.follow = True
        for vb in (self.item.vb, self.right):
            vb.sigRangeChangedManually.connect(self._stop_following)

    def key_axes(self, left_colour: str, right_colour: str) -> None:
        """Each y axis (label, line, tick labels) in its curve's colour: with two scales on
        one plot, the colour says which curve an axis belongs to."""
        for side, colour in (("left", left_colour), ("right", right_colour)):
            axis = self.item.getAxis(side)
            axis.setPen(pg.mkPen(colour))
            axis.setTextPen(pg.mkPen(colour))
            self.item.setLabel(side, axis.labelText, units=axis.labelUnits, color=colour)

    def reset_view(self) -> None:
        """Follow the data again, from the empty 0:00 … 1:00 view and 0 … 1 on both
        scales (a new run): pyqtgraph keeps a view's last range, and sizes a first flat
        stretch of data by it ("preserve the previous scale"), so the last run's 0 … 4000
        MiB/s made the new run's first 0 MiB/s read −2000 … +2000."""
        self.follow = True
        _empty_time_range(self.item)
        for vb in (self.item.vb, self.right):
            vb.setYRange(0, 1, padding=0)
            vb.enableAutoRange(axis="y")

    def _stop_following(self, *_args) -> None:
        self.follow = False

    def fit_x(self, *series: GrowableSeries) -> None:
        """Show the union of the series' x spans: the left view box alone would auto-range on
        its own curve and cut off the right axis' data (e.g. MiB/s after the IOPS phases)."""
        if not self.follow:
            return
        spans = [s.view()[0] for s in series if len(s)]
        if not spans:
            return
        lo, hi = min(x[0] for x in spans), max(x[-1] for x in spans)
        view_lo, view_hi = self.item.vb.viewRange()[0]
        if hi <= lo or (view_lo <= lo and hi <= view_hi and hi >= view_hi - 0.1 * (
                view_hi - view_lo)):
            return  # data still inside the view: re-ranging every redraw would cost a relayout
        # 5 % headroom on the right, so the range moves once per 5 % of growth
        self.item.vb.setXRange(lo, hi + 0.05 * (hi - lo), padding=0.01)

    def _sync(self) -> None:
        self.right.setGeometry(self.item.vb.sceneBoundingRect())
        self.right.linkedViewChanged(self.item.vb, self.right.XAxis)


def _extend_by_phase(series: GrowableSeries, t: np.ndarray, y: np.ndarray,
                     phase: np.ndarray | None, max_step_s: float = math.inf) -> None:
    """Append samples; with ``phase``, a NaN between phases so a curve never bridges two,
    and a NaN wherever two samples lie more than ``max_step_s`` apart (a pause, a silent
    meter): a straight line across a gap would draw readings nobody took."""
    if not len(t):
        return
    x_last, _ = series.view()
    last = x_last[-1] if len(x_last) else math.nan
    if t[0] - last > max_step_s:
        series.break_line(float(last))
    cuts = set((np.flatnonzero(np.diff(t) > max_step_s) + 1).tolist())
    if phase is not None:
        cuts |= set((np.flatnonzero(np.diff(phase)) + 1).tolist())
    bounds = sorted(cuts)
    parts = list(zip(np.split(t, bounds), np.split(y, bounds)))
    for i, (part_t, part_y) in enumerate(parts):
        series.extend(part_t, part_y)
        if phase is not None or i < len(parts) - 1:  # a phase's samples all came: close it
            series.break_line(float(part_t[-1]))


class WrappedNote(QLabel):
    """A word-wrapped label whose minimum height is that of its text at its present width.

    A plain wrapped QLabel tells the layout it needs one line; under the histogram its five
    lines then overlapped the plot's axis title and the profile drop-down on a 768 px
    screen. With its real height as minimum, the layout (and the splitter above it) makes
    room instead."""

    def __init__(self, text: str = "") -> None:
        super().__init__(text)
        self.setWordWrap(True)

    def minimumSizeHint(self):  # noqa: N802 (Qt naming)
        hint = super().minimumSizeHint()
        if self.width() > 0:
            hint.setHeight(max(hint.height(), self.heightForWidth(self.width())))
        return hint

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self.updateGeometry()  # the number of lines may have changed


class LivePlots(QWidget):
    """The four live plots of the run view. Feed it event batches with :meth:`ingest`."""

    _events: ClassVar[EventTable[None]] = EventTable("live plots")
    _events.ignore(ev.RunStarted, ev.RunResumed,
                   why="the run view calls start_run with the method it resolved")
    _events.ignore(ev.InstrumentsIdentified, ev.StabilisationExtended, ev.PhaseFinished,
                   ev.SearchResult, ev.RangesApplied, ev.RangePlanReady, ev.MetricComputed,
                   ev.Progress, ev.LogMessage, ev.TeardownFailed, ev.RunFinished,
                   ev.SteadyStateJudged,
                   why="nothing to draw: the timeline, metrics table and event log show them")

    def __init__(self, parent: QWidget | None = None, *, dark: bool | None = None,
                 redraw_ms: int = REDRAW_INTERVAL_MS) -> None:
        super().__init__(parent)
        self.colours: PlotColours = apply_plot_theme(dark)
        self._units: dict[int, str] = {}
        self._tolerance = float("nan")
        self._max_avg_ms: float | None = None  # the method's average response-time limit
        self._max_step_s = {"power": math.inf, "temperature": math.inf}
        self._last_phase: int | None = None
        self.series = {name: GrowableSeries() for name in (
            "power", "temperature", "iops", "mibs", "ep", "wma", "band_hi", "band_lo")}
        self.hosts: list[str] = []  # load hosts with their own IO series, in order of arrival
        self.histograms: dict[str, ev.HistogramReady] = {}
        self._envelopes: dict[str, Envelope] = {}
        self._dirty = False
        self._build()
        for widget in (self.power_widget, self.ops_widget, self.ep_widget):
            on_view_change(widget.getPlotItem(), self._view_changed)
        self._timer = QTimer(self)
        self._timer.setInterval(redraw_ms)
        self._timer.timeout.connect(self.redraw_if_dirty)
        self._timer.start()

    # --- construction -----------------------------------------------------------------------
    def _plot_widget(self, title: str) -> pg.PlotWidget:
        widget = pg.PlotWidget(axisItems={"bottom": DurationAxis("bottom")})
        widget.setTitle(title)
        # no grid on the live plots: pyqtgraph's grid costs 10× the curves to paint
        widget.setLabel("bottom", "run time (h:mm:ss)")
        widget.setMinimumSize(320, PLOT_MIN_HEIGHT)
        _empty_time_range(widget.getPlotItem())
        return widget

    def _build(self) -> None:
        c = self.colours
        self.power_widget = self._plot_widget("Input power and inlet temperature")
        power = _DualAxisPlot(self.power_widget, "Power", "W", "Temperature", "°C")
        self.power_right = power
        self.power_item = power.item
        self.curves = {"power": _curve(power.item, c.power, "power (W)"),
                       "temperature": _curve(power.right, c.temperature, "temperature (°C)")}
        power.key_axes(c.power, c.temperature)

        self.ops_widget = self._plot_widget(IO_TITLE)
        ops = _DualAxisPlot(self.ops_widget, "IOPS", "", "Throughput", "MiB/s",
                            non_negative=True)
        self.ops_right = ops
        self.curves["iops"] = _curve(ops.item, c.iops, "IOPS")
        self.curves["mibs"] = _curve(ops.right, c.mibs, "MiB/s")
        ops.key_axes(c.iops, c.mibs)
        self.live_rates = LiveHostRates(ops.item, ops.right)  # load hosts during a phase

        self.ep_widget = self._plot_widget("Periodic efficiency EPᵢ per interval")
        ep = self.ep_widget.getPlotItem()
        ep.setLabel("left", "EPᵢ (IOPS/W or MiB/s/W)")
        ep.getAxis("left").enableAutoSIPrefix(False)
        self.curves["band_hi"] = _curve(ep, c.wma, "", 1, pg.QtCore.Qt.PenStyle.DotLine)
        self.curves["band_lo"] = _curve(ep, c.wma, "", 1, pg.QtCore.Qt.PenStyle.DotLine)
        self.band = pg.FillBetweenItem(self.curves["band_hi"], self.curves["band_lo"],
                                       brush=pg.mkBrush(*c.band))
        # the band's bounds are its curves' (counted already); empty, it claims the point
        # (0, 0), and the view then read −0:30 … 0:30 and a negative efficiency (issue 41)
        ep.addItem(self.band, ignoreBounds=True)
        self.curves["ep"] = _curve(ep, c.efficiency, "EPᵢ")
        self.curves["wma"] = _curve(ep, c.wma, "WMA")
        ep.vb.setYRange(0, 1, padding=0)  # 0 … 1 until the first interval, as the others
        ep.vb.enableAutoRange(axis="y")
        self.restart_markers: list[pg.InfiniteLine] = []
        self.band_label = QLabel("")
        self.band_label.setWordWrap(True)

        self.hist_widget = pg.PlotWidget()
        self.hist_widget.setTitle(HIST_TITLE)
        hist = self.hist_widget.getPlotItem()
        hist.setLogMode(x=True, y=True)
        hist.setLabel("bottom", "response time (ms, log)")
        hist.setLabel("left", "IOs per bin (log)")
        hist.getAxis("bottom").setTicks([LOG_MS_TICKS])  # 1-2-5 steps: log minors collide
        hist.getAxis("left").setTicks([LOG_COUNT_TICKS])
        hist.showGrid(x=True, y=True, alpha=0.25)
        # one stem per fio latency bucket: buckets are irregular, so bars would mislead
        self.hist_curve = pg.PlotDataItem(pen=pg.mkPen(c.iops, width=2), connect="pairs")
        hist.addItem(self.hist_curve)
        self.hist_lines: list[pg.InfiniteLine] = []
        self.bins_ms, self.bin_counts = np.empty(0), np.empty(0)
        self.hist_widget.setMinimumSize(320, PLOT_MIN_HEIGHT)
        self.hist_choice = QComboBox()
        self.hist_choice.setAccessibleName("Histogram profile")
        self.hist_choice.currentTextChanged.connect(self._show_histogram)
        self.hist_note = WrappedNote(HIST_WAITING)

        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.power_widget, 0, 0)
        grid.addWidget(self.ops_widget, 0, 1)
        ep_box = QVBoxLayout()
        ep_box.addWidget(self.ep_widget, 1)
        ep_box.addWidget(self.band_label)
        grid.addLayout(ep_box, 1, 0)
        hist_box = QVBoxLayout()
        hist_box.addWidget(self.hist_widget, 1)
        hist_box.addWidget(self.hist_choice)
        hist_box.addWidget(self.hist_note)
        grid.addLayout(hist_box, 1, 1)
        self.inputs = InputPlots(c, DurationAxis, self)  # per input, beside the total
        grid.addWidget(self.inputs, 2, 0, 1, 2)

    def plot_widgets(self) -> tuple[pg.PlotWidget, ...]:
        return (self.power_widget, self.ops_widget, self.ep_widget, self.hist_widget,
                self.inputs.power_widget, self.inputs.uncertainty_widget)

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        """Follow the desktop when it switches between light and dark while we run."""
        if event.type() == QEvent.Type.PaletteChange:
            self.apply_background(system_is_dark(self.palette()))
        super().changeEvent(event)

    def apply_background(self, dark: bool) -> None:
        colours = plot_colours(dark)
        if colours.background == self.colours.background:
            return
        self.colours = colours
        for widget in self.plot_widgets():
            widget.setBackground(colours.background)
            for name in ("left", "bottom", "right"):
                axis = widget.getPlotItem().getAxis(name)
                axis.setPen(colours.foreground)
                axis.setTextPen(colours.foreground)

    # --- data -------------------------------------------------------------------------------
    def reset(self) -> None:
        """Empty every plot: curves, histogram with its confidence and ceiling lines, the
        stability band's caption (a new run must never show the previous run's data)."""
        for s in self.series.values():
            s.clear()
        self._drop_hosts()
        self.histograms.clear()
        self.hist_choice.clear()
        self._clear_histogram()
        self.hist_widget.setTitle(HIST_TITLE)
        self.hist_widget.setToolTip("")
        self.hist_note.setText(HIST_WAITING)
        self.hist_note.setToolTip("")
        self.band_label.clear()
        self.inputs.reset()
        self._last_phase = None
        for plot in (self.power_right, self.ops_right):
            plot.reset_view()  # a hand zoom on the last run does not freeze the new one
        _empty_time_range(self.ep_widget.getPlotItem())
        for marker in self.restart_markers:
            self.ep_widget.getPlotItem().removeItem(marker)
        self.restart_markers.clear()
        self.redraw()

    def _clear_histogram(self) -> None:
        item = self.hist_widget.getPlotItem()
        for line in self.hist_lines:
            item.removeItem(line)
        self.hist_lines.clear()
        self.bins_ms, self.bin_counts = np.empty(0), np.empty(0)
        self.hist_curve.setData([], [])

    def start_run(self, started: ev.RunStarted, method: Method | None) -> None:
        """Reset for a new run (event times are run-relative already)."""
        self.configure(started.phases, method, histogram_basis(started.config))

    # --- the data interface: live events and stored runs both come through here --------------
    def configure(self, phases: Sequence[PhaseInfo], method: Method | None,
                  basis: HistogramBasis = TOTAL_LATENCY) -> None:
        """Empty the plots and set what a run's data is read with: per-phase IO units, the
        method's stability tolerance and response-time limit, and which latency the
        histogram counts (load hosts: completion latency, app.metrics.histogram_basis)."""
        self.reset()
        self.hist_widget.getPlotItem().setLabel("bottom", f"response time, {basis.name} "
                                                          "(ms, log)")
        self._units = phase_units(method, phases)
        self._last_phase = None
        #: samples further apart than the method's own sample rule allows (a pause, a silent
        #: meter: method-notes §3, 5 s for power) are drawn with a gap between them
        self._max_step_s = {"power": math.inf, "temperature": math.inf}
        if method is not None:
            self._max_step_s = {"power": method.instruments.max_power_interval_s,
                                "temperature": method.instruments.max_temperature_interval_s}
            self._tolerance = method.stability.tolerance_pct
            self._max_avg_ms = method.response_time.max_avg_ms
            self.inputs.set_uncertainty_limit(method.instruments.max_uncertainty_pct)
            self.band_label.setText(
                f"<span style='color:{self.colours.efficiency}'>● EPᵢ</span> per interval · "
                f"<span style='color:{self.colours.wma}'>━ WMA</span> "
                f"({method.stability.wma_points}-point weighted moving average) · shaded: "
                f"WMA ± {self._tolerance:g} %, the stability band")
        self._dirty = True

    def add_power(self, t: np.ndarray, watts: np.ndarray,
                  phase: np.ndarray | None = None) -> None:
        """Power samples (NaN where a sample may not be drawn: flagged ones never are);
        with ``phase``, the curve breaks where the phase changes."""
        _extend_by_phase(self.series["power"], t, watts, phase, self._max_step_s["power"])
        self._dirty = True

    def add_temperature(self, t: np.ndarray, celsius: np.ndarray,
                        phase: np.ndarray | None = None) -> None:
        _extend_by_phase(self.series["temperature"], t, celsius, phase,
                         self._max_step_s["temperature"])
        self._dirty = True

    def add_workload(self, phase_index: int, slices: Iterable[WorkloadInterval]) -> None:
        """Engine-reported slices, drawn as IOPS or MiB/s by the phase's profile; each load
        host's slices (``host`` set) in that host's own series."""
        iops = self._units.get(phase_index, "IOPS") == "IOPS"
        for s in slices:
            self.live_rates.replace(s.host)  # the counted figures replace the display rate
            iops_name, mibs_name = self._io_series(s.host)
            keep, gap = (iops_name, mibs_name) if iops else (mibs_name, iops_name)
            self.series[keep].append(s.t_end, s.iops if iops else s.mib_per_s)
            self.series[gap].break_line(s.t_end)
        self._dirty = True

    def _io_series(self, host: str) -> tuple[str, str]:
        """The IOPS and MiB/s series names of ``host`` ("" = local fio or the simulator),
        made with their curves on the host's first slice. Hosts' slices have their own
        bounds, so they are drawn apart rather than summed."""
        if not host:
            return "iops", "mibs"
        names = (f"iops@{host}", f"mibs@{host}")
        if host not in self.hosts:
            style, _ = HOST_STYLES[len(self.hosts) % len(HOST_STYLES)]
            self.hosts.append(host)
            c = self.colours
            for name, view, colour, unit in zip(names, (self.ops_right.item,
                                                        self.ops_right.right),
                                                (c.iops, c.mibs), ("IOPS", "MiB/s")):
                self.series[name] = GrowableSeries()
                self.curves[name] = _curve(view, colour, f"{host} {unit}", 1, style)
        return names

    def add_host_rates(self, phase_index: int, rates: Iterable[HostRate]) -> None:
        """Load hosts' display rates while their phase runs (``ui.plots.live_rates``), in the
        phase's unit and each host's line style."""
        iops = self._units.get(phase_index, "IOPS") == "IOPS"
        colours = {"iops": self.colours.iops, "mibs": self.colours.mibs}
        for rate in rates:
            self._io_series(rate.host)
            style = HOST_STYLES[self.hosts.index(rate.host) % len(HOST_STYLES)][0]
            self.live_rates.add(rate, iops, colours, style)
        self._dirty = True

    def _ops_title(self) -> str:
        """The IO plot's title: each host's line style, and what the dotted curves are."""
        if not self.hosts:
            return IO_TITLE
        return "IO rate per load host: " + " · ".join(
            f"{HOST_STYLES[i % len(HOST_STYLES)][1]} {h}" for i, h in enumerate(self.hosts)) \
            + (f"<br>{LIVE_NOTE}" if self.live_rates.showing else "")  # a line: not wider

    def _io_names(self) -> list[str]:
        return ["iops", "mibs"] + [f"{kind}@{h}" for h in self.hosts for kind in ("iops", "mibs")]

    def _drop_hosts(self) -> None:
        """Remove the last run's load-host series and curves (a new run has its own hosts)."""
        for name in self._io_names()[2:]:
            view = self.ops_right.item if name.startswith("iops") else self.ops_right.right
            view.removeItem(self.curves.pop(name))
            del self.series[name]
        self.hosts.clear()
        self.live_rates.reset()
        self.ops_widget.setTitle(IO_TITLE)

    def mark_restart(self, t: float, phase_name: str) -> None:
        """A phase restarted at ``t`` (after a pause): its earlier attempt stays apart from
        the new attempt's curve and WMA, with a marker saying why."""
        for name in ("ep", "wma", "band_hi", "band_lo", *self._io_names()):
            self.series[name].break_line(t)
        marker = pg.InfiniteLine(
            pos=t, angle=90,
            pen=pg.mkPen(self.colours.level, style=pg.QtCore.Qt.PenStyle.DotLine),
            label=f"{phase_name} restarted", labelOpts={
                "position": 0.9, "color": self.colours.foreground,
                "anchors": [(0, 0.5), (0, 0.5)]})
        self.ep_widget.getPlotItem().addItem(marker)
        self.restart_markers.append(marker)
        self._dirty = True

    def add_intervals(self, records: Iterable[IntervalRecord]) -> None:
        """Closed intervals: EP_i, its WMA and the stability band around it."""
        tol = self._tolerance / 100 if math.isfinite(self._tolerance) else math.nan
        for iv in records:
            if not math.isfinite(iv.ep):
                continue
            if self._last_phase is not None and iv.phase_index != self._last_phase:
                for name in ("ep", "wma", "band_hi", "band_lo"):
                    self.series[name].break_line(iv.start_s)
            self._last_phase = iv.phase_index
            self.series["ep"].append(iv.end_s, iv.ep)
            self.series["wma"].append(iv.end_s, iv.wma)
            self.series["band_hi"].append(iv.end_s, iv.wma * (1 + tol))
            self.series["band_lo"].append(iv.end_s, iv.wma * (1 - tol))
            self._dirty = True

    @_events.on
    def add_histogram(self, h: ev.HistogramReady) -> None:
        """A profile's response-time histogram (the newest one is shown)."""
        self.histograms[h.profile] = h
        if self.hist_choice.findText(h.profile) < 0:
            self.hist_choice.addItem(h.profile)
        self.hist_choice.setCurrentText(h.profile)  # follow the newest profile
        self._show_histogram(h.profile)

    def show_span(self, lo: float, hi: float) -> None:
        """Show exactly this run-relative span (a live run only ever widens its x range)."""
        for dual in (self.power_right, self.ops_right):
            dual.follow = False
            dual.item.vb.enableAutoRange(axis="y")
            dual.right.enableAutoRange(axis="y")
        self.ep_widget.getPlotItem().enableAutoRange(axis="y")
        for widget in (self.power_widget, self.ops_widget, self.ep_widget):
            widget.getPlotItem().setXRange(lo, hi, padding=0.02)

    # --- live events ------------------------------------------------------------------------
    def ingest(self, batch: Iterable[ev.RunEvent]) -> None:
        for event in batch:
            self._events.dispatch(event, self)

    @_events.on
    def _on_power(self, e: ev.PowerSamples) -> None:
        self.add_power(np.fromiter((s.t for s in e.samples), float, len(e.samples)),
                       np.fromiter((s.watts if s.usable else math.nan for s in e.samples),
                                   float, len(e.samples)))
        self.inputs.add_samples(e.samples)

    @_events.on
    def _on_temperature(self, e: ev.TemperatureSamples) -> None:
        self.add_temperature(
            np.fromiter((s.t for s in e.samples), float, len(e.samples)),
            np.fromiter((s.celsius if s.usable else math.nan for s in e.samples), float,
                        len(e.samples)))

    @_events.on
    def _on_workload(self, e: ev.WorkloadIntervals) -> None:
        self.add_workload(e.phase_index, e.intervals)

    @_events.on
    def _on_host_rates(self, e: ev.HostRates) -> None:
        self.add_host_rates(e.phase_index, e.rates)

    @_events.on
    def _on_phase_started(self, e: ev.PhaseStarted) -> None:
        if e.attempt > 1:
            self.mark_restart(e.t, e.phase.name)

    @_events.on
    def _on_interval(self, e: ev.IntervalClosed) -> None:
        self.add_intervals((e.interval,))

    # --- histogram --------------------------------------------------------------------------
    def _show_histogram(self, profile: str) -> None:
        h = self.histograms.get(profile)
        if h is None:
            return
        self._clear_histogram()
        ns = np.array(sorted(h.bins), dtype=float)
        counts = np.array([h.bins[int(k)] for k in ns], dtype=float)
        keep = counts > 0
        self.bins_ms, self.bin_counts = ns[keep] / 1e6, counts[keep]
        self.hist_curve.setData(np.repeat(self.bins_ms, 2),
                                np.column_stack([np.full(keep.sum(), STEM_BASE),
                                                 self.bin_counts]).ravel())
        levels = h.levels()
        for lvl in levels:
            if (ms := lvl.shown_ms) is not None:
                self._vline(ms, f"{lvl.level_pct:g} %", self.colours.level,
                            pg.QtCore.Qt.PenStyle.DashLine)
        self._vline(h.ceiling_ms, "ceiling", self.colours.ceiling,
                    pg.QtCore.Qt.PenStyle.SolidLine)
        total = int(counts.sum())
        self.hist_widget.setTitle(f"Response-time histogram — {profile}, {total:,} IOs")
        values = " · ".join(lvl.text() for lvl in levels)
        meaning = ceiling_meaning(h.ceiling_ms, h.above_ceiling, self._max_avg_ms)
        # the ceiling's meaning is a hover away (plot and note): under the plot it took five
        # lines, which a 768 px screen takes from the metrics table
        self.hist_note.setText(f"Confidence levels (dashed): {values}. Ceiling (red): "
                               f"{h.ceiling_ms:g} ms, {h.above_ceiling:,} IOs above — "
                               "informational (hover for why).")
        self.hist_widget.setToolTip(meaning)
        self.hist_note.setToolTip(meaning)

    def _vline(self, ms: float, label: str, colour: str, style) -> None:
        if not (ms > 0 and math.isfinite(ms)):
            return
        # InfiniteLine has no log mode: place it in the log10 coordinates of the view.
        # labels sit left of their line on the plot's background; levels stack down from the
        # top, the ceiling's label sits at the bottom: the two groups never overlap, however
        # close the lines are
        step = len(self.hist_lines)
        background = pg.mkColor(self.colours.background)
        background.setAlpha(210)
        opts = {"position": CEILING_LABEL_AT if label == "ceiling" else
                LEVEL_LABEL_TOP - LEVEL_LABEL_STEP * step,
                "color": colour, "anchors": [(1, 0.5), (1, 0.5)], "fill": background}
        line = pg.InfiniteLine(pos=math.log10(ms), angle=90, pen=pg.mkPen(colour, style=style),
                               label=label, labelOpts=opts)
        self.hist_widget.getPlotItem().addItem(line)
        self.hist_lines.append(line)

    # --- drawing ----------------------------------------------------------------------------
    def _view_changed(self) -> None:
        """A zoom, pan or resize: the curves need the new span's points."""
        self._dirty = True

    def _envelope(self, name: str) -> Envelope:
        series = self.series[name]
        envelope = self._envelopes.get(name)
        if envelope is None or envelope.series is not series:
            envelope = self._envelopes[name] = Envelope(series)
        return envelope

    def redraw_if_dirty(self) -> None:
        if self._dirty or self.inputs.view_changed:
            self.redraw()

    def redraw(self) -> None:
        """Give each curve its view's points: a bounded number, however long the run
        (``ui.plots.live_curve.draw``)."""
        for name, curve in self.curves.items():
            if len(self.series[name]):
                draw(curve, self._envelope(name))
            elif curve.getOriginalDataset()[0] is not None:
                # pyqtgraph 0.14 keeps an emptied curve's old path, and the stability band
                # (FillBetweenItem) is filled from those paths: a new run would show the last
                # run's WMA ± 5 % band. clear() drops the path itself.
                curve.clear()
        if not len(self.series["band_hi"]):
            self.band.setPath(QPainterPath())
        self.power_right.fit_x(self.series["power"], self.series["temperature"])
        self.live_rates.redraw()
        self.ops_right.fit_x(*(self.series[name] for name in self._io_names()),
                             *self.live_rates.series.values())
        if self.ops_widget.plotItem.titleLabel.text != (title := self._ops_title()):
            self.ops_widget.setTitle(title)
            self.ops_widget.setToolTip(LIVE_TIP if LIVE_NOTE in title else "")
        self.inputs.redraw()
        # interval markers help read a short phase; on a long run they would only cost time
        ep = self.curves["ep"]
        want = "o" if len(self.series["ep"]) <= SYMBOL_LIMIT else None
        if ep.opts["symbol"] != want:
            ep.setSymbol(want)
            ep.setSymbolSize(5)
        self._dirty = False

    def curve_data(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """What a curve shows, at full detail: its series as last drawn (tests assert on
        data, never on pixels; the curve itself holds only its view's points)."""
        if name == "histogram":  # the bins, not the stems' drawing coordinates
            return self.bins_ms, self.bin_counts
        if self.curves[name].getOriginalDataset()[0] is None:
            return np.empty(0), np.empty(0)
        x, y = self.series[name].view()
        return x.copy(), y.copy()
