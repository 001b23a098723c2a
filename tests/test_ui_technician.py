"""The technician's rough edges (issue 17, items 1, 3, 8–11): a new run starts on an empty
view, Enter never starts a run, INVALID is worded and coloured the same everywhere, the
metrics table reads like the report, the finished run exports, the Run menu follows the run."""

from __future__ import annotations

import math

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QWizard

from app.core.records import MetricResult, PhaseInfo, PhaseKind, RunConfig, RunStatus
from app.labs.builder import build_lab
from app.rules.com_verdict import OPEN_STATES
from app.rules.run_outcome import Tone, run_verdict
from app.sequencer import events as ev
from app.storage.stored import KeyMetric, RunSummary
from tests.support.gui import RUN_TIMEOUT_MS, start_smoke, wait_for_event
from tests.support.gui import click_next, pass_connection_test
from tests.support.time_budget import budget_ms
from ui.history.model import status_in_brief
from ui.shell.main_window import MainWindow
from ui.run.metrics_table import MetricsTable
from ui.widgets.report_export import FOLDER_KEY, ReportExportBar
from ui.shell.start_page import StartPage
from ui.widgets.status_style import TONE_COLOURS
from ui.widgets import report_export
from drivers.clock import MonotonicClock
from app.station.run_entries import RunEntries, entries_from_config
from ui.wizard.profiles import SutProfileStore
from ui.wizard.wizard import NewRunWizard
from app.storage.repository import list_runs


def abort_after_histogram(qtbot, window: MainWindow) -> str:
    """A smoke run stopped once it has shown a histogram (and so confidence lines, EPs)."""
    run_id = start_smoke(window)
    wait_for_event(qtbot, window, ev.HistogramReady)
    with qtbot.waitSignal(window.run_view.ended, timeout=RUN_TIMEOUT_MS):
        window.run_view.abort("test")
    return run_id


# --- 1 ----------------------------------------------------------------------------------------
@pytest.mark.process
def test_a_new_run_starts_with_an_empty_run_view(qtbot, station: MainWindow) -> None:
    abort_after_histogram(qtbot, station)
    view = station.run_view
    assert len(view.plots.curve_data("histogram")[0]) and view.plots.hist_lines
    assert view.log.toPlainText() and view.metrics.rowCount()
    start_smoke(station)  # nothing of the new run has been delivered yet
    assert len(view.plots.curve_data("histogram")[0]) == 0
    assert view.plots.hist_lines == [] and view.plots.hist_choice.count() == 0
    assert "No histogram yet" in view.plots.hist_note.text()
    assert view.plots.band_label.text() == ""
    for name in ("power", "ep", "wma", "band_hi", "iops"):
        assert len(view.plots.curve_data(name)[0]) == 0, name
    assert view.log.toPlainText() == ""
    assert view.metrics.rowCount() == 0 and view.timeline.table.rowCount() == 0
    assert not view.export.isVisible()


# --- 2 ----------------------------------------------------------------------------------------
@pytest.fixture
def wire_wizard(qtbot, tmp_path: Path) -> NewRunWizard:
    """The wizard of a station on the default ``sim`` lab (production drivers on loopback
    meter simulators), at the instruments page."""
    wizard = NewRunWizard(entries=entries_from_config(RunConfig(method="smoke")),
                          simulated_lab="sim", store=SutProfileStore(tmp_path / "p.json"))
    qtbot.addWidget(wizard)
    wizard.show()
    for _ in range(3):
        click_next(qtbot, wizard)
    assert wizard.currentPage() is wizard.instruments_page
    return wizard


def test_connection_test_reads_the_meter_the_run_reads(qtbot, wire_wizard) -> None:
    pass_connection_test(qtbot, wire_wizard)
    tested = wire_wizard.instruments_page.result.text()
    lab = build_lab(wire_wizard.run_config(), MonotonicClock())
    try:
        run_meter = lab.power_meter.open().describe()
    finally:
        lab.close()
    assert "WT310" in run_meter and run_meter in tested and "SIM-PM" not in tested


