"""Stop signals (SIGTERM, SIGHUP, Ctrl-C) delivered to the GUI thread as a Qt signal.

Qt's event loop runs in C++: a Python signal handler only runs when the interpreter next gets
control, which in an idle window may be never. ``signal.set_wakeup_fd`` makes the C-level
handler write a byte to a socket; a :class:`QSocketNotifier` on the other end wakes the event
loop, the interpreter runs the Python handler, and the watcher emits ``stop_requested``.
"""

from __future__ import annotations

import signal
import socket

from PySide6.QtCore import QObject, QSocketNotifier, Signal

from app.station.stop_signals import is_hang_up, leave_terminal, stop_signals


class StopSignalWatcher(QObject):
    """While installed, the process's stop signals become ``stop_requested(reason)``."""

    stop_requested = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pending: list[str] = []
        self._reader, self._writer = socket.socketpair()  # a socket works on Windows too
        for end in (self._reader, self._writer):
            end.setblocking(False)
        self._previous_fd = signal.set_wakeup_fd(self._writer.fileno(),
                                                 warn_on_full_buffer=False)
        self._notifier = QSocketNotifier(self._reader.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._deliver)
        self._reasons = stop_signals()
        self._previous = {signum: signal.signal(signum, self._on_signal)
                          for signum in self._reasons}

    def _on_signal(self, signum: int, _frame: object) -> None:
        """Python-level handler: only note the request; it is acted on from the event loop."""
        if is_hang_up(signum):
            leave_terminal()
        self._pending.append(self._reasons[signum])
        try:  # a byte written after the note: the loop delivers it, whatever the order
            self._writer.send(b"\0")
        except BlockingIOError:
            pass  # the socket is full of wake-ups already

    def _deliver(self) -> None:
        try:
            while self._reader.recv(512):
                pass
        except BlockingIOError:
            pass
        pending, self._pending = self._pending, []
        for reason in pending:
            self.stop_requested.emit(reason)

    def uninstall(self) -> None:
        """Restore the previous handlers and wake-up fd (tests install several in turn)."""
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        signal.set_wakeup_fd(self._previous_fd)
        self._notifier.setEnabled(False)
        self._reader.close()
        self._writer.close()
