"""Phase timeline: every planned phase with its status, the current one highlighted, and the
overall progress with elapsed time and ETA (from the sequencer's Progress events)."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (QAbstractItemView, QHeaderView, QLabel, QProgressBar,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from app.metrics.formatting import format_duration
from app.core.records import PhaseInfo, PhaseStatus
from app.sequencer import events as ev

STATUS_COLOURS = {
    PhaseStatus.RUNNING: QColor(47, 143, 208),
    PhaseStatus.COMPLETED: QColor(40, 150, 70),
    PhaseStatus.ABORTED: QColor(200, 120, 20),
    PhaseStatus.FAILED: QColor(200, 50, 50),
}


class PhaseTimeline(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(("Phase", "Planned", "Status"))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.setAccessibleName("Phase timeline")
        self.phase_bar = QProgressBar()
        self.phase_bar.setFormat("current phase %p %")
        self.run_bar = QProgressBar()
        self.run_bar.setFormat("whole run %p %")
        self.eta = QLabel("Elapsed — · ETA —")
        self.current = QLabel("Waiting for the run to start…")
        self.current.setWordWrap(True)
        bold = QFont(self.current.font())
        bold.setBold(True)
        self.current.setFont(bold)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for w in (self.current, self.phase_bar, self.run_bar, self.eta):
            layout.addWidget(w)
        layout.addWidget(self.table, 1)
        self.phases: tuple[PhaseInfo, ...] = ()
        self.status: dict[int, PhaseStatus] = {}

    def plan(self, phases: Sequence[PhaseInfo]) -> None:
        self.phases = tuple(phases)
        self.status = {p.index: PhaseStatus.PENDING for p in phases}
        self.table.setRowCount(len(phases))
        for p in phases:
            planned = format_duration(p.planned_s) if p.planned_s else "until full"
            for col, text in enumerate((p.name, planned, PhaseStatus.PENDING.value)):
                self.table.setItem(p.index, col, QTableWidgetItem(text))
        self.phase_bar.setValue(0)
        self.run_bar.setValue(0)
        self.eta.setText("Elapsed — · ETA —")
        self.current.setText("Waiting for the run to start…")

    def _set_status(self, index: int, status: PhaseStatus, detail: str = "") -> None:
        self.status[index] = status
        text = f"{status.value}: {detail}" if detail else status.value
        item = QTableWidgetItem(text)
        item.setToolTip(text)
        colour = STATUS_COLOURS.get(status)
        if colour is not None:
            item.setForeground(QBrush(colour))
        self.table.setItem(index, 2, item)

    def kept(self, indices: Sequence[int]) -> None:
        """Phases a resumed run keeps as stored (they do not run again)."""
        for index in indices:
            self._set_status(index, PhaseStatus.COMPLETED, "kept from before the interruption")

    def phase_started(self, e: ev.PhaseStarted) -> None:
        self._set_status(e.phase.index, PhaseStatus.RUNNING)
        self.current.setText(f"Phase {e.phase.index + 1} of {len(self.phases)}: {e.phase.name}")
        self.phase_bar.setValue(0)
        self.table.selectRow(e.phase.index)
        self.table.scrollToItem(self.table.item(e.phase.index, 0))

    def stabilisation_extended(self, e: ev.StabilisationExtended) -> None:
        """Stabilisation grew (method-notes §4): the phase's planned and latest end."""
        name = self.phases[e.phase_index].name if e.phase_index < len(self.phases) else ""
        self.current.setText(
            f"Phase {e.phase_index + 1} of {len(self.phases)}: {name} — stabilisation extended "
            f"to {e.stabilisation_intervals} intervals; planned end "
            f"{format_duration(e.window_end_s - e.extension_s)}, latest end "
            f"{format_duration(e.window_end_s)}")

    def phase_finished(self, e: ev.PhaseFinished) -> None:
        self._set_status(e.phase.index, e.status, e.error)
        if e.status is PhaseStatus.COMPLETED:
            self.phase_bar.setValue(100)

    def progress(self, e: ev.Progress) -> None:
        self.phase_bar.setValue(round(e.phase_fraction * 100))
        self.run_bar.setValue(round(e.fraction * 100))
        self.eta.setText(f"Elapsed {format_duration(e.elapsed_s)} · "
                         f"remaining about {format_duration(e.eta_s)}")

    def finished(self, e: ev.RunFinished, elapsed_s: float | None = None) -> None:
        if e.status.value == "COMPLETED":
            self.run_bar.setValue(100)
        if elapsed_s is not None:
            self.eta.setText(f"Finished after {format_duration(elapsed_s)}")
        # the reason is in the run header (one place, wrapped across the window): printed
        # here too it was read twice and stretched this column
        self.current.setText(f"Run {e.status.value}")
        self.current.setToolTip(e.error or "")
