"""The metrics table of the run view: one row per planned metric, filled in as phases end.

Rows follow the one metric order of every view and report (``app.core.records.METRIC_ORDER``), COM
checks last.

Rows are laid out when the run starts (every active profile, ready idle and each COM check) so
the technician sees what is still to come; a value appears only with its validity, and an
INVALID metric shows its reason next to a bracketed value (never as a bare, valid-looking
number; ``app.metrics.formatting.format_metric_value``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from app.metrics.formatting import format_metric_value
from app.metrics.formatting import format_figure
from app.method.model import Method
from app.core.records import IDLE_METRIC, MetricResult, PhaseInfo, PhaseKind, RunStatus, metric_rank
from app.sequencer.capacity_optimisation import not_valid_word

COLUMNS = ("Metric", "Value", "Unit", "Avg power (W)", "IO rate", "Avg response (ms)",
           "Validity")
VALID_COLOUR = QColor(40, 150, 70)
INVALID_COLOUR = QColor(200, 50, 50)
PENDING = "pending"


def planned_metric_names(method: Method | None, phases: Sequence[PhaseInfo]) -> dict[int, str]:
    """phase index → the metric name that phase will yield (EP_MW1 … EP_RI, COM checks)."""
    names: dict[int, str] = {}
    for p in phases:
        if p.kind is PhaseKind.ACTIVE and p.profile:
            metric = p.profile
            if method is not None:
                try:
                    metric = method.profile(p.profile).metric
                except KeyError:
                    pass
            names[p.index] = metric
        elif p.kind is PhaseKind.READY_IDLE:
            names[p.index] = IDLE_METRIC
        elif p.kind is PhaseKind.COM_CHECK:
            names[p.index] = p.name
    return names


class MetricsTable(QTableWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.setHorizontalHeaderLabels(COLUMNS)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.verticalHeader().setVisible(False)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.setAccessibleName("Metrics")
        self._row_of_phase: dict[int, int] = {}

    def plan(self, method: Method | None, phases: Sequence[PhaseInfo]) -> None:
        self.setRowCount(0)
        self._row_of_phase.clear()
        planned = planned_metric_names(method, phases).items()
        for index, name in sorted(planned, key=lambda item: metric_rank(item[1])):
            row = self.rowCount()
            self.insertRow(row)
            self._row_of_phase[index] = row
            self._set_row(row, (name, "", "", "", "", "", PENDING))

    def add_metric(self, m: MetricResult) -> None:
        row = self._row_of_phase.get(m.phase_index) if m.phase_index is not None else None
        if row is None:
            row = self.rowCount()
            self.insertRow(row)
        idle = m.unit.endswith("GB/W")  # EP_RI: capacity per watt, no IO at ready idle
        ops = "— (idle)" if idle else (f"{format_figure(m.ops_rate)} {m.ops_unit}".strip()
                                       if math.isfinite(m.ops_rate) else "—")
        validity = "VALID" if m.valid else f"{not_valid_word(m)}: {m.reason}"
        # the report's digits (three significant, docs/method-notes.md §4), so the table and
        # the PDF never show the same power differently
        self._set_row(row, (m.name, format_metric_value(m), m.unit, format_figure(m.avg_power_w),
                            ops, format_figure(m.avg_response_ms), validity))
        if idle and math.isfinite(m.ops_rate):
            self.item(row, 2).setToolTip(f"raw capacity {format_figure(m.ops_rate)} GB ÷ average "
                                         "ready-idle power")
        colour = VALID_COLOUR if m.valid else INVALID_COLOUR
        validity_item = self.item(row, len(COLUMNS) - 1)
        validity_item.setForeground(QBrush(colour))
        validity_item.setToolTip(validity)  # the whole reason, however long
        self.item(row, 1).setToolTip(m.reason or "valid")

    def finish(self, status: RunStatus) -> None:
        """At the run's end, rows still pending were never measured: say so and why, so an
        aborted run's empty rows are not read as "still to come"."""
        if status is RunStatus.COMPLETED:
            return
        note = f"not measured ({status.value.lower()})"
        for row in range(self.rowCount()):
            validity = self.item(row, len(COLUMNS) - 1)
            if validity is not None and validity.text() == PENDING:
                validity.setText(note)
                validity.setForeground(QBrush(INVALID_COLOUR))

    def _set_row(self, row: int, texts: Sequence[str]) -> None:
        for col, text in enumerate(texts):
            self.setItem(row, col, QTableWidgetItem(text))

    def planned(self) -> list[str]:
        """The metric names of the run's plan, in the table's order."""
        return [self.item(r, 0).text() for r in range(self.rowCount()) if self.item(r, 0)]

    def rows(self) -> list[tuple[str, ...]]:
        """The table as text (tests and screenshots assert on it)."""
        return [tuple(self.item(r, c).text() if self.item(r, c) else ""
                      for c in range(self.columnCount())) for r in range(self.rowCount())]
