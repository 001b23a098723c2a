"""One stored run for QA: plots per phase, metrics with every INVALID reason, instruments,
job files, the event log, the audit trail with COM results and the approval, and PDF/xlsx
export.

Everything shown comes from the stored run (``load_run``) and the report's own content model
(:func:`app.reports.content.build_content`), so the detail says what the report says.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QFont, QFontDatabase
from PySide6.QtWidgets import (QComboBox, QFormLayout, QHBoxLayout, QLabel,
                               QLineEdit, QListWidget, QPlainTextEdit, QPushButton,
                               QTableWidget, QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget)

from app.rules.com_verdict import OPEN_STATES
from app.metrics.formatting import format_duration
from app.reports.content import ReportContent, build_content
from app.sequencer.capacity_optimisation import is_com_metric
from app.signoff.revisions import (INSERTER_NOT_RECORDED, accept, approve, concern,
                                   record_com_result, sign_off)
from app.core.records import AuditEntry, RunStatus
from app.storage.audit import AuditError, add_audit_entry, audit_entries
from app.storage.db import Database
from app.storage.errors import StorageError
from app.storage.repository import load_run
from app.storage.stored import StoredRun
from ui.history.signoff_dialogs import AcceptDialog, ApprovalDialog, ComResultDialog
from ui.history.stored_plots import show_stored
from ui.run.metrics_table import INVALID_COLOUR, MetricsTable
from ui.plots.live import LivePlots
from ui.widgets.screen_fit import banner_label
from ui.widgets.report_export import ReportExportBar
from ui.widgets.result_summary import ResultSummary
from ui.widgets.settings import station_settings
from ui.widgets.status_style import verdict_style

INSTRUMENT_COLUMNS = ("Role", "Identity", "Resource", "Driver", "Calibration", "Ranges",
                      "Samples", "Excluded", "Worst uncertainty", "Notes")


def _title_font(widget: QWidget) -> QFont:
    font = QFont(widget.font())
    font.setPointSizeF(font.pointSizeF() * 1.25)
    font.setBold(True)
    return font


def _mono() -> QFont:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


def _clock(seconds: float) -> str:
    s = int(round(seconds)) if math.isfinite(seconds) else 0
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class RunDetailView(QWidget):
    """Detail of one run. ``audited`` fires after an audit entry was added."""

    audited = Signal(str)

    def __init__(self, database: Database, run_id: str, *, read_only: bool = False,
                 loaded: tuple[StoredRun, ReportContent] | None = None,
                 parent: QWidget | None = None) -> None:
        """``loaded``: the run and its report content when already read (in the background,
        ``ui.history.loader``); otherwise they are read here."""
        super().__init__(parent)
        self.database = database
        self.read_only = read_only
        if loaded is None:
            run = load_run(database, run_id)
            loaded = run, build_content(run)
        self.run: StoredRun = loaded[0]
        self.content: ReportContent = loaded[1]
        self._build()
        self.show_phase(None)
        self.refresh_audit()

    # --- layout -------------------------------------------------------------------------------
    def _build(self) -> None:
        run = self.run
        self.title = QLabel(f"Run {run.run_id[:8]} — {run.method_name} {run.method_version}")
        self.title.setFont(_title_font(self.title))
        self.title.setToolTip(run.run_id)
        self.status = QLabel("")  # worded and coloured as on the start page (refresh_audit)
        sut = run.config.sut
        self.subtitle = QLabel(
            f"{sut.vendor} {sut.model} (s/n {sut.serial}) · taxonomy {run.taxonomy} · "
            f"station {run.config.station or '—'} · operator {run.config.operator or '—'} · "
            f"started {run.started_wall[:19].replace('T', ' ')} UTC · duration "
            f"{format_duration(run.duration_s)}")
        self.subtitle.setWordWrap(True)
        # the derived verdict (app.rules.compliance), not the method file's claim
        self.banner = banner_label(run.compliance.banner())  # wraps in a row of its own
        self.banner.setVisible(not run.compliance.compliant)
        # the run as it is now, audit trail included (refresh_audit keeps it current)
        self.export = ReportExportBar(station_settings())
        self.export.set_run(lambda: self.run)
        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(self.status)

        self.tabs = QTabWidget()
        metrics = self._metrics_tab()
        # results first (issue 41): the outcome, every metric and why it did not complete
        self.summary = ResultSummary()
        self.tabs.addTab(self.summary, "S&ummary")
        self.tabs.addTab(self._plots_tab(), "Plots")
        self.tabs.addTab(metrics, "Metrics")
        self.tabs.addTab(self._instruments_tab(), "Instruments")
        self.tabs.addTab(self._job_files_tab(), "Job files")
        self.tabs.addTab(self._log_tab(), "Event log")
        self.tabs.addTab(self._audit_tab(), "QA audit")
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(self.subtitle)
        layout.addWidget(self.banner)
        layout.addWidget(self.export)
        layout.addWidget(self.tabs, 1)

    def _plots_tab(self) -> QWidget:
        page = QWidget()
        self.phase_choice = QComboBox()
        self.phase_choice.setAccessibleName("Phase")
        self.phase_choice.addItem("Whole run", None)
        for p in self.run.phases:
            self.phase_choice.addItem(f"{p.index + 1}. {p.info.name} — {p.status.value}"
                                      + (f" ({p.attempts} attempts)" if p.attempts > 1 else ""),
                                      p.index)
        self.phase_choice.currentIndexChanged.connect(
            lambda i: self.show_phase(self.phase_choice.itemData(i)))
        self.plots = LivePlots(redraw_ms=10_000)  # static: redrawn on phase change only
        row = QHBoxLayout()
        row.addWidget(QLabel("Phase:"))
        row.addWidget(self.phase_choice, 1)
        layout = QVBoxLayout(page)
        layout.addLayout(row)
        layout.addWidget(self.plots, 1)
        return page

    def _metrics_tab(self) -> QWidget:
        page = QWidget()
        self.metrics = MetricsTable()
        self.metrics.plan(self.content.method, [p.info for p in self.run.phases])
        for metric in self.run.metrics:
            self.metrics.add_metric(metric)
        last = self.metrics.columnCount() - 1
        for row in range(self.metrics.rowCount()):  # "pending" means something else here
            item = self.metrics.item(row, last)
            if item is not None and item.text() == "pending":
                line = self.content.metric_line(self.metrics.item(row, 0).text())
                item.setText(f"NOT MEASURED: {line.reason}" if line else "NOT MEASURED")
                item.setForeground(QBrush(INVALID_COLOUR))
        self.problems = QListWidget()
        self.problems.setAccessibleName("Problems")
        self.problems.addItems(self.content.problems or ["No problem found: every expected "
                                                         "metric is present and VALID."])
        layout = QVBoxLayout(page)
        layout.addWidget(self.metrics, 2)
        layout.addWidget(QLabel("Why a metric is INVALID or missing (as in the report):"))
        layout.addWidget(self.problems, 1)
        return page

    def _instruments_tab(self) -> QWidget:
        table = QTableWidget(len(self.content.instruments), len(INSTRUMENT_COLUMNS))
        table.setHorizontalHeaderLabels(INSTRUMENT_COLUMNS)
        table.verticalHeader().setVisible(False)
        for row, i in enumerate(self.content.instruments):
            worst = (f"{i.worst_uncertainty_pct:.3g} % at {_clock(i.worst_uncertainty_t)}"
                     if math.isfinite(i.worst_uncertainty_pct) else "—")
            for col, text in enumerate((i.role, i.identity, i.resource, i.driver, i.calibration,
                                        i.ranges, f"{i.samples:,}", f"{i.flagged:,}", worst,
                                        i.notes)):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                table.setItem(row, col, item)
        table.resizeColumnsToContents()
        self.instruments = table
        return table

    def _job_files_tab(self) -> QWidget:
        page = QWidget()
        self.job_choice = QComboBox()
        self.job_text = QPlainTextEdit()
        self.job_text.setReadOnly(True)
        self.job_text.setFont(_mono())
        jobs = self.run.job_files
        for index, text in jobs.items():
            self.job_choice.addItem(f"{index + 1}. {self.run.phase(index).info.name}", text)
        self.job_choice.currentIndexChanged.connect(
            lambda i: self.job_text.setPlainText(self.job_choice.itemData(i) or ""))
        if jobs:
            self.job_text.setPlainText(self.job_choice.itemData(0))
        else:
            self.job_text.setPlainText("No workload job file stored for this run.")
        layout = QVBoxLayout(page)
        layout.addWidget(self.job_choice)
        layout.addWidget(self.job_text, 1)
        return page

    def _log_tab(self) -> QWidget:
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setFont(_mono())
        self.log.setPlainText("\n".join(f"[{_clock(e.t)}] {e.level:<7} {e.message}"
                                        for e in self.run.events) or "No events stored.")
        return self.log

    def _audit_tab(self) -> QWidget:
        page = QWidget()
        self.audit_list = QListWidget()
        self.audit_list.setAccessibleName("Audit trail")
        self.audit_list.setWordWrap(True)
        self.author = QLineEdit()
        self.author.setPlaceholderText("your name (recorded with the entry)")
        self.audit_text = QPlainTextEdit()
        self.audit_text.setPlaceholderText("Note, or the reason for accepting / rejecting")
        self.audit_text.setMaximumHeight(90)
        self.note_button = QPushButton("Add &note")
        self.accept_button = QPushButton("&Accept run")
        self.reject_button = QPushButton("Re&ject run")
        self.com_button = QPushButton("Record &COM result…")
        self.approve_button = QPushButton("A&pprove revision…")
        self.com_button.clicked.connect(self._com_dialog)
        self.approve_button.clicked.connect(self._approve_dialog)
        self.note_button.clicked.connect(lambda: self._submit("note", None))
        self.accept_button.clicked.connect(self._accept_dialog)
        self.reject_button.clicked.connect(lambda: self._submit("disposition", "rejected"))
        explain = QLabel("The run's data never changes: notes and dispositions are added to "
                         "its audit trail, newest last, and cannot be edited or removed.")
        explain.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Author:", self.author)
        form.addRow("Text:", self.audit_text)
        buttons = QHBoxLayout()
        for b in (self.note_button, self.accept_button, self.reject_button, self.com_button,
                  self.approve_button):
            buttons.addWidget(b)
            b.setEnabled(not self.read_only)
        buttons.addStretch(1)
        self.audit_state = QLabel("Read-only: the database shown is not the one you asked "
                                  "for, so nothing is written." if self.read_only else "")
        self.audit_state.setWordWrap(True)
        self.signoff_label = QLabel()  # revision, hash and approval (app.signoff.revisions)
        self.signoff_label.setWordWrap(True)
        self.signoff_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(page)
        layout.addWidget(explain)
        layout.addWidget(self.signoff_label)
        layout.addWidget(self.audit_list, 1)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.audit_state)
        return page

    # --- actions ------------------------------------------------------------------------------
    def show_phase(self, phase_index: int | None) -> None:
        show_stored(self.plots, self.run, self.content.method, phase_index)

    def refresh_audit(self) -> list[AuditEntry]:
        entries = audit_entries(self.database, self.run.run_id)
        self.run = replace(self.run, audit=tuple(entries))  # exports carry the latest trail
        self.audit_list.clear()
        self.audit_list.addItems([e.describe() for e in entries] or ["No notes or "
                                                                     "dispositions yet."])
        for row, entry in enumerate(entries):  # who inserted it (docs/security.md)
            self.audit_list.item(row).setToolTip(
                f"inserted by {entry.db_role or INSERTER_NOT_RECORDED}")
        self.show_verdict()
        self.signoff = sign_off(self.run)
        self.signoff_label.setText(f"{self.signoff.status} · record SHA-256 "
                                   f"{self.signoff.current.sha256}")
        return entries

    def show_verdict(self) -> None:
        """The run's outcome with each COM's state from the record and its trail as it is now:
        a COM result just recorded changes it here as in the history list and the report."""
        verdict = self.run.verdict
        run = self.run
        self.summary.show_result(verdict, run.compliance, run.metrics,
                                 planned=self.metrics.planned(), cause=self.cause())
        self.status.setText(verdict.text)
        self.status.setStyleSheet(verdict_style(verdict))
        missing = [m.name for m in self.content.metrics
                   if not m.valid and not is_com_metric(m.name)]
        missing += [f"COM {v.com_id} {v.state.value}" for v in self.run.coms
                    if v.state in OPEN_STATES]
        self.status.setToolTip("INVALID, not measured or not verified: " + ", ".join(missing)
                               if missing else "all metrics VALID")

    def cause(self) -> str:
        """Why a run did not complete, as its record has it (a FAILED run's error)."""
        run = self.run
        if run.status is RunStatus.COMPLETED:
            return ""
        return f"{run.status.value}: {run.error or 'no reason recorded'}"

    def record_com_result(self, com: str, outcome: str, evidence: str,
                          author: str) -> AuditEntry:
        """The technician's heuristic COM result (raises AuditError naming the rule)."""
        return self._append(lambda: record_com_result(self.database, self.run, com, outcome,
                                                      evidence, author))

    def approve(self, statement: str, author: str, confirm: str = "") -> AuditEntry:
        """QA's approval of the revision shown (refused if the trail moved on meanwhile, or
        without ``confirm`` for a SIMULATED or NON-COMPLIANT run)."""
        return self._append(lambda: approve(self.database, self.run, author, statement,
                                            confirm))

    def accept_run(self, reason: str, author: str, confirm: str = "") -> AuditEntry:
        """QA's ACCEPTED disposition (``confirm``: why, for a SIMULATED or NON-COMPLIANT run)."""
        return self._append(lambda: accept(self.database, self.run, author, reason, confirm))

    def _append(self, add: Callable[[], AuditEntry]) -> AuditEntry:
        if self.read_only:
            raise AuditError("this history is read-only (fallback database): nothing is "
                             "written")
        entry = add()
        self.refresh_audit()
        self.audited.emit(self.run.run_id)
        return entry

    def _com_dialog(self) -> None:
        dialog = ComResultDialog(self.run.coms, self.author.text(), self)
        if dialog.exec():
            self._report(lambda: self.record_com_result(*dialog.values()))

    def _approve_dialog(self) -> None:
        dialog = ApprovalDialog(self.signoff, self.author.text(), self,
                                concern(self.run.compliance))
        if dialog.exec():
            self._report(lambda: self.approve(*dialog.values()))

    def _accept_dialog(self) -> None:
        dialog = AcceptDialog(self.run.run_id, self.audit_text.toPlainText(), self.author.text(),
                              self, concern(self.run.compliance))
        if dialog.exec() and self._report(lambda: self.accept_run(*dialog.values())):
            self.audit_text.clear()

    def _report(self, add: Callable[[], AuditEntry]) -> bool:
        """Run ``add`` and say in the audit tab what was recorded, or why not."""
        try:
            entry = add()
        except StorageError as exc:
            self.audit_state.setText(str(exc))
            self.audit_state.setStyleSheet("color: #c83232;")
            return False
        self.audit_state.setStyleSheet("")
        self.audit_state.setText(f"Recorded: {entry.describe()}")
        return True

    def add_entry(self, kind: str, text: str, author: str,
                  disposition: str | None = None) -> AuditEntry:
        """Append an audit entry (raises AuditError / StorageError; read-only refuses)."""
        return self._append(lambda: add_audit_entry(self.database, self.run.run_id, kind, text,
                                                    author, disposition))

    def _submit(self, kind: str, disposition: str | None) -> None:
        text = self.audit_text.toPlainText()
        if self._report(lambda: self.add_entry(kind, text, self.author.text(), disposition)):
            self.audit_text.clear()

    def export_pdf(self, path: Path | None = None) -> Path | None:
        return self.export.export("pdf", path)

    def export_xlsx(self, path: Path | None = None) -> Path | None:
        return self.export.export("xlsx", path)
