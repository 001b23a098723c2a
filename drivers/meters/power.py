"""Power-meter base: ranging, reading assembly, special values and per-sample uncertainty.

Reference practice (method-notes §3): a ranging pass on auto range, then fixed ranges; every
sample carries its uncertainty (judged against the method's limit, passed in as
:class:`~drivers.interfaces.ReadingLimits`); over-range, no-data and "can't evaluate" samples
are flagged, never averaged silently.

Freshness: a driver whose protocol says whether a reading is new overrides :meth:`_fresh`
(WT300: the extended event register's update bit); the others say "freshness not checked" in
their docstring. Independently of the meter's word, a run of readings that bring no news —
watts, volts and amps together within one last digit of one of the few readings before
(:class:`RepeatRun`: identical, cycling or alternating by a digit) — longer than
``ReadingLimits.max_identical_readings`` is flagged stale: a live AC measurement at the
meter's full resolution never repeats that long (method-notes §3, "Fresh readings"). A
reading that cannot be physical (|PF| > 1, or P above k·U·I for the wiring) is flagged
implausible (method-notes §8, "Plausibility of a reading").
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any, ClassVar

from drivers.interfaces import (FLAG_FREQUENCY_NOT_MEASURED, FLAG_GARBAGE, FLAG_IMPLAUSIBLE,
                                FLAG_LOW_CURRENT, FLAG_OVERRANGE, FLAG_STALE,
                                FLAG_UNCERTAINTY_HIGH, FLAG_UNCERTAINTY_UNKNOWN,
                                InstrumentError, InstrumentTimeout, PowerSample, ReadingLimits)
from drivers.meters.accuracy import AccuracySpec
from drivers.meters.base import Instrument
from drivers.meters.commands import Reading
from drivers.meters.values import GENERIC, Decoded, SpecialValues, decode_fields

POWER_FIELDS = ("volts", "amps", "watts", "pf", "freq_hz")
#: how many per-phase U·I products bound a reading's watts, by wiring (method-notes §8): one
#: phase; a three-wire three-phase Σ of line-to-line volts (√3); a four-wire Σ of phase volts
PHASE_FACTOR = {"1P2W": 1.0, "3P3W": math.sqrt(3), "3P4W": 3.0}


def implausible(watts: float, volts: float, amps: float, pf: float, k: float,
                tolerance_pct: float) -> bool:
    """|PF| > 1, or |P| > k·|U|·|I|·(1 + tolerance): no load draws more real power than the
    apparent power its volts and amps carry. Values the meter did not give (NaN) are not
    judged."""
    if math.isfinite(pf) and abs(pf) > 1 + tolerance_pct / 100:
        return True
    if not all(math.isfinite(v) for v in (watts, volts, amps)):
        return False
    return abs(watts) > k * abs(volts) * abs(amps) * (1 + tolerance_pct / 100)


#: the longest cycle of readings the repeat rule sees through (project default, method-notes §3
#: "Fresh readings"): a stand-in cycling through three replies passed the identical-run rule
REPEAT_PERIODS = 4


def _within(now: float, before: float, step: float | None) -> bool:
    """``now`` within one last digit (``step``) of ``before``; exact when the step is not known;
    NaN never repeats."""
    return abs(now - before) <= (step or 0.0) * (1 + 1e-9)


class RepeatRun:
    """Counts readings in a row that bring no news: watts, volts and amps *together* each
    within one least-significant digit of one of the :data:`REPEAT_PERIODS` readings before.

    Bit-identical runs, cycles of up to that many readings and a one-digit alternation are
    all a held or replaying meter (issue 38, seen 11). One quantity alone is no evidence: a
    steady load read at five digits can alternate by one digit in watts, while its volts and
    amps keep moving by more."""

    def __init__(self) -> None:
        self._recent: deque[tuple[float, float, float]] = deque(maxlen=REPEAT_PERIODS)
        self.length = 0

    def add(self, values: tuple[float, float, float],
            steps: tuple[float | None, float | None, float | None] = (None, None, None)) -> int:
        """Add (watts, volts, amps) with each one's last-digit step; the run's length now."""
        same = any(all(_within(x, y, d) for x, y, d in zip(values, old, steps))
                   for old in self._recent)
        self.length = self.length + 1 if same else 1
        self._recent.appendleft(values)
        return self.length


class PowerMeterBase(Instrument):
    """Subclasses declare ``READING``, ``ACCURACY``, ``SPECIALS`` and the range controls
    ``voltage_range``, ``current_range``, ``voltage_auto``, ``current_auto``; ``PEAKS`` when
    the meter reports waveform peaks (fields ``v_peak+``, ``v_peak-``, ``a_peak+``,
    ``a_peak-``, each a :class:`Reading` of its own or together in one)."""

    READING: ClassVar[Reading]
    ACCURACY: ClassVar[AccuracySpec]
    SPECIALS: ClassVar[SpecialValues] = GENERIC
    #: queries whose replies carry the peaks; empty: the meter reports none (NaN)
    PEAKS: ClassVar[tuple[Reading, ...]] = ()
    #: the crest-factor setting the driver's set-up selects (``:INP:CFAC 3`` …); a fixed
    #: range measures peaks up to this multiple of the range (method-notes §3)
    CREST_FACTOR: ClassVar[float] = 3.0
    #: whether the meter's reading protocol carries the supply frequency at all; False marks
    #: every sample FLAG_FREQUENCY_NOT_MEASURED ("not measured by this interface")
    GIVES_FREQUENCY: ClassVar[bool] = True

    def __init__(self, resource: str, *, range_v: float | None = None,
                 range_a: float | None = None, limits: ReadingLimits | None = None,
                 **options: Any) -> None:
        super().__init__(resource, **options)
        self.limits = limits or ReadingLimits()
        self._repeats = RepeatRun()
        self._fixed: tuple[float, float] | None = None
        if (range_v is None) != (range_a is None):
            raise InstrumentError("give both range_v and range_a for fixed ranges, or neither "
                                  "for auto range")
        self._initial = (None if range_v is None or range_a is None  # (both, or neither)
                         else self._validated(range_v, range_a))

    @classmethod
    def _common_options(cls) -> tuple[str, ...]:
        return ("range_v", "range_a", "limits")

    @property
    def accuracy(self) -> AccuracySpec | None:
        return self.ACCURACY

    @property
    def volt_ranges(self) -> tuple[float, ...]:
        return self.ACCURACY.volt_ranges

    @property
    def amp_ranges(self) -> tuple[float, ...]:
        return self.ACCURACY.amp_ranges

    @property
    def crest_factor(self) -> float:
        return self.CREST_FACTOR

    def _validated(self, volts: float, amps: float) -> tuple[float, float]:
        cls = type(self)
        # each subclass declares them as Control descriptors; only the class has the validator
        return (cls.voltage_range.validator(volts, self),  # type: ignore[attr-defined, misc]  # above
                cls.current_range.validator(amps, self))  # type: ignore[attr-defined, misc]  # above

    # -- ranging ------------------------------------------------------------------------------
    @property
    def ranges(self) -> tuple[float, float] | None:
        """Fixed (V, A) ranges, or None on auto range."""
        return self._fixed

    def set_ranges(self, volts: float, amps: float) -> None:
        """Testing pass: fixed ranges (validated against the model's range list)."""
        volts, amps = self._validated(volts, amps)
        self._exchange(lambda: self._apply_fixed(volts, amps))

    def auto_range(self) -> None:
        """Ranging pass: let the meter pick its ranges."""
        self._exchange(self._apply_auto)

    def _apply_fixed(self, volts: float, amps: float) -> None:
        self.voltage_range = volts
        self.current_range = amps
        self._fixed = (volts, amps)

    def _apply_auto(self) -> None:
        self.voltage_auto = True
        self.current_auto = True
        self._fixed = None

    def _present_ranges(self) -> tuple[float | None, float | None]:
        """Ranges the meter uses now; on auto range ask it (None when it cannot say)."""
        if self._fixed is not None:
            return self._fixed
        try:
            return self.voltage_range, self.current_range
        except InstrumentTimeout:
            raise
        except (InstrumentError, AttributeError):
            return None, None

    def _configure(self) -> None:
        super()._configure()
        if self._initial is not None and self._fixed is None:
            self._apply_fixed(*self._initial)

    def _after_reconnect(self) -> None:
        if self._fixed is not None:
            self._apply_fixed(*self._fixed)

    # -- reading ------------------------------------------------------------------------------
    def read(self, t: float) -> PowerSample:
        return self._exchange(lambda: self._sample(t))

    def _sample(self, t: float) -> PowerSample:
        return self._assemble(t, self._fetch())

    def _assemble(self, t: float, values: dict[str, Decoded]) -> PowerSample:
        """A sample from fetched fields: ranges, uncertainty and flags added (apart from the
        fetch, so a PTDaemon channel can assemble its block of a line read once)."""
        range_v, range_a = self._present_ranges()
        watts = values["watts"].value
        uncertainty = self._uncertainty_pct(watts, range_v, range_a)
        flags = set().union(*(d.flags for d in values.values()))
        flags |= self._range_flags(values, range_v, range_a)
        flags |= self._judged_flags(values)
        accuracy = self.accuracy
        if accuracy is not None and accuracy.low_current(values["amps"].value):
            flags.add(FLAG_LOW_CURRENT)
        if uncertainty is None:
            flags.add(FLAG_UNCERTAINTY_UNKNOWN)
        elif uncertainty > self.limits.max_uncertainty_pct:
            flags.add(FLAG_UNCERTAINTY_HIGH)
        if not self.GIVES_FREQUENCY and math.isnan(values["freq_hz"].value):
            flags.add(FLAG_FREQUENCY_NOT_MEASURED)
        return PowerSample(t, watts, values["volts"].value, values["amps"].value,
                           values["pf"].value, values["freq_hz"].value, range_v, range_a,
                           uncertainty, frozenset(flags), values["watts"].resolution,
                           instrument=self.instrument_key())

    def _judged_flags(self, values: dict[str, Decoded]) -> set[str]:
        """Stale and implausible, judged on the decoded values (see the module docstring)."""
        flags = set()
        watts, volts, amps = (values[k].value for k in ("watts", "volts", "amps"))
        limit = self.limits.max_identical_readings
        steps = (values["watts"].resolution, values["volts"].resolution,
                 values["amps"].resolution)
        if self._repeats.add((watts, volts, amps), steps) > \
                (limit if limit is not None else math.inf):
            flags.add(FLAG_STALE)
        if implausible(watts, volts, amps, values["pf"].value, self._phase_factor(),
                       self.limits.power_plausibility_tolerance_pct):
            flags.add(FLAG_IMPLAUSIBLE)
        return flags

    def _phase_factor(self) -> float:
        """k of the plausibility rule for what this driver reads (one phase unless a driver
        reads Σ values of a three-phase wiring)."""
        return PHASE_FACTOR["1P2W"]

    def peaks(self) -> tuple[float, float]:
        """Ranging pass: (V peak, A peak) of the latest update, NaN where unknown."""
        return self._exchange(self._read_peaks)

    def _read_peaks(self) -> tuple[float, float]:
        values: dict[str, float] = {}
        for reading in self.PEAKS:
            reply = self._query(reading.command(self))
            decoded = decode_fields(reply, len(reading.fields), self.SPECIALS, reading.separator)
            values.update((name, d.value) for name, d in zip(reading.fields, decoded))

        def magnitude(quantity: str) -> float:
            found = [abs(values[k]) for k in (f"{quantity}+", f"{quantity}-") if k in values]
            return max(found) if found and all(math.isfinite(v) for v in found) else math.nan

        return magnitude("v_peak"), magnitude("a_peak")

    def _fetch(self) -> dict[str, Decoded]:
        fresh = self._fresh()
        reading = self._reading()
        reply = self._query(reading.command(self))
        decoded = dict(zip(reading.fields, decode_fields(reply, len(reading.fields),
                                                         self.SPECIALS, reading.separator)))
        nan = Decoded(float("nan"))
        values = {name: decoded.get(name, nan) for name in POWER_FIELDS}
        if fresh is False:
            values["watts"] = Decoded(values["watts"].value, values["watts"].flags | {FLAG_STALE},
                                      values["watts"].resolution)
        elif fresh == FLAG_GARBAGE:  # the meter's word on freshness was unreadable
            values["watts"] = Decoded(math.nan, frozenset({FLAG_GARBAGE}))
        return values

    def _fresh(self) -> bool | str | None:
        """Whether the meter has new data since the last reading (asked before the reading):
        True/False; None when the protocol gives no such answer (freshness not checked by
        the meter); ``FLAG_GARBAGE`` when its answer could not be read."""
        return None

    def _reading(self) -> Reading:
        return self.READING

    def _uncertainty_pct(self, watts: float, range_v: float | None,
                         range_a: float | None) -> float | None:
        return self.ACCURACY.power_uncertainty_pct(watts, range_v, range_a)

    def _range_flags(self, values: dict[str, Decoded], range_v: float | None,
                     range_a: float | None) -> set[str]:
        """A reading above a *fixed* range is over-range even if the meter still shows it."""
        if self._fixed is None:
            return set()
        amps, volts = abs(values["amps"].value), abs(values["volts"].value)
        over = (range_a is not None and math.isfinite(amps) and amps > range_a) or \
               (range_v is not None and math.isfinite(volts) and volts > range_v)
        return {FLAG_OVERRANGE} if over else set()
