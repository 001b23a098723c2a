"""The only Qt-aware adapter of the sequencer's events.

The sequencer calls its listeners on its own worker thread and asks them to return at once
(``app.sequencer.events``). :class:`RunBridge` is such a listener: ``__call__`` only appends the
event to a locked deque. A QTimer on the GUI thread drains the deque in batches and emits them
as one signal, so a burst of samples costs one repaint, not hundreds, and the GUI thread never
waits for the run (nor the run for the GUI).
"""

from __future__ import annotations

import threading
from collections import deque

from PySide6.QtCore import QObject, QTimer, Signal

from app.sequencer import events as ev

DRAIN_INTERVAL_MS = 50


class RunBridge(QObject):
    """Carries events from the sequencer thread to the GUI thread.

    Signals (always emitted on the GUI thread):
    * ``events(list)`` — every event, in order, in batches;
    * ``finished(object)`` — the :class:`~app.sequencer.events.RunFinished`, after its batch.
    """

    events = Signal(list)
    finished = Signal(object)

    def __init__(self, parent: QObject | None = None,
                 interval_ms: int = DRAIN_INTERVAL_MS) -> None:
        super().__init__(parent)
        self._queue: deque[ev.RunEvent] = deque()
        self._lock = threading.Lock()
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.drain)
        self._timer.start()
        self.received = 0  # events drained so far (a cheap liveness figure for tests/bench)

    def __call__(self, event: ev.RunEvent) -> None:
        """Listener entry point, called on the sequencer thread: never touches Qt."""
        with self._lock:
            self._queue.append(event)

    def drain(self) -> list[ev.RunEvent]:
        """Take every queued event and publish it (GUI thread)."""
        with self._lock:
            if not self._queue:
                return []
            batch = list(self._queue)
            self._queue.clear()
        self.received += len(batch)
        self.events.emit(batch)
        for event in batch:
            if isinstance(event, ev.RunFinished):
                self.finished.emit(event)
        return batch

    def stop(self) -> None:
        """Stop the drain timer after a last drain (the run is over)."""
        self.drain()
        self._timer.stop()
