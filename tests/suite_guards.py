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
  waited for) are appended to FILE, with its wall and real-time wait seconds: on a
  CPU-starved CI machine, CPU time is what stretches.
* **The real-time budget** (README, "Testing"). A test's *real-time wait* is its wall time
  (setup, call and teardown) less its CPU seconds (its process's threads and the children it
  waited for) less the time its threads stood runnable in the CPU queue
  (``/proc/self/task/*/schedstat``): the seconds it slept, blocked on a socket or waited for a
  timeout, which a loaded machine does not inflate. A test that waits longer than
  ``REALTIME_LIMIT_S`` must carry ``@pytest.mark.realtime("why")``; an unmarked one is named as
  it finishes and listed at the end, and fails the run with ``STORWATT_TEST_BUDGET=strict``
  (CI). Marked tests are listed with their reason. The sum of all waits has a ceiling,
  ``REALTIME_CEILING_S``: a run of the whole suite over it fails. The end of the run prints the
  tests' total wall and CPU seconds and the CPU share of the machine the session used.
* **One time budget** (``tests/support/time_budget.py``). Every limit here is a quiet-machine
  number multiplied by the run's time scale, measured once by the controller before its
  workers start (or ``STORWATT_TEST_TIME_SCALE``): each test's pytest-timeout (the ini's or
  its own ``@pytest.mark.timeout(N)``, so the backstop after it too), the modal-dialog limit,
  the real-time limit and ceiling. A number given in the environment
  (``STORWATT_TEST_REALTIME_CEILING_S`` …) is used as given.
"""

from __future__ import annotations

import faulthandler
import gc
import os
import resource
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

import pytest

from tests.support.time_budget import ENV as TIME_SCALE_ENV
from tests.support.time_budget import budget_s, scale

SLOW_REPORT_S = 30.0
BACKSTOP_MARGIN_S = 60.0  # quiet-machine seconds, scaled where used
#: a test may wait this long in real time without the ``realtime`` marker (quiet machine)
REALTIME_LIMIT_S = 3.0
#: the whole suite's real-time waits together on a quiet machine (docs/performance.md, suite
#: rows); the package tier (``make test-package``) has its own run and so its own sum
REALTIME_CEILING_S = 900.0
_TIMING = "storwatt_timing"
_state: dict[str, Any] = {}
_timings: list[Timing] = []


@dataclass(frozen=True)
class Timing:
    """One test's seconds, measured in the process that ran it (an xdist worker or this one)."""

    nodeid: str
    wall_s: float
    cpu_s: float
    wait_s: float
    reason: str | None  # the realtime marker's reason; None if the test is not marked
    spawned: int = 0  # child processes started, by a test not marked to (fast-tier check)

    @property
    def over_limit(self) -> bool:
        return self.reason is None and self.wait_s > realtime_limit_s()


def _given_or_budget(name: str, quiet_s: float) -> float:
    """The environment's number as given, else the quiet-machine one scaled to this run."""
    given = os.environ.get(name, "").strip()
    return float(given) if given else budget_s(quiet_s)


def realtime_limit_s() -> float:
    return _given_or_budget("STORWATT_TEST_REALTIME_LIMIT_S", REALTIME_LIMIT_S)


def realtime_ceiling_s() -> float:
    return _given_or_budget("STORWATT_TEST_REALTIME_CEILING_S", REALTIME_CEILING_S)


def pytest_configure(config: pytest.Config) -> None:
    """Keep a copy of the real stderr: while a test runs, fd 2 is pytest's capture file, and a
    process that ends there would take the stack with it."""
    _state["stderr_fd"] = os.dup(sys.__stderr__.fileno())
    _state["config"] = config
    _state["session_start"] = time.monotonic()
    scale()  # measured here, in the controller, before any xdist worker inherits it
    _count_child_processes()
    _count_thread_queues()
    gc.disable()  # collected after each test, on this (the main) thread: pytest_runtest_teardown


def pytest_collection_finish(session: pytest.Session) -> None:
    """What the imports and the collection made lives for the whole session: frozen out of the
    collector's sight, a full collection after a Qt test walks only what tests made since
    (230 → … ms each, 27 s of the fast tier's CPU before)."""
    gc.collect()
    gc.freeze()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """A full collection (~35 ms) after a test that had Qt, where cycles of Qt objects come
    from; the young generations only after the others (the whole suite would pay 40 s)."""
    yield
    fixtures = getattr(item, "fixturenames", ())
    gc.collect(2 if "qtbot" in fixtures or "qapp" in fixtures else 1)


def modal_limit_s() -> float:
    return _given_or_budget("STORWATT_TEST_MODAL_LIMIT_S", 20.0)


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


#: markers that keep a test out of ``make test-fast``; a test starting a child process must
#: carry one of them
OUT_OF_FAST_TIER = ("process", "realtime", "slow", "fio")


def _count_child_processes() -> None:
    """Every child process started through ``subprocess`` is counted (``_state["spawned"]``),
    so a test that starts one unmarked — and so would slip into the fast tier — is named."""
    import subprocess

    _state["spawned"] = 0
    original = subprocess.Popen.__init__
    if getattr(original, "_storwatt_counted", False):
        return

    def counted(self, *args, **kwargs):
        _state["spawned"] += 1
        original(self, *args, **kwargs)

    counted._storwatt_counted = True  # type: ignore[attr-defined]  # a marker
    subprocess.Popen.__init__ = counted  # type: ignore[method-assign]  # the guard


def realtime_reason(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("realtime")
    return marker.args[0] if marker else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A real-time test says why it must wait: a bare marker is a collection error. Then the
    longest modules go first (``longest_first``)."""
    bare = [i.nodeid for i in items if (m := i.get_closest_marker("realtime"))
            and not (m.args and isinstance(m.args[0], str) and m.args[0].strip())]
    if bare:
        raise pytest.UsageError("@pytest.mark.realtime needs its reason, e.g. "
                                f"@pytest.mark.realtime(\"a real fio run\"): {', '.join(bare)}")
    items[:] = longest_first(items)
    for item in items:
        _scale_timeout(config, item)


def _scale_timeout(config: pytest.Config, item: pytest.Item) -> None:
    """The test's pytest-timeout limit (its own marker's, else the ini's) times the run's
    scale, as a marker in front of any other: pytest-timeout and the backstop read the
    closest one."""
    marker = item.get_closest_marker("timeout")
    if marker is not None and marker.args:
        quiet = float(marker.args[0])
    else:
        try:
            quiet = float(config.getini("timeout") or 0)
        except ValueError:  # pytest-timeout not loaded: its ini key is unknown
            return
    if quiet > 0:
        kwargs = dict(marker.kwargs) if marker is not None else {}
        kwargs.pop("timeout", None)
        item.add_marker(pytest.mark.timeout(budget_s(quiet), **kwargs), append=False)


def pytest_report_header(config: pytest.Config) -> str:
    return (f"time scale {scale():g} ({TIME_SCALE_ENV}; tests/support/time_budget.py): every "
            "timeout, wait and the real-time ceiling are quiet-machine numbers times this")


#: how much a test's markers say it may cost, heaviest first: the order modules start in
_WEIGHT = (("slow", 3), ("realtime", 2), ("fio", 2), ("process", 1))


def _weight(item: pytest.Item) -> int:
    return max((w for name, w in _WEIGHT if item.get_closest_marker(name)), default=0)


def longest_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """Modules in the order of what their markers say they cost, heaviest first: those with a
    ``slow`` test, then those with a real-time or fio test …, and within each the sum of their
    tests' weights, then their number of tests; each module whole and in its own order.

    Why: ``make test`` hands pytest-xdist whole files (``--dist loadfile``, so a module-scoped
    fixture such as the packaging build is made once, not once per worker that got one of its
    tests) in this order, a file to each worker that is nearly out of work. In collection order
    the packaging build and the crash drills started in the last minutes of a run and one
    worker finished them while the others sat idle; heaviest first, the many short files fill
    the gaps at the end. The order is the same on every worker (xdist checks that the
    collections agree)."""
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    ranked = sorted(modules.values(),
                    key=lambda group: (-max(map(_weight, group)), -sum(map(_weight, group)),
                                       -len(group)))
    return [item for group in ranked for item in group]


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
        before = set(_tasks())
        faulthandler.dump_traceback_later(limit + budget_s(BACKSTOP_MARGIN_S), exit=True,
                                          file=_state["stderr_fd"])
        _state["watchdog_tasks"] = set(_tasks()) - before
    item.stash[_START] = (time.monotonic(), _cpu_s(), _queued_s(), _state.get("spawned", 0))
    try:
        yield
    finally:
        if limit > 0:
            faulthandler.cancel_dump_traceback_later()


_START = pytest.StashKey[tuple[float, float, float, int]]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """The teardown report carries the test's timing to whichever process shows results."""
    outcome = yield
    if call.when != "teardown" or _START not in item.stash:
        return
    wall0, cpu0, queued0, spawned0 = item.stash[_START]
    wall, cpu = time.monotonic() - wall0, _cpu_s() - cpu0
    wait = max(0.0, wall - cpu - (_queued_s() - queued0))
    spawned = _state.get("spawned", 0) - spawned0
    if any(item.get_closest_marker(name) for name in OUT_OF_FAST_TIER):
        spawned = 0
    timing = Timing(item.nodeid, wall, cpu, wait, realtime_reason(item), spawned)
    outcome.get_result().user_properties.append((_TIMING, asdict(timing)))
    cpu_log = os.environ.get("STORWATT_TEST_CPU_LOG")
    if cpu_log:
        with open(cpu_log, "a", encoding="utf-8") as out:
            out.write(f"{cpu:.2f}\t{item.nodeid}\t{wall:.2f}\t{wait:.2f}\n")


def _queued_s() -> float:
    """Seconds this process's threads have stood runnable waiting for a CPU (0 where the
    kernel does not say): the part of the wall time a loaded machine adds. Threads alive now
    are read from ``/proc/self/task``; Python threads that ended are added as they end
    (``_count_thread_queues``), so a run on a worker thread that the test joined counts too.
    The backstop's own watchdog thread, made just before the test starts, is left out: on a
    starved machine it stood runnable all through the test's sleep, and its queue, counted on
    top of the test thread's, cancelled the wait (an unmarked 0.4 s sleep measured 0 s)."""
    total = _state.get("ended_queue_s", 0.0)
    watchdog = _state.get("watchdog_tasks", set())
    for task in _tasks():
        if task not in watchdog:
            total += _schedstat_queue_s(f"/proc/self/task/{task}/schedstat")
    return total


def _tasks() -> list[str]:
    """This process's threads by kernel id ([] where the kernel does not list them)."""
    try:
        return os.listdir("/proc/self/task")
    except OSError:
        return []


def _schedstat_queue_s(path: str) -> float:
    try:
        with open(path, encoding="ascii") as stat:
            return int(stat.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def _count_thread_queues() -> None:
    """A Python thread adds its CPU-queue seconds to ``ended_queue_s`` as it ends."""
    import threading

    _state["ended_queue_s"] = 0.0
    original = threading.Thread._bootstrap_inner  # type: ignore[attr-defined]  # private
    if getattr(original, "_storwatt_counted", False):
        return

    def counted(self):
        try:
            original(self)
        finally:
            _state["ended_queue_s"] += _schedstat_queue_s("/proc/thread-self/schedstat")

    counted._storwatt_counted = True  # type: ignore[attr-defined]  # a marker
    threading.Thread._bootstrap_inner = counted  # type: ignore[attr-defined]  # private


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
    if report.when != "teardown":
        return
    for key, value in report.user_properties:
        if key == _TIMING:
            timing = Timing(**value)
            _timings.append(timing)
            if timing.over_limit and terminal is not None:
                terminal.ensure_newline()
                terminal.write_line(f"[waited {timing.wait_s:.1f} s in real time, not marked "
                                    f"realtime] {timing.nodeid}")


def _strict() -> bool:
    return os.environ.get("STORWATT_TEST_BUDGET", "") == "strict"


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Over the ceiling, a child process started by a test without a marker that keeps it out
    of the fast tier (or, strict, an unmarked wait over the limit): the run fails."""
    if hasattr(session.config, "workerinput") or not _timings:
        return
    total = sum(t.wait_s for t in _timings)
    unmarked = [t for t in _timings if t.over_limit]
    spawners = any(t.spawned for t in _timings)
    if (total > realtime_ceiling_s() or spawners or (unmarked and _strict())) and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or not _timings:
        return
    write = terminalreporter.write_line
    marked = sorted((t for t in _timings if t.reason is not None), key=lambda t: -t.wait_s)
    unmarked = sorted((t for t in _timings if t.over_limit), key=lambda t: -t.wait_s)
    total = sum(t.wait_s for t in _timings)
    terminalreporter.section("real-time budget (README, Testing)")
    write(f"{len(marked)} tests marked realtime, waiting {sum(t.wait_s for t in marked):.0f} s:")
    for t in marked:
        write(f"  {t.wait_s:6.1f} s  {t.nodeid}  — {t.reason}")
    spawners = sorted(t.nodeid for t in _timings if t.spawned)
    if spawners:
        write(f"{len(spawners)} tests started a child process without a marker that keeps "
              f"them out of make test-fast ({', '.join(OUT_OF_FAST_TIER)}); the run fails:")
        for nodeid in spawners:
            write(f"  {nodeid}")
    if unmarked:
        write(f"{len(unmarked)} tests waited over {realtime_limit_s():g} s in real time without "
              "@pytest.mark.realtime(\"why\")"
              + (" (fails with STORWATT_TEST_BUDGET=strict):" if not _strict() else ":"))
        for t in unmarked:
            write(f"  {t.wait_s:6.1f} s  {t.nodeid}")
    ceiling = realtime_ceiling_s()
    verdict = "over the ceiling: the run fails" if total > ceiling else "within"
    said = (f"{ceiling:g} s" if os.environ.get("STORWATT_TEST_REALTIME_CEILING_S", "").strip()
            else f"{REALTIME_CEILING_S:g} s × time scale {scale():g} = {ceiling:.0f} s")
    write(f"real-time waits: {total:.0f} s in all, ceiling {said} — {verdict}")
    wall = time.monotonic() - _state["session_start"]
    cpu = sum(t.cpu_s for t in _timings)
    cores = os.cpu_count() or 1
    workers = getattr(config.option, "numprocesses", None) or 1
    write(f"suite time: {len(_timings)} tests, {wall:.0f} s wall ({workers} worker(s), {cores} "
          f"cores), tests' CPU {cpu:.0f} s, tests' wall {sum(t.wall_s for t in _timings):.0f} s; "
          f"CPU share {cpu / (wall * cores):.0%} of the machine")
