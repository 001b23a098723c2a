"""A run's outcome at a glance: the verdict, its compliance, why it did not complete, and every
metric with its value, unit and validity — the first thing the run view shows when a run ends
and the top of the history detail (issue 41: "results first").

It only formats what the record (or, for the seconds before the record is read back, the
run's last event) computed: the verdict comes from :mod:`app.rules.run_outcome`, the compliance
from :mod:`app.rules.compliance`, each figure from :func:`format_metric_value`. The table sizes
itself to its rows, so on a 1280×720 laptop the summary is read without scrolling; the long
reasons wrap inside the validity column instead of widening it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QFont, QResizeEvent
from PySide6.QtWidgets import (QAbstractItemView, QHeaderView, QLabel, QListWidget, QSizePolicy,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from app.core.records import metric_rank
from app.metrics.formatting import format_metric_value
from app.rules.compliance import ComplianceVerdict
from app.rules.run_outcome import RunVerdict, Tone
from app.sequencer.capacity_optimisation import not_valid_word
from ui.widgets.status_style import TONE_COLOURS, verdict_style

COLUMNS = ("Metric", "Value", "Unit", "Validity")
NOT_MEASURED = "NOT MEASURED"


class ShownMetric(Protocol):
    """A stored metric (``MetricResult``) or a run list's (``KeyMetric``)."""

    @property
    def name(self) -> str: ...

    @property
    def value(self) -> float: ...

    @property
    def unit(self) -> str: ...

    @property
    def valid(self) -> bool: ...

    @property
    def reason(self) -> str: ...


def validity_text(m: ShownMetric) -> str:
    return "VALID" if m.valid else f"{not_valid_word(m)}: {m.reason or 'no reason recorded'}"


class SummaryTable(QTableWidget):
    """The metrics, one row each, exactly as tall as its rows (no inner scrolling)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.setHorizontalHeaderLabels(COLUMNS)
        self.setAccessibleName("Result metrics")
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setWordWrap(True)
        self.verticalHeader().setVisible(False)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        header = self.horizontalHeader()
        for col in range(len(COLUMNS) - 1):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(len(COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)

    def show_rows(self, rows: Sequence[tuple[str, str, str, str, bool]]) -> None:
        self.setRowCount(len(rows))
        for r, (name, value, unit, validity, valid) in enumerate(rows):
            for c, text in enumerate((name, value, unit, validity)):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.setItem(r, c, item)
            item.setForeground(QBrush(TONE_COLOURS[Tone.GOOD if valid else Tone.BAD]))
        self._fit()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt naming)
        super().resizeEvent(event)
        self._fit()  # a narrower column wraps a reason onto more lines

    def _fit(self) -> None:
        self.resizeRowsToContents()
        height = self.horizontalHeader().height() + 2 * self.frameWidth()
        height += sum(self.rowHeight(r) for r in range(self.rowCount()))
        self.setFixedHeight(height)

    def rows(self) -> list[tuple[str, ...]]:
        """The table as text (tests and screenshots assert on it)."""
        return [tuple(item.text() if (item := self.item(r, c)) else ""
                      for c in range(self.columnCount())) for r in range(self.rowCount())]


class ResultSummary(QWidget):
    """Verdict, cause, metrics and the rules not met of one run; :meth:`show_result` fills
    it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.verdict = QLabel("")
        self.verdict.setAccessibleName("Verdict")
        font = QFont(self.verdict.font())
        font.setPointSizeF(font.pointSizeF() * 1.4)
        self.verdict.setFont(font)
        self.verdict.setWordWrap(True)
        # what makes the run non-compliant, up front (the banner above names the criteria;
        # this lists each with its evidence)
        self.criteria = QListWidget()
        self.criteria.setAccessibleName("Compliance criteria not met")
        self.criteria.setWordWrap(True)
        self.criteria_title = QLabel("")
        self.cause = QLabel("")  # why a run did not complete, where one is not said already
        self.cause.setAccessibleName("Cause")
        self.cause.setWordWrap(True)
        self.cause.setStyleSheet("color: #b03030; font-weight: bold;")
        self.cause.hide()
        for label in (self.verdict, self.cause):
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = SummaryTable()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.verdict)
        layout.addWidget(self.cause)
        layout.addWidget(self.table)
        layout.addWidget(self.criteria_title)
        layout.addWidget(self.criteria, 1)

    def show_result(self, verdict: RunVerdict, compliance: ComplianceVerdict | None,
                    metrics: Sequence[ShownMetric], *, planned: Sequence[str] = (),
                    cause: str = "") -> None:
        """``planned``: metric names the run should have yielded (a missing one is listed as
        NOT MEASURED); ``cause``: why the run did not complete, when no header says it."""
        self.verdict.setText(verdict.text)
        self.verdict.setStyleSheet(verdict_style(verdict))
        self.criteria.clear()
        if compliance is None:
            self.criteria_title.setText("Compliance: derived from the record once the run is "
                                        "stored")
        elif compliance.compliant:
            self.criteria_title.setText("COMPLIANT: every rule of the method held for what ran")
        else:
            self.criteria_title.setText(f"{compliance.label} — each rule not met, with its "
                                        "evidence:")
            self.criteria.addItems([f"{c.name}: {c.evidence}" for c in compliance.failures])
        self.criteria.setVisible(self.criteria.count() > 0)
        self.cause.setText(cause)
        self.cause.setVisible(bool(cause))
        rows = [(m.name, format_metric_value(m), m.unit, validity_text(m), m.valid)
                for m in sorted(metrics, key=lambda m: metric_rank(m.name))]
        measured = {m.name for m in metrics}
        rows += [(name, "—", "", NOT_MEASURED, False) for name in planned
                 if name not in measured]
        self.table.show_rows(rows)
