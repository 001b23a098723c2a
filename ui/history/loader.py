"""Load a stored run off the GUI thread.

A 24 h run is ~100,000 power samples plus intervals, histograms and the report's content
model: seconds of work. Done on the GUI thread it freezes the history window (no repaint, no
Cancel, the desktop offers to kill it). :class:`RunLoadTab` shows a busy indicator while a
worker (:mod:`ui.widgets.worker`) loads the run; the tab is the worker's owner, so a tab closed
mid-load simply never hears back.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from PySide6.QtWidgets import QLabel, QProgressBar, QVBoxLayout, QWidget

from app.reports.content import ReportContent, build_content
from app.storage.stored import StoredRun
from ui.widgets.worker import Worker, start_worker


def load_with_content(load: Callable[[], StoredRun]) -> tuple[StoredRun, ReportContent]:
    """The run and its report's content model (the worker thread's part: no widget)."""
    run = load()
    return run, build_content(run)


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
        self._load = load
        self.loader: Worker | None = None

    def start(self, on_loaded: Callable[[StoredRun, ReportContent], None]) -> None:
        """Load the run and build its report content on a worker; ``on_loaded(run, content)``
        on the GUI thread, or the failure shown in this tab."""
        self.loader = start_worker(partial(load_with_content, self._load), owner=self,
                                   name="run-loader",
                                   on_finished=lambda loaded: on_loaded(*loaded),
                                   on_errored=self.show_error)

    def show_error(self, exc: Exception) -> None:
        self.progress.hide()
        self.label.setText(f"Cannot open run {self.run_id[:8]}: {str(exc) or type(exc).__name__}")
        self.label.setStyleSheet("color: #c83232;")
