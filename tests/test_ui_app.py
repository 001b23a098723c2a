"""Launcher, CLI wiring and the start page's station health."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from app.cli.main import build_parser
from ui.cli import COMMAND_GROUPS, gui_command
from ui.shell.health import database_item, fio_item, instruments_item, station_health
from tests.support.time_budget import budget_s

ROOT = Path(__file__).resolve().parent.parent


def test_storwatt_gui_is_a_cli_command() -> None:
    args = build_parser(COMMAND_GROUPS).parse_args(["gui", "--lab", "sim-direct",
                                                    "--db", "sqlite:///x.db"])
    assert args.func is gui_command
    assert (args.lab, args.db) == ("sim-direct", "sqlite:///x.db")


@pytest.mark.process
def test_the_gui_can_report_its_first_paint_and_quit(tmp_path: Path) -> None:
    """The start-up bench's hook: the real entry point, a painted window, exit 0."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "STORWATT_DATA_DIR": str(tmp_path),
           "XDG_CONFIG_HOME": str(tmp_path)}
    before = time.time()
    result = subprocess.run([sys.executable, "-m", "ui.cli", "gui", "--exit-after-first-paint",
                             "--db", f"sqlite:///{tmp_path / 's.db'}"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=budget_s(240))
    assert result.returncode == 0, result.stderr
    painted = float(result.stdout.split("first paint at ")[1].split()[0])
    assert before < painted < time.time()


def test_the_launcher_refuses_a_leaking_qt_binding(qtbot, monkeypatch, capsys) -> None:
    import ui.app
    from ui.shell.qt_runtime import QtRuntimeError

    def leaking() -> None:
        raise QtRuntimeError("PySide6 x loses a reference … <6.12")

    monkeypatch.setattr(ui.app, "check_qt_runtime", leaking)
    assert ui.app.run_gui(db_url="sqlite:///unused.db") == 1
    assert "<6.12" in capsys.readouterr().err


@pytest.mark.process
def test_health_reports_database_fio_and_drivers(tmp_path: Path) -> None:
    items = {i.name: i for i in station_health(f"sqlite:///{tmp_path}/s.db", interrupted=2,
                                               last_meter="wt300 TCPIP::127.0.0.1::1::SOCKET")}
    assert items["Database"].ok and str(tmp_path) in items["Database"].detail
    assert "2 interrupted" in items["Database"].detail
    assert "wt300" in items["Instruments"].detail and "last used" in items["Instruments"].detail
    assert not database_item("sqlite:///x.db", "database is locked").ok
    assert not fio_item(which=lambda _name: None).ok
    assert "not found" in fio_item(which=lambda _name: None).detail
    assert items["Lab database"].ok and "none" in items["Lab database"].detail
    assert "host name" in items["Station"].detail


def test_health_shows_the_station_and_the_lab_sender_s_state() -> None:
    """Issue 26: the sender's state (behind, last success, last error) in station health."""
    from app.storage.sender import SenderState
    from ui.shell.health import lab_item

    url = "postgresql+psycopg://station:secret@lab-db/storwatt"
    failing = lab_item(url, SenderState(url, "2026-11-26T10:00:00Z", "timeout expired", 42))
    assert not failing.ok and "secret" not in failing.detail
    assert "42 events behind" in failing.detail and "timeout expired" in failing.detail
    assert "last success 2026-11-26T10:00:00Z" in failing.detail
    assert lab_item(url, SenderState(url, "2026-11-26T10:00:00Z", "", 0)).ok


@pytest.mark.process
def test_the_start_page_lists_stored_runs_and_health(qtbot, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from app.core.records import RunConfig
    from app.station.session import open_session
    from drivers.clock import FakeClock
    from ui.shell.main_window import MainWindow

    monkeypatch.setenv("STORWATT_DATA_DIR", str(tmp_path / "data"))
    url = f"sqlite:///{tmp_path / 's.db'}"
    session = open_session(RunConfig(method="smoke", lab="sim-direct"), db_url=url,
                           clock=FakeClock())
    session.run()  # a whole smoke run in well under a second on the fake clock
    window = MainWindow(db_url=url, settings=QSettings(str(tmp_path / "ui.ini"),
                                                       QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    page = window.start_page
    assert page.runs.rowCount() == 1
    # the simulated SUT is RAID 6: parity RAID NOT VERIFIED until a technician records it
    assert page.runs.item(0, 1).text() == "COMPLETED — 1 COM NOT VERIFIED"
    assert "NON-COMPLIANT" in page.runs.item(0, 2).text()
    assert "Database" in page.health.text() and "fio" in page.health.text()
    assert url.removeprefix("sqlite:///") in window.statusBar().currentMessage()


@pytest.mark.process
def test_window_state_is_kept_and_ctrl_q_quits(qtbot, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from PySide6.QtCore import Qt

    from ui.shell.main_window import MainWindow

    monkeypatch.setenv("STORWATT_DATA_DIR", str(tmp_path / "data"))
    url = f"sqlite:///{tmp_path / 's.db'}"
    ini = str(tmp_path / "ui.ini")
    first = MainWindow(db_url=url, settings=QSettings(ini, QSettings.Format.IniFormat))
    qtbot.addWidget(first)
    first.show()
    qtbot.waitExposed(first)
    # the whole station fits a 1366 × 768 laptop screen less a 40 px task bar: the per-input
    # plots once made it 877 px tall, and restoring the state then clamped it to the screen
    assert first.minimumSizeHint().height() <= 728, first.minimumSizeHint()
    first.resize(first.minimumSizeHint().width(), first.minimumSizeHint().height() + 30)
    height = first.height()  # the offscreen screen is narrow: width and position get clamped
    assert height != 950  # not the default size
    first.activateWindow()  # shortcuts go to the active window
    qtbot.waitUntil(first.isActiveWindow)
    qtbot.keyClick(first, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not first.isVisible())
    second = MainWindow(db_url=url, settings=QSettings(ini, QSettings.Format.IniFormat))
    qtbot.addWidget(second)
    assert second.height() == height


def test_without_a_display_the_gui_says_so_instead_of_aborting(monkeypatch, capsys) -> None:
    """Issue 28: on Linux without DISPLAY, Qt's xcb plugin aborted the process (SIGABRT)
    blaming libxcb-cursor0; the launcher now stops first and says how to run headless."""
    from ui.app import display_problem, run_gui

    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    assert run_gui() == 1
    err = capsys.readouterr().err
    assert "no display" in err and "xvfb-run -a storwatt gui" in err
    assert display_problem({"DISPLAY": ":0"}, "linux") == ""
    assert display_problem({"WAYLAND_DISPLAY": "wayland-0"}, "linux") == ""
    assert display_problem({"QT_QPA_PLATFORM": "offscreen"}, "linux") == ""
    assert display_problem({"QT_QPA_PLATFORM": "xcb"}, "linux") != ""
    assert display_problem({}, "win32") == ""


def test_drivers_are_named_with_the_models_they_speak_to() -> None:
    """Issue 28: drivers were listed by id only ("wt300", "pw3335")."""
    from ui.wizard.connection import with_models

    detail = instruments_item().detail  # the start page's line (station_health's own test
    # above starts fio for its line: this one needs no process)
    assert "wt300 (WT310" in detail and "pw3335 (PW3335, PW3336, PW3337)" in detail
    assert with_models("sim") == "sim"