def test_next_needs_a_passed_test_of_the_current_settings_or_a_recorded_override(
        qtbot, wire_wizard) -> None:
    page = wire_wizard.instruments_page
    click_next_plain(qtbot, wire_wizard)
    assert wire_wizard.currentPage() is page and "Test connection" in page.error.text()
    pass_connection_test(qtbot, wire_wizard)
    page.thermo_driver.setCurrentText("none")  # a changed setting makes the result stale
    assert page.result.text() == "Not tested yet." and page.verdict() == ""
    click_next_plain(qtbot, wire_wizard)
    assert wire_wizard.currentPage() is page
    page.override.setChecked(True)
    click_next_plain(qtbot, wire_wizard)
    assert wire_wizard.currentPage() is wire_wizard.review_page
    assert "OVERRIDE" in wire_wizard.review_page.summary.text()
    assert wire_wizard.run_config().instrument_check.startswith("OVERRIDE")
    wire_wizard.back()
    pass_connection_test(qtbot, wire_wizard)  # "none" thermometer: the run records none
    assert "no thermometer" in page.result.text()
    click_next_plain(qtbot, wire_wizard)
    summary = wire_wizard.review_page.summary.text()
    assert "Connection test:</b> passed: power meter" in summary
    assert "WT310" in wire_wizard.run_config().instrument_check


def click_next_plain(qtbot, wizard: NewRunWizard) -> None:
    qtbot.mouseClick(wizard.button(QWizard.WizardButton.NextButton), Qt.MouseButton.LeftButton)


# --- 3 ----------------------------------------------------------------------------------------
def to_review(qtbot, window: MainWindow, entries: RunEntries | None = None):
    wizard = window.new_run(entries)
    for _ in range(4):
        click_next(qtbot, wizard)
    assert wizard.currentPage() is wizard.review_page
    return wizard


@pytest.mark.process
def test_enter_on_the_review_page_never_starts_a_run(qtbot, station: MainWindow) -> None:
    wizard = to_review(qtbot, station)
    operator = wizard.review_page.operator
    operator.setFocus()
    qtbot.keyClicks(operator, "J. Tech")
    qtbot.keyClick(operator, Qt.Key.Key_Return)
    start = wizard.button(QWizard.WizardButton.FinishButton)
    start.setFocus()
    qtbot.keyClick(start, Qt.Key.Key_Enter)
    assert wizard.isVisible() and station.session is None and not station.run_view.running
    assert "click “Start run”" in wizard.review_page.error.text()
    with qtbot.waitSignal(station.run_view.ended, timeout=RUN_TIMEOUT_MS):  # a click starts
        qtbot.mouseClick(start, Qt.MouseButton.LeftButton)
        assert station.session is not None
        station.run_view.abort("test")


@pytest.mark.process
def test_a_compliant_run_asks_with_its_duration_and_end_time(qtbot, station) -> None:
    config = RunConfig(method="emerald-block-v3", lab="sim-direct")
    wizard = to_review(qtbot, station, entries_from_config(config))
    wizard.review_page.operator.setText("J. Tech")  # required (issue 28)
    asked: list[str] = []
    wizard.review_page.confirm = lambda _p, _t, text: asked.append(text) or False
    qtbot.mouseClick(wizard.button(QWizard.WizardButton.FinishButton),
                     Qt.MouseButton.LeftButton)
    assert wizard.isVisible() and station.session is None  # "No" keeps the wizard open
    assert asked and "takes about" in asked[0] and "should end about" in asked[0]
    assert "h" in asked[0].split("takes about")[1].split(" and ")[0]  # hours, not seconds


# --- 4 ----------------------------------------------------------------------------------------
ANSWERS = {"connectivity": "network", "consumer_component": False,
           "integrated_controller": True, "storage_protection": True, "max_drive_count": 50}


