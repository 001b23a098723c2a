"""Two or more stored runs side by side: metrics with deltas, overlaid power and efficiency
curves, and overlaid response-time histograms with each run's confidence levels.

The first run chosen is the baseline: every delta is "this run − baseline", absolute and in %
of the baseline, so a QA engineer reads "+4.1 %" as "better efficiency than the reference".
Runs of different methods or variants are compared only under a warning (their figures are
not the same measurement); histograms are overlaid as the fraction of each run's IOs, so a
short run's histogram is not hidden under a long one's; metrics follow the report's order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QGridLayout, QHBoxLayout,
                               QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout,
                               QWidget)

from app.metrics.formatting import format_metric_value
from app.metrics.formatting import format_figure
from app.core.records import METRIC_ORDER
from app.rules.com_verdict import ComState
from app.rules.comparability import mixed_methods_caveat
from app.sequencer.capacity_optimisation import is_com_metric, not_valid_word
from app.storage.db import Database
from app.storage.repository import load_run
from app.storage.stored import StoredRun
from ui.run.metrics_table import INVALID_COLOUR
from ui.plots.live import LOG_MS_TICKS, DurationAxis
from ui.widgets.theme import apply_plot_theme

#: one colour per compared run, readable on light and dark backgrounds
RUN_COLOURS = ("#2f8fd0", "#e0882a", "#38a858", "#8a5cd0", "#d04a6a", "#7f7f7f")


def metric_delta(base: float, value: float) -> tuple[float, float]:
    """(value − base, that in % of base); NaN where it cannot be computed."""
    if not (math.isfinite(base) and math.isfinite(value)):
        return math.nan, math.nan
    diff = value - base
    return diff, (diff / abs(base) * 100 if base else math.nan)


def _signed(value: float, unit: str = "") -> str:
    if not math.isfinite(value):
        return "—"
    text = format_figure(abs(value))
    return f"{'+' if value >= 0 else '−'}{text}{unit}"


#: percent-of-IOs axis ticks (log10 view coordinates → label), 1-2-5 per decade
LOG_PERCENT_TICKS = [(math.log10(m * 10.0**k), f"{m * 10.0**k:g} %")
                     for k in range(-7, 3) for m in (1, 2, 5) if m * 10.0**k <= 100]


def run_label(run: StoredRun) -> str:
    return f"{run.run_id[:8]} {run.started_wall[:10]}"


def method_variant(run: StoredRun) -> str:
    """Method, version and the run's derived verdict (never the method file's claim)."""
    return run.compliance.method_label(run.method_name, run.method_version)


def _cell(run: StoredRun, name: str) -> tuple[str, str, bool]:
    """(text, tooltip, VALID) of one run's cell. A COM row shows the COM's state as the
    record derives it (``StoredRun.coms``: the station's check, else the technician's audited
    result), the same word as the run's header and report."""
    m = run.metric(name)
    if is_com_metric(name):
        verdict = next((v for v in run.coms if f"COM_{v.com_id}" == name), None)
        if verdict is None:
            return "not measured", "", False
        figure = format_metric_value(m) if m is not None else "—"
        state = verdict.state.value
        text = (f"{figure} {state}" if figure != "—" else
                f"{state} (no value)" if verdict.state in (ComState.NOT_VERIFIED,
                                                           ComState.NOT_TESTED) else state)
        return text, verdict.result, verdict.state is ComState.PASSED
    if m is None:
        return "not measured", "", False
    text = format_metric_value(m)
    if m.valid:
        return text, "VALID", True
    word = not_valid_word(m)  # never a bare dash beside a real number
    return (f"{word} (no value)" if text == "—" else f"{text} {word}"), f"{word}: {m.reason}", \
        False


def report_order(names: set[str]) -> list[str]:
    """Metric names in the one metric order (METRIC_ORDER), others after by name."""
    known = [n for n in METRIC_ORDER if n in names]
    return known + sorted(names - set(known))


