"""The run's one time base: the station clock re-based to the run start.

The sequencer reads and sleeps on a :class:`RunClock`, so every time it stamps — meter
samples, phase starts, interval bounds, log lines — is already run-relative. Listeners
(storage, plots, console, history) then never keep or subtract a ``t0`` of their own, and a
stored run means the same on any PC. Workload engines keep their own station clock; the
sequencer re-bases their slices once, as they arrive.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from drivers.clock import Clock


@dataclass(frozen=True)
class RunClock:
    """``now()`` is seconds since ``t0`` on ``station``; deadlines are run-relative too."""

    station: Clock
    t0: float

    def now(self) -> float:
        return self.station.now() - self.t0

    def sleep_until(self, deadline: float, wake: threading.Event | None = None) -> bool:
        return self.station.sleep_until(deadline + self.t0, wake)

    def to_run(self, station_t: float) -> float:
        """A station-clock time stamp (a workload engine's) in run-relative seconds."""
        return station_t - self.t0