@pytest.mark.process
def test_repeating_a_run_restores_its_classification_answers(qtbot, station) -> None:
    first = station.new_run()
    page = first.taxonomy_page
    for name, value in ANSWERS.items():
        page.set_answer(name, value)
    config = replace(first.run_config(), method="smoke", lab="sim-direct")
    first.reject()
    assert config.taxonomy == "online-3" and config.classification_answers["max_drive_count"] == 50
    session = station.start_run(config)
    with qtbot.waitSignal(station.run_view.ended, timeout=RUN_TIMEOUT_MS):
        station.run_view.abort("test")
    station.show_start_page()
    station.start_page.runs.selectRow(0)
    qtbot.mouseClick(station.start_page.resume_button, Qt.MouseButton.LeftButton)
    repeated = station.wizard.taxonomy_page
    assert {k: repeated.answers()[k] for k in ANSWERS} == ANSWERS  # not the defaults
    assert repeated.derived.taxonomy == "online-3"
    assert "kept from the earlier run" not in repeated.derived_label.text()
    assert station.wizard.run_config().classification_answers == config.classification_answers
    station.wizard.reject()
    # double-click = the run's details (in the history window), not a new run
    rect = station.start_page.runs.visualRect(station.start_page.runs.model().index(0, 0))
    viewport = station.start_page.runs.viewport()
    qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=rect.center())  # press, then
    qtbot.mouseDClick(viewport, Qt.MouseButton.LeftButton, pos=rect.center())  # double
    history = station.history
    assert history.isVisible() and history.tabs.count() == 2
    qtbot.waitUntil(lambda: hasattr(history.tabs.widget(1), "run"), timeout=budget_ms(20_000))
    assert history.tabs.widget(1).run.run_id == session.run_id
    history.close()


# --- 6 ----------------------------------------------------------------------------------------
@pytest.fixture
def plots(qtbot):
    from ui.plots.live import LivePlots

    widget = LivePlots(redraw_ms=10_000)
    qtbot.addWidget(widget)
    return widget


def test_time_axes_are_sensible_before_data_and_never_repeat_a_label(plots) -> None:
    for widget in (plots.power_widget, plots.ops_widget, plots.ep_widget):
        axis = widget.getPlotItem().getAxis("bottom")
        assert widget.getPlotItem().vb.viewRange()[0] == [0.0, 60.0]
        assert not axis.autoSIPrefix and "x0.001" not in axis.labelString()
    axis = plots.power_widget.getPlotItem().getAxis("bottom")
    for lo, hi, pixels in ((0, 5, 600), (0, 95, 320), (3, 7 * 3600, 900), (0, 30 * 3600, 1500),
                           (-6.6, 6.6, 400)):
        labels = [text for spacing, values in axis.tickValues(lo, hi, pixels)
                  for text in axis.tickStrings(values, 1.0, spacing)]
        assert len(labels) == len(set(labels)), (lo, hi, labels)


def test_dual_axes_are_keyed_to_their_curves_colours(plots) -> None:
    c = plots.colours
    for widget, left, right in ((plots.power_widget, c.power, c.temperature),
                                (plots.ops_widget, c.iops, c.mibs)):
        item = widget.getPlotItem()
        assert item.getAxis("left").labelStyle["color"] == left
        assert item.getAxis("right").labelStyle["color"] == right
        assert item.getAxis("left").textPen().color().name() == left


def test_level_labels_never_meet_the_ceiling_label(plots) -> None:
    from app.storage.synthetic import run_started

    plots.start_run(run_started(0.0), None)
    # levels bunched right at the ceiling: the case that used to overlap
    plots.ingest([ev.HistogramReady(3, "MW1", {29_000_000: 150_000, 31_000_000: 50_000},
                                    {99.0: 29.0, 99.9: 30.5, 99.99: 31.0, 99.999: 31.0},
                                    30.0, 50_000)])  # 200,000 IOs: all four levels drawn
    *levels, ceiling = plots.hist_lines
    assert len(levels) == 4
    level_rows = [line.label.orthoPos for line in levels]
    assert len(set(level_rows)) == len(levels)  # stacked, one row each
    assert min(level_rows) - ceiling.label.orthoPos >= 0.4  # a wide gap in any plot size


def test_a_restarted_phase_is_drawn_apart_from_its_earlier_attempt(plots) -> None:
    from app.storage.synthetic import run_started

    plots.start_run(run_started(0.0), None)
    phase = PhaseInfo(0, PhaseKind.ACTIVE, "MW1", "MW1", 60.0, 0, 3)

    def intervals(start: float) -> list:
        return [ev.IntervalClosed(_record(start + i)) for i in range(3)]

    plots.ingest([ev.PhaseStarted(phase, 0.0, 1), *intervals(0.0),
                  ev.PhaseStarted(phase, 10.0, 2), *intervals(10.0)])
    plots.redraw()
    x, wma = plots.curve_data("wma")
    gaps = np.flatnonzero(np.isnan(wma))
    assert len(gaps) == 1 and x[gaps[0] - 1] < 10.0 < x[gaps[0] + 1]
    assert [m.label.format for m in plots.restart_markers] == ["MW1 restarted"]