def io_fractions(bins: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """(bin response times in ms, % of the histogram's IOs) of the non-empty bins."""
    ns = np.array(sorted(bins), dtype=float)
    counts = np.array([bins[int(k)] for k in ns], dtype=float)
    keep = counts > 0
    total = counts.sum()
    return ns[keep] / 1e6, (counts[keep] / total * 100 if total else counts[keep])


class CompareView(QWidget):
    def __init__(self, database: Database, run_ids: Sequence[str],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        if len(run_ids) < 2:
            raise ValueError("comparing needs at least two runs")
        self.runs = [load_run(database, r) for r in run_ids]
        self.colours = apply_plot_theme()
        self._build()

    @property
    def baseline(self) -> StoredRun:
        return self.runs[0]

    def _build(self) -> None:
        legend = " · ".join(f"<span style='color:{RUN_COLOURS[i % len(RUN_COLOURS)]}'>━</span>"
                            f" {run_label(r)} {r.config.sut.model}"
                            f"{' at ' + r.config.station if r.config.station else ''}"
                            f" ({r.verdict.text}, {method_variant(r)})"
                            for i, r in enumerate(self.runs))
        self.legend = QLabel(f"<b>Comparing {len(self.runs)} runs</b> (baseline: first) — "
                             + legend)
        self.legend.setWordWrap(True)
        self.warning = QLabel(mixed_methods_caveat(self.runs))
        self.warning.setWordWrap(True)
        self.warning.setAccessibleName("Comparison warning")
        self.warning.setStyleSheet("color: #b06000; font-weight: bold;")
        self.warning.setVisible(bool(self.warning.text()))
        self.table = self._metrics_table()
        self.power_plot = self._time_plot("Input power per run (run time)", "Power (W)")
        self.ep_plot = self._time_plot("Periodic efficiency EPᵢ per interval (time in phase)",
                                       "EPᵢ")
        self.hist_plot = pg.PlotWidget()
        self.hist_plot.setMinimumSize(320, 200)
        hist = self.hist_plot.getPlotItem()
        hist.setLogMode(x=True, y=True)
        hist.setLabel("bottom", "response time (ms, log)")
        hist.setLabel("left", "share of the run's IOs per bin (log)")
        hist.getAxis("bottom").setTicks([LOG_MS_TICKS])
        hist.getAxis("left").setTicks([LOG_PERCENT_TICKS])
        hist.showGrid(x=True, y=True, alpha=0.25)
        self.profile_choice = QComboBox()
        self.profile_choice.setAccessibleName("Profile")
        profiles = sorted({h.profile for r in self.runs for h in r.histograms})
        self.profile_choice.addItems(profiles)
        self.profile_choice.currentTextChanged.connect(self.show_profile)
        self.hist_note = QLabel("")
        self.hist_note.setWordWrap(True)
        self._plot_curves()

        grid = QGridLayout()
        grid.addWidget(self.power_plot, 0, 0)
        grid.addWidget(self.ep_plot, 0, 1)
        hist_box = QVBoxLayout()
        row = QHBoxLayout()
        row.addWidget(QLabel("Histogram of profile:"))
        row.addWidget(self.profile_choice, 1)
        hist_box.addLayout(row)
        hist_box.addWidget(self.hist_plot, 1)
        hist_box.addWidget(self.hist_note)
        grid.addLayout(hist_box, 1, 1)
        grid.addWidget(self.table, 1, 0)
        layout = QVBoxLayout(self)
        layout.addWidget(self.legend)
        layout.addWidget(self.warning)
        layout.addLayout(grid, 1)
        if profiles:
            self.show_profile(profiles[0])
        else:
            self.hist_note.setText("None of these runs stored a response-time histogram.")

    # --- metrics ------------------------------------------------------------------------------
    def _metrics_table(self) -> QTableWidget:
        measured = {m.name for r in self.runs for m in r.metrics if not is_com_metric(m.name)}
        names = report_order(measured) + [f"COM_{c}" for c in self._com_ids()]
        headers = ["Metric", "Unit"]
        for i, run in enumerate(self.runs):
            headers.append(run_label(run))
            if i:
                headers += [f"Δ {run.run_id[:8]}", "Δ %"]
        table = QTableWidget(len(names), len(headers))
        table.setHorizontalHeaderLabels(headers)
        table.verticalHeader().setVisible(False)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        for row, name in enumerate(names):
            base = self.baseline.metric(name)
            base_ok = _cell(self.baseline, name)[2]
            unit = next((m.unit for r in self.runs if (m := r.metric(name))), "")
            cells: list[tuple[str, str, bool]] = [(name, "", True), (unit, "", True)]
            for i, run in enumerate(self.runs):
                m = run.metric(name)
                cell = _cell(run, name)
                cells.append(cell)
                if i:
                    diff, pct = metric_delta(base.value if base else math.nan,
                                             m.value if m else math.nan)
                    both = cell[2] and base_ok
                    note = "" if both else " (a value is INVALID: compare with care)"
                    cells.append((_signed(diff), f"this run − baseline{note}", both))
                    cells.append((_signed(pct, " %"), f"in % of the baseline{note}", both))
            for col, (text, tip, ok) in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(tip)
                if not ok and col > 1:
                    item.setForeground(QBrush(INVALID_COLOUR))
                if col > 1:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight
                                          | Qt.AlignmentFlag.AlignVCenter)
                table.setItem(row, col, item)
        table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        table.setAccessibleName("Compared metrics")
        return table

    def _com_ids(self) -> list[str]:
        """The COMs available in any compared run (or checked by the station), in the method's
        order: each gets a row with its state, parity RAID included."""
        return list(dict.fromkeys(v.com_id for r in self.runs for v in r.coms
                                  if v.available or v.metric is not None))

    def rows(self) -> list[tuple[str, ...]]:
        """The metrics table as text (tests assert on it)."""
        t = self.table
        return [tuple(t.item(r, c).text() for c in range(t.columnCount()))
                for r in range(t.rowCount())]

    # --- curves -------------------------------------------------------------------------------
    def _time_plot(self, title: str, left: str) -> pg.PlotWidget:
        widget = pg.PlotWidget(axisItems={"bottom": DurationAxis("bottom")})
        widget.setTitle(title)
        widget.setLabel("left", left)
        widget.setLabel("bottom", "time (h:mm:ss)")
        widget.getPlotItem().getAxis("left").enableAutoSIPrefix(False)
        widget.addLegend(offset=(-10, 10))
        widget.setMinimumSize(320, 200)
        return widget

    def _plot_curves(self) -> None:
        self.power_curves, self.ep_curves = [], []
        for i, run in enumerate(self.runs):
            colour = RUN_COLOURS[i % len(RUN_COLOURS)]
            watts = np.where(run.power.usable, run.power.watts, np.nan)
            curve = self.power_plot.plot(run.power.t, watts, pen=pg.mkPen(colour),
                                         name=run_label(run), connect="finite")
            curve.setDownsampling(auto=True, method="peak")
            curve.setClipToView(True)
            self.power_curves.append(curve)
            x, y = self.efficiency_series(run)
            self.ep_curves.append(self.ep_plot.plot(x, y, pen=pg.mkPen(colour), symbol="o",
                                                    symbolSize=4, symbolBrush=colour,
                                                    symbolPen=None, name=run_label(run),
                                                    connect="finite"))

    @staticmethod
    def efficiency_series(run: StoredRun) -> tuple[np.ndarray, np.ndarray]:
        """EPᵢ of every active phase's last attempt, one after the other, time measured from
        each phase's start so runs with different search or pre-fill phases still line up."""
        xs, ys, offset = [], [], 0.0
        for phase in run.phases:
            records = [r for r in run.attempt_intervals(phase.index) if math.isfinite(r.ep)]
            if not records:
                continue
            start = records[0].start_s
            xs += [offset + r.end_s - start for r in records] + [math.nan]
            ys += [r.ep for r in records] + [math.nan]
            offset += records[-1].end_s - start
        return np.array(xs, float), np.array(ys, float)

    def show_profile(self, profile: str) -> None:
        """Overlay every run's histogram of ``profile`` (as % of its IOs) with its confidence
        levels."""
        item = self.hist_plot.getPlotItem()
        item.clear()
        self.hist_plot.setTitle(f"Response-time histograms — {profile} (% of each run's IOs)")
        self.hist_data: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        found = [h for r in self.runs for h in r.histograms if h.profile == profile]
        shares = [io_fractions(h.bins)[1] for h in found]
        # stems start under the smallest share shown, so every bin of every run is visible
        base = 0.5 * min((s.min() for s in shares if len(s)), default=1e-3)
        notes = []
        for i, run in enumerate(self.runs):
            colour = RUN_COLOURS[i % len(RUN_COLOURS)]
            h = next((h for h in run.histograms if h.profile == profile), None)
            if h is None:
                notes.append(f"{run.run_id[:8]}: no histogram")
                continue
            ms, share = io_fractions(h.bins)
            self.hist_data[run.run_id] = (ms, share)
            # a small per-run offset on the log axis keeps overlapping stems apart
            shift = 10 ** (0.01 * i)
            item.addItem(pg.PlotDataItem(np.repeat(ms * shift, 2), np.column_stack(
                [np.full(len(ms), base), share]).ravel(), connect="pairs",
                pen=pg.mkPen(colour, width=2)))
            levels = h.levels()
            for lvl in levels:
                if (value := lvl.shown_ms) is not None and value > 0:
                    item.addItem(pg.InfiniteLine(pos=math.log10(value), angle=90,
                                                 pen=pg.mkPen(colour, style=Qt.PenStyle.DashLine)))
            text = ", ".join(lvl.text() for lvl in levels)
            notes.append(f"<span style='color:{colour}'>━</span> {run.run_id[:8]}: "
                         f"{sum(h.bins.values()):,} IOs; confidence levels (dashed) "
                         f"{text or 'not computed'}")
        self.hist_note.setText("<br>".join(notes))

