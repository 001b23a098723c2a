"""Every main screen fits a lab laptop (issue 28): at 1366×768 and 1280×720 the window stays
inside the screen's available area and no control (Abort… first of all) lies outside it.

The screens are the offscreen platform's, sized by tests/fixtures/laptop-screens.json
(tests/conftest.py), so each window is clamped against a real available geometry. Runs are
recorded once per module on a fake clock and shown through the views' event interface, so
the whole file waits for no real run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QLabel, QWidget

from app.core.records import RunConfig, RunStatus
from app.sequencer import events as ev
from tests.support.recorded_runs import record_smoke_run
from tests.support.laptop_screens import LAPTOPS, cut_off, laptop_screen, place_on, settle
from tests.support.time_budget import budget_ms
from ui.shell.main_window import MainWindow
from ui.shell.health import HealthItem

#: a reason as long as a real one (a lost meter names its resource, the rule and the fix)
LONG_REASON = ("power meter TCPIP0::192.168.10.41::10001::SOCKET stopped answering after 3 "
               "reconnection attempts (last error: timed out after 2.0 s); every sample "
               "committed before the loss is kept")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[str, list[ev.RunEvent], list[str]]:
    """Two smoke runs on a fake clock in one database: (url, events of the second, ids)."""
    folder = tmp_path_factory.mktemp("laptop")
    url = f"sqlite:///{folder / 'runs.db'}"
    (first, _), (second, events) = record_smoke_run(url), record_smoke_run(url)
    return url, events, [first, second]


@pytest.fixture(params=LAPTOPS)
def station(request, qtbot, tmp_path: Path, recorded, monkeypatch):
    screen = laptop_screen(request.param)
    # the start page's fio line as an installed fio gives it, without starting fio for it
    # (the layout is under test here; tests/test_ui_app.py runs the probe)
    monkeypatch.setattr("ui.shell.health.fio_item",
                        lambda: HealthItem("fio", True, "fio-3.33 at /usr/bin/fio"))
    window = MainWindow(lab="sim-direct", db_url=recorded[0], default_method="smoke",
                        settings=QSettings(str(tmp_path / "ui.ini"),
                                           QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    place_on(window, screen)
    from ui.shell.main_window import PREFERRED_SIZE
    from ui.widgets.screen_fit import fit_to_screen

    fit_to_screen(window, PREFERRED_SIZE)  # as on a first start on this screen
    window.show()
    return window


def test_the_main_window_opens_within_the_screen(station: MainWindow) -> None:
    room = station.screen().availableGeometry()
    assert station.frameGeometry().width() <= room.width()
    assert station.frameGeometry().height() <= room.height()
    assert cut_off(station) == []


def test_a_geometry_saved_on_a_larger_monitor_is_brought_back(station: MainWindow,
                                                              tmp_path: Path) -> None:
    station.resize(1900, 1150)  # as saved on a 1920×1200 monitor
    station.save_state()
    again = MainWindow(lab="sim-direct", db_url=station.db_url, settings=station.settings)
    place_on(again, station.screen())
    again._restore_state()
    again.show()
    try:
        assert cut_off(again) == []
    finally:
        again.close()


def test_every_wizard_page_fits(station: MainWindow, qtbot) -> None:
    """Every page, the review with the whole configuration of a four-input lab and notes."""
    from dataclasses import replace

    from tools.screenshots import POWER_INPUTS
    from app.station.run_entries import entries_from_config

    config = RunConfig(method="smoke", lab="sim-direct", power_inputs=POWER_INPUTS)
    config = replace(config, sut=replace(config.sut, notes="Rack B4, dual controllers, "
                                         "firmware 5.2; " * 4))
    wizard = station.new_run(entries_from_config(config))
    for page in range(5):
        assert cut_off(wizard) == [], f"wizard page {page + 1}"
        if wizard.currentPage() is wizard.instruments_page:
            wizard.instruments_page.test_button.click()
            qtbot.waitUntil(wizard.instruments_page.test_button.isEnabled,
                            timeout=budget_ms(20_000))
        if page < 4:
            wizard.next()
    assert wizard.currentPage() is wizard.review_page
    assert "Power inputs (4, summed)" in wizard.review_page.summary.text()
    wizard.reject()


def _run_view_with(station: MainWindow, events: list[ev.RunEvent]):
    view = station.run_view
    view.clear()
    view.ingest([e for e in events if not isinstance(e, ev.RunFinished)])
    view.plots.redraw()
    station.stack.setCurrentWidget(view)
    return view


def test_the_run_view_keeps_every_control_on_screen(station: MainWindow, recorded) -> None:
    """Running, paused, failed (with a long reason) and completed: Abort… and the rest of the
    header stay inside the window, the long banner wraps instead of widening it."""
    view = _run_view_with(station, recorded[1])
    for state in ("running", "paused"):
        view.show_paused(state == "paused")
        assert view.banner.isVisible()  # smoke's numbers are not the method's: a long banner
        assert cut_off(station) == [], state
        assert view.abort_button.isVisibleTo(station)
    for finished in (ev.RunFinished(RunStatus.FAILED, 9.0, error=LONG_REASON), recorded[1][-1]):
        view = _run_view_with(station, recorded[1])
        view.ingest([finished])
        view._on_finished(finished)
        assert cut_off(station) == [], finished.status


def test_history_detail_and_compare_fit(station: MainWindow, recorded, qtbot) -> None:
    history = station.show_history()
    qtbot.addWidget(history)
    assert cut_off(history) == [], "history list"
    detail = history.open_detail(recorded[2][1])
    assert cut_off(history) == [], "run detail"
    for index in range(detail.tabs.count()):
        detail.tabs.setCurrentIndex(index)
        assert cut_off(history) == [], detail.tabs.tabText(index)
    history.compare(recorded[2])
    assert cut_off(history) == [], "compare"


def test_a_failed_run_says_its_reason_once(station: MainWindow, recorded) -> None:
    """The reason of a FAILED run is in the header's outcome row, not also in the timeline
    (issue 28: "prints the reason twice")."""
    view = _run_view_with(station, recorded[1])
    finished = ev.RunFinished(RunStatus.FAILED, 9.0, error=LONG_REASON)
    view.ingest([finished])
    view._on_finished(finished)
    shown = [label.text() for label in view.findChildren(QLabel) if label.isVisibleTo(view)]
    assert sum(LONG_REASON in text for text in shown) == 1, shown


def test_quitting_closes_the_history_window(station: MainWindow, qtbot) -> None:
    """Issue 28: Ctrl+Q left an open history window running (it has no parent)."""
    history = station.show_history()
    qtbot.addWidget(history)
    assert history.isVisible()
    station.quit_action.trigger()
    assert not station.isVisible() and not history.isVisible()


def test_the_operator_is_required_and_remembered(station: MainWindow, qtbot) -> None:
    """Issue 28: the operator was neither required nor remembered."""
    from app.station.run_entries import entries_from_config

    wizard = station.new_run(entries_from_config(RunConfig(method="smoke", lab="sim-direct")))
    for _ in range(4):
        if wizard.currentPage() is wizard.instruments_page:
            wizard.instruments_page.test_button.click()
            qtbot.waitUntil(wizard.instruments_page.test_button.isEnabled,
                            timeout=budget_ms(20_000))
        wizard.next()
    page = wizard.review_page
    assert wizard.currentPage() is page
    assert page.operator.text() == ""
    assert not page.validatePage() and "operator's name" in page.error.text()
    page.operator.setText("J. Tech")
    station.settings.setValue("last/operator", "J. Tech")  # what starting the run stores
    wizard.reject()
    again = station.new_run(entries_from_config(RunConfig(method="smoke")))
    assert again.entries().operator == "J. Tech"
    again.reject()


def test_the_run_views_splitters_remember_their_sizes(qtbot, tmp_path: Path) -> None:
    """A technician who gives the metrics table more room keeps it in the next run and the
    next start (QSettings), instead of the layout snapping back."""
    from ui.run.view import RunView

    settings = QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat)
    first = RunView(settings=settings)
    qtbot.addWidget(first)
    first.resize(1300, 700)
    first.show()
    plots = first.splitters["plots"]
    sizes = plots.sizes()
    dragged = [sizes[0] - 120, *sizes[1:-1], sizes[-1] + 120]
    plots.setSizes(dragged)
    plots.splitterMoved.emit(dragged[0], 1)  # what a drag of the handle emits
    dragged = plots.sizes()
    again = RunView(settings=settings)
    qtbot.addWidget(again)
    again.resize(1300, 700)
    again.show()
    assert again.splitters["plots"].sizes() == dragged


# --- results first (issue 41) ------------------------------------------------------------------

def _wholly_shown(widget: QWidget, window: QWidget) -> bool:
    """``widget`` lies wholly inside ``window`` and every parent between (nothing scrolled or
    clipped away)."""
    from PySide6.QtCore import QPoint, QRect

    settle()
    rect = QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())
    shown = rect.intersected(window.rect())
    parent = widget.parentWidget()
    while parent is not None and parent is not window:
        shown = shown.intersected(QRect(parent.mapTo(window, QPoint(0, 0)), parent.size()))
        parent = parent.parentWidget()
    return not rect.isEmpty() and shown == rect


def _summary_fits(summary, window: QWidget) -> None:
    table = summary.table
    assert summary.verdict.isVisibleTo(window) and _wholly_shown(summary.verdict, window)
    assert _wholly_shown(table, window), "the metrics are cut off"
    assert table.verticalScrollBar().maximum() == 0, "the metrics scroll"
    header = table.horizontalHeader()
    assert header.sectionViewportPosition(table.columnCount() - 1) \
        + header.sectionSize(table.columnCount() - 1) <= table.viewport().width()
    for row in range(table.rowCount()):  # every row inside the table's viewport
        assert table.rowViewportPosition(row) + table.rowHeight(row) \
            <= table.viewport().height(), table.rows()[row]


def test_a_finished_run_leads_with_its_results(station: MainWindow, recorded) -> None:
    """Issue 41: at the end of a run the metrics were 1½ rows under the plots. Now the Results
    tab takes the view: the verdict and every metric with value, unit and validity, fully
    shown at both laptop sizes with the export buttons; the plots are a tab away."""
    from app.storage.repository import list_runs

    view = _run_view_with(station, recorded[1])
    assert not view.views.isTabVisible(view.results_tab)  # nothing to show while it runs
    finished = recorded[1][-1]
    view.ingest([finished])
    view._on_finished(finished)
    assert view.views.currentIndex() == view.results_tab
    summary = view.summary
    names = [row[0] for row in summary.table.rows()]
    assert set(names) == {m.name for m in finished.metrics} | set(view.metrics.planned())
    assert all(row[3].startswith(("VALID", "INVALID", "NOT VERIFIED")) for row in
               summary.table.rows())
    _summary_fits(summary, station)
    assert _wholly_shown(view.export.pdf_button, station)
    # the record's verdict, compliance criteria with their evidence
    run = next(r for r in list_runs(station.database) if r.run_id == recorded[2][1])
    view._show_results(run.verdict, run.compliance, run.metrics)
    assert summary.criteria.count() == len(run.compliance.failures) > 0
    _summary_fits(summary, station)
    assert cut_off(station) == []
    view.views.setCurrentIndex(view.live_tab)  # plots a click away, kept on a refresh
    view._show_results(run.verdict, run.compliance, run.metrics)
    assert view.views.currentIndex() == view.live_tab


def test_the_history_detail_opens_on_the_summary_with_a_failed_runs_cause(
        station: MainWindow, recorded, qtbot, tmp_path: Path) -> None:
    """Issue 41: a FAILED run's detail did not say why. The detail opens on the same summary,
    its cause in it."""
    from dataclasses import replace

    history = station.show_history()
    qtbot.addWidget(history)
    detail = history.open_detail(recorded[2][1])
    assert detail.tabs.currentWidget() is detail.summary
    _summary_fits(detail.summary, history)
    assert not detail.summary.cause.isVisibleTo(history)  # completed: no cause
    detail.run = replace(detail.run, status=RunStatus.FAILED, error=LONG_REASON)
    detail.show_verdict()
    assert detail.summary.cause.isVisibleTo(history)
    assert LONG_REASON in detail.summary.cause.text()
    assert detail.summary.cause.text().startswith("FAILED: ")


def test_the_history_list_fits_and_its_arrow_follows_the_order(station: MainWindow,
                                                               qtbot) -> None:
    """Issue 41: the Method column was ~700 px (a sideways scroll to Status and QA) and the
    header read "Started (UTC) ▲" over newest-first rows."""
    from PySide6.QtCore import Qt

    history = station.show_history()
    qtbot.addWidget(history)
    settle()
    model = history.model
    started = model.column_index("Started (UTC)")
    horizontal = Qt.Orientation.Horizontal
    assert model.headerData(started, horizontal).endswith("▼")
    stamps = [model.row(r).started_wall for r in range(model.rowCount())]
    assert stamps == sorted(stamps, reverse=True)
    history.sort_by("Started (UTC)", descending=False)
    assert model.headerData(started, horizontal).endswith("▲")
    history.table.sortByColumn(model.column_index("Verdict"), Qt.SortOrder.AscendingOrder)
    assert model.headerData(started, horizontal).endswith("▲")  # a derived column keeps it
    assert "·" in model.data(model.index(0, model.column_index("Method")))
