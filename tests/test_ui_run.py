"""The station end to end: wizard click-through to a completed smoke run on the simulated lab,
pause/resume/abort, closing the window mid-run. Runs are real (simulated SUT, sequencer,
storage) on the station's fake clock (the ``station`` fixture), held mid-run where a test acts
on a running run; assertions are on widgets' data and on the stored run, never on pixels."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox, QWizard

from app.core.records import PhaseStatus, RunConfig, RunStatus
from app.reports.export import export_run
from app.sequencer import events as ev
from app.storage.opening import open_database
from ui.shell.main_window import MainWindow
from tests.support.gui import (RUN_TIMEOUT_MS, click_next, start_smoke, stored_status,
                               wait_for_event)
from tests.support.time_budget import budget_ms
from app.storage.repository import list_runs, load_run

SMOKE_METRICS = {"EP_MW1", "EP_MW2", "EP_RW", "EP_RR", "EP_SW", "EP_SR", "EP_RI"}



@pytest.mark.process
def test_wizard_click_through_to_a_completed_smoke_run(qtbot, station: MainWindow) -> None:
    station.clock.release()  # the run goes to its end
    qtbot.keyClick(station, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)  # Ctrl+N
    wizard = station.wizard
    assert wizard is not None and wizard.isVisible()
    for _ in range(4):
        click_next(qtbot, wizard)
    assert wizard.currentPage() is wizard.review_page
    assert wizard.review_page.config.method == "smoke"
    qtbot.keyClicks(wizard.review_page.operator, "J. Tech")
    view = station.run_view
    with qtbot.waitSignal(view.ended, timeout=RUN_TIMEOUT_MS) as ended:
        qtbot.mouseClick(wizard.button(QWizard.WizardButton.FinishButton),
                         Qt.MouseButton.LeftButton)
    assert ended.args[0].status is RunStatus.COMPLETED
    rows = {r[0]: r for r in view.metrics.rows()}
    assert SMOKE_METRICS <= set(rows)
    for name in SMOKE_METRICS:
        value, unit, validity = rows[name][1], rows[name][2], rows[name][-1]
        assert validity.startswith(("VALID", "INVALID")), (name, validity)
        assert value not in ("", "—") and unit, (name, rows[name])
    assert rows["EP_RI"][2] == "GB/W"
    assert all(s is PhaseStatus.COMPLETED for s in view.timeline.status.values())
    assert view.timeline.run_bar.value() == 100
    # the plots got live data, and the histogram its confidence lines
    assert len(view.plots.curve_data("power")[0]) > 20
    assert len(view.plots.curve_data("ep")[0]) >= 6
    assert len(view.plots.curve_data("histogram")[0]) > 3
    # a line per confidence level the IO count supports (N >= 1/(1 - p)), + the ceiling
    shown = view.plots.histograms[view.plots.hist_choice.currentText()]
    supported = [lvl for lvl in shown.levels() if lvl.shown_ms is not None]
    assert 1 <= len(supported) and len(view.plots.hist_lines) == len(supported) + 1
    assert view.banner.isVisible() and "NON-COMPLIANT" in view.banner.text()
    run_id = view.session.run_id
    assert view.session.config.operator == "J. Tech"
    assert stored_status(station, run_id) is RunStatus.COMPLETED
    qtbot.mouseClick(view.home_button, Qt.MouseButton.LeftButton)
    assert station.stack.currentWidget() is station.start_page
    assert station.start_page.runs.rowCount() == 1
    # the simulated SUT is RAID 6: parity RAID waits for a technician's entry, as the report
    # says, and the run view's header says what the start page says (issue 28)
    assert station.start_page.runs.item(0, 1).text() == "COMPLETED — 1 COM NOT VERIFIED"
    assert view.state.text() == station.start_page.runs.item(0, 1).text()


@pytest.mark.process
def test_pause_resume_then_abort_with_confirmation(qtbot, station: MainWindow) -> None:
    run_id = start_smoke(station)
    view = station.run_view
    wait_for_event(qtbot, station, ev.PowerSamples)
    qtbot.mouseClick(view.pause_button, Qt.MouseButton.LeftButton)
    assert view.resume_button.isEnabled() and not view.pause_button.isEnabled()
    paused = wait_for_event(qtbot, station, ev.PhaseFinished,
                            lambda e: e.error == "paused by the operator")
    assert view.timeline.status[paused.phase.index] is PhaseStatus.ABORTED
    # time stands still from here: the restarted phase cannot end before it is looked at (the
    # pause may have landed in a 1 s phase while the fake clock ran free)
    station.clock.hold_after(0.0)
    qtbot.mouseClick(view.resume_button, Qt.MouseButton.LeftButton)
    restarted = wait_for_event(qtbot, station, ev.PhaseStarted,
                               lambda e: e.phase.index == paused.phase.index)
    assert view.timeline.status[restarted.phase.index] is PhaseStatus.RUNNING
    station.answers.append(False)  # "No": the run goes on
    qtbot.mouseClick(view.abort_button, Qt.MouseButton.LeftButton)
    assert view.running and view.abort_button.isEnabled()
    with qtbot.waitSignal(view.ended, timeout=RUN_TIMEOUT_MS) as ended:
        station.answers.append(True)
        qtbot.mouseClick(view.abort_button, Qt.MouseButton.LeftButton)
    assert ended.args[0].status is RunStatus.ABORTED
    assert "restarted from its beginning" in view.log.toPlainText()
    assert stored_status(station, run_id) is RunStatus.ABORTED


@pytest.mark.process
def test_abort_asks_with_a_real_dialog_defaulting_to_no(qtbot, station: MainWindow) -> None:
    from ui.run.view import ask_yes_no

    station.run_view.confirm = ask_yes_no
    start_smoke(station)
    wait_for_event(qtbot, station, ev.PowerSamples)
    seen = []

    def answer(button: QMessageBox.StandardButton) -> None:
        box = QApplication.activeModalWidget()
        seen.append((box.text(), box.defaultButton() is box.button(QMessageBox.StandardButton.No)))
        box.button(button).click()

    QTimer.singleShot(50, lambda: answer(QMessageBox.StandardButton.No))
    assert station.run_view.ask_abort() is False
    assert seen and "Abort this run" in seen[0][0] and seen[0][1]
    QTimer.singleShot(50, lambda: answer(QMessageBox.StandardButton.Yes))
    with qtbot.waitSignal(station.run_view.ended, timeout=RUN_TIMEOUT_MS):
        assert station.run_view.ask_abort() is True


@pytest.mark.process
def test_closing_mid_run_asks_then_aborts_and_waits_for_the_worker(qtbot, station: MainWindow,
                                                                   tmp_path: Path) -> None:
    run_id = start_smoke(station)
    shown: set[tuple[int, float]] = set()
    station.run_view.bridge.events.connect(lambda batch: shown.update(
        (e.phase_index, x.t) for e in batch if isinstance(e, ev.PowerSamples)
        for x in e.samples))
    wait_for_event(qtbot, station, ev.PowerSamples)
    station.answers.append(False)
    station.close()
    assert station.isVisible() and station.run_view.running  # "No" keeps the run
    station.answers.append(True)
    station.close()
    assert station.isVisible()  # still stopping: the window waits for the worker
    qtbot.waitUntil(lambda: not station.isVisible(), timeout=RUN_TIMEOUT_MS)
    assert not station.run_view.running
    assert station.run_view.result.status is RunStatus.ABORTED
    assert "window was closed" in station.run_view.result.error
    assert stored_status(station, run_id) is RunStatus.ABORTED
    database = open_database(station.db_url)
    stored = load_run(database, run_id)
    assert shown and shown <= set(zip(stored.power.phase_index.tolist(),
                                      stored.power.t.tolist()))  # every sample shown is kept
    reports = export_run(database, run_id, tmp_path / "reports")  # the partial run's reports
    assert reports["pdf"].exists() and reports["xlsx"].exists()
    database.close()
    settings = QSettings(station.settings.fileName(), QSettings.Format.IniFormat)
    assert settings.value("main/geometry") is not None  # window state kept


@pytest.mark.process
def test_a_stored_run_can_be_repeated_with_its_configuration(qtbot, station: MainWindow) -> None:
    config = RunConfig(method="smoke", lab="sim-direct", taxonomy="online-2")
    session = station.start_run(config)
    wait_for_event(qtbot, station, ev.PowerSamples)
    with qtbot.waitSignal(station.run_view.ended, timeout=RUN_TIMEOUT_MS):
        station.run_view.abort("test")
    station.show_start_page()
    station.start_page.runs.selectRow(0)
    assert station.start_page.selected_run_id() == session.run_id
    qtbot.mouseClick(station.start_page.resume_button, Qt.MouseButton.LeftButton)
    wizard = station.wizard
    assert wizard.entries().method == "smoke"
    assert wizard.entries().taxonomy == "online-2"
    assert wizard.sut_page.serial.text() == config.sut.serial


@pytest.mark.process
def test_an_unexpected_error_shows_its_reason_in_the_header_and_its_traceback_in_the_log(
        qtbot, station: MainWindow, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.sequencer.recorder import PhaseRecorder

    def broken(self, samples):
        raise IndexError("list index out of range")

    monkeypatch.setattr(PhaseRecorder, "add_power", broken)
    run_id = start_smoke(station)
    with qtbot.waitSignal(station.run_view.ended, timeout=RUN_TIMEOUT_MS) as ended:
        pass
    assert ended.args[0].status is RunStatus.FAILED
    view = station.run_view
    assert view.outcome.isVisible()
    assert view.outcome.text() == ("FAILED: unexpected error IndexError: list index out of "
                                   "range — details in the event log")
    log = view.log.toPlainText()
    assert "Traceback (most recent call last)" in log and 'raise IndexError("list' in log
    assert stored_status(station, run_id) is RunStatus.FAILED


@pytest.mark.process
def test_a_stop_signal_aborts_the_run_without_asking_then_quits(
        qtbot, station: MainWindow, monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import signal

    from ui.shell.signal_watcher import StopSignalWatcher

    quits: list[bool] = []
    monkeypatch.setattr(QApplication, "quit", staticmethod(lambda: quits.append(True)))
    watcher = StopSignalWatcher()
    watcher.stop_requested.connect(station.quit_on_signal)
    try:
        run_id = start_smoke(station)
        wait_for_event(qtbot, station, ev.PowerSamples)
        station.answers.append(False)  # a question would be answered "No": none is asked
        os.kill(os.getpid(), signal.SIGTERM)
        qtbot.waitUntil(lambda: bool(quits), timeout=RUN_TIMEOUT_MS)
    finally:
        watcher.uninstall()
    assert not station.isVisible() and not station.run_view.running
    assert station.run_view.result.status is RunStatus.ABORTED
    assert "SIGTERM" in station.run_view.result.error
    assert stored_status(station, run_id) is RunStatus.ABORTED
    assert station.answers == [False]


@pytest.mark.process
def test_a_run_the_database_refused_is_announced_and_imported_at_the_next_start(
        qtbot, station: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Database locked for the whole run: the window says the run is in its journal (a dialog,
    once storage is closed), and the next start of the station imports it."""
    import sqlite3

    import app.station.session

    monkeypatch.setattr(app.station.session, "DURABLE_WAIT_S", 1.0)
    station.clock.release()  # the run goes to its end
    holder = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        run_id = start_smoke(station)
        qtbot.waitUntil(lambda: not station.run_view.running and station.run_view.home_button
                        .isEnabled(), timeout=RUN_TIMEOUT_MS)
        qtbot.waitUntil(lambda: station.error_box is not None, timeout=budget_ms(5_000))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    text = station.error_box.text()
    assert "not in the database: run stored in JOURNAL" in text and "db recover" in text
    station.session.database.close()

    restarted = MainWindow(lab="sim-direct", db_url=station.db_url,
                           settings=QSettings(str(tmp_path / "ui2.ini"),
                                              QSettings.Format.IniFormat))
    qtbot.addWidget(restarted)
    assert [r.run_id for r in restarted.database.recovered.imported] == [run_id]
    # the smoke run's simulated SUT is RAID 6: parity RAID waits for a technician's entry,
    # as its report says (issue 28, one COM state everywhere)
    assert restarted.start_page.runs.item(0, 1).text() == "COMPLETED — 1 COM NOT VERIFIED"
    assert stored_status(restarted, run_id) is RunStatus.COMPLETED


