"""Launch the station GUI: one QApplication, the main window, the system's light/dark look,
and stop signals handled like Abort."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget
from pyqtgraph.util.garbage_collector import GarbageCollector

from ui.shell.qt_runtime import QtRuntimeError, check_qt_runtime
from ui.widgets.settings import APPLICATION, ORGANISATION
from ui.shell.signal_watcher import StopSignalWatcher

if TYPE_CHECKING:
    from ui.shell.main_window import MainWindow


def application(argv: Sequence[str] | None = None) -> QApplication:
    """The process's QApplication (created once), named so QSettings finds its file, with
    Python's cycle collection moved to the GUI thread (:func:`collect_in_gui_thread`)."""
    existing = QApplication.instance()
    if existing is not None:
        return existing  # type: ignore[return-value]  # made here, a QApplication
    QApplication.setOrganizationName(ORGANISATION)
    QApplication.setApplicationName(APPLICATION)
    qt_app = QApplication(list(argv or sys.argv[:1]))
    qt_app.garbage_collector = collect_in_gui_thread()  # kept alive with the application
    return qt_app


def collect_in_gui_thread() -> GarbageCollector:
    """Python collects reference cycles in whichever thread allocates past a threshold, and a
    run's sequencer and storage writer threads allocate all the time. So Qt objects in cycles
    were finalised on those threads, and Qt objects must die on the GUI thread: a pyqtgraph
    PlotWidget destroyed on the writer thread waits in ``QWindow::close`` for window-system
    events that only the GUI thread flushes, while holding the interpreter — the test suite
    froze twice that way (py-spy's native stack: ``QWidget::~QWidget`` → ``QWindow::close``
    → ``QWindowSystemInterface::flushWindowSystemEvents`` under ``gc_collect``). pyqtgraph's
    GarbageCollector switches automatic collection off and collects on a GUI-thread timer."""
    return GarbageCollector(interval=1.0)


class FirstPaintExit(QObject):
    """Quits the application once ``window`` has been painted for the first time, printing
    when (``storwatt gui --exit-after-first-paint``, measured by bench/bench_startup.py).

    Watches every widget's paint event application-wide: the first one inside the window
    starts a zero-delay timer, which fires only after Qt's synchronous paint-and-flush pass
    over the whole window, so the time printed is that of a window really on screen."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        QApplication.instance().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt naming)
        if (event.type() == QEvent.Type.Paint and isinstance(watched, QWidget)
                and watched.window() is self._window):
            QApplication.instance().removeEventFilter(self)
            QTimer.singleShot(0, self._painted)
        return False

    def _painted(self) -> None:
        print(f"storwatt gui: first paint at {time.time():.3f} (seconds since the epoch)",
              flush=True)
        QApplication.instance().quit()


def display_problem(env: Mapping[str, str], platform: str = sys.platform) -> str:
    """Why the GUI cannot open a window here ("" when it can). On Linux without DISPLAY or
    WAYLAND_DISPLAY, Qt's xcb plugin aborts the process (SIGABRT) with a message that
    blames libxcb-cursor0 even when it is installed; say what is really missing instead."""
    wanted = env.get("QT_QPA_PLATFORM", "")
    if not platform.startswith("linux") or (wanted and not wanted.startswith(("xcb",
                                                                                "wayland"))):
        return ""
    if env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"):
        return ""
    return ("no display: neither DISPLAY nor WAYLAND_DISPLAY is set (an SSH session without "
            "X forwarding, a service, a container). Open it in a desktop session, or run it "
            "headless on a virtual display: xvfb-run -a storwatt gui (Debian package xvfb); "
            "runs need no window at all: storwatt run --help")


def run_gui(lab: str = "sim", db_url: str | None = None,
            argv: Sequence[str] | None = None, exit_after_first_paint: bool = False) -> int:
    """Open the main window and run the event loop until it closes; returns the exit code."""
    if problem := display_problem(os.environ):
        print(f"storwatt gui: {problem}", file=sys.stderr)
        return 1
    qt_app = application(argv)
    try:
        check_qt_runtime()
    except QtRuntimeError as exc:
        print(f"storwatt gui: {exc}", file=sys.stderr)
        return 1
    from ui.shell.main_window import MainWindow  # after QApplication: pyqtgraph reads the palette

    window = MainWindow(lab=lab, db_url=db_url)
    if exit_after_first_paint:
        FirstPaintExit(window)
    window.show()
    return exec_until_stopped(qt_app, window)


def exec_until_stopped(qt_app: QApplication, window: MainWindow) -> int:
    """Run the event loop until the application quits. A stop signal (service stop, logout,
    Ctrl-C in the launching terminal) aborts the window's run as Abort does, waits for it to
    end (stored, lab released), then quits — with exit code 1 when it cut a run short, as
    ``storwatt run`` does, so a service manager or script sees the run did not complete."""
    watcher = StopSignalWatcher()
    watcher.stop_requested.connect(window.quit_on_signal)
    try:
        code = qt_app.exec()
    finally:
        watcher.uninstall()
    return code or int(window.run_aborted_by_signal)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run_gui())
