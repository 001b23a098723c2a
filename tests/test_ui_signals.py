"""The station process under a real Qt event loop (C++): SIGTERM or SIGHUP aborts the run like
Abort, waits for it to be stored, then quits; an idle window quits at once (issue 12 §4)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from app.core.records import RunStatus
from app.storage.opening import open_database
from app.storage.repository import list_runs, load_run
from tests.support.time_budget import budget_s

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

STATION = textwrap.dedent("""
    import sys
    from PySide6.QtCore import QSettings, QTimer
    from app.core.records import RunConfig
    from ui.app import application, exec_until_stopped

    qt_app = application()
    from ui.shell.main_window import MainWindow

    window = MainWindow(lab="sim-direct", db_url=sys.argv[1],
                        settings=QSettings(sys.argv[2], QSettings.Format.IniFormat))
    window.show()
    if sys.argv[3] == "run":
        window.start_run(RunConfig(method="demo", lab="sim-direct"))
    QTimer.singleShot(0, lambda: print("ready", flush=True))  # the loop runs: signals handled
    sys.exit(exec_until_stopped(qt_app, window))
""")


def _station(tmp_path: Path, mode: str) -> tuple[subprocess.Popen, str]:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen",
           "STORWATT_DATA_DIR": str(tmp_path / "data")}
    proc = subprocess.Popen([sys.executable, "-c", STATION, url, str(tmp_path / "ui.ini"), mode],
                            env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
    return proc, url


def _stop(proc: subprocess.Popen, signum: int, exit_code: int) -> str:
    proc.send_signal(signum)
    try:
        _, err = proc.communicate(timeout=budget_s(120))
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == exit_code, (proc.returncode, err)  # quit, not killed
    assert "Traceback" not in err, err
    return err


@pytest.mark.realtime("a real GUI station process stopped by a signal")
@pytest.mark.process
@pytest.mark.parametrize("signum, reason", [(signal.SIGTERM, "SIGTERM"),
                                            (signal.SIGHUP, "SIGHUP")])
def test_a_stop_signal_aborts_the_station_run_then_quits(tmp_path: Path, signum: int,
                                                        reason: str) -> None:
    proc, url = _station(tmp_path, "run")
    time.sleep(3.0)  # a few seconds of measurements
    _stop(proc, signum, exit_code=1)  # the run was cut short, as `storwatt run` says
    database = open_database(url)
    try:
        (summary,) = list_runs(database)
        run = load_run(database, summary.run_id)
    finally:
        database.close()
    assert run.status is RunStatus.ABORTED and reason in run.error
    assert len(run.power) > 0


@pytest.mark.realtime("a real GUI station process stopped by a signal")
@pytest.mark.process
def test_an_idle_station_quits_on_sigterm(tmp_path: Path) -> None:
    proc, _ = _station(tmp_path, "idle")
    _stop(proc, signal.SIGTERM, exit_code=0)  # nothing was running: an orderly quit


BARE_LOOP = textwrap.dedent("""
    import sys
    from PySide6.QtCore import QCoreApplication, QTimer
    from ui.shell.signal_watcher import StopSignalWatcher

    app = QCoreApplication(sys.argv[:1])
    watcher = StopSignalWatcher()
    watcher.stop_requested.connect(lambda reason: (print(reason, flush=True), app.quit()))
    QTimer.singleShot(0, lambda: print("ready", flush=True))
    sys.exit(app.exec())
""")


@pytest.mark.process
def test_the_watcher_wakes_a_loop_that_runs_no_python_code() -> None:
    """Without the wake-up socket a Python handler would wait for Python code to run, which an
    event loop with no Python timers (here: none at all) never does."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.Popen([sys.executable, "-c", BARE_LOOP], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
    time.sleep(0.5)
    _stop(proc, signal.SIGTERM, exit_code=0)
