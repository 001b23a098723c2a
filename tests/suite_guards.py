"""Guards that keep one stuck test from silently eating the whole CI budget.

The CI run of a336e2c was killed at its 5400 s limit inside ``tests/test_ui_technician.py``
with nothing printed about where the time went (the same suite took 18 min on the build
machine). Three things make such a run say what happened instead:

* **A stuck modal dialog fails its test.** ``QMessageBox.warning()`` and friends run a nested
  Qt event loop in C++. pytest-timeout's signal handler is Python code and only runs when the
  main thread runs Python, so a dialog nobody answers blocks the suite forever. While a Qt
  test runs, a timer (Python code inside that nested loop) closes any modal dialog still open
  after ``STORWATT_TEST_MODAL_LIMIT_S`` (default 20 s) and the test fails naming its title and
  text. Tests that answer a dialog themselves do so within milliseconds.
* **A hard backstop.** If a test outlives pytest-timeout's limit by a minute (the main thread
  is stuck where no Python runs), faulthandler prints every thread's stack and ends the
  process, so CI fails within minutes with the stack instead of at its own limit.
* **Python's cycle collector runs on the main thread only**, after each test. Left automatic,
  it ran in whichever thread allocated past its threshold — a run's storage writer, say — and
  finalised Qt objects left in cycles by earlier tests there; a shown pyqtgraph plot destroyed
  off the GUI thread waits forever in ``QWindow::close`` (py-spy's native stack). That froze
  the suite twice with pytest-timeout unable to act. The station does the same in production
  (``ui.app.collect_in_gui_thread``).
* **Slow tests are named as they finish** (``[slow 42 s] tests/…``), so even a run cut short
  shows where its time went; ``--durations`` lists the slowest at the end. With
  ``STORWATT_TEST_CPU_LOG=FILE`` each test's CPU seconds (this process and the children it
  waited for) are appended to FILE: on a CPU-starved CI machine, CPU time is what stretches.
"""

from __future__ import annotations

import faulthandler
import gc
import os
import resource
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

SLOW_REPORT_S = 30.0
BACKSTOP_MARGIN_S = 60.0
_state: dict[str, Any] = {}


def pytest_configure(config: pytest.Config) -> None:
    """Keep a copy of the real stderr: while a test runs, fd 2 is pytest's capture file, and a
    process that ends there would take the stack with it."""
    _state["stderr_fd"] = os.dup(sys.__stderr__.fileno())
    _state["config"] = config
    gc.disable()  # collected after each test, on this (the main) thread: pytest_runtest_teardown


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """A full collection (~35 ms) after a test that had Qt, where cycles of Qt objects come
    from; the young generations only after the others (the whole suite would pay 40 s)."""
    yield
    fixtures = getattr(item, "fixturenames", ())
    gc.collect(2 if "qtbot" in fixtures or "qapp" in fixtures else 1)


def modal_limit_s() -> float:
    return float(os.environ.get("STORWATT_TEST_MODAL_LIMIT_S", "20"))


class ModalWatch:
    """Closes a modal dialog left open longer than ``limit_s`` and remembers what it said."""

    def __init__(self, limit_s: float) -> None:
        from PySide6.QtCore import QTimer

        self.limit_s = limit_s
        self.closed: list[str] = []
        self._seen: tuple[object, float] | None = None
        self.timer = QTimer()
        self.timer.setInterval(250)
        self.timer.timeout.connect(self.check)
        self.timer.start()

    def check(self) -> None:
        from PySide6.QtWidgets import QApplication, QMessageBox

        modal = QApplication.activeModalWidget()
        if modal is None:
            self._seen = None
            return
        if self._seen is None or self._seen[0] is not modal:
            self._seen = (modal, time.monotonic())
            return
        if time.monotonic() - self._seen[1] < self.limit_s:
            return
        text = modal.text() if isinstance(modal, QMessageBox) else type(modal).__name__
        self.closed.append(f"{modal.windowTitle()!r}: {text}")
        self._seen = None
        modal.reject() if hasattr(modal, "reject") else modal.close()

    def stop(self) -> None:
        self.timer.stop()


@pytest.fixture(autouse=True)
def _no_stuck_modal(request: pytest.FixtureRequest) -> Iterator[None]:
    if "qtbot" not in request.fixturenames:
        yield
        return
    request.getfixturevalue("qapp")
    watch = ModalWatch(modal_limit_s())
    yield
    watch.stop()
    if watch.closed:
        pytest.fail(f"a modal dialog stayed open over {watch.limit_s:g} s and was closed by "
                    f"the suite: {'; '.join(watch.closed)}", pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    try:
        limit = float(item.config.getini("timeout") or 0)
    except ValueError:  # pytest-timeout not loaded: its ini key is unknown
        limit = 0.0
    marker = item.get_closest_marker("timeout")
    if marker and marker.args:
        limit = float(marker.args[0])
    if limit > 0:
        faulthandler.dump_traceback_later(limit + BACKSTOP_MARGIN_S, exit=True,
                                          file=_state["stderr_fd"])
    cpu_before = _cpu_s()
    try:
        yield
    finally:
        if limit > 0:
            faulthandler.cancel_dump_traceback_later()
        cpu_log = os.environ.get("STORWATT_TEST_CPU_LOG")
        if cpu_log:
            with open(cpu_log, "a", encoding="utf-8") as out:
                out.write(f"{_cpu_s() - cpu_before:.2f}\t{item.nodeid}\n")


def _cpu_s() -> float:
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                         resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Runs in the process that shows the results: pytest-xdist's controller gets every
    worker's reports here, a worker's own terminal is not shown."""
    config = _state.get("config")
    if config is None or hasattr(config, "workerinput"):
        return
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    if report.when == "call" and report.duration >= SLOW_REPORT_S and terminal is not None:
        terminal.ensure_newline()
        terminal.write_line(f"[slow {report.duration:.0f} s] {report.nodeid}")
