"""The best-foot-forward view: each metric against one range variable of a product family.

What the Emerald training's "Finding the Best Foot Forward" plots by hand: a product family's
stored runs (one model, method and taxonomy) swept over the drive count, drive type or RAID
level, one small plot per metric with the peak marked, and the sweet-spot disclosure text
(app/metrics/best_foot_forward.py) ready to copy into a Test Data Report. A peak at the end of
a numeric sweep is drawn in the warning colour: the roll-off (or the rise) was not seen.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import (QComboBox, QGridLayout, QHBoxLayout, QLabel, QPlainTextEdit,
                               QVBoxLayout, QWidget)

from app.metrics.best_foot_forward import (RANGE_VARIABLES, FamilyPoint, SweetSpot, disclosure,
                                           sweet_spots, sweeps)
from app.metrics.formatting import format_figure
from app.storage.db import Database
from app.storage.family import Family, family_runs, product_families
from ui.widgets.theme import apply_plot_theme

CURVE_COLOUR = "#2f8fd0"
PEAK_COLOUR = "#38a858"
EDGE_COLOUR = "#e0882a"  # a peak at the end of the sweep: not established
PLOT_COLUMNS = 4


class BestFootForwardView(QWidget):
    """Family, range variable and sweep choices above a grid of per-metric plots."""

    def __init__(self, database: Database, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        apply_plot_theme()  # before the first plot is made
        self.database = database
        families = product_families(database)
        self.families: list[Family] = [f for f, _ in families]
        self.groups: dict[str, list[FamilyPoint]] = {}
        self.spots: tuple[SweetSpot, ...] = ()
        self.family_choice = QComboBox()
        for family, count in families:
            self.family_choice.addItem(f"{family.describe()} — {count} runs")
        self.variable_choice = QComboBox()
        for key, label in RANGE_VARIABLES.items():
            self.variable_choice.addItem(label, key)
        self.sweep_choice = QComboBox()
        self.status = QLabel()
        self.plots: list[pg.PlotWidget] = []
        grid = QGridLayout()
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setMaximumHeight(150)

        choices = QHBoxLayout()
        for label, widget in (("Family", self.family_choice), ("Range variable",
                                                              self.variable_choice),
                              ("Sweep", self.sweep_choice)):
            choices.addWidget(QLabel(label))
            choices.addWidget(widget, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(choices)
        layout.addWidget(self.status)
        layout.addLayout(grid, 1)
        layout.addWidget(QLabel("Sweet-spot disclosure (for the Test Data Report):"))
        layout.addWidget(self.text)
        self._grid = grid
        self.family_choice.currentIndexChanged.connect(self._load_family)
        self.variable_choice.currentIndexChanged.connect(self._load_family)
        self.sweep_choice.currentIndexChanged.connect(self._show_sweep)
        self._load_family()

    def _family(self) -> Family | None:
        index = self.family_choice.currentIndex()
        return self.families[index] if 0 <= index < len(self.families) else None

    def _load_family(self, *_args) -> None:
        family = self._family()
        variable = self.variable_choice.currentData()
        self.groups = sweeps(family_runs(self.database, family), variable) if family else {}
        self.sweep_choice.blockSignals(True)
        self.sweep_choice.clear()
        # the sweep with the most runs first: the one a technician most likely means
        for fixed in sorted(self.groups, key=lambda k: -len(self.groups[k])):
            self.sweep_choice.addItem(f"{fixed} ({len(self.groups[fixed])} runs)", fixed)
        self.sweep_choice.blockSignals(False)
        self._show_sweep()

    def _show_sweep(self, *_args) -> None:
        family, fixed = self._family(), self.sweep_choice.currentData()
        points = self.groups.get(fixed, [])
        self.spots = sweet_spots(points)
        variable = self.variable_choice.currentData()
        if family is None:
            self.status.setText("No COMPLETED runs stored: a family needs runs of one SUT "
                                "model that differ in one range variable.")
        else:
            self.status.setText(f"{len(points)} COMPLETED runs of {family.describe()}, "
                                f"{fixed}; only VALID figures are plotted.")
        self.text.setPlainText(disclosure(f"{family.describe()}, {fixed}", variable, self.spots)
                               if family else "")
        self._draw(RANGE_VARIABLES[variable])

    def _draw(self, label: str) -> None:
        for plot in self.plots:
            self._grid.removeWidget(plot)
            plot.deleteLater()
        self.plots = [self._plot(spot, label) for spot in self.spots]
        for i, plot in enumerate(self.plots):
            self._grid.addWidget(plot, i // PLOT_COLUMNS, i % PLOT_COLUMNS)

    def _plot(self, spot: SweetSpot, label: str) -> pg.PlotWidget:
        plot = pg.PlotWidget()
        settings = [s for s, _ in spot.curve]
        numeric = all(isinstance(s, int) for s in settings)
        xs = settings if numeric else list(range(len(settings)))
        if not numeric:
            plot.getAxis("bottom").setTicks([[(i, str(s)) for i, s in enumerate(settings)]])
        ys = [v for _, v in spot.curve]
        plot.plot(xs, ys, pen=pg.mkPen(CURVE_COLOUR, width=2), symbol="o", symbolSize=6,
                  symbolBrush=CURVE_COLOUR)
        colour = EDGE_COLOUR if spot.edge else PEAK_COLOUR
        peak_x = xs[settings.index(spot.setting)]
        plot.plot([peak_x], [spot.value], pen=None, symbol="star", symbolSize=18,
                  symbolBrush=colour)
        edge = {"largest": " (still rising)", "smallest": " (at the smallest)"}.get(spot.edge, "")
        plot.setTitle(f"{spot.metric}: peak {format_figure(spot.value)} {spot.unit} at "
                      f"{spot.setting}{edge}", color=colour if spot.edge else None, size="9pt")
        plot.setLabel("bottom", label)
        plot.setLabel("left", spot.unit)
        return plot
