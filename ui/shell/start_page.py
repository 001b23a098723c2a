"""Start page: New run, resume an interrupted run (continue it in the same record, from the
next phase boundary the method allows: app/station/resume.py), repeat a run's set-up (a new run with
the same configuration), the recent runs from storage, and the station's health."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QFont
from PySide6.QtWidgets import (QAbstractItemView, QGroupBox, QHBoxLayout, QHeaderView, QLabel,
                               QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout,
                               QWidget)

from app.metrics.formatting import format_duration
from app.storage.stored import RunSummary
from ui.shell.health import HealthItem
from ui.widgets.status_style import verdict_colour

RUN_COLUMNS = ("Started (UTC)", "Status", "Method", "Taxonomy", "SUT", "Lab", "Duration",
               "Run id")


class StartPage(QWidget):
    new_run = Signal()
    resume_run = Signal(str)  # run id whose configuration to reuse
    continue_run = Signal(str)  # INTERRUPTED run id to resume in its own record
    details_requested = Signal(str)  # run id to open in the history's detail view

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        title = QLabel("StorWatt test station")
        font = QFont(title.font())
        font.setPointSizeF(font.pointSizeF() * 1.6)
        font.setBold(True)
        title.setFont(font)
        intro = QLabel("Storage power-efficiency tests following the SNIA Emerald method. "
                       "Start a new run, resume an interrupted one, or reuse the set-up of an "
                       "earlier run.")
        intro.setWordWrap(True)
        self.new_button = QPushButton("&New run…")
        self.new_button.setToolTip("Ctrl+N")
        self.new_button.clicked.connect(self.new_run)
        self.resume_button = QPushButton("R&epeat selected run’s set-up…")
        self.resume_button.setToolTip("Starts a NEW run with the selected run's configuration.")
        self.resume_button.clicked.connect(self._resume)
        self.resume_button.setEnabled(False)
        self.continue_button = QPushButton("")
        self.continue_button.setToolTip(
            "Continues an INTERRUPTED run in its own record from the next phase boundary the "
            "method allows; asks first, saying what will be redone. The result is NON-COMPLIANT "
            "(resumed after interruption).")
        self.continue_button.clicked.connect(self._continue)
        self.continue_button.hide()
        self._resumable: list[str] = []  # resumable run ids shown, newest first
        self._continue_id: str | None = None
        self.runs = QTableWidget(0, len(RUN_COLUMNS))
        self.runs.setHorizontalHeaderLabels(RUN_COLUMNS)
        self.runs.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.runs.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.runs.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.runs.verticalHeader().setVisible(False)
        self.runs.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.runs.horizontalHeader().setStretchLastSection(True)
        self.runs.setAccessibleName("Recent runs")
        self.runs.itemSelectionChanged.connect(self._selection_changed)
        self.runs.setToolTip("Double-click a run to open its details")
        self.runs.doubleClicked.connect(self._details)
        self.runs_note = QLabel("")
        self.health = QLabel("")
        self.health.setWordWrap(True)
        self.health.setTextFormat(Qt.TextFormat.RichText)

        buttons = QHBoxLayout()
        buttons.addWidget(self.new_button)
        buttons.addWidget(self.continue_button)
        buttons.addWidget(self.resume_button)
        buttons.addStretch(1)
        recent = QGroupBox("Recent runs")
        rl = QVBoxLayout(recent)
        rl.addWidget(self.runs)
        rl.addWidget(self.runs_note)
        health = QGroupBox("Station health")
        QVBoxLayout(health).addWidget(self.health)
        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addWidget(intro)
        layout.addLayout(buttons)
        layout.addWidget(recent, 1)
        layout.addWidget(health)

    def show_runs(self, runs: Sequence[RunSummary], error: str = "",
                  resumable: Collection[str] = ()) -> None:
        """``resumable``: ids of INTERRUPTED runs with phases left to do (they get the
        "Resume interrupted run" button: the selected one, else the newest)."""
        self._resumable = [r.run_id for r in runs if r.run_id in resumable]
        # the selection follows the run, not the row: a new run shifts every row down, and a
        # kept row number made "Repeat selected run's set-up" repeat another run
        selected = self.selected_run_id()
        self.runs.clearSelection()
        self.runs.setCurrentItem(None)  # else Qt re-selects the current row as items change
        self._offer_continue(None)
        self.runs.setRowCount(len(runs))
        for r, run in enumerate(runs):
            duration = format_duration(run.duration_s)
            verdict = run.verdict
            values = (run.started_wall.replace("T", " ")[:19], verdict.text,
                      f"{run.method_name} {run.method_version}"
                      + ("" if run.compliance.compliant else f" ({run.compliance.label})"),
                      run.taxonomy, run.sut, run.lab, duration, run.run_id[:8])
            for c, text in enumerate(values):
                item = QTableWidgetItem(text)
                if c == 1:
                    item.setForeground(QBrush(verdict_colour(verdict)))
                if c == 0:
                    item.setData(256, run.run_id)  # Qt.UserRole: the full id
                self.runs.setItem(r, c, item)
        self.runs_note.setText(error or ("No runs stored yet." if not runs else
                                         f"{len(runs)} most recent run(s)."))
        ids = [run.run_id for run in runs]
        if selected in ids:
            self.runs.selectRow(ids.index(selected))

    def show_health(self, items: Sequence[HealthItem]) -> None:
        rows = []
        for item in items:
            mark = "<span style='color:#289646'>✔</span>" if item.ok else \
                "<span style='color:#c83232'>✘</span>"
            rows.append(f"{mark} <b>{item.name}:</b> {item.detail}")
        self.health.setText("<br>".join(rows))

    def selected_run_id(self) -> str | None:
        rows = self.runs.selectionModel().selectedRows()
        if not rows:
            return None
        return self.runs.item(rows[0].row(), 0).data(256)

    def _selection_changed(self) -> None:
        self.resume_button.setEnabled(bool(self.runs.selectedItems()))
        self._offer_continue(self.selected_run_id())

    def _offer_continue(self, selected: str | None) -> None:
        run_id = selected if selected in self._resumable else next(iter(self._resumable), None)
        self._continue_id = run_id
        self.continue_button.setVisible(run_id is not None)
        if run_id is not None:
            self.continue_button.setText(f"Resume interrupted run {run_id[:8]}…")

    def _continue(self) -> None:
        if self._continue_id:
            self.continue_run.emit(self._continue_id)

    def _details(self) -> None:
        run_id = self.selected_run_id()
        if run_id:
            self.details_requested.emit(run_id)

    def _resume(self) -> None:
        run_id = self.selected_run_id()
        if run_id:
            self.resume_run.emit(run_id)
