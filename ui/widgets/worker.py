"""The GUI's one way to run work off its thread: :func:`start_worker`.

Probing an instrument, loading a 24 h run and running the sequencer all take seconds to
hours; on the GUI thread they would freeze the window. Each used to hand-write its thread and
its signal carrier, each with its own gaps (an exception in a probe left "Testing…" on screen
for ever; a history tab closed mid-load had its thread emit on a deleted object). Here the
pattern is written once, in the style of superqt's / napari's thread workers:

* ``work`` is a plain callable run on a Python thread of its own. It must never touch a widget
  or create a Qt object: it returns a value (a frozen record, a stored run) or raises.
* Its outcome arrives on the GUI thread as a signal of the :class:`Worker`: ``finished(result)``
  or ``errored(exception)`` — exactly one of them, and never after the owner is gone. The caller
  must say what to do with both (:func:`start_worker` takes both handlers), so no failure is lost;
  an error's traceback also goes to the log.
* **The owner rule.** Every worker has an owner widget. Its lifetime, not its visibility,
  decides: when the owner is destroyed (a tab closed, a wizard deleted) the worker is cancelled
  (``on_cancel``, if the work can be stopped: the run view aborts its run) and its outcome is
  dropped; the thread still ends on its own. When the application quits, every live worker is
  cancelled and waited for, up to :data:`EXIT_WAIT_S` in all; a thread stuck beyond that (an
  instrument that never answers) is named in the log and ends with the process (workers are
  daemon threads, so a dead instrument never keeps the station from quitting).
* A worker belongs to the application object, not to its owner: the thread may emit at any
  time, and an object it emits on must outlive it. The worker deletes itself (``deleteLater``)
  once its outcome is delivered and its thread joined, on the GUI thread.

Why not superqt's ``create_worker``: it is not a dependency here, and its workers run on the
global ``QThreadPool``, whose slots number the CPU cores: a run's worker holds one for the
whole run (hours), so on a two-core lab PC an instrument probe and a history load would queue
behind it. One Python thread per task suits these few, long tasks.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from PySide6.QtCore import QCoreApplication, QObject, Qt, Signal

T = TypeVar("T")

#: how long quitting the application waits, in all, for the workers still running (cancelled
#: first): a few instrument time-outs
EXIT_WAIT_S = 5.0

log = logging.getLogger(__name__)


class Worker(QObject):
    """One task run off the GUI thread (create it with :func:`start_worker`).

    Signals, always emitted on the GUI thread, at most one of them, never after the owner is
    destroyed: ``finished(object)`` — what ``work`` returned; ``errored(object)`` — the
    exception it raised."""

    finished = Signal(object)
    errored = Signal(object)
    _returned = Signal(object)  # emitted on the worker thread, delivered on the GUI thread
    _raised = Signal(object)

    def __init__(self, work: Callable[[], object], *, owner: QObject, name: str,
                 on_cancel: Callable[[], None] | None = None) -> None:
        super().__init__(_workers())
        self._work = work
        self._on_cancel = on_cancel
        self._owner_alive = True
        #: True from :meth:`start` until the outcome has been handled on the GUI thread
        self.running = False
        self.cancelled = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._returned.connect(self._deliver_result, Qt.ConnectionType.QueuedConnection)
        self._raised.connect(self._deliver_error, Qt.ConnectionType.QueuedConnection)
        owner.destroyed.connect(self._owner_destroyed)

    @property
    def name(self) -> str:
        return self._thread.name

    def start(self) -> None:
        self.running = True
        self._thread.start()

    def cancel(self) -> None:
        """Ask the work to stop (only work given an ``on_cancel`` can); its outcome still
        arrives unless the owner is gone."""
        if self.running and not self.cancelled:
            self.cancelled = True
            if self._on_cancel is not None:
                self._on_cancel()

    def wait(self, timeout_s: float) -> bool:
        """Wait for the thread (not for delivery); True when it has ended."""
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    # --- worker thread ----------------------------------------------------------------------
    def _run(self) -> None:
        try:
            result = self._work()
        except Exception as exc:  # noqa: BLE001 — every failure is delivered as ``errored``
            self._raised.emit(exc)
        else:
            self._returned.emit(result)

    # --- GUI thread -------------------------------------------------------------------------
    def _deliver_result(self, result: object) -> None:
        if self._end():
            self.finished.emit(result)

    def _deliver_error(self, exc: Exception) -> None:
        log.error("worker %s failed", self.name, exc_info=exc)
        if self._end():
            self.errored.emit(exc)

    def _end(self) -> bool:
        """The thread has emitted its last signal: join it, schedule this object's deletion;
        True when the owner is still there to be told."""
        self._thread.join()  # it only has its return left
        self.running = False
        self.deleteLater()
        return self._owner_alive

    def _owner_destroyed(self) -> None:
        self.cancel()
        self._owner_alive = False


class _Workers(QObject):
    """The application's live workers (its children); waits for them when the app quits."""

    def __init__(self, app: QCoreApplication) -> None:
        super().__init__(app)
        app.aboutToQuit.connect(self.finish)

    def finish(self) -> list[str]:
        """Cancel every live worker and wait up to :data:`EXIT_WAIT_S` in all; returns the
        names of the threads still running after that (logged)."""
        live = [w for w in self.findChildren(Worker) if w.running]
        for worker in live:
            worker.cancel()
        deadline = time.monotonic() + EXIT_WAIT_S
        stuck = [w.name for w in live if not w.wait(max(0.0, deadline - time.monotonic()))]
        if stuck:
            log.warning("quitting with worker threads still running after %.0f s: %s",
                        EXIT_WAIT_S, ", ".join(stuck))
        return stuck


def _workers() -> _Workers:
    app = QCoreApplication.instance()
    if app is None:
        raise RuntimeError("a GUI worker needs the application object")
    found = app.findChild(_Workers)
    return found if found is not None else _Workers(app)


def start_worker(work: Callable[[], T], *, owner: QObject, name: str,
                 on_finished: Callable[[T], None], on_errored: Callable[[Exception], None],
                 on_cancel: Callable[[], None] | None = None) -> Worker:
    """Run ``work`` on a thread named ``name`` for ``owner``; ``on_finished(result)`` or
    ``on_errored(exception)`` is called on the GUI thread (never after ``owner`` is destroyed).
    ``on_cancel`` stops the work when the owner goes or the application quits."""
    worker = Worker(work, owner=owner, name=name, on_cancel=on_cancel)
    worker.finished.connect(on_finished)
    worker.errored.connect(on_errored)
    worker.start()
    return worker
