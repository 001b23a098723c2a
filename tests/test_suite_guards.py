"""The suite's own guards (tests/suite_guards.py): a modal dialog nobody answers fails its test
within seconds instead of blocking CI, and a test stuck where Python never runs ends the
process with its stack."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from tests.support.time_budget import budget_s

pytest_plugins = ["pytester"]
HERE = Path(__file__).parent
#: the budget tests compute and sleep for real: a limit that a loaded machine cannot hit
LOADED_INI = "[pytest]\nqt_api = pyside6\ntimeout = 120\n"


@pytest.fixture
def guarded(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    shutil.copy(HERE / "suite_guards.py", pytester.path / "suite_guards.py")
    pytester.makeconftest('pytest_plugins = ["suite_guards"]\n')
    pytester.makeini("[pytest]\nqt_api = pyside6\ntimeout = 3\n")
    monkeypatch.setenv("STORWATT_TEST_MODAL_LIMIT_S", "1")
    # the inner runs are not the suite: its CPU log and budget settings stay out
    monkeypatch.delenv("STORWATT_TEST_CPU_LOG", raising=False)
    for name in ("STORWATT_TEST_BUDGET", "STORWATT_TEST_REALTIME_LIMIT_S",
                 "STORWATT_TEST_REALTIME_CEILING_S"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    # the guards import the time budget (tests/support/time_budget.py) from this checkout
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [
        str(HERE.parent), os.environ.get("PYTHONPATH", "")])))
    return pytester


@pytest.mark.process
def test_an_unanswered_message_box_fails_its_test_and_the_suite_goes_on(guarded) -> None:
    guarded.makepyfile(test_modal="""
        from PySide6.QtWidgets import QMessageBox, QWidget

        def test_export_error_box(qtbot):
            parent = QWidget()
            qtbot.addWidget(parent)
            QMessageBox.warning(parent, "Export failed", "disk full")  # nobody answers

        def test_next(qtbot):
            assert True
        """)
    # the dialog guard closes it after its limit (20 s, scaled): the run ends well within the
    # patience (60 s on a quiet machine, scaled); pytest-timeout's limit would not
    result = guarded.runpytest_subprocess("-p", "no:cacheprovider", timeout=budget_s(60))
    result.assert_outcomes(passed=2, errors=1)  # failed at its teardown
    result.stdout.fnmatch_lines(["*modal dialog stayed open*'Export failed': disk full*"])


@pytest.mark.process
def test_a_test_stuck_outside_python_ends_the_process_with_its_stack(guarded) -> None:
    guarded.makeini("[pytest]\nqt_api = pyside6\ntimeout = 1\n")  # backstop after 2 s
    guarded.makepyfile(test_stuck="""
        import signal, suite_guards, time
        suite_guards.BACKSTOP_MARGIN_S = 1.0

        def test_blocked():
            # a C++ wait never lets pytest-timeout's SIGALRM handler run; blocking the signal
            # does the same to a plain sleep
            signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
            time.sleep(30)
        """)
    # the backstop ends it after 2 s (scaled), within the patience: 25 s on a quiet machine,
    # less than the 30 s sleep, which, had it ended by itself, would have passed (ret 0)
    result = guarded.runpytest_subprocess("-p", "no:cacheprovider", timeout=budget_s(25))
    assert result.ret != 0
    assert "test_blocked" in result.stderr.str() and "Timeout" in result.stderr.str()


@pytest.mark.process
def test_a_slow_test_is_named_as_it_finishes(guarded) -> None:
    guarded.makepyfile(test_slow="""
        import suite_guards, time
        suite_guards.SLOW_REPORT_S = 0.2

        def test_takes_a_while():
            time.sleep(0.3)
        """)
    result = guarded.runpytest_subprocess("-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*[[]slow 0 s[]] test_slow.py::test_takes_a_while*"])


@pytest.mark.process
def test_qt_garbage_of_one_test_is_finalised_on_the_main_thread_before_the_next(guarded) -> None:
    guarded.makeini(LOADED_INI)  # the allocations take seconds on a loaded machine
    guarded.makepyfile(test_gc="""
        import threading, weakref
        import pyqtgraph as pg

        died_on = []

        def allocate_on_a_worker():
            worker = threading.Thread(target=lambda: [[object()] for _ in range(300_000)])
            worker.start()
            worker.join(30)

        def test_leaves_a_shown_plot_in_a_cycle(qtbot):
            plot = pg.PlotWidget()
            plot.show()
            plot.cycle = plot
            weakref.finalize(plot, lambda: died_on.append(threading.current_thread().name))
            del plot
            allocate_on_a_worker()
            assert died_on == []  # not on the worker: nothing is collected automatically

        def test_the_next_test_finds_it_finalised_on_the_main_thread():
            allocate_on_a_worker()
            assert died_on == ["MainThread"]  # at the teardown of the test that left it
        """)
    result = guarded.runpytest_subprocess("-p", "no:cacheprovider", timeout=budget_s(120))
    result.assert_outcomes(passed=2)


@pytest.mark.process
def test_the_budget_names_an_unmarked_wait_lists_marked_ones_and_sums_them(guarded,
                                                                         monkeypatch) -> None:
    guarded.makeini(LOADED_INI)
    monkeypatch.setenv("STORWATT_TEST_REALTIME_LIMIT_S", "0.2")
    guarded.makepyfile(test_waits="""
        import threading, time, pytest

        def test_sleeps_unmarked():
            time.sleep(0.4)

        @pytest.mark.realtime("a real timeout at its short limit")
        def test_sleeps_marked():
            time.sleep(0.4)

        def test_computes():
            sum(i * i for i in range(3_000_000))  # CPU, not waiting: never over the limit

        def test_computes_on_a_worker_thread():  # CPU the main thread waits for: not a wait
            worker = threading.Thread(target=lambda: sum(i * i for i in range(3_000_000)))
            worker.start()
            worker.join()
        """)
    result = guarded.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)
    assert result.ret == 0  # reported, not failed: the run is not strict
    result.stdout.fnmatch_lines([
        "*[[]waited 0.* s in real time, not marked realtime[]] test_waits.py::test_sleeps_unmarked",
        "*1 tests marked realtime*",
        "*test_waits.py::test_sleeps_marked*a real timeout at its short limit",
        "*1 tests waited over 0.2 s in real time without*",
        "*real-time waits: * s in all, ceiling 900 s*within",
        "*suite time: 4 tests, * s wall*CPU share*"])
    assert "test_computes" not in result.stdout.str().split("real-time budget")[1]


@pytest.mark.process
def test_strict_fails_on_an_unmarked_wait_and_a_ceiling_fails_any_run(guarded,
                                                                     monkeypatch) -> None:
    guarded.makeini(LOADED_INI)
    guarded.makepyfile(test_waits="""
        import time, pytest

        @pytest.mark.realtime("the reason")
        def test_sleeps_marked():
            time.sleep(0.4)
        """)
    monkeypatch.setenv("STORWATT_TEST_REALTIME_CEILING_S", "0.2")
    over = guarded.runpytest_subprocess("-p", "no:cacheprovider")
    over.assert_outcomes(passed=1)
    assert over.ret == pytest.ExitCode.TESTS_FAILED
    over.stdout.fnmatch_lines(["*over the ceiling: the run fails*"])
    monkeypatch.setenv("STORWATT_TEST_REALTIME_CEILING_S", "600")
    monkeypatch.setenv("STORWATT_TEST_REALTIME_LIMIT_S", "0.2")
    monkeypatch.setenv("STORWATT_TEST_BUDGET", "strict")
    guarded.makepyfile(test_waits="""
        import time

        def test_sleeps_unmarked():
            time.sleep(0.4)
        """)
    strict = guarded.runpytest_subprocess("-p", "no:cacheprovider")
    strict.assert_outcomes(passed=1)
    assert strict.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.process
def test_a_child_process_started_by_an_unmarked_test_fails_the_run(guarded) -> None:
    """The fast tier starts no process (README, "Testing"): a test that does must say so with
    a marker that keeps it out, or the run fails naming it."""
    guarded.makeini(LOADED_INI)
    guarded.makepyfile(test_spawns="""
        import subprocess, sys, pytest

        @pytest.mark.process
        def test_starts_one_marked():
            subprocess.run([sys.executable, "-c", "pass"], check=True)

        def test_starts_one_unmarked():
            subprocess.run([sys.executable, "-c", "pass"], check=True)
        """)
    result = guarded.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*1 tests started a child process without a marker*fails*",
                                 "*test_spawns.py::test_starts_one_unmarked"])
    assert "test_starts_one_marked" not in result.stdout.str().split("real-time budget")[1]


@pytest.mark.process
def test_the_backstops_watchdog_queue_never_cancels_a_tests_wait(guarded,
                                                                   monkeypatch) -> None:
    """On a starved machine the backstop's watchdog thread, made as the test starts, stood
    runnable through the test's sleep; its queue was counted too and an unmarked 0.4 s sleep
    measured 0 s (a CI run failed this file's strict test so). Here the watchdog says it
    queued 10 s: the test's own 0.5 s wait must still count."""
    guarded.makeini(LOADED_INI)
    monkeypatch.setenv("STORWATT_TEST_REALTIME_LIMIT_S", "0.2")
    monkeypatch.setenv("STORWATT_TEST_BUDGET", "strict")
    guarded.makepyfile(test_waits="""
        import os, threading, time
        import suite_guards

        def test_sleeps_while_the_watchdog_queues():
            python_threads = {str(t.native_id) for t in threading.enumerate()}
            others = set(os.listdir("/proc/self/task")) - python_threads
            assert others, "the backstop's watchdog thread is running"
            real = suite_guards._schedstat_queue_s
            suite_guards._schedstat_queue_s = lambda path: (
                10.0 if path.split("/")[-2] in others else real(path))
            time.sleep(0.5)
        """)
    result = guarded.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*[[]waited 0.* s in real time, not marked realtime[]]*"])


@pytest.mark.process
def test_a_realtime_marker_without_its_reason_is_refused(guarded) -> None:
    guarded.makepyfile(test_bare="""
        import pytest

        @pytest.mark.realtime
        def test_bare():
            pass
        """)
    result = guarded.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*realtime needs its reason*test_bare.py::test_bare*"])


@pytest.mark.process
def test_the_budget_reaches_the_summary_from_xdist_workers(guarded) -> None:
    guarded.makeini(LOADED_INI)
    guarded.makepyfile(test_waits="""
        import time, pytest

        @pytest.mark.realtime("a worker's wait")
        @pytest.mark.parametrize("n", range(2))
        def test_sleeps_marked(n):
            time.sleep(0.3)
        """)
    result = guarded.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*2 tests marked realtime*", "*suite time: 2 tests*"])


class _Item:
    """What ``longest_first`` reads of a collected test: its node id and its markers."""

    def __init__(self, nodeid: str, *markers: str) -> None:
        self.nodeid, self.markers = nodeid, markers

    def get_closest_marker(self, name: str):  # a marker or None, as pytest's
        return name if name in self.markers else None


def test_heavy_modules_start_first_each_kept_whole_and_in_its_order() -> None:
    """``make test`` hands xdist whole files in this order: the packaging build and the crash
    drills, last in collection order, kept one worker busy after the others were done."""
    from tests.suite_guards import longest_first

    items = [_Item("tests/test_a.py::one"), _Item("tests/test_b.py::fio_one", "fio"),
             _Item("tests/test_a.py::two"), _Item("tests/test_c.py::build", "slow"),
             _Item("tests/test_c.py::after"), _Item("tests/test_b.py::plain"),
             _Item("tests/test_d.py::real", "realtime"), _Item("tests/test_d.py::fio", "fio")]
    order = [item.nodeid for item in longest_first(items)]  # type: ignore[arg-type]  # stand-ins
    assert order == ["tests/test_c.py::build", "tests/test_c.py::after",
                     "tests/test_d.py::real", "tests/test_d.py::fio",
                     "tests/test_b.py::fio_one", "tests/test_b.py::plain",
                     "tests/test_a.py::one", "tests/test_a.py::two"]


@pytest.fixture(scope="module")
def module_data_dir() -> Path:
    """The data folder a module-scoped fixture sees: it is set up before any per-test one."""
    from app.core.paths import data_dir

    return data_dir()


def test_a_module_fixture_never_writes_in_the_users_data_folder(module_data_dir) -> None:
    """Recorded runs built once per module or session put their journals and run locks in the
    data folder; before conftest gave each test process its own, they went to the user's
    platform folder, shared by every xdist worker and by the user's station."""
    import tempfile

    import platformdirs

    from app.core.paths import APP_NAME

    assert module_data_dir != Path(platformdirs.user_data_dir(APP_NAME, APP_NAME))
    assert module_data_dir.is_relative_to(tempfile.gettempdir())