def _record(t: float):
    from app.core.records import IntervalRecord

    return IntervalRecord(0, "MW1", int(t), t, t + 1.0, 500.0, 4, 1000.0, "IOPS", 2.0, 2.0,
                          2.0, True, True)


# --- 7 ----------------------------------------------------------------------------------------
def test_the_histogram_says_what_the_ceiling_means_for_validity(qtbot) -> None:
    from app.method.loader import load_method
    from app.storage.synthetic import run_started
    from ui.plots.live import LivePlots

    plots = LivePlots()
    qtbot.addWidget(plots)
    plots.start_run(run_started(0.0), load_method("emerald-block-v3"))
    plots.ingest([ev.HistogramReady(3, "MW1", {5_000_000: 90_000, 40_000_000: 1194},
                                    {99.0: 35.0}, 30.0, 1194)])
    assert "1,194 IOs above" in plots.hist_note.text()
    note = plots.hist_note.toolTip()  # a hover away: five lines under the plot on a laptop
    assert "(1,194 here)" in note
    assert "ceiling is informational" in note
    assert "AVERAGE response time" in note and "limit (30 ms)" in note
    assert plots.hist_widget.toolTip() and "INVALID" in plots.hist_widget.toolTip()


# --- 8 ----------------------------------------------------------------------------------------
@pytest.mark.process
def test_invalid_metrics_are_worded_and_coloured_the_same_everywhere(qtbot,
                                                                      station) -> None:
    verdict = run_verdict(RunStatus.COMPLETED, 2)
    assert verdict.text == "COMPLETED — 2 metrics INVALID" and verdict.tone is Tone.WARNING
    assert run_verdict(RunStatus.COMPLETED).tone is Tone.GOOD
    assert run_verdict(RunStatus.FAILED, 1).tone is Tone.BAD
    bad_key = KeyMetric("EP_RR", 1.0, "IOPS/W", False, "unstable")
    summary = RunSummary("r" * 32, RunStatus.COMPLETED, "smoke", "1", False, "online-2", "sim",
                         "", "", "SUT", "2026-01-01T00:00:00", None, 60.0, 60.0, "",
                         (bad_key, bad_key._replace(name="EP_RW")))
    page = StartPage()
    qtbot.addWidget(page)
    page.show_runs([summary])
    item = page.runs.item(0, 1)
    assert item.text() == verdict.text
    assert item.foreground().color() == TONE_COLOURS[Tone.WARNING]
    bad = MetricResult("EP_RR", 1.0, "IOPS/W", False, "unstable")
    station.run_view.show_verdict(ev.RunFinished(RunStatus.COMPLETED, 1.0, (bad,)))
    assert station.run_view.state.text() == "COMPLETED — 1 metric INVALID"
    # a COM the lab could not observe waits for the technician's entry: not an INVALID figure
    com = MetricResult("COM_snapshot-ro", math.nan, "ratio", False, "needs the array's "
                       "management interface")
    station.run_view.show_verdict(ev.RunFinished(RunStatus.COMPLETED, 1.0, (bad, com)))
    assert station.run_view.state.text() == "COMPLETED — 1 metric INVALID, 1 COM NOT VERIFIED"
    assert TONE_COLOURS[Tone.WARNING].name() in station.run_view.state.styleSheet()


@pytest.mark.process
def test_start_page_and_history_show_a_stored_run_alike(qtbot, station) -> None:
    run_id = abort_after_histogram(qtbot, station)
    station.show_start_page()
    (summary,) = [r for r in list_runs(station.database) if r.run_id == run_id]
    n = summary.invalid_metrics
    shown = station.start_page.runs.item(0, 1)
    # each COM's state from the record (the SUT's RAID 6: parity RAID NOT VERIFIED, as its
    # report says)
    coms = [v.state for v in summary.coms if v.state in OPEN_STATES]
    assert shown.text() == run_verdict(RunStatus.ABORTED, n, coms).text
    history = station.show_history()
    model = history.model
    status = next(c for c, col in enumerate(model.columns) if col.title == "Status")
    index = model.index(0, status)
    # the list reads in brief to fit a laptop (issue 41); its tooltip holds the same words
    assert model.data(index, Qt.ItemDataRole.ToolTipRole).splitlines()[0] == shown.text()
    assert model.data(index) == status_in_brief(summary)
    assert model.data(index, Qt.ItemDataRole.ForegroundRole).color() == \
        shown.foreground().color()
    history.close()


