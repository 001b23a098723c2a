"""Drift-corrected meter sampling.

Each meter is polled on a fixed grid ``t0 + k·period`` (the OpenHTF monitor idea): a slow
reply delays one sample but never shifts the grid, so the average rate stays exact over a
24-hour run. When the sequencer falls more than a period behind, missed grid points are
skipped and recorded as a gap — never interpolated (method-notes §3: samples are evidence).
A reading is placed at the time the meter answered (``_answered``), so a slow reply is the gap
it really was in the 5 s rule, not a reading on the grid point it was asked for.

A meter that stops answering gets reconnect attempts with back-off; each missed sample is a
logged gap, and the method's 5 s sample rule judges the intervals it falls in (the recorder).
Only when the meter has been silent for the method's ``[sampling] meter_silence_limit_s``
does the sampler give up and raise :class:`MeterLost`, at that limit: once a meter fails,
its reads and reconnects may wait only until the limit (``end_waits_after``), so a slow
reconnect cannot overrun it. A stop request (:meth:`MeterSampler.interrupt`) ends a read or
back-off in progress within a fraction of a second.

A meter is the instrument the run recorded (``recorded``, the identity its ``open`` gave):
another instrument answering at its address (the driver's
:class:`~drivers.interfaces.IdentityMismatch`), or a reading that names another instrument,
ends the phase at once with :class:`MeterReplaced` naming both; that reading is never
returned, so it is never counted (issue 38).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Generic, TypeVar

from drivers.interfaces import (IdentityMismatch, InstrumentError, InstrumentIdentity,
                                InstrumentInterrupted, PowerSample, SampledInstrument,
                                TemperatureSample)

S = TypeVar("S", PowerSample, TemperatureSample)


class MeterLost(InstrumentError):
    """A meter failed repeatedly; the phase cannot be measured."""


class MeterReplaced(MeterLost):
    """Another instrument answers for the run's meter: the phase and the run end, naming both."""


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
    #: the method's ``[sampling] meter_silence_limit_s``
    silence_limit_s: float
    #: the time now on the poll's scale (a read or reconnect takes time of its own)
    clock: Callable[[], float]
    t0: float = 0.0
    _k: int = 0
    _last_reply: float | None = None
    _first_error: str = ""
    _stopping: bool = False
    gaps: list[SampleGap] = field(default_factory=list)
    #: the identity the run recorded for this meter (its ``open``); None: not bound yet
    recorded: InstrumentIdentity | None = None

    def interrupt(self) -> None:
        """Any thread: the run is stopping; end the meter's read or back-off in progress."""
        self._stopping = True
        self.meter.interrupt()

    def restart(self, t0: float) -> None:
        """Align the grid to a new phase start (or attempt, after a pause). A meter that was
        answering starts its silence count afresh: a pause of hours is no silence; one that
        was failing stays silent across the boundary."""
        self.t0 = t0
        self._k = 0
        if not self._first_error:
            self._last_reply = None

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
        if self._last_reply is None:
            self._last_reply = now  # silence is counted from the first poll at the latest
        try:
            sample = self.meter.read(now)
        except IdentityMismatch as exc:
            raise MeterReplaced(f"{self.name}: {exc}") from exc
        except InstrumentError as exc:
            self.gaps.append(SampleGap(now, now + self.period_s, 1, f"{self.name}: {exc}"))
            self._failed(exc)
            return []
        if self._first_error:
            self._first_error = ""
            self.meter.end_waits_after(None)
        self._check_instrument(sample)
        self._last_reply = now
        return [self._answered(sample)]

    def _answered(self, sample: S) -> S:
        """``sample`` placed at the time the instrument answered, not the time it was asked:
        a reply 5.9 s late (inside the driver's timeout) put at its poll hid a 6.9 s gap
        between readings from the 5 s rule (issue 38, seen 5). A reply of a few ms stays on
        its grid point (``conformance.grid_points`` takes the latest point not after it)."""
        answered = self.clock()
        return replace(sample, t=answered) if answered > sample.t else sample

    def _check_instrument(self, sample: S) -> None:
        """A reading that names an instrument other than the recorded one is refused."""
        stated = sample.instrument
        if self.recorded is not None and stated and stated != self.recorded.key:
            raise MeterReplaced(
                f"{self.name}: a reading came from {stated}, not from the recorded "
                f"{self.recorded.describe()}; it is not counted and the measurement stops "
                "(check the wiring)")

    def _failed(self, exc: InstrumentError) -> None:
        """A read failed: give up at the silence limit, else try to reconnect within it."""
        if self._stopping:
            raise exc
        self._first_error = self._first_error or str(exc)
        self._check_silence(exc)
        self.meter.end_waits_after(self._silence_left())
        self._try_reconnect()
        self._check_silence(exc)

    def _silence_left(self) -> float:
        assert self._last_reply is not None
        return self._last_reply + self.silence_limit_s - self.clock()

    def _check_silence(self, exc: InstrumentError) -> None:
        """Raise :class:`MeterLost` once the meter has been silent for the limit (a wait the
        limit ended counts as reaching it)."""
        if self._silence_left() > 0 and not isinstance(exc, InstrumentInterrupted):
            return
        assert self._last_reply is not None
        silent = self.clock() - self._last_reply
        raise MeterLost(f"{self.name} silent for {silent:.1f} s (limit [sampling] "
                        f"meter_silence_limit_s = {self.silence_limit_s:g} s); first error: "
                        f"{self._first_error}" + (f"; last: {exc}" if str(exc) !=
                                                  self._first_error else "")) from exc

    def _try_reconnect(self) -> None:
        """Reopen the meter (the driver backs off between attempts) and say how it went, so
        the run log shows where the measurement resumed and with which meter."""
        try:
            identity = self.meter.reconnect()
        except IdentityMismatch as exc:
            self._note(f"reconnect refused: {exc}")
            raise MeterReplaced(f"{self.name}: {exc}") from exc
        except InstrumentInterrupted as exc:
            self._note(f"reconnect failed: {exc}")
            if not self._stopping:
                self._check_silence(exc)
        except InstrumentError as exc:
            self._note(f"reconnect failed: {exc}")
        else:
            self._note(f"reconnected to {identity.describe()}")

    def _note(self, what: str) -> None:
        self.gaps.append(SampleGap(self.next_due, self.next_due, 0, f"{self.name}: {what}"))

    def take_gaps(self) -> list[SampleGap]:
        gaps, self.gaps = self.gaps, []
        return gaps
