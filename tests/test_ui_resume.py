"""The start page offers to resume an INTERRUPTED run, asks first saying what will be redone,
and continues it in its own record (issue 15, "Resume after a crash")."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt

from app.core.records import RunStatus
from app.storage.opening import open_database
from drivers.clock import FakeClock
from tests.support.resume_runs import interrupted_run
from tests.support.gui import RUN_TIMEOUT_MS
from ui.shell.main_window import MainWindow
from app.storage.repository import load_run


@pytest.fixture
def window(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MainWindow:
    monkeypatch.setenv("STORWATT_DATA_DIR", str(tmp_path / "data"))
    asked: list[tuple[str, str]] = []

    def confirm(_parent, title: str, text: str) -> bool:
        asked.append((title, text))
        return True

    window = MainWindow(lab="sim-direct", db_url=f"sqlite:///{tmp_path / 'x.db'}",
                        settings=QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat),
                        confirm=confirm, default_method="smoke", clock=FakeClock())
    window.asked = asked
    qtbot.addWidget(window)
    yield window
    if window.run_view.running:
        window.run_view.abort("test teardown")
        qtbot.waitUntil(lambda: not window.run_view.running, timeout=RUN_TIMEOUT_MS)


@pytest.mark.process
def test_the_start_page_offers_to_resume_an_interrupted_run(qtbot, window: MainWindow) -> None:
    run_id = interrupted_run(window.db_url, "Ready idle")
    window.show_start_page()
    page = window.start_page
    assert page.continue_button.isVisibleTo(window)
    assert page.continue_button.text() == f"Resume interrupted run {run_id[:8]}…"

    with qtbot.waitSignal(window.run_view.ended, timeout=RUN_TIMEOUT_MS) as ended:
        qtbot.mouseClick(page.continue_button, Qt.MouseButton.LeftButton)
    (title, text), = window.asked
    assert title == f"Resume interrupted run {run_id[:8]}?"
    assert "Redone from its beginning: Ready idle\n" in text
    assert "NON-COMPLIANT (resumed after interruption" in text
    assert ended.args[0].status is RunStatus.COMPLETED
    assert "resumed after interruption" in window.run_view.banner.text()
    timeline = window.run_view.timeline.table
    assert timeline.item(7, 2).text() == "COMPLETED: kept from before the interruption"  # SR

    database = open_database(window.db_url)
    try:
        run = load_run(database, run_id)
    finally:
        database.close()
    assert run.status is RunStatus.COMPLETED and len(run.resumptions) == 1
    window.show_start_page()
    assert not page.continue_button.isVisibleTo(window)  # nothing left to resume
