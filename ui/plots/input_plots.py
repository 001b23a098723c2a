"""Live power and uncertainty per power input, beside the SUT's total (issue 16, items 1, 3).

The method judges the total, but a technician fixes an input: which supply dropped, which
meter's uncertainty climbs towards the 1 % limit, which input draws so little current that its
meter's formula is no longer trusted (a WT310E below 0.2 A, method-notes §10). One plot draws
each input's watts with the total; the other each input's per-sample uncertainty and the
total's combined one against the 1 % line; a line below them names the inputs on low current.
A run with one meter shows that meter as its one input.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

from drivers.interfaces import FLAG_LOW_CURRENT, PowerSample
from drivers.interfaces import ReadingLimits
from ui.plots.envelope import Envelope
from ui.plots.live_curve import draw, live_curve, on_view_change
from ui.plots.series import GrowableSeries
from ui.widgets.theme import PLOT_MIN_HEIGHT, PlotColours

TOTAL = "total"
LEGEND_ROW = 4  # under the bottom axis of pyqtgraph's PlotItem layout
#: the input of a run with one meter
ONE_METER = "power meter"
#: input curve colours, in configured order (the total keeps the power colour)
INPUT_COLOURS = ("#2f8fd0", "#38a858", "#8a5cd0", "#d04a6a", "#20a0a0", "#a07020", "#707070")


class SparseValueAxis(pg.AxisItem):
    """A value axis that never stacks its labels: one label per ``MIN_LABEL_PX`` of height at
    most, on 1-2-5 steps. pyqtgraph always labels its major ticks, and in a short strip such
    as the uncertainty plot (about 40 px of data at 768 px screens) 0.2 % steps piled five
    labels into one unreadable block."""

    MIN_LABEL_PX = 18

    def tickSpacing(self, minVal: float, maxVal: float, size: float):  # noqa: N802, N803 (pyqtgraph)
        span = maxVal - minVal
        if not (span > 0 and size > 0):
            return super().tickSpacing(minVal, maxVal, size)
        raw = span / max(2, int(size // self.MIN_LABEL_PX))
        magnitude = 10 ** math.floor(math.log10(raw))
        step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
        return [(step, 0.0)]


class InputPlots(QWidget):
    """Per-input power and uncertainty; fed by :meth:`add_samples`, drawn by :meth:`redraw`."""

    def __init__(self, colours: PlotColours, axis: type[pg.AxisItem],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.colours = colours
        self.power: dict[str, GrowableSeries] = {}
        self.uncertainty: dict[str, GrowableSeries] = {}
        self.low_current: dict[str, float] = {}  # input → its latest low current (A)
        self.power_widget = self._plot("Power per input and total", "Power", "W", axis)
        self.uncertainty_widget = self._plot("", "Uncertainty", "%", axis)
        self.limit_line = pg.InfiniteLine(
            angle=0, pen=pg.mkPen(colours.ceiling, style=pg.QtCore.Qt.PenStyle.DashLine),
            label="", labelOpts={"position": 0.92, "color": colours.ceiling})
        self.uncertainty_widget.getPlotItem().addItem(self.limit_line)
        self.set_uncertainty_limit(ReadingLimits().max_uncertainty_pct)
        self.curves: dict[tuple[str, str], pg.PlotDataItem] = {}
        self._envelopes: dict[tuple[str, str], Envelope] = {}
        self.view_changed = False  # a zoom, pan or resize since the last redraw
        for widget in (self.power_widget, self.uncertainty_widget):
            on_view_change(widget.getPlotItem(), self._view_changed)
        self.warning = QLabel("")
        self.warning.setWordWrap(True)
        self.warning.setAccessibleName("Low-current warning")
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.power_widget, 0, 0)
        grid.addWidget(self.uncertainty_widget, 0, 1)
        grid.addWidget(self.warning, 1, 0, 1, 2)
        # with one meter its power is the total, already plotted above: only its uncertainty
        self.power_widget.setVisible(False)

    def set_uncertainty_limit(self, pct: float) -> None:
        """Draw the run's method's uncertainty limit (the one its samples are judged by)."""
        self.uncertainty_widget.setTitle(f"Uncertainty per sample (limit {pct:g} %)")
        self.limit_line.setValue(pct)
        self.limit_line.label.setFormat(f"{pct:g} % limit")

    @staticmethod
    def _plot(title: str, label: str, unit: str, axis: type[pg.AxisItem]) -> pg.PlotWidget:
        widget = pg.PlotWidget(axisItems={"bottom": axis("bottom"),
                                          "left": SparseValueAxis("left")})
        widget.setTitle(title)
        widget.setLabel("bottom", "run time (h:mm:ss)")
        widget.setLabel("left", label, units=unit)
        widget.getPlotItem().getAxis("left").enableAutoSIPrefix(False)
        # the legend in its own row under the axis: inside the plot it hid the total's curve
        plot = widget.getPlotItem()
        plot.legend = pg.LegendItem(colCount=6)
        plot.legend.setVisible(False)  # shown from the second curve on (_fit_legend)
        widget.setMinimumSize(320, PLOT_MIN_HEIGHT - 20)
        return widget

    def reset(self) -> None:
        widgets = {"power": self.power_widget, "uncertainty": self.uncertainty_widget}
        for (kind, _), curve in self.curves.items():
            widgets[kind].getPlotItem().removeItem(curve)  # and from its legend
        self.curves.clear()
        self.power.clear()
        self.uncertainty.clear()
        self.low_current.clear()
        self.warning.clear()
        self.power_widget.setVisible(False)

    def add_samples(self, samples: Iterable[PowerSample]) -> None:
        """Totals as the sequencer publishes them; each carries its inputs' readings."""
        for total in samples:
            parts = total.inputs or (PowerSample(total.t, total.watts, amps=total.amps,
                                                 uncertainty_pct=total.uncertainty_pct,
                                                 flags=total.flags, input=ONE_METER),)
            for part in parts:
                self._series(self.power, part.input).append(
                    part.t, part.watts if part.usable else math.nan)
                self._series(self.uncertainty, part.input).append(part.t, _pct(part))
                if FLAG_LOW_CURRENT in part.flags:
                    self.low_current[part.input] = part.amps
                else:
                    self.low_current.pop(part.input, None)
            if total.inputs:
                self.power_widget.setVisible(True)
                self._series(self.power, TOTAL).append(
                    total.t, total.watts if total.usable else math.nan)
                self._series(self.uncertainty, TOTAL).append(total.t, _pct(total))
        self.warning.setText(self.warning_text())

    def add_series(self, name: str, t: np.ndarray, watts: np.ndarray,
                   uncertainty_pct: np.ndarray) -> None:
        """One input's stored readings (the history view), drawn as the live ones are."""
        self._series(self.power, name).extend(t, watts)
        self._series(self.uncertainty, name).extend(t, uncertainty_pct)

    def warning_text(self) -> str:
        if not self.low_current:
            return ""
        names = ", ".join(f"{name} {amps:.3g} A" for name, amps in self.low_current.items())
        return (f"⚠ Low current on {names}: below the span where the meter's accuracy formula "
                "is trusted (a WT310E below 0.2 A is a known trap); its uncertainty may be "
                "understated — use a lower current range or another meter.")

    @staticmethod
    def _series(table: dict[str, GrowableSeries], name: str) -> GrowableSeries:
        if name not in table:
            table[name] = GrowableSeries()
        return table[name]

    def _view_changed(self) -> None:
        self.view_changed = True

    def redraw(self) -> None:
        """Each curve at its view's points, a bounded number however long the run
        (``ui.plots.live_curve.draw``)."""
        self.view_changed = False
        for kind, table, widget in (("power", self.power, self.power_widget),
                                    ("uncertainty", self.uncertainty, self.uncertainty_widget)):
            for name, series in table.items():
                curve = self.curves.get((kind, name))
                if curve is None:
                    curve = self._new_curve(widget, name)
                    self.curves[(kind, name)] = curve
                envelope = self._envelopes.get((kind, name))
                if envelope is None or envelope.series is not series:
                    envelope = self._envelopes[(kind, name)] = Envelope(series)
                draw(curve, envelope)
            self._fit_legend(widget, sum(1 for k, _ in self.curves if k == kind))

    @staticmethod
    def _fit_legend(widget: pg.PlotWidget, curves: int) -> None:
        """A legend only when there is more than one curve to tell apart (one meter's strip is
        named by its title): its row would otherwise take the data area of a short plot."""
        plot = widget.getPlotItem()
        shown = curves > 1
        if shown == plot.legend.isVisible():
            return
        plot.legend.setVisible(shown)
        if shown:  # a hidden item keeps its row's height in a QGraphicsGridLayout
            plot.layout.addItem(plot.legend, LEGEND_ROW, 1)
        else:
            plot.layout.removeItem(plot.legend)
        plot.layout.invalidate()

    def _new_curve(self, widget: pg.PlotWidget, name: str) -> pg.PlotDataItem:
        inputs = [n for n in self.power if n != TOTAL]
        colour = self.colours.power if name == TOTAL else \
            INPUT_COLOURS[inputs.index(name) % len(INPUT_COLOURS)]
        # thin pens, clipped and peak-downsampled like the main plots: ten full-resolution
        # curves, the total at width 2, cost 181 ms a repaint by hour 23.5 (issue 27)
        return live_curve(widget.getPlotItem(), colour, name)

    def curve_data(self, kind: str, name: str) -> tuple[np.ndarray, np.ndarray]:
        """What the curve of ``kind`` (power | uncertainty) for input ``name`` shows, at
        full detail: its series (the curve itself holds only its view's points)."""
        if (kind, name) not in self.curves:
            raise KeyError((kind, name))
        x, y = (self.power if kind == "power" else self.uncertainty)[name].view()
        return x.copy(), y.copy()


def _pct(sample: PowerSample) -> float:
    return math.nan if sample.uncertainty_pct is None else sample.uncertainty_pct
