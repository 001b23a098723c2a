"""Station clocks: the real monotonic clock and a fake one for tests.

Everything time-dependent (sequencer, samplers, simulated SUT and meters) reads one ``Clock``
so that tests can run a 7-hour phase plan in milliseconds by advancing a ``FakeClock``
instead of sleeping, while production uses ``time.monotonic`` and interruptible waits.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds on a monotonic scale."""
        ...

    def sleep_until(self, deadline: float, wake: threading.Event | None = None) -> bool:
        """Block until ``deadline`` or until ``wake`` is set; True if woken early."""
        ...


class MonotonicClock:
    """Production clock: ``time.monotonic`` with waits that an abort can interrupt."""

    def now(self) -> float:
        return time.monotonic()

    def sleep_until(self, deadline: float, wake: threading.Event | None = None) -> bool:
        delay = deadline - time.monotonic()
        if delay <= 0:
            return bool(wake and wake.is_set())
        if wake is None:
            time.sleep(delay)
            return False
        return wake.wait(delay)


class FakeClock:
    """Test clock: sleeping jumps time forward at once; thread-safe."""

    def __init__(self, start: float = 1000.0) -> None:
        self._t = start
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self._t

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._t += seconds

    def sleep_until(self, deadline: float, wake: threading.Event | None = None) -> bool:
        if wake is not None and wake.is_set():
            return True
        with self._lock:
            if deadline > self._t:
                self._t = deadline
        return False
