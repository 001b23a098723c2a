"""The blocking waits of one instrument (a read, a reconnect back-off), ended early on request.

A meter that stops answering used to hold the sampler for a whole read timeout and then a
whole reconnect (≈ 11 s with the defaults), so an Abort took that long to act and a silent
meter overran its silence limit by as much. Every blocking wait of a driver goes through one
:class:`Waits`: an abort (``interrupt``, from any thread) ends the wait in progress within one
slice (:data:`SLICE_S`), and a deadline (``end_after``) bounds all waits until it is lifted.
"""

from __future__ import annotations

import math
import threading
import time

#: the longest a blocking call runs before the wait checks for an abort or its deadline
SLICE_S = 0.2


class Waits:
    """An abort flag and a deadline shared by an instrument and its transport (thread-safe)."""

    def __init__(self) -> None:
        self._abort = threading.Event()
        self._deadline = math.inf

    def interrupt(self) -> None:
        """End every wait now and until :meth:`reset` (the run is stopping)."""
        self._abort.set()

    def end_after(self, seconds: float | None) -> None:
        """Let waits last at most ``seconds`` from now (None: no deadline)."""
        self._deadline = math.inf if seconds is None else time.monotonic() + max(0.0, seconds)

    def reset(self) -> None:
        self._abort.clear()
        self._deadline = math.inf

    @property
    def ended(self) -> bool:
        return self._abort.is_set() or time.monotonic() >= self._deadline

    def why(self) -> str:
        """Why waits end early (for the error a driver raises)."""
        return "a stop was requested" if self._abort.is_set() else "its time limit was reached"

    def remaining(self, seconds: float) -> float:
        """The part of ``seconds`` a wait may take (0 once ended)."""
        if self._abort.is_set():
            return 0.0
        return max(0.0, min(seconds, self._deadline - time.monotonic()))

    def sleep(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; True when the sleep was cut short (abort or deadline)."""
        self._abort.wait(self.remaining(seconds))
        return self.ended
