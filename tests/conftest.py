"""Test-wide set-up and the fixtures many test modules share.

Every test gets a private data directory, so no test touches the user's station DB, and
tests are safe beside each other in pytest-xdist workers (``make test`` runs them in
parallel): own temporary folders, own databases, ports from the kernel. Shared helpers live
in ``tests/support/`` (a package), never in another ``test_*`` module.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fio_orphans import no_fio_left_behind
from tests.support.recorded_runs import RecordedRun, pause_once_in, record_run

# the offscreen platform's one screen is 800×800; give it the lab laptops' two screens
# (1366×768, 1280×720) so windows are sized and checked against a real available geometry
# (tests/support/laptop_screens.py). Set before any QApplication exists.
if os.environ.get("QT_QPA_PLATFORM") == "offscreen":
    screens = Path(__file__).parent / "fixtures" / "laptop-screens.json"
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={screens}"

# the tests read argparse's and the station's messages in English whatever the developer's
# locale; and with LANG=C.UTF-8 every one of argparse's ~120 gettext() calls per parser looked
# for a catalogue on disk (85 µs each, 4.8 µs with LANGUAGE=C): the CLI fuzzers, which build
# the parser once per example, spent most of their CPU there
os.environ["LANGUAGE"] = "C"

pytest_plugins = ["tests.suite_guards"]  # stuck dialogs, hard backstop, slow tests, budget

# a data directory for this process before any fixture runs: module- and session-scoped
# fixtures are set up before the per-test one below, and recorded their runs' journals and
# locks in the user's own data folder, shared by every xdist worker at once (and by the
# user's station)
_PROCESS_DATA_DIR = tempfile.mkdtemp(prefix="storwatt-tests-data-")
os.environ["STORWATT_DATA_DIR"] = _PROCESS_DATA_DIR
atexit.register(shutil.rmtree, _PROCESS_DATA_DIR, ignore_errors=True)


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("STORWATT_DATA_DIR", str(tmp_path_factory.mktemp("data")))


@pytest.fixture(autouse=True)
def _no_fio_left_behind(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every test that runs real fio ends with no fio of its own left behind (issue 40: a
    stopped fio job, in a session of its own, outlived its phase with the target open)."""
    if request.node.get_closest_marker("fio") is None:
        yield
        return
    with no_fio_left_behind():
        yield


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's own folder, with the station's data directory inside it."""
    monkeypatch.setenv("STORWATT_DATA_DIR", str(tmp_path / "data"))
    return tmp_path


# --- recorded runs --------------------------------------------------------------------------

@pytest.fixture(scope="session")
def recorded_demo(tmp_path_factory) -> RecordedRun:
    """The default demo run (online-3, deduplication declared), recorded once per session
    (per xdist worker) for the tests that only read it. A test that signs, edits or exports
    into the run's folder records its own with ``record_run``."""
    return record_run(tmp_path_factory.mktemp("recorded-demo") / "run.db")


@pytest.fixture(scope="session")
def recorded_demo_paused(tmp_path_factory) -> RecordedRun:
    """The demo run paused once in RW (the phase restarts): recorded once per session."""
    return record_run(tmp_path_factory.mktemp("recorded-paused") / "run.db",
                      hook=pause_once_in("RW"))


# --- real fio -------------------------------------------------------------------------------

@pytest.fixture
def two_fio_servers(tmp_path: Path) -> Iterator[list[str]]:
    """Two fio servers on free loopback ports, as load hosts ``127.0.0.1:PORT``."""
    from tests.support.fio import fio_servers

    with fio_servers(tmp_path) as hosts:
        yield hosts


# --- the GUI --------------------------------------------------------------------------------

@pytest.fixture
def station(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A main window on a temporary database, data dir and settings file, its runs on a fake
    station clock (``station.clock``, a :class:`tests.support.clocks.HoldingClock`) that
    stands still ``MID_RUN_S`` into the first run, so a test acts on a run surely still
    going; a test that needs the run's end calls ``station.clock.release()`` first. A smoke
    run on the simulated lab then takes about a second instead of its plan's 21 s."""
    from PySide6.QtCore import QSettings

    from tests.support.clocks import HoldingClock
    from tests.support.gui import MID_RUN_S, RUN_TIMEOUT_MS
    from ui.shell.main_window import MainWindow

    clock = HoldingClock()
    clock.hold_after(MID_RUN_S)
    monkeypatch.setenv("STORWATT_DATA_DIR", str(tmp_path / "data"))
    answers: list[bool] = []

    def confirm(_parent, _title, _text) -> bool:
        return answers.pop(0) if answers else True

    window = MainWindow(lab="sim-direct", db_url=f"sqlite:///{tmp_path / 'x.db'}",
                        settings=QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat),
                        confirm=confirm, default_method="smoke", clock=clock)
    window.answers = answers
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    yield window
    if window.run_view.running:  # never leave a worker behind
        window.clock.release()
        window.run_view.abort("test teardown")
        qtbot.waitUntil(lambda: not window.run_view.running, timeout=RUN_TIMEOUT_MS)


@pytest.fixture
def wizard(qtbot, tmp_path: Path):
    """The new-run wizard on the simulated lab, its SUT profiles in the test's folder."""
    from app.station.run_entries import RunEntries
    from ui.wizard.profiles import SutProfileStore
    from ui.wizard.wizard import NewRunWizard

    w = NewRunWizard(entries=RunEntries(method="smoke"), simulated_lab="sim-direct",
                     store=SutProfileStore(tmp_path / "profiles.json"))
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    return w
