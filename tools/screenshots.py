"""Screenshots of every wizard page and of the run view, for docs/gui.md.

``xvfb-run -a -s "-screen 0 1366x768x24" .venv/bin/python -m tools.screenshots docs/screenshots``
drives the real GUI on a throw-away database: fills the wizard as a technician would, starts
the ``smoke`` method on the simulated lab, captures the run mid-run and at its end (after an
export, so the "Saved to …" bar shows), then the start page with the run listed. The windows size
themselves to the screen as on a
lab laptop (``ui/widgets/screen_fit.py``), so the shots show what a 1366×768 screen shows.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings, QSize
from PySide6.QtWidgets import QApplication, QWidget

from app.core.records import PowerInput, RunConfig, SutDescription
from app.station.session import open_session
from drivers.clock import FakeClock
from ui.app import application
from ui.run.bridge import RunBridge
from ui.widgets.screen_fit import fit_to_screen


def wait_until(app: QApplication, condition: Callable[[], bool], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the GUI did not reach the expected state in time")
        app.processEvents()
        time.sleep(0.01)


def settle(app: QApplication, seconds: float = 0.3) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def save(widget: QWidget, folder: Path, name: str) -> Path:
    path = folder / f"{name}.png"
    widget.grab().save(str(path))
    print(path)
    return path


def capture(folder: Path, method: str = "smoke", lab: str = "sim") -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="storwatt-shots-"))
    os.environ["STORWATT_DATA_DIR"] = str(work / "data")
    app = application()
    from ui.shell.main_window import MainWindow

    window = MainWindow(lab=lab, db_url=f"sqlite:///{work / 'shots.db'}",
                        settings=QSettings(str(work / "ui.ini"), QSettings.Format.IniFormat),
                        default_method=method)
    window.show()
    settle(app)
    shots = []
    wizard = window.new_run()
    taxonomy = wizard.taxonomy_page
    answers = {"connectivity": "network", "consumer_component": False,
               "integrated_controller": True, "storage_protection": True,
               "max_drive_count": 50}  # a mid-range array: Online 3
    for name, value in answers.items():
        if name in taxonomy.answer_widgets:
            taxonomy.set_answer(name, value)
    settle(app)
    shots.append(save(wizard, folder, "wizard-1-classification"))
    wizard.next()
    page = wizard.sut_page
    page.vendor.setText("Acme Storage")
    page.model.setText("AS-9000")
    page.serial.setText("AS9-00042")
    page.capacity.setText("7.3")
    page.capacity_unit.setCurrentText("TB")
    page.drive_count.setValue(50)
    page.raid.setCurrentText("RAID 10")  # the COMs shown are the ones ticked below
    page.coms.rows["snapshot-ro"].on.setChecked(True)  # available and on
    page.coms.rows["thin-provisioning"].available.setChecked(True)  # available, off
    page.notes.setPlainText("Rack B4, dual controllers, firmware 5.2")
    settle(app)
    shots.append(save(wizard, folder, "wizard-2-sut"))
    page.drive_count.setValue(60)  # more than the maximum configuration answered on page 1
    settle(app)
    shots.append(save(wizard, folder, "wizard-2-sut-drives-over-max"))
    page.drive_count.setValue(50)
    wizard.next()
    settle(app)
    shots.append(save(wizard, folder, "wizard-3-workload"))
    wizard.next()
    wizard.instruments_page.test_button.click()
    wait_until(app, wizard.instruments_page.test_button.isEnabled)
    settle(app)
    shots.append(save(wizard, folder, "wizard-4-instruments"))
    wizard.next()
    wizard.review_page.operator.setText("J. Technician")
    settle(app)
    shots.append(save(wizard, folder, "wizard-5-review"))
    wizard.accept()
    view = window.run_view
    wait_until(app, lambda: view.metrics.rows() and sum(
        r[-1].startswith(("VALID", "INVALID")) for r in view.metrics.rows()) >= 3
        and view.plots.histograms, timeout_s=120)
    settle(app, 1.0)
    shots.append(save(window, folder, "run-view-mid-run"))
    wait_until(app, lambda: not view.running and view.result is not None, timeout_s=180)
    settle(app, 0.6)
    view.export.export("pdf", work / "report.pdf")  # shows "Saved to …"
    settle(app, 0.3)
    shots.append(save(window, folder, "run-view-completed"))
    window.show_start_page()
    settle(app)
    shots.append(save(window, folder, "start-page"))
    window.close()
    return shots


#: the lab of the per-input screenshot: two single-phase supplies on WT310 simulators, a
#: three-phase shelf on a WT333E simulator (Σ of 3P4W), one supply on a WT333E element
POWER_INPUTS = (PowerInput("psu-a", "sim", "wt310"), PowerInput("psu-b", "sim", "wt310e"),
                PowerInput("shelf-3p", "sim", "wt333e", wiring="3P4W"),
                PowerInput("psu-c", "sim", "wt333e", element=2))


def capture_power_inputs(folder: Path, method: str = "smoke") -> Path:
    """The run view of a simulated run with four power inputs (run-view-power-inputs.png):
    the run goes on a fake clock, then its events are shown as the live view shows them."""
    folder.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="storwatt-shots-"))
    os.environ["STORWATT_DATA_DIR"] = str(work / "data")
    app = application()
    from ui.run.view import RunView

    events: list = []
    session = open_session(RunConfig(method=method, lab="sim", power_inputs=POWER_INPUTS),
                           db_url=f"sqlite:///{work / 'shots.db'}", clock=FakeClock(),
                           listeners=[events.append])
    session.sequencer.run()
    session.writer.close()
    view = RunView(settings=QSettings(str(work / "ui.ini"), QSettings.Format.IniFormat))
    fit_to_screen(view, QSize(1500, 950))  # as the station's window on this screen
    view.show()
    view.ingest(events)
    view.plots.redraw()
    settle(app, 0.6)
    return save(view, folder, "run-view-power-inputs")


def capture_live_hosts(folder: Path, method: str = "smoke") -> Path:
    """The run view mid-phase with two loopback ``fio --server`` load hosts
    (live-hosts.png): real fio, each host's display rate drawn while its phase runs. The
    servers are started here on free ports and killed at the end."""
    import signal
    import socket
    import subprocess

    from ui.run.view import RunView

    folder.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="storwatt-shots-"))
    os.environ["STORWATT_DATA_DIR"] = str(work / "data")
    app = application()
    ports = []
    for _ in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    servers = [subprocess.Popen(["fio", f"--server=ip:127.0.0.1,{p}"], cwd=work,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True) for p in ports]
    try:
        for port in ports:
            listening = lambda: socket.socket().connect_ex(("127.0.0.1", port)) == 0  # noqa: B023, E731 - waited for at once
            wait_until(app, listening, 10)
        sut = SutDescription(targets=(str(work / "target.dat"),),
                             load_hosts=tuple(f"127.0.0.1:{p}" for p in ports))
        bridge = RunBridge()
        session = open_session(RunConfig(method=method, lab="local-fio", sut=sut,
                                         target_size="64M"),
                               db_url=f"sqlite:///{work / 'shots.db'}", listeners=[bridge])
        view = RunView(settings=QSettings(str(work / "ui.ini"), QSettings.Format.IniFormat))
        fit_to_screen(view, QSize(1500, 950))  # as the station's window on this screen
        view.show()
        view.start(session, bridge)
        rates = view.plots.live_rates
        wait_until(app, lambda: view.plots.hosts and sum(
            len(s) for s in rates.series.values()) >= 8 and rates.showing
            and any(len(view.plots.series[f"iops@{h}"]) for h in view.plots.hosts),
            timeout_s=240)
        view.plots.redraw()
        settle(app, 0.6)
        path = save(view, folder, "live-hosts")
        view.abort("screenshot taken")
        wait_until(app, lambda: not view.running, timeout_s=60)
        return path
    finally:
        for server in servers:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m tools.screenshots")
    parser.add_argument("folder", nargs="?", default="docs/screenshots", type=Path)
    parser.add_argument("--lab", default="sim", help="sim (loopback meters) or sim-direct")
    parser.add_argument("--method", default="smoke")
    parser.add_argument("--power-inputs", action="store_true",
                        help="only the run view of a simulated run with four power inputs")
    parser.add_argument("--live-hosts", action="store_true",
                        help="only the run view mid-phase with two loopback fio load hosts")
    args = parser.parse_args()
    if args.power_inputs:
        capture_power_inputs(args.folder, args.method)
    elif args.live_hosts:
        capture_live_hosts(args.folder, args.method)
    else:
        capture(args.folder, args.method, args.lab)
