"""The station's main window: start page ⇄ run view, menus and shortcuts, status bar, and
window state kept in QSettings.

Runs start through :func:`app.station.session.open_session` with a :class:`~ui.run.bridge.RunBridge`
among
the listeners, on the station clock the window was given (``clock``: the monotonic clock in
production; a test passes a :class:`drivers.clock.FakeClock`, or the holding clock of
``tests/support/clocks.py``, so a GUI run on the simulated lab takes seconds of CPU instead of
its plan's real time, exactly as the headless tests call ``open_session(clock=...)``); closing the
window mid-run asks first, then aborts the run and closes only once
the worker thread has finished (so the lab is released and storage flushed).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings, QSize, Qt
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import QApplication, QMainWindow, QMessageBox, QStackedWidget

from app.sequencer.equipment import LabError
from app.method.loader import MethodError
from app.core.paths import default_db_url
from app.core.protected import station_paths
from app.core.records import RunConfig
from app.sequencer import events as ev
from app.station.resume import ResumeRefused, open_resumed_session, prepare_resume
from app.station.session import RunSession, open_session
from app.storage.opening import OpenedDatabase, open_database
from app.storage.errors import StorageError
from app.storage.repository import list_runs, load_run
from app.storage.resumption import resumable_run_ids
from app.storage.range_advisor import AdvisedPlan, RangeAdvisorError, advise
from drivers.clock import Clock
from drivers.interfaces import InstrumentError, WorkloadError
from ui.run.bridge import RunBridge
from ui.widgets.confirm import Confirm, ask_yes_no
from ui.shell.health import station_health
from ui.run.view import RunView
from ui.widgets.screen_fit import fit_to_screen, keep_on_screen
from ui.widgets.settings import station_settings
from ui.shell.start_page import StartPage
from app.station.run_entries import RunEntries, entries_from_config
from app import __version__

if TYPE_CHECKING:  # loaded when first opened: not on the way to the first painted window
    from ui.history.view import HistoryView
    from ui.wizard.wizard import NewRunWizard

RECENT_RUNS = 30
#: what the windows ask for on a large screen; fit_to_screen clamps them to a laptop's
PREFERRED_SIZE, HISTORY_SIZE = QSize(1500, 950), QSize(1500, 900)
START_ERRORS = (MethodError, LabError, KeyError, ValueError, InstrumentError, WorkloadError,
                OSError, ImportError)


class MainWindow(QMainWindow):
    def __init__(self, *, lab: str = "sim", db_url: str | None = None,
                 settings: QSettings | None = None, confirm: Confirm = ask_yes_no,
                 default_method: str = "demo", clock: Clock | None = None) -> None:
        """``clock``: the station clock every run and resumed run of this window runs on;
        ``None`` is the real (monotonic) clock. The seam for tests: a fake clock makes a
        GUI run on the simulated lab as fast as a headless one."""
        super().__init__()
        self.lab = lab
        self.clock = clock
        self.db_url = db_url or default_db_url()
        self.settings = settings or station_settings()
        self.confirm = confirm
        self.default_method = default_method
        self.database: OpenedDatabase | None = None
        self.wizard: NewRunWizard | None = None
        self.session: RunSession | None = None
        self._close_after_run = False
        self._quit_after_run = False
        self.run_aborted_by_signal = False  # the process then exits 1 (ui.app)
        self.setWindowTitle("StorWatt — storage power-efficiency test station")
        self.start_page = StartPage()
        self.run_view = RunView(confirm=confirm, settings=self.settings)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.start_page)
        self.stack.addWidget(self.run_view)
        self.setCentralWidget(self.stack)
        self.start_page.new_run.connect(lambda: self.new_run())
        self.start_page.resume_run.connect(self.repeat_run)
        self.start_page.continue_run.connect(self.resume_interrupted)
        self.start_page.details_requested.connect(self.show_run_details)
        self.run_view.ended.connect(self._run_ended)
        self.run_view.home_requested.connect(self.show_start_page)
        self._build_menus()
        self.run_view.controls_changed.connect(self._run_actions_follow)
        self._run_actions_follow(False, False)
        fit_to_screen(self, PREFERRED_SIZE)  # a laptop gets its screen, never more
        self._restore_state()
        self.refresh()

    # --- menus ------------------------------------------------------------------------------
    def _action(self, menu, text: str, slot, shortcut=None) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(lambda _checked=False: slot())  # never pass 'checked' on
        menu.addAction(action)
        return action

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file = bar.addMenu("&File")
        self.new_action = self._action(file, "&New run…", self.new_run,
                                       QKeySequence.StandardKey.New)
        self.repeat_action = self._action(file, "&Repeat selected run’s set-up…",
                                          self._repeat_selected, "Ctrl+R")
        self.home_action = self._action(file, "&Start page", self.show_start_page, "Ctrl+Home")
        file.addSeparator()
        # the finished run's reports, as the run view's buttons export them (issue 41)
        export = self.run_view.export
        self.export_actions = [
            self._action(file, "Export &PDF…", lambda: export.export("pdf"),
                         QKeySequence.StandardKey.Save),
            self._action(file, "Export &xlsx…", lambda: export.export("xlsx"),
                         QKeySequence.StandardKey.SaveAs),
            self._action(file, "Export &bundle…", lambda: export.export("zip"))]
        if self.export_actions[1].shortcut().isEmpty():  # SaveAs has no key on some desktops
            self.export_actions[1].setShortcut(QKeySequence("Ctrl+Shift+S"))
        export.offered.connect(self._export_actions_follow)
        self._export_actions_follow(export.isVisibleTo(self.run_view))
        file.addSeparator()
        self.quit_action = self._action(file, "&Quit", self.close, QKeySequence.StandardKey.Quit)
        run = bar.addMenu("&Run")
        self.pause_action = self._action(run, "&Pause", self.run_view.pause, "Ctrl+P")
        self.resume_action = self._action(run, "&Resume", self.run_view.resume, "Ctrl+Shift+P")
        self.abort_action = self._action(run, "&Abort…", self.run_view.ask_abort, "Ctrl+.")
        view = bar.addMenu("&View")
        self._action(view, "&Refresh runs and health", self.refresh,
                     QKeySequence.StandardKey.Refresh)
        self._action(view, "&Run view", lambda: self.stack.setCurrentWidget(self.run_view),
                     "Ctrl+2")
        self._action(view, "Run &history…", self.show_history, "Ctrl+H")
        help_menu = bar.addMenu("&Help")
        self._action(help_menu, "&About StorWatt", self._about)
        # Quit must work even from a focused table (QKeySequence.Quit is empty on some desktops)
        if self.quit_action.shortcut().isEmpty():
            self.quit_action.setShortcut(QKeySequence("Ctrl+Q"))

    def _export_actions_follow(self, offered: bool) -> None:
        """File ▸ Export… only while the run view offers a finished run's reports."""
        for action in self.export_actions:
            action.setEnabled(offered)

    def _run_actions_follow(self, running: bool, paused: bool) -> None:
        """The Run menu offers only what the run view's buttons offer (nothing without a run),
        and the status bar says what the header says (it said "running" through a pause)."""
        self.pause_action.setEnabled(running and not paused)
        self.resume_action.setEnabled(running and paused)
        self.abort_action.setEnabled(running)
        if running and self.run_view.session is not None:
            run = self.run_view.session.run_id[:8]
            self.statusBar().showMessage(
                f"Run {run} PAUSED — the current phase restarts on Resume" if paused else
                f"Run {run} running — database {self.db_url}")

    def _about(self) -> None:
        QMessageBox.about(self, "About StorWatt", f"StorWatt {__version__}\nStorage "
                          "power-efficiency test station (SNIA Emerald method).")

    # --- state ------------------------------------------------------------------------------
    def _restore_state(self) -> None:
        geometry = self.settings.value("main/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
            keep_on_screen(self)  # saved on a larger monitor
        state = self.settings.value("main/state")
        if state is not None:
            self.restoreState(state)

    def save_state(self) -> None:
        self.settings.setValue("main/geometry", self.saveGeometry())
        self.settings.setValue("main/state", self.saveState())
        self.settings.sync()

    def refresh(self) -> None:
        """Re-read the recent runs and the station's health."""
        error = ""
        try:
            if self.database is None:
                self.database = open_database(self.db_url)
            runs = list_runs(self.database, limit=RECENT_RUNS)
            resumable = resumable_run_ids(self.database)
        except Exception as exc:  # noqa: BLE001 — storage errors are shown, the GUI stays up
            runs, error, resumable = [], str(exc), set()
        interrupted = len(self.database.interrupted) if self.database else 0
        self.start_page.show_runs(runs, error, resumable)
        for run in runs:  # the finished run on the run view: its record's verdict, as listed
            self.run_view.show_recorded(run)
        self.start_page.show_health(station_health(
            self.db_url, error, interrupted, str(self.settings.value("last/meter", ""))))
        self.statusBar().showMessage(f"Database: {self.db_url}")

    def show_start_page(self) -> None:
        if not self.run_view.running:
            self.refresh()
        self.stack.setCurrentWidget(self.start_page)

    # --- starting runs ----------------------------------------------------------------------
    def show_history(self) -> HistoryView:
        """QA's history window (find, inspect, compare past runs) on this station's database."""
        from ui.history.view import HistoryView

        self.history = HistoryView(url=self.db_url)
        # a COM result or disposition recorded there changes the start page and the run header
        self.history.audited.connect(self._history_audited)
        fit_to_screen(self.history, HISTORY_SIZE)
        self.history.show()
        return self.history

    def _history_audited(self, _run_id: str) -> None:
        if not self.run_view.running:
            self.refresh()

    def show_run_details(self, run_id: str) -> HistoryView:
        """A recent run's details: the history window with that run's tab open."""
        history = self.show_history()
        history.load_detail(run_id)
        return history

    def new_run(self, entries: RunEntries | None = None) -> NewRunWizard | None:
        if self.run_view.running:
            self._run_in_progress()
            return None
        if entries is None:  # the simulated array as a worked example; edit for real SUTs
            entries = replace(entries_from_config(RunConfig(method=self.default_method,
                                                            lab=self.lab)),
                              simulated_lab=self.lab, taxonomy="", classification_reason="")
        if not entries.operator:  # the station's last operator, to confirm or overwrite
            entries = replace(entries, operator=str(self.settings.value("last/operator", "")))
        from ui.wizard.wizard import NewRunWizard

        self.wizard = NewRunWizard(self, entries=entries, simulated_lab=self.lab,
                                   protected=station_paths(self.db_url), confirm=self.confirm,
                                   range_advice=self._range_advice)
        self.wizard.accepted.connect(self._wizard_accepted)
        self.wizard.open()
        return self.wizard

    def _range_advice(self, config: RunConfig) -> AdvisedPlan | None:
        """The range plan of the latest completed run of this SUT, lab and power meter, for
        the review page."""
        if self.database is None:
            return None
        try:
            return advise(self.database, config)
        except (RangeAdvisorError, StorageError):
            return None

    def repeat_run(self, run_id: str) -> NewRunWizard | None:
        """Resume = a new run with the stored run's configuration, reviewed in the wizard."""
        try:
            config = load_run(self.database, run_id).config
        except Exception as exc:  # noqa: BLE001 - storage errors are shown, the GUI stays up
            self.show_error(f"Cannot read run {run_id[:8]}: {exc}")
            return None
        return self.new_run(entries_from_config(config))

    def _repeat_selected(self) -> None:
        run_id = self.start_page.selected_run_id()
        if run_id:
            self.repeat_run(run_id)
        else:
            self.statusBar().showMessage("Select a run in the list first.")

    def resume_interrupted(self, run_id: str) -> RunSession | None:
        """Continue an INTERRUPTED run in its own record (app/station/resume.py), after saying what
        will be redone and what is kept; a run that cannot be resumed says why."""
        if self.run_view.running:
            self._run_in_progress()
            return None
        try:
            plan = prepare_resume(self.database, run_id)
        except (ResumeRefused, StorageError) as exc:
            self.show_error(f"Run {run_id[:8]} cannot be resumed: {exc}")
            return None
        if not self.confirm(self, f"Resume interrupted run {run_id[:8]}?",
                            "\n".join(plan.lines()) + "\n\nResume now?"):
            return None
        bridge = RunBridge()
        try:
            session = open_resumed_session(plan, db_url=self.db_url, listeners=[bridge],
                                           clock=self.clock)
        except (*START_ERRORS, StorageError) as exc:
            bridge.deleteLater()
            self.show_error(f"The run could not be resumed: {exc}")
            return None
        return self._show_session(session, bridge, plan.config)

    def _wizard_accepted(self) -> None:
        config = self.wizard.run_config()  # includes what was typed on the review page
        self.settings.setValue("last/operator", config.operator)
        self.start_run(config)

    def start_run(self, config: RunConfig) -> RunSession | None:
        bridge = RunBridge()
        try:
            session = open_session(config, db_url=self.db_url, listeners=[bridge],
                                   clock=self.clock)
        except START_ERRORS as exc:
            bridge.deleteLater()
            self.show_error(f"The run could not start: {exc}")
            return None
        return self._show_session(session, bridge, config)

    def _show_session(self, session: RunSession, bridge: RunBridge,
                      config: RunConfig) -> RunSession:
        self.session = session
        self.settings.setValue("last/meter", f"{config.power_meter.driver} "
                               f"{config.power_meter.resource}".strip())
        self.stack.setCurrentWidget(self.run_view)
        self.run_view.start(session, bridge)
        self.statusBar().showMessage(f"Run {session.run_id[:8]} running — database "
                                     f"{self.db_url}")
        return session

    def _run_in_progress(self) -> None:
        """A second Start (or Resume) is answered where the technician looks: a dialog, not
        only the status bar (issue 41)."""
        self.show_error("A run is in progress: finish or abort it first (Run menu: Pause, "
                        "Abort…). One station runs one measurement at a time.",
                        QMessageBox.Icon.Information)

    def show_error(self, text: str,
                   icon: QMessageBox.Icon = QMessageBox.Icon.Critical) -> None:
        self.statusBar().showMessage(text)
        box = QMessageBox(icon, "StorWatt", text,
                          QMessageBox.StandardButton.Ok, self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.error_box = box

    def _run_ended(self, result: ev.RunFinished) -> None:
        """The worker has closed storage: say where the run is (the database, or its journal
        when the database could not take it — then as a dialog, it must not be missed)."""
        # no Durability: closing the run raised (the run view's header says what)
        stored = self.session.stored if self.session is not None else None
        where = (stored.message() if stored is not None
                 else "its storage failed to close: see the run's header and event log")
        self.statusBar().showMessage(f"Run {result.status.value}"
                                     + (f": {result.error}" if result.error else "")
                                     + f" — {where}")
        if (stored is None or not stored.in_database) and not self._close_after_run:
            self.show_error(f"Run {result.status.value}, but not in the database: {where}")
        if self._close_after_run:
            self.close()
            if self._quit_after_run:
                QApplication.quit()
        else:
            self.refresh()

    # --- closing ----------------------------------------------------------------------------
    def quit_on_signal(self, reason: str) -> None:
        """A stop signal (service stop, logout): abort the run as Abort does but without asking
        (nobody may be there to answer), wait for the worker to end, then quit."""
        self._quit_after_run = True
        if not self.run_view.running:
            self.close()
            QApplication.quit()
            return
        if self._close_after_run:
            return  # already stopping
        self._close_after_run = True
        self.run_aborted_by_signal = True
        self.run_view.abort(reason)
        self.statusBar().showMessage(f"Stopping the run safely before quitting: {reason}")

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt naming)
        if self.run_view.running:
            event.ignore()
            if self._close_after_run:
                return  # already stopping
            if not self.confirm(self, "Abort the run and quit?",
                                "A run is in progress. Quitting aborts it safely (everything "
                                "measured so far stays stored, marked ABORTED). Quit?"):
                return
            self._close_after_run = True
            self.run_view.abort("the station window was closed")
            self.statusBar().showMessage("Stopping the run safely before closing…")
            return
        self.save_state()
        history = getattr(self, "history", None)  # opened from the View menu, if ever
        if history is not None:
            history.close()  # a top-level window of its own: Quit must not leave it running
        if self.database is not None:
            self.database.close()
        event.accept()

