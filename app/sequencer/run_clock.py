"""The run's one time base: the station clock re-based to the run start.

The sequencer reads and sleeps on a :class:`RunClock`, so every time it stamps — meter
samples, phase starts, interval bounds, log lines — is already run-relative. Listeners
(storage, plots, console, history) then never keep or subtract a ``t0`` of their own, and a
stored run means the same on any PC. Workload engines keep their own station clock; the
sequencer re-bases their slices once, as they arrive.
"""

from __future__ import annotations

import math
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
        return self.station.sleep_until(self.to_station(deadline), wake)

    def to_station(self, run_t: float) -> float:
        """The earliest station time whose run time is not before ``run_t``: ``run_t + t0``
        rounded up where float subtraction would land just short, so a sleep until a
        deadline always wakes at or after it (else a sampler waits forever for ``now`` to
        reach a due time that is 1 ulp away)."""
        station_t = run_t + self.t0
        while station_t - self.t0 < run_t:
            station_t = math.nextafter(station_t, math.inf)
        return station_t

    def to_run(self, station_t: float) -> float:
        """A station-clock time stamp (a workload engine's) in run-relative seconds."""
        return station_t - self.t0
