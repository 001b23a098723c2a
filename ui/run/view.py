"""The run view: what the technician watches during a run.

Phase timeline with progress and ETA, live plots, the metrics table, an event log, and the
Pause / Resume / Abort controls. The sequencer runs on a worker (:mod:`ui.widgets.worker`) this view
owns; the widget only reads the event batches :class:`~ui.run.bridge.RunBridge` delivers on the
GUI thread and calls the sequencer's thread-safe ``pause``/``resume``/``abort`` flags, so the
GUI never blocks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QPushButton, QScrollArea,
                               QSplitter, QTabWidget, QVBoxLayout, QWidget)

from app.metrics.formatting import format_metric_value
from app.metrics.formatting import format_duration
from app.method.record import method_from_record
from app.core.records import RunStatus
from app.rules.compliance import ComplianceVerdict
from app.rules.run_outcome import RunVerdict, Tone, run_outcome
from app.sequencer import events as ev
from app.sequencer.event_dispatch import EventTable
from app.station.session import RunSession
from app.station.storage_stall import RESUMED, STALLED
from app.signoff.revisions import remember_record_hashes
from app.storage.repository import load_run
from app.storage.sender import Sender, sender_for
from app.storage.stored import RunSummary
from app.station.forecast import forecast, forecast_evidence, forecast_text
from app.sequencer.capacity_optimisation import not_valid_word
from ui.run.bridge import RunBridge
from ui.widgets.confirm import Confirm, ask_yes_no
from ui.run.event_log import EventLog
from ui.run.instrument_strip import InstrumentStrip
from ui.run.metrics_table import MetricsTable
from ui.plots.live import LivePlots
from ui.plots.sweep_plots import DemandIntensityPlot, SweepPlots
from ui.widgets.report_export import ReportExportBar
from ui.widgets.result_summary import ResultSummary, ShownMetric
from ui.widgets.screen_fit import banner_label, remember_splitter
from ui.widgets.settings import station_settings
from ui.widgets.status_style import verdict_style
from ui.run.timeline import PhaseTimeline
from ui.widgets.worker import Worker, start_worker

LOG_LINES = 5000
#: how often the run view shows the lab sender's state
LAB_REFRESH_MS = 1000
STATE_WIDTH = 260  # px: the header's state wraps inside this


class RunView(QWidget):
    """Shows one run. ``ended`` fires once the worker thread has finished (storage closed)."""

    ended = Signal(object)  # RunFinished
    home_requested = Signal()
    #: (running, paused) whenever the controls change, so menus can follow the buttons
    controls_changed = Signal(bool, bool)

    def __init__(self, parent: QWidget | None = None, *, confirm: Confirm = ask_yes_no,
                 dark: bool | None = None, settings: QSettings | None = None) -> None:
        super().__init__(parent)
        self.confirm = confirm
        self.settings = settings or station_settings()
        self.session: RunSession | None = None
        self.bridge: RunBridge | None = None
        self.result: ev.RunFinished | None = None
        self._worker: Worker | None = None
        self.sender: Sender | None = None  # copies the run to the lab database, if one
        self._lab_timer = QTimer(self)
        self._lab_timer.setInterval(LAB_REFRESH_MS)
        self._lab_timer.timeout.connect(self._refresh_lab_copy)
        self._build(dark)

    # --- layout -------------------------------------------------------------------------------
    def _build(self, dark: bool | None) -> None:
        self.title = QLabel("No run")
        font = QFont(self.title.font())
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.title.setFont(font)
        self.subtitle = QLabel("")
        self.subtitle.setWordWrap(True)
        self.banner = banner_label()
        self.banner.hide()
        #: a data disk that stopped completing writes, shown while it lasts (issue 40 §5)
        self.storage_banner = banner_label()
        self.storage_banner.setAccessibleName("Storage stalled")
        self.storage_banner.hide()
        self.outcome = QLabel("")  # why the run did not complete, in its header
        self.outcome.setWordWrap(True)
        self.outcome.setAccessibleName("Run outcome")
        self.outcome.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.outcome.hide()
        self.pause_button = QPushButton("&Pause")
        self.resume_button = QPushButton("&Resume")
        self.abort_button = QPushButton("&Abort…")
        self.pause_button.setToolTip("Stop the IO now; on resume the current phase restarts "
                                     "from its beginning (the method requires an "
                                     "uninterrupted phase).")
        self.pause_button.clicked.connect(self.pause)
        self.resume_button.clicked.connect(self.resume)
        self.abort_button.clicked.connect(self.ask_abort)
        self.home_button = QPushButton("Start pa&ge")
        self.home_button.setToolTip("Back to the start page (the run's results stay stored)")
        self.home_button.clicked.connect(self.home_requested)
        self.state = QLabel("")
        self.lab_copy = QLabel("")  # the sender's state: behind, last success, last error
        self.lab_copy.setAccessibleName("Lab copy")
        self.lab_copy.setWordWrap(True)
        self.lab_copy.setVisible(False)
        self.state.setWordWrap(True)  # "PAUSED — …" wraps instead of widening the window
        self.state.setMaximumWidth(STATE_WIDTH)
        self.timeline = PhaseTimeline()
        self.timeline.setMinimumWidth(300)
        self.instruments = InstrumentStrip()  # a silent meter shows in its first second
        self.instruments.hide()
        self.plots = LivePlots(dark=dark)
        self.sweep_plots = SweepPlots(colours=self.plots.colours)  # shown for a sweep only
        self.di_plot = DemandIntensityPlot(colours=self.plots.colours)  # for a DI matrix only
        self.metrics = MetricsTable()
        self.log = EventLog(LOG_LINES)
        self.export = ReportExportBar(self.settings)

        # the controls share a row with the title only; everything that can grow long (the
        # subtitle, the verdict banner, why the run ended) has a wrapping row of its own, so
        # Abort… stays on a 1280 px screen whatever the run says
        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(self.state)
        for b in (self.pause_button, self.resume_button, self.abort_button, self.home_button):
            head.addWidget(b)
        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(self.metrics)
        bottom.addWidget(self.log)
        bottom.setSizes([620, 380])
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.plots)
        right.addWidget(self.sweep_plots)
        right.addWidget(self.di_plot)
        right.addWidget(bottom)
        right.setSizes([590, 300, 300, 290])
        main = QSplitter(Qt.Orientation.Horizontal)
        left = QWidget()
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.instruments)
        column.addWidget(self.timeline, 1)
        main.addWidget(left)
        main.addWidget(right)
        main.setSizes([310, 1200])
        self.splitters = {"main": main, "plots": right, "bottom": bottom}
        for name, splitter in self.splitters.items():
            splitter.setChildrenCollapsible(False)
            remember_splitter(splitter, self.settings, f"run_view/splitter/{name}")
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(self.subtitle)
        layout.addWidget(self.banner)
        layout.addWidget(self.storage_banner)
        layout.addWidget(self.outcome)
        layout.addWidget(self.lab_copy)
        layout.addWidget(self.export)
        # results first (issue 41): when the run ends its outcome takes the view, the plots a
        # tab away; while it runs, the Results tab is hidden (nothing to show yet)
        self.summary = ResultSummary()
        results = QScrollArea()  # only a window far smaller than a laptop's ever scrolls
        results.setWidgetResizable(True)
        results.setFrameShape(QScrollArea.Shape.NoFrame)
        results.setWidget(self.summary)
        self.views = QTabWidget()
        self.views.setDocumentMode(True)
        self.results_tab = self.views.addTab(results, "Res&ults")
        self.live_tab = self.views.addTab(main, "&Live plots and log")
        self.views.setTabVisible(self.results_tab, False)
        layout.addWidget(self.views, 1)
        self._set_controls(running=False)

    def _set_controls(self, running: bool, paused: bool = False) -> None:
        self.pause_button.setEnabled(running and not paused)
        self.resume_button.setEnabled(running and paused)
        self.abort_button.setEnabled(running)
        self.home_button.setEnabled(not running)
        self.controls_changed.emit(running, paused)

    # --- run life cycle -------------------------------------------------------------------
    def start(self, session: RunSession, bridge: RunBridge) -> None:
        """Show ``session`` (opened with ``bridge`` among its listeners) and start it."""
        if self.bridge is not None:
            self.bridge.deleteLater()  # the previous run's bridge has delivered everything
        self.clear()
        self.session, self.bridge, self.result = session, bridge, None
        bridge.setParent(self)
        bridge.events.connect(self.ingest)
        bridge.finished.connect(self._on_finished)
        self._set_controls(running=True)
        self.state.setText("Running")
        # the run (sequencer, then closing the lab and storage) on a worker this view owns: a
        # view destroyed mid-run aborts it (everything measured so far stays stored)
        self._worker = start_worker(
            session.run, owner=self, name=f"run-{session.run_id[:8]}",
            on_finished=lambda _status: self._on_worker_done(),
            on_errored=self._on_worker_done,
            on_cancel=lambda: session.sequencer.abort("the run view was closed"))
        self.sender = sender_for(session.database)  # never waited on: its own thread
        self.lab_copy.setVisible(self.sender is not None)
        if self.sender is not None:
            self.lab_copy.setText(f"Lab copy: sending to {self.sender.state.lab}")
            self._lab_timer.start()

    def _refresh_lab_copy(self) -> None:
        """Show the sender's state; once it has made its last push, stop looking."""
        if self.sender is None:
            self._lab_timer.stop()
            return
        state = self.sender.state
        self.lab_copy.setText(state.summary())
        self.lab_copy.setToolTip(state.last_error)
        failing = bool(state.last_error)
        self.lab_copy.setStyleSheet("color: #b06000;" if failing else "")
        if not self.sender.running:
            self._lab_timer.stop()

    def clear(self) -> None:
        """Forget the previous run before a new one starts: its histogram, confidence levels,
        efficiency band, metrics, timeline and log must never pass for the new run's (a run
        that fails before its first event would otherwise show the last run's results)."""
        self.title.setText("Starting run…")
        self.subtitle.clear()
        self.banner.hide()
        self.storage_banner.hide()
        self.outcome.hide()
        self.state.clear()
        self.state.setStyleSheet("")
        self.state.setToolTip("")
        self.log.clear()
        self.timeline.plan(())
        self.metrics.plan(None, ())
        self.plots.reset()
        self.instruments.reset()
        self.export.set_run(None)
        self.views.setTabVisible(self.results_tab, False)
        self.views.setCurrentIndex(self.live_tab)

    @property
    def running(self) -> bool:
        """True until the worker has closed the lab and the storage and said so."""
        return self._worker is not None and self._worker.running

    def pause(self) -> None:
        if self.session and self.running:
            self.session.sequencer.pause()
            self.show_paused(True)
            self.append_log("INFO", "pause requested: IO stops now; the current phase restarts "
                            "from its beginning on resume")

    def resume(self) -> None:
        if self.session and self.running:
            self.session.sequencer.resume()
            self.show_paused(False)
            self.append_log("INFO", "resume requested")

    def show_paused(self, paused: bool) -> None:
        """The header of a running run, paused or not (the buttons follow)."""
        self._set_controls(running=True, paused=paused)
        self.instruments.set_paused(paused)  # not read while paused: not "silent"
        self.state.setText("PAUSED — the current phase restarts on Resume" if paused
                           else "Running")

    def ask_abort(self) -> bool:
        """Abort after confirmation; returns True when the abort was requested."""
        if not self.running:
            return False
        if not self.confirm(self, "Abort the run?",
                            "Abort this run? Everything measured so far stays stored, but the "
                            "run will be marked ABORTED and cannot be continued."):
            return False
        self.abort("aborted by the operator")
        return True

    def abort(self, reason: str) -> None:
        if self.session and self.running:
            self.session.sequencer.abort(reason)
            self._set_controls(running=False)
            self.state.setText("Stopping safely…")
            self.append_log("WARNING", f"abort requested: {reason}")

    def _on_finished(self, e: ev.RunFinished) -> None:
        self.result = e
        self._set_controls(running=False)
        self.home_button.setEnabled(False)  # until the worker has closed the lab and storage
        self.show_verdict(e)
        self._show_outcome(e)
        self._show_results(run_outcome(e.status, e.metrics), None, e.metrics)

    def _show_results(self, verdict: RunVerdict, compliance: ComplianceVerdict | None,
                      metrics: Sequence[ShownMetric]) -> None:
        """The outcome leads the view: the summary tab, shown and current. The cause of a run
        that did not complete is in the header's outcome row already, so not repeated."""
        self.summary.show_result(verdict, compliance, metrics, planned=self.metrics.planned())
        if not self.views.isTabVisible(self.results_tab):  # once: a later refresh keeps the tab
            self.views.setTabVisible(self.results_tab, True)
            self.views.setCurrentIndex(self.results_tab)

    def show_verdict(self, e: ev.RunFinished) -> None:
        """The run's outcome in the header as it ends, worded and coloured as on the start
        page; once the run is stored its record's verdict replaces it (:meth:`show_recorded`)."""
        self._show_state(run_outcome(e.status, e.metrics), e.error)

    def show_recorded(self, summary: RunSummary) -> None:
        """The finished run's outcome as its record has it now — each COM's state derived
        from the record and its audit trail (parity RAID included, a result QA recorded
        since), the same text as the start page, the history, compare and ``runs show`` — and
        its derived compliance in the banner, as the history and the PDF word it."""
        if self.running or self.session is None or summary.run_id != self.session.run_id:
            return
        self._show_state(summary.verdict, summary.error)
        self._show_results(summary.verdict, summary.compliance, summary.metrics)
        # the forecast gives way to the record's verdict, worded as the history and the PDF
        compliance = summary.compliance
        self.banner.setText(compliance.banner() if not compliance.compliant else "")
        self.banner.setToolTip("\n".join(compliance.lines()))
        self.banner.setVisible(not compliance.compliant)

    def _show_state(self, verdict: RunVerdict, error: str) -> None:
        self.state.setText(verdict.text)
        self.state.setStyleSheet(verdict_style(verdict))
        if verdict.tone is not Tone.GOOD:
            self.state.setToolTip(error or "see the metrics table for each INVALID reason "
                                  "and the run's history for each COM's state")

    def _show_outcome(self, e: ev.RunFinished) -> None:
        """A run that did not complete says why in its header, where it cannot be missed;
        the details (a traceback for an unexpected error) are in the event log."""
        if e.status is RunStatus.COMPLETED:
            return
        where = " — details in the event log" if e.status is RunStatus.FAILED else ""
        self.outcome.setText(f"{e.status.value}: {e.error or 'no reason recorded'}{where}")
        colour = "#b03030" if e.status is RunStatus.FAILED else "#b06a00"
        self.outcome.setStyleSheet(f"color: {colour}; font-weight: bold;")
        self.outcome.show()

    def _on_worker_done(self, error: Exception | None = None) -> None:
        """The worker has closed the lab and storage (or failed to: ``error``, shown in the
        header and the log): deliver the last events, end."""
        if self.bridge is not None:
            self.bridge.stop()  # last events
        if self.sender is not None:
            self.sender.request_stop()  # its last push; the label follows it to the end
        self.home_button.setEnabled(True)
        if self.result is None:
            self.result = ev.RunFinished(RunStatus.FAILED, 0.0, error=(
                f"the run failed: {error}" if error else "worker ended without a result"))
            self.show_verdict(self.result)
            self._show_outcome(self.result)
        if error is not None:
            self._show_worker_error(error)
        if self.session is not None:  # the run is stored and closed: offer its reports
            session = self.session
            self.export.set_run(lambda: remember_record_hashes(
                session.database, load_run(session.database, session.run_id)))
        self.ended.emit(self.result)

    def _show_worker_error(self, error: Exception) -> None:
        """The run or its closing raised (the storage could keep it neither in the database
        nor in its journal): never a quiet end."""
        text = f"{type(error).__name__}: {error}"
        self.append_log("ERROR", f"the run's worker failed: {text}")
        shown = "" if self.outcome.isHidden() else f"{self.outcome.text()}\n"
        self.outcome.setText(shown + text)
        self.outcome.setStyleSheet("color: #b03030; font-weight: bold;")
        self.outcome.show()

    # --- events -------------------------------------------------------------------------------
    #: the header, timeline, metrics table and event log; the plots and the instrument strip
    #: have tables of their own
    _events: ClassVar[EventTable[None]] = EventTable("run view")
    _events.ignore(ev.PowerSamples, ev.TemperatureSamples, ev.WorkloadIntervals, ev.HostRates,
                   ev.IntervalClosed, ev.HistogramReady,
                   why="drawn by the live plots and the instrument strip")
    _events.ignore(ev.SearchResult, ev.RangesApplied, ev.RangePlanReady, ev.SteadyStateJudged,
                   why="the run log's line for each says it in the event log")

    def ingest(self, batch: Iterable[ev.RunEvent]) -> None:
        batch = list(batch)
        for event in batch:
            self._events.dispatch(event, self)
        self.plots.ingest(batch)
        self.instruments.ingest(batch)
        self.sweep_plots.ingest(batch)
        self.di_plot.ingest(batch)

    def append_log(self, level: str, message: str) -> None:
        self.log.append_line(f"{level:<7} {message}")

    @_events.on
    def _on_run_started(self, e: ev.RunStarted) -> None:
        method = self.session.method if self.session else None
        self.title.setText(f"Run {e.run_id[:8]} — {e.method_name} {e.method_version}")
        cfg = e.config
        self.subtitle.setText(
            f"{cfg.sut.vendor} {cfg.sut.model} (s/n {cfg.sut.serial}) · taxonomy "
            f"{cfg.taxonomy} · lab {cfg.lab} · started {e.wall_start_iso} · planned "
            f"{format_duration(e.planned_s)}")
        if method is None and e.method_json:
            method = method_from_record(e.method_json)
        # the verdict as far as the set-up decides it (method numbers, instruments,
        # calibration, SUT), labelled a forecast: the record's verdict comes at the end
        verdict = forecast(cfg, method) if method else None
        self.banner.setVisible(verdict is not None and not verdict.compliant)
        self.banner.setText(forecast_text(verdict) if verdict else "")
        self.banner.setToolTip("\n".join(forecast_evidence(verdict)) if verdict else "")
        self.timeline.plan(e.phases)
        self.metrics.plan(method, e.phases)
        self.plots.start_run(e, method)
        if method is not None:
            self.instruments.start(e, method.sample_period_s, method.temperature_period_s)
        self.sweep_plots.start_run(e, method)
        self.di_plot.start_run(e, method)
        self.append_log("INFO", f"run {e.run_id} started, {len(e.phases)} phases")

    @_events.on
    def _on_run_resumed(self, e: ev.RunResumed) -> None:
        """A continuation shows the whole plan; its banner says it can never be compliant."""
        self._on_run_started(e.started)
        r = e.resumption
        self.timeline.kept(r.carried)
        self.banner.setText("NON-COMPLIANT: resumed after interruption (figures for "
                            "engineering only)")
        self.banner.setVisible(True)
        self.append_log("WARNING", f"run {e.started.run_id} resumed (resumption {r.number}) "
                        f"from {e.started.phases[r.restart_phase].name}: {r.interruption}")

    @_events.on
    def _on_instruments_identified(self, e: ev.InstrumentsIdentified) -> None:
        thermo = e.temperature_meter.describe() if e.temperature_meter else "none"
        self.append_log("INFO", f"power meter {e.power_meter.describe()}; thermometer {thermo};"
                        f" workload {e.workload_engine}")
        for i in e.power_inputs:
            self.append_log("INFO", f"power input {i.name}: {i.identity.describe()}, "
                            f"{i.wiring}; accuracy {i.accuracy}")

    @_events.on
    def _on_phase_started(self, e: ev.PhaseStarted) -> None:
        self.timeline.phase_started(e)
        self.append_log("INFO", f"▶ {e.phase.name}")

    @_events.on
    def _on_stabilisation_extended(self, e: ev.StabilisationExtended) -> None:
        self.timeline.stabilisation_extended(e)

    @_events.on
    def _on_phase_finished(self, e: ev.PhaseFinished) -> None:
        self.timeline.phase_finished(e)
        self.append_log("INFO", f"■ {e.phase.name} {e.status.value}"
                        + (f": {e.error}" if e.error else ""))

    @_events.on
    def _on_progress(self, e: ev.Progress) -> None:
        self.timeline.progress(e)

    @_events.on
    def _on_metric_computed(self, e: ev.MetricComputed) -> None:
        self.metrics.add_metric(e.metric)
        m = e.metric
        state = "VALID" if m.valid else f"{not_valid_word(m)} ({m.reason})"
        self.append_log("INFO", f"{m.name} = {format_metric_value(m)} {m.unit} {state}")

    @_events.on
    def _on_log_message(self, e: ev.LogMessage) -> None:
        self.append_log(e.level, e.message)
        if e.message.startswith(STALLED):
            self.storage_banner.setText(f"STORAGE STALLED — {e.message[len(STALLED):].strip()}")
            self.storage_banner.show()
        elif e.message.startswith(RESUMED):
            self.storage_banner.hide()

    @_events.on
    def _on_teardown_failed(self, e: ev.TeardownFailed) -> None:
        self.append_log("WARNING", e.describe())

    @_events.on
    def _on_run_finished(self, e: ev.RunFinished) -> None:
        self.timeline.finished(e, e.t)
        self.metrics.finish(e.status)
        self.append_log("INFO" if e.status is RunStatus.COMPLETED else "WARNING",
                        f"run {e.status.value}" + (f": {e.error}" if e.error else ""))