# --- 9 ----------------------------------------------------------------------------------------
def test_metrics_table_reads_like_the_report(qtbot) -> None:
    table = MetricsTable()
    qtbot.addWidget(table)
    phases = [PhaseInfo(0, PhaseKind.READY_IDLE, "Ready idle", None, 60.0),
              PhaseInfo(1, PhaseKind.ACTIVE, "RR", "RR", 60.0),
              PhaseInfo(2, PhaseKind.ACTIVE, "RW", "RW", 60.0)]
    table.plan(None, phases)
    table.add_metric(MetricResult("EP_RI", 12.317, "GB/W", True, avg_power_w=592.692,
                                  ops_rate=7300.0, ops_unit="GB", phase_index=0))
    table.add_metric(MetricResult("EP_RR", 3.014, "IOPS/W", True, avg_power_w=592.692,
                                  ops_rate=1786.4, ops_unit="IOPS", avg_response_ms=4.567,
                                  phase_index=1))
    table.finish(RunStatus.ABORTED)
    rows = {r[0]: r for r in table.rows()}
    assert "7300" not in rows["EP_RI"][4] and "idle" in rows["EP_RI"][4]
    assert rows["EP_RI"][3] == "592.692"  # three decimals, as the PDF prints it (method-notes §4)
    assert rows["EP_RR"][4] == "1786.400 IOPS"
    assert rows["RR" if "RR" in rows else "EP_RR"][-1] == "VALID"
    assert rows["RW"][-1] == "not measured (aborted)"


# --- 10 ---------------------------------------------------------------------------------------
@pytest.mark.process
def test_the_finished_run_exports_from_the_documents_folder(qtbot, station, tmp_path,
                                                           monkeypatch) -> None:
    abort_after_histogram(qtbot, station)
    bar = station.run_view.export
    assert bar.isVisible()
    proposed: list[Path] = []
    target = tmp_path / "reports"
    target.mkdir()

    def ask(_parent, _caption, start, _filter):
        proposed.append(Path(start))
        return str(target / Path(start).name), ""

    bar.ask = ask
    saved = bar.export("pdf")
    assert saved is not None and saved.is_file() and saved.parent == target
    assert proposed[0].parent == report_export.documents_folder()  # never the checkout
    assert Path.cwd() != proposed[0].parent
    assert f"Saved to {saved}" == bar.saved_label.text() and bar.open_button.isVisible()
    opened: list[Path] = []
    bar.opener = opened.append
    qtbot.mouseClick(bar.open_button, Qt.MouseButton.LeftButton)
    assert opened == [target]
    assert bar.export("xlsx").is_file()
    assert proposed[1].parent == target  # the last folder used
    assert Path(str(station.settings.value(FOLDER_KEY))) == target


def test_export_bar_hides_without_a_run(qtbot, tmp_path) -> None:
    bar = ReportExportBar(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(bar)
    assert bar.isHidden() and bar.export("pdf") is None


# --- 11 ---------------------------------------------------------------------------------------
@pytest.mark.process
def test_run_menu_actions_follow_the_run(qtbot, station: MainWindow) -> None:
    actions = (station.pause_action, station.resume_action, station.abort_action)
    assert not any(a.isEnabled() for a in actions)
    start_smoke(station)
    assert station.pause_action.isEnabled() and station.abort_action.isEnabled()
    assert not station.resume_action.isEnabled()
    wait_for_event(qtbot, station, ev.PowerSamples)
    station.pause_action.trigger()
    assert station.resume_action.isEnabled() and not station.pause_action.isEnabled()
    with qtbot.waitSignal(station.run_view.ended, timeout=RUN_TIMEOUT_MS):
        station.run_view.abort("test")
    assert not any(a.isEnabled() for a in actions)


@pytest.fixture(autouse=True)
def _documents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the export tests out of the real documents folder."""
    docs = tmp_path / "Documents"
    docs.mkdir()
    monkeypatch.setattr("ui.widgets.report_export.documents_folder", lambda: docs)
