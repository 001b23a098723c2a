"""Fault injection for the meter simulators: what can go wrong on a real bench, on demand.

A ``FaultPlan`` is shared between the test (or the CLI) and the simulator's connection
threads, so it is guarded by a lock. A fault applies to the next ``count`` replies (or to all
of them with ``count=None``); NaN and over-range only affect measurement replies.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from enum import Enum


class FaultKind(str, Enum):
    DROP = "drop"  # close the connection instead of answering
    GARBAGE = "garbage"  # answer bytes that are no valid reply
    NAN = "nan"  # the meter's "no data" marker in a measurement reply
    OVERRANGE = "overrange"  # the meter's over-range marker in a measurement reply
    SLOW = "slow"  # answer after ``delay_s``
    SILENT = "silent"  # read the command, never answer
    #: the meter's data is held (the WT300's HOLD key): every measurement reply repeats the
    #: last one sent, and the update bit of the event register stays clear
    HOLD = "hold"

    @property
    def measurement_only(self) -> bool:
        return self in (FaultKind.NAN, FaultKind.OVERRANGE, FaultKind.HOLD)


@dataclass(frozen=True)
class Fault:
    kind: FaultKind
    delay_s: float = 0.0


class FaultPlan:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fault: Fault | None = None
        self._remaining: int | None = None

    def inject(self, kind: FaultKind | str, count: int | None = 1, delay_s: float = 0.0) -> None:
        """Apply ``kind`` to the next ``count`` replies (``None``: until ``clear()``)."""
        kind = FaultKind(kind)
        if count is not None and count < 1:
            raise ValueError("count must be ≥ 1, or None for a permanent fault")
        with self._lock:
            self._fault = Fault(kind, delay_s)
            self._remaining = count

    def clear(self) -> None:
        with self._lock:
            self._fault, self._remaining = None, None

    @property
    def active(self) -> Fault | None:
        with self._lock:
            return self._fault

    def take(self, measurement: bool) -> Fault | None:
        """The fault for this reply, if any; counts it down."""
        with self._lock:
            fault = self._fault
            if fault is None or (fault.kind.measurement_only and not measurement):
                return None
            if self._remaining is not None:
                self._remaining -= 1
                if self._remaining <= 0:
                    self._fault, self._remaining = None, None
            return fault
