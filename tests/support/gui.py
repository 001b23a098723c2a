"""Driving the station's GUI like a technician: wizard clicks, starting a smoke run on the
simulated lab, waiting for a run event. The windows themselves come from the ``station`` and
``wizard`` fixtures in ``tests/conftest.py``."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWizard

from app.core.records import RunConfig, RunStatus
from app.storage.opening import open_database
from ui.shell.main_window import MainWindow
from app.station.run_entries import RunEntries
from ui.wizard.wizard import NewRunWizard
from app.storage.repository import list_runs
from tests.support.time_budget import budget_ms

#: how long a test waits for a GUI run's event before failing (a run on the station's
#: fake clock takes seconds; the limit only bounds a stuck one)
RUN_TIMEOUT_MS = 90_000
#: where the ``station`` fixture's clock stands still in a smoke run: after MW1's histogram
#: (9 s into the plan), before its end (21 s)
MID_RUN_S = 12.0

#: wizard entries that pass every check
GOOD = RunEntries(taxonomy="online-2", vendor="Acme", model="Array 9", serial="AC-1",
                     capacity="7.3", capacity_unit="TB", drive_count=50, drive_type="HDD",
                     raid="RAID 6", coms=("deduplication",), method="smoke")


def pass_connection_test(qtbot, wizard: NewRunWizard) -> None:
    page = wizard.instruments_page
    qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.test_button.isEnabled(), timeout=budget_ms(10_000))
    assert page.verdict().startswith("passed"), page.result.text()


def click_next(qtbot, wizard: NewRunWizard) -> None:
    """Next, as a technician does it: on the instruments page, after a passed test."""
    if wizard.currentPage() is wizard.instruments_page and not wizard.instruments_page.verdict():
        pass_connection_test(qtbot, wizard)
    qtbot.mouseClick(wizard.button(QWizard.WizardButton.NextButton), Qt.MouseButton.LeftButton)


def fill_sut(qtbot, wizard: NewRunWizard, capacity: str = "7.3") -> None:
    page = wizard.sut_page
    for widget, text in ((page.vendor, "Acme"), (page.model, "Array 9"), (page.serial, "AC-1"),
                         (page.capacity, capacity)):
        widget.clear()
        qtbot.keyClicks(widget, text)


def stored_status(window: MainWindow, run_id: str) -> RunStatus:
    database = open_database(window.db_url)
    try:
        return next(r.status for r in list_runs(database) if r.run_id == run_id)
    finally:
        database.close()


def start_smoke(window: MainWindow) -> str:
    session = window.start_run(RunConfig(method="smoke", lab="sim-direct"))
    assert session is not None
    return session.run_id


def wait_for_event(qtbot, window: MainWindow, kind: type, predicate=lambda e: True):
    seen: list = []

    def collect(batch: list) -> None:
        seen.extend(e for e in batch if isinstance(e, kind) and predicate(e))

    window.run_view.bridge.events.connect(collect)
    qtbot.waitUntil(lambda: bool(seen), timeout=RUN_TIMEOUT_MS)
    window.run_view.bridge.events.disconnect(collect)
    return seen[0]
