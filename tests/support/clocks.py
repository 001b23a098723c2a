"""A station clock for GUI tests that act in the middle of a run.

A :class:`~drivers.clock.FakeClock` runs a smoke plan in a fraction of a second: right for a
test that waits for the end, too fast for one that pauses, aborts or closes the window while
the run is going. :class:`HoldingClock` is that fake clock with a stop: time runs free up to
``hold_after`` seconds past the moment the test set it, then stands still — a run needing
later time waits, in real time, until the test releases the clock or the run is woken (pause,
abort, a stop signal set the sequencer's wake event), as it would wait on the real clock.
So the test acts on a run that is surely still running, and nothing waits for a plan's
seconds to pass.
"""

from __future__ import annotations

import threading

from drivers.clock import FakeClock

#: how often a held sleep looks at its wake event and the release (real seconds)
POLL_S = 0.01


class HoldingClock(FakeClock):
    def __init__(self, start: float = 1000.0) -> None:
        super().__init__(start)
        self._hold_at: float | None = None
        self._released = threading.Event()

    def hold_after(self, seconds: float) -> None:
        """Let time run ``seconds`` past now, then stand still until :meth:`release`."""
        self._released.clear()
        self._hold_at = self.now() + seconds

    def release(self) -> None:
        """Time runs free again (a held run goes on at once)."""
        self._released.set()

    @property
    def holding(self) -> bool:
        return self._hold_at is not None and not self._released.is_set()

    def sleep_until(self, deadline: float, wake: threading.Event | None = None) -> bool:
        hold_at = self._hold_at
        if hold_at is not None and deadline > hold_at and not self._released.is_set():
            if super().sleep_until(hold_at, wake):
                return True
            while not self._released.is_set():
                if wake is not None and wake.wait(POLL_S):
                    return True
                if wake is None:
                    self._released.wait(POLL_S)
        return super().sleep_until(deadline, wake)