def test_the_run_view_shows_the_lab_copy_as_the_sender_reports_it(qtbot) -> None:
    """Issue 26: the sender's state (behind, last error) in the run view."""
    from app.storage.sender import SenderState
    from ui.run.view import RunView

    class Sender:
        running = True
        state = SenderState("postgresql+psycopg://s@lab-db/storwatt", "", "", 12)

    view = RunView(settings=QSettings())
    qtbot.addWidget(view)
    view.sender = Sender()
    view._refresh_lab_copy()
    assert "12 events behind" in view.lab_copy.text() and "sending" in view.lab_copy.text()
    Sender.state = SenderState(Sender.state.lab, "", "timeout expired", 40)
    Sender.running = False
    view._refresh_lab_copy()
    assert "not reaching" in view.lab_copy.text() and "safe on this station" in \
        view.lab_copy.text() and view.lab_copy.toolTip() == "timeout expired"
    assert "b06000" in view.lab_copy.styleSheet() and not view._lab_timer.isActive()


@pytest.mark.process
def test_a_run_view_destroyed_mid_run_aborts_its_run_and_keeps_it(qtbot, tmp_path: Path,
                                                                    monkeypatch) -> None:
    """Issue 31: the run is a ``ui.widgets.worker`` the view owns. A view destroyed mid-run (never
    through the station window, which asks first) used to leave its run going with nobody
    watching; now the run is aborted, stored with its reason, and its thread ends."""
    import threading

    import shiboken6

    from app.station.session import open_session
    from tests.support.clocks import HoldingClock
    from tests.support.gui import MID_RUN_S
    from ui.run.bridge import RunBridge
    from ui.run.view import RunView

    monkeypatch.setenv("STORWATT_DATA_DIR", str(tmp_path / "data"))
    clock = HoldingClock()
    clock.hold_after(MID_RUN_S)
    url = f"sqlite:///{tmp_path / 'v.db'}"
    bridge = RunBridge()
    session = open_session(RunConfig(method="smoke", lab="sim-direct"), db_url=url,
                           listeners=[bridge], clock=clock)
    view = RunView(settings=QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    view.start(session, bridge)
    qtbot.waitUntil(lambda: bridge.received > 0, timeout=RUN_TIMEOUT_MS)
    assert view.running
    thread = next(t for t in threading.enumerate() if t.name == f"run-{session.run_id[:8]}")
    shiboken6.delete(view)
    thread.join(RUN_TIMEOUT_MS / 1000)
    assert not thread.is_alive()  # the run ended (it was held mid-run by the clock)
    database = open_database(url)
    try:
        stored = next(r for r in list_runs(database) if r.run_id == session.run_id)
    finally:
        database.close()
    assert stored.status is RunStatus.ABORTED and "run view was closed" in stored.error


@pytest.mark.process
def test_a_run_whose_worker_raises_says_so_in_the_header_the_log_and_a_dialog(
        qtbot, station: MainWindow, monkeypatch) -> None:
    """Issue 31: a run whose end raised (the storage kept it neither in the database nor in
    its journal) ended with a traceback on stderr only, "worker ended without a result" and
    "stored in <database>"; the run's worker now delivers the exception to the view."""
    from app.station.session import RunSession
    from app.storage.errors import WriterError

    def lost(session: RunSession) -> RunStatus:
        session.close()  # lab and writer closed, as a real failed end leaves them
        session.stored = None  # ... but nothing says where the run is
        raise WriterError("12 events are in neither the database nor the journal")

    monkeypatch.setattr(RunSession, "run", lost)
    with qtbot.waitSignal(station.run_view.ended, timeout=RUN_TIMEOUT_MS) as ended:
        start_smoke(station)
    view = station.run_view
    assert ended.args[0].status is RunStatus.FAILED and not view.running
    text = "WriterError: 12 events are in neither the database nor the journal"
    assert not view.outcome.isHidden() and text in view.outcome.text()
    assert view.outcome.text().startswith("FAILED: the run failed: 12 events")
    assert f"ERROR   the run's worker failed: {text}" in view.log.toPlainText()
    assert "not in the database: its storage failed to close" in station.error_box.text()
