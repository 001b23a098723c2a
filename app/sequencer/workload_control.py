"""Starting and stopping a segment's workload beside the sampling loop.

fio's start checks every job file (``fio --parse-only``) and spawns a client per load host;
its stop waits for every client's final document. With 8 load hosts each took ~1.5 s on the
sequencer thread, which also polls the meters, so every segment boundary cost a sample or two
(issue 27). An engine that says its control calls block (``BlockingControl``) gets them on a
worker thread, one after another in order, while the sequencer keeps sampling; the others
(the simulated engines) are called inline, so a fake-clock run stays deterministic.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, TypeVar

from drivers.interfaces import BlockingControl, WorkloadEngine, WorkloadProfile, WorkloadResult

T = TypeVar("T")


def control_blocks(engine: WorkloadEngine) -> bool:
    """Whether ``engine``'s control calls wait on processes (``BlockingControl``) and so are
    made beside the sampling loop rather than on it."""
    return isinstance(engine, BlockingControl) and engine.control_blocks()


def _done(action: Callable[[], T]) -> Future[T]:
    """``action`` called now, as a finished future."""
    future: Future[T] = Future()
    try:
        future.set_result(action())
    except BaseException as exc:  # noqa: BLE001 - handed to whoever asks for the result
        future.set_exception(exc)
    return future


class WorkloadControl:
    """One segment's engine start and stop, in order, off the sampling path when they block.

    ``wake`` is set when a call finishes, so a sleeping sequencer looks at once."""

    def __init__(self, engine: WorkloadEngine, wake: threading.Event) -> None:
        self.engine = engine
        self._wake = wake
        self._blocks = control_blocks(engine)
        self._worker: ThreadPoolExecutor | None = None  # made by start(): idle needs none
        self._starting: Future[None] | None = None

    def _call(self, action: Callable[[], T]) -> Future[T]:
        if self._worker is None:
            return _done(action)
        future = self._worker.submit(action)
        future.add_done_callback(lambda _: self._wake.set())
        return future

    def start(self, profile: WorkloadProfile) -> None:
        """Start the engine; inline engines raise a failure here, the others from
        :attr:`started`."""
        if self._blocks:
            self._worker = ThreadPoolExecutor(1, "workload-control")
        self._starting = self._call(lambda: self.engine.start(profile))
        if self._worker is None:
            self._starting.result()

    @property
    def started(self) -> bool:
        """Whether the engine runs its profile and may be polled; raises the start's failure
        once it is known."""
        if self._starting is None or not self._starting.done():
            return False
        self._starting.result()
        return True

    def stop(self) -> Future[WorkloadResult | None]:
        """Stop the engine once its start has finished; None when the start failed (an
        engine that never started has nothing to stop)."""
        def stop_if_started() -> WorkloadResult | None:
            if self._starting is None or self._starting.exception() is not None:
                return None
            return self.engine.stop()

        future = self._call(stop_if_started)
        if self._worker is not None:
            self._worker.shutdown(wait=False)  # the stop still runs; nothing after it
        return future
