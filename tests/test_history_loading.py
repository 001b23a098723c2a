"""Opening a long run in the history loads it in the background (issue 17, item 14): a busy
tab at once, the window's event loop keeps running, the detail replaces the tab when done."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QTimer

from app.storage.opening import open_database
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter
from ui.history import view as history_view
from ui.history.detail import RunDetailView
from ui.history.view import HistoryView
from tests.support.time_budget import budget_ms, budget_s


@pytest.fixture()
def stored(tmp_path):
    database = open_database(f"sqlite:///{tmp_path / 'l.db'}")
    writer = RunWriter(database)
    events = list(full_run())
    for e in events:
        writer(e)
    assert writer.flush(10)
    writer.close()
    yield database, events[0].run_id
    database.close()


def test_a_slow_run_loads_while_the_window_stays_responsive(qtbot, stored,
                                                            monkeypatch) -> None:
    """The load is held (a 24 h run's worth of reading) until the window has proved it
    answers: ``load_detail`` returned with the busy tab and the event loop ticked while the
    run was still unread. A load done on the GUI thread would hold that very thread: no tick
    could come, and the load would end unreleased."""
    database, run_id = stored
    view = HistoryView(database)
    qtbot.addWidget(view)
    real_load = history_view.load_run
    reading, released = threading.Event(), threading.Event()

    def held_load(db, wanted: str):
        reading.set()
        if not released.wait(budget_s(30)):
            raise RuntimeError("the held load was never released")
        return real_load(db, wanted)

    monkeypatch.setattr(history_view, "load_run", held_load)
    ticks: list[bool] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(released.is_set()))
    timer.start(20)
    tab = view.load_detail(run_id)
    assert not released.is_set()  # returned at once: the load cannot have ended
    assert view.tabs.currentWidget() is tab and tab.progress.maximum() == 0  # busy bar
    qtbot.waitUntil(lambda: reading.is_set() and len(ticks) >= 10, timeout=budget_ms(30_000))
    released.set()  # the event loop kept running while the run loaded
    with qtbot.waitSignal(view.detail_opened, timeout=budget_ms(30_000)) as opened:
        pass
    timer.stop()
    detail = opened.args[0]
    assert isinstance(detail, RunDetailView) and detail.run.run_id == run_id
    assert view.tabs.currentWidget() is detail and view.tabs.indexOf(tab) < 0
    assert ticks.count(False) >= 10  # ticks while the load was held


def test_a_run_that_cannot_be_loaded_says_why_in_its_tab(qtbot, stored, monkeypatch) -> None:
    database, run_id = stored
    view = HistoryView(database)
    qtbot.addWidget(view)

    def broken(_db, _wanted: str):
        raise OSError("disk I/O error")

    monkeypatch.setattr(history_view, "load_run", broken)
    tab = view.load_detail(run_id)
    qtbot.waitUntil(lambda: "disk I/O error" in tab.label.text(), timeout=budget_ms(10_000))
    assert tab.progress.isHidden() and view.tabs.currentWidget() is tab


def test_a_tab_closed_while_its_run_loads_is_simply_not_told(qtbot, stored,
                                                             monkeypatch) -> None:
    """Issue 31: the loader's thread emitted on its signal object, a child of the tab; a tab
    closed mid-load had been deleted, and the emit raised on the thread. Now the tab owns a
    ``ui.widgets.worker``: its outcome is dropped, the thread ends, nothing raises anywhere."""
    import shiboken6

    database, run_id = stored
    view = HistoryView(database)
    qtbot.addWidget(view)
    loading, release = threading.Event(), threading.Event()
    real_load = history_view.load_run

    def held_load(db, wanted: str):
        loading.set()
        release.wait(5.0)
        return real_load(db, wanted)

    monkeypatch.setattr(history_view, "load_run", held_load)
    raised: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", raised.append)
    opened: list[object] = []
    view.detail_opened.connect(opened.append)
    tab = view.load_detail(run_id)
    assert loading.wait(5.0)
    thread = next(t for t in threading.enumerate() if t.name == "run-loader")
    view.tabs.tabCloseRequested.emit(view.tabs.indexOf(tab))  # the tab's ✕
    qtbot.waitUntil(lambda: not shiboken6.isValid(tab), timeout=budget_ms(5000))
    release.set()
    thread.join(5.0)
    qtbot.wait(50)  # the GUI thread takes the (dropped) outcome
    assert not thread.is_alive() and not raised and not opened and view.tabs.count() == 1
