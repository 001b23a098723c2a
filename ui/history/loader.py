"""Load a stored run off the GUI thread.

A 24 h run is ~100,000 power samples plus intervals, histograms and the report's content
model: seconds of work. Done on the GUI thread it freezes the history window (no repaint, no
Cancel, the desktop offers to kill it). :class:`RunLoadTab` shows a busy indicator while a
worker thread loads the run, and hands the loaded run over through queued signals.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QLabel, QProgressBar, QVBoxLayout, QWidget

from app.reports.content import ReportContent, build_content
from app.storage.stored import StoredRun


class RunLoader(QObject):
    """Runs ``load`` (returns the StoredRun) and builds its report content on a worker thread.

    Signals (delivered on the GUI thread): ``finished(run, content)`` or ``errored(text)``."""

    finished = Signal(object, object)
    errored = Signal(str)

    def __init__(self, load: Callable[[], StoredRun], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._load = load
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        self.thread = threading.Thread(target=self._work, daemon=True, name="run-loader")
        self.thread.start()

    def _work(self) -> None:
        try:
            run = self._load()
            content: ReportContent = build_content(run)
        except Exception as exc:  # noqa: BLE001 — every failure is shown in the tab
            self.errored.emit(str(exc) or type(exc).__name__)
            return
        self.finished.emit(run, content)


class RunLoadTab(QWidget):
    """The tab shown while a run loads: what is loading and a busy bar (the size of a run is
    not known before it is read, so there is no honest percentage)."""

    def __init__(self, run_id: str, load: Callable[[], StoredRun],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.run_id = run_id
        self.label = QLabel(f"Loading run {run_id[:8]} (samples, intervals, histograms)…")
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)  # busy
        self.progress.setAccessibleName("Loading run")
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addWidget(self.label)
        layout.addWidget(self.progress)
        layout.addStretch(1)
        self.loader = RunLoader(load, self)

    def show_error(self, text: str) -> None:
        self.progress.hide()
        self.label.setText(f"Cannot open run {self.run_id[:8]}: {text}")
        self.label.setStyleSheet("color: #c83232;")
