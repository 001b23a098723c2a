"""Drift-corrected meter sampling.

Each meter is polled on a fixed grid ``t0 + k·period`` (the OpenHTF monitor idea): a slow
reply delays one sample but never shifts the grid, so the average rate stays exact over a
24-hour run. When the sequencer falls more than a period behind, missed grid points are
skipped and recorded as a gap — never interpolated (method-notes §3: samples are evidence).
A meter that stops answering gets reconnect attempts with back-off; only after
``max_failures`` consecutive failures does the sampler give up and raise :class:`MeterLost`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from drivers.interfaces import InstrumentError, SampledInstrument

S = TypeVar("S")


class MeterLost(InstrumentError):
    """A meter failed repeatedly; the phase cannot be measured."""


@dataclass
class SampleGap:
    """Grid points without a sample, with the reason (stored as an event); ``missed == 0`` is
    a note about the meter at ``t_from`` (reconnected, reconnect failed)."""

    t_from: float
    t_to: float
    missed: int
    reason: str


@dataclass
class MeterSampler(Generic[S]):
    meter: SampledInstrument[S]
    period_s: float
    name: str
    max_failures: int = 5
    t0: float = 0.0
    _k: int = 0
    _failures: int = 0
    gaps: list[SampleGap] = field(default_factory=list)

    def restart(self, t0: float) -> None:
        """Align the grid to a new phase start."""
        self.t0 = t0
        self._k = 0

    @property
    def next_due(self) -> float:
        return self.t0 + self._k * self.period_s

    def poll(self, now: float) -> list[S]:
        """Take the sample that is due (if any). Returns 0 or 1 samples."""
        if now < self.next_due:
            return []
        behind = math.floor((now - self.next_due) / self.period_s)
        if behind >= 1:
            self.gaps.append(SampleGap(self.next_due, now, behind,
                                       f"{self.name}: sequencer {behind} period(s) behind"))
            self._k += behind
        self._k += 1
        try:
            sample = self.meter.read(now)
        except InstrumentError as exc:
            self._failures += 1
            self.gaps.append(SampleGap(now, now + self.period_s, 1, f"{self.name}: {exc}"))
            self._try_reconnect()
            if self._failures >= self.max_failures:
                raise MeterLost(
                    f"{self.name} failed {self._failures} times in a row; last error: {exc}"
                ) from exc
            return []
        self._failures = 0
        return [sample]

    def _try_reconnect(self) -> None:
        """Reopen the meter (the driver backs off between attempts) and say how it went, so
        the run log shows where the measurement resumed and with which meter."""
        try:
            identity = self.meter.reconnect()
        except InstrumentError as exc:
            self._note(f"reconnect failed: {exc}")
        else:
            self._note(f"reconnected to {identity.describe()}")

    def _note(self, what: str) -> None:
        self.gaps.append(SampleGap(self.next_due, self.next_due, 0, f"{self.name}: {what}"))

    def take_gaps(self) -> list[SampleGap]:
        gaps, self.gaps = self.gaps, []
        return gaps
