"""The GUI's one worker pattern (``ui/widgets/worker.py``, issue 31): no hand-written thread
elsewhere in
``ui/``; a worker's outcome arrives on the GUI thread as ``finished`` or ``errored``; an owner
destroyed mid-work cancels its worker, hears nothing and leaves no thread; quitting waits for
the live workers and names a stuck one. No test here waits on real time: the work blocks on
events the test sets."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import pytest
import shiboken6
from PySide6.QtCore import QObject

import ui.widgets.worker
from ui.widgets.worker import start_worker
from tests.support.time_budget import budget_ms

ROOT = Path(__file__).resolve().parent.parent
#: what starts a thread or hands an object to one: only the worker module may name these
THREAD_MAKERS = {"Thread", "Timer", "QThread", "QRunnable", "QThreadPool", "moveToThread",
                 "ThreadPoolExecutor", "ProcessPoolExecutor", "start_new_thread", "QtConcurrent"}
THREAD_MODULES = {"concurrent", "_thread", "multiprocessing"}


def hand_written_threads(path: Path) -> list[str]:
    """Each use of a thread maker in ``path``: ``name:line`` (threading's locks and events are
    fine: they start nothing)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Attribute) and node.attr in THREAD_MAKERS:
            found.append(f"{node.attr}:{node.lineno}")
        elif isinstance(node, ast.Name) and node.id in THREAD_MAKERS:
            found.append(f"{node.id}:{node.lineno}")
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] in THREAD_MODULES:
                found.append(f"{node.module}:{node.lineno}")
            found += [f"{a.name}:{node.lineno}" for a in node.names if a.name in THREAD_MAKERS]
        elif isinstance(node, ast.Import):
            found += [f"{a.name}:{node.lineno}" for a in node.names
                      if a.name.split(".")[0] in THREAD_MODULES]
    return found


def test_no_hand_written_thread_in_ui() -> None:
    """Work off the GUI thread goes through ``ui.widgets.worker.start_worker``: its owner rule and
    its
    error delivery are written once (four hand-written threads each had their own gaps)."""
    worker_module = Path(ui.widgets.worker.__file__).resolve()
    offenders = {str(p.relative_to(ROOT)): found for p in sorted((ROOT / "ui").rglob("*.py"))
                 if p.resolve() != worker_module and (found := hand_written_threads(p))}
    assert not offenders, f"use ui.widgets.worker.start_worker instead: {offenders}"


def test_the_scan_sees_a_hand_written_thread(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import threading\nfrom PySide6.QtCore import QThread\n"
                   "import concurrent.futures\nfrom threading import Lock\n"
                   "threading.Thread(target=print).start()\nobj.moveToThread(QThread())\n")
    assert sorted(hand_written_threads(bad)) == ["QThread:2", "QThread:6", "Thread:5",
                                                 "concurrent.futures:3", "moveToThread:6"]
    assert hand_written_threads(Path(ui.widgets.worker.__file__))  # the one place that may


def test_the_result_arrives_on_the_gui_thread(qtbot) -> None:
    owner = QObject()
    delivered: list[tuple[int, int]] = []
    worker = start_worker(threading.get_ident, owner=owner, name="test-result",
                          on_finished=lambda ident: delivered.append(
                              (ident, threading.get_ident())),
                          on_errored=pytest.fail)
    qtbot.waitUntil(lambda: bool(delivered), timeout=budget_ms(2000))
    work_thread, handler_thread = delivered[0]
    assert handler_thread == threading.main_thread().ident != work_thread
    assert not worker.running and worker.wait(0)
    # deleted itself
    qtbot.waitUntil(lambda: not shiboken6.isValid(worker), timeout=budget_ms(2000))
    assert not worker.running  # still answers for an owner that kept it (the run view does)
    shiboken6.delete(owner)  # an owner outliving its worker: nothing left connected to it


def test_an_exception_arrives_as_errored(qtbot) -> None:
    owner = QObject()
    failure = OSError("meter at TCPIP::192.0.2.9 refused")

    def work() -> None:
        raise failure

    errors: list[Exception] = []
    with qtbot.waitSignal(start_worker(work, owner=owner, name="test-error",
                                       on_finished=pytest.fail,
                                       on_errored=errors.append).errored, timeout=budget_ms(2000)):
        pass
    assert errors == [failure]
    shiboken6.delete(owner)


def test_a_destroyed_owner_cancels_its_worker_and_is_not_told(qtbot) -> None:
    owner = QObject()
    started, cancelled = threading.Event(), threading.Event()
    told: list[object] = []

    def work() -> str:
        started.set()
        cancelled.wait(2.0)  # work that stops when asked (the run view aborts its run)
        return "late result"

    worker = start_worker(work, owner=owner, name="test-owner-gone", on_finished=told.append,
                          on_errored=told.append, on_cancel=cancelled.set)
    assert started.wait(2.0) and worker.running
    shiboken6.delete(owner)  # a tab closed, a wizard deleted, mid-work
    assert cancelled.is_set()
    assert worker.wait(2.0)  # the thread ends on its own
    qtbot.waitUntil(lambda: not shiboken6.isValid(worker), timeout=budget_ms(2000))
    assert told == []  # nobody left to tell: dropped, no crash
    assert "test-owner-gone" not in {t.name for t in threading.enumerate()}


def test_quitting_waits_for_live_workers_and_names_a_stuck_one(qtbot, monkeypatch) -> None:
    monkeypatch.setattr(ui.widgets.worker, "EXIT_WAIT_S", 0.2)
    owner = QObject()
    stop, release = threading.Event(), threading.Event()
    start_worker(lambda: stop.wait(2.0), owner=owner, name="test-stoppable",
                 on_finished=lambda _r: None, on_errored=pytest.fail, on_cancel=stop.set)
    stuck = start_worker(lambda: release.wait(2.0), owner=owner, name="test-stuck",
                         on_finished=lambda _r: None, on_errored=pytest.fail)
    workers = ui.widgets.worker._workers()
    assert ui.widgets.worker._workers() is workers  # one per application, waited for at aboutToQuit
    assert workers.finish() == ["test-stuck"]  # cancelled and joined; the other named
    assert "test-stoppable" not in {t.name for t in threading.enumerate()}
    release.set()
    assert stuck.wait(2.0)
    qtbot.waitUntil(lambda: not stuck.running, timeout=budget_ms(2000))
    shiboken6.delete(owner)
