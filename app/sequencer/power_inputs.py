"""The SUT's power as the sum of its power inputs, read as one meter (method-notes §10).

An array has redundant supplies per enclosure, and a large one needs more analyzers than one,
so the method's "input power" is a sum over several meters, elements and wirings. This module
reads every input at each sample instant and hands the sequencer one total
:class:`~drivers.interfaces.PowerSample` that carries the per-input readings (``inputs``), so the
sampler, the phase recorder and storage see one power series as before and the per-input
evidence travels with it.

The rules, each named in the report:

* **Alignment.** Inputs are read one after the other; each reading is stamped on the station
  clock at the middle of its query. Readings more than half a sample period apart are not one
  instant: they are stored, not summed (``FLAG_INPUTS_MISALIGNED``, watts NaN).
* **A missing input.** An input that does not answer gives a NaN reading flagged
  ``FLAG_INPUT_MISSING`` and the total is flagged and not summed (a partial sum is not the
  SUT's power); the driver reconnects on its next read. An input silent for the method's
  ``[sampling] meter_silence_limit_s`` loses the meter
  (:class:`~app.sequencer.sampler.MeterLost`), the same rule as for one meter: a dropped reply
  is a flagged instant, never the end of a day-long run.
* **Flags.** Each input keeps its own flags; every flag of an input flags the total, except
  the two the method judges on the total itself: the uncertainty limit (the total's
  combined uncertainty is judged instead, against the method's ``max_uncertainty_pct``) and the
  low-current warning (a warning on that input).
* **Uncertainty.** The total's absolute uncertainty is the sum of the inputs' absolute
  uncertainties (``Σ u_i·|P_i|``): the conservative combination, which assumes their errors
  may all lean the same way. Unknown for any input → unknown for the total.
* **Resolution.** The sum's resolution is its coarsest input's (the last digit it can move).
* **Supply.** Every input's volts and hertz are checked against the declared supply
  (``app.sequencer.conformance.SiteRules.supply_flags``); the total carries the first input's
  volts, power factor and hertz only as a display value, and no current (amps of different
  phases and voltages do not add up to anything).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from app.core.records import PowerInput
from app.sequencer.sampler import MeterLost
from drivers.clock import Clock
from drivers.interfaces import (DEFAULT_SILENCE_LIMIT_S, AccuracyStatement, FLAG_INPUT_MISSING,
                                FLAG_INPUTS_MISALIGNED, FLAG_LOW_CURRENT, FLAG_UNCERTAINTY_HIGH,
                                FLAG_UNCERTAINTY_UNKNOWN, SIMULATOR_IDN_PREFIX, IdentityMismatch,
                                InstrumentError, InstrumentIdentity, PowerMeter, PowerSample,
                                ReadingLimits)

#: flags the method judges on the total, not copied from an input (see the module docstring)
NOT_PROPAGATED = frozenset({FLAG_UNCERTAINTY_HIGH, FLAG_LOW_CURRENT})
#: how the report names the combination (method-notes §10)
COMBINATION_RULE = ("sum of the inputs' absolute uncertainties (u_i × P_i added over the "
                    "inputs: the conservative combination)")
#: the accuracy statement of a meter that reports its own uncertainty per sample
STATED_BY_METER = "stated by the meter per sample (PTDaemon's Uncertainty)"


@dataclass(frozen=True)
class InputIdentity:
    """Who reads one input, and the accuracy formula its uncertainty is judged by: kept with
    the run so the report names each input's meter and formula."""

    name: str
    identity: InstrumentIdentity
    element: int | None
    wiring: str
    accuracy: str


def accuracy_statement(spec: AccuracyStatement | None) -> str:
    return STATED_BY_METER if spec is None else spec.describe()


def combined_uncertainty_pct(parts: Sequence[PowerSample], total_w: float) -> float | None:
    """The total's relative uncertainty (%) from the inputs' (see the module docstring)."""
    known = [(p.uncertainty_pct, p.watts) for p in parts if p.uncertainty_pct is not None]
    if len(known) < len(parts) or not total_w or total_w != total_w:
        return None
    absolute = math.fsum(u * abs(w) / 100.0 for u, w in known)
    return absolute / abs(total_w) * 100.0


def sum_inputs(t: float, parts: Sequence[PowerSample], max_skew_s: float,
               max_uncertainty_pct: float = ReadingLimits.max_uncertainty_pct) -> PowerSample:
    """The SUT's total at instant ``t`` from the inputs' readings (each with its own ``t``),
    its combined uncertainty judged against ``max_uncertainty_pct`` (the method's)."""
    flags = set().union(*(p.flags - NOT_PROPAGATED for p in parts))
    if len(parts) > 1 and max(p.t for p in parts) - min(p.t for p in parts) > max_skew_s:
        flags.add(FLAG_INPUTS_MISALIGNED)
    summable = not flags & {FLAG_INPUT_MISSING, FLAG_INPUTS_MISALIGNED}
    watts = math.fsum(p.watts for p in parts) if summable else math.nan
    uncertainty = combined_uncertainty_pct(parts, watts) if summable else None
    if uncertainty is None:
        flags.add(FLAG_UNCERTAINTY_UNKNOWN)
    elif uncertainty > max_uncertainty_pct:
        flags.add(FLAG_UNCERTAINTY_HIGH)
    resolutions = [p.resolution_w for p in parts if p.resolution_w is not None]
    resolution = max(resolutions) if len(resolutions) == len(parts) else None
    first = parts[0]
    return PowerSample(t, watts, first.volts, math.nan, first.pf, first.freq_hz, None, None,
                       uncertainty, frozenset(flags), resolution, inputs=tuple(parts))


@dataclass
class PowerInputs:
    """Every power input of the SUT read as one :class:`~drivers.interfaces.PowerMeter`.

    ``clock`` is the station clock: only differences of it are used, to stamp each input's
    reading relative to the instant the sampler asked for. ``period_s`` is the sample period
    (readings more than half of it apart are not summed)."""

    inputs: Sequence[tuple[PowerInput, PowerMeter]]
    clock: Clock
    period_s: float
    #: the method's ``[sampling] meter_silence_limit_s``
    silence_limit_s: float = DEFAULT_SILENCE_LIMIT_S
    identities: tuple[InputIdentity, ...] = ()
    #: the method's limits on each reading (the inputs' meters judge theirs; the total's
    #: combined uncertainty is judged here)
    limits: ReadingLimits = ReadingLimits()
    notes: list[str] = field(default_factory=list)
    _silent_since: dict[str, float] = field(default_factory=dict)  # input → its first miss

    # -- life cycle ----------------------------------------------------------------------------
    def open(self) -> InstrumentIdentity:
        self.identities = tuple(
            InputIdentity(config.name, meter.open(), config.element, config.wiring,
                          accuracy_statement(meter.accuracy))
            for config, meter in self.inputs)
        return self.combined_identity()

    def identify(self) -> InstrumentIdentity:
        self.identities = tuple(InputIdentity(i.name, meter.identify(), i.element, i.wiring,
                                              i.accuracy)
                                for i, (_, meter) in zip(self.identities, self.inputs))
        return self.combined_identity()

    def reconnect(self) -> InstrumentIdentity:
        """Only reached when every input failed at once: reopen each in turn."""
        for _, meter in self.inputs:
            meter.reconnect()
        return self.combined_identity()

    def interrupt(self) -> None:
        """Stop: every input's read or reconnect in progress ends (the sampler's abort)."""
        for _, meter in self.inputs:
            meter.interrupt()

    def end_waits_after(self, seconds: float | None) -> None:
        """The sampler's silence limit bounds every input's waits."""
        for _, meter in self.inputs:
            meter.end_waits_after(seconds)

    def close(self) -> None:
        """Close every input's meter, then name each one that failed to close (one failing
        must not leave the others open, nor be hidden)."""
        failed = []
        for config, meter in reversed(self.inputs):
            try:
                meter.close()
            except InstrumentError as exc:
                failed.append(f"power input {config.name}: {exc}")
        if failed:
            raise InstrumentError("; ".join(failed))

    def combined_identity(self) -> InstrumentIdentity:
        """One identity for the run's "power meter": every input's meter named, SIMULATED when
        any of them is (a run on a simulated input is never compliant)."""
        simulated = any(i.identity.simulated for i in self.identities)
        return InstrumentIdentity(
            (SIMULATOR_IDN_PREFIX + " " if simulated else "") + f"{len(self.inputs)} power inputs",
            "; ".join(f"{i.name}: {i.identity.describe()}" for i in self.identities),
            resource=", ".join(i.identity.resource for i in self.identities), driver="inputs")

    @property
    def ranges(self) -> tuple[float, float] | None:
        return None  # each input has its own; see the per-input readings

    @property
    def accuracy(self) -> None:
        return None  # each input has its own formula (``identities``)

    # -- reading -------------------------------------------------------------------------------
    def read(self, t: float) -> PowerSample:
        start = self.clock.now()
        parts: list[PowerSample] = []
        errors: list[InstrumentError] = []
        for config, meter in self.inputs:
            before = self.clock.now()
            try:
                sample = meter.read(t)
            except IdentityMismatch:
                raise  # another meter on this input: never a missing reading to sum around
            except InstrumentError as exc:
                errors.append(exc)
                parts.append(self._missing(config.name, t + before - start, exc))
                continue
            self._silent_since.pop(config.name, None)
            middle = t + (before + self.clock.now()) / 2 - start
            parts.append(replace(sample, t=middle, input=config.name))
        if len(errors) == len(self.inputs):
            raise errors[0]  # nothing read at all: the sampler's gap and reconnect
        return sum_inputs(t, parts, self.period_s / 2, self.limits.max_uncertainty_pct)

    def _missing(self, name: str, t: float, exc: InstrumentError) -> PowerSample:
        since = self._silent_since.setdefault(name, self.clock.now())
        self.notes.append(f"power input {name}: no reading at {t:.1f} s ({exc})")
        silent = self.clock.now() - since
        if silent >= self.silence_limit_s:
            raise MeterLost(f"power input {name} silent for {silent:.1f} s (limit [sampling] "
                            f"meter_silence_limit_s = {self.silence_limit_s:g} s); last error: "
                            f"{exc}")
        return PowerSample(t, math.nan, flags=frozenset({FLAG_INPUT_MISSING}), input=name)

    def take_notes(self) -> list[str]:
        notes, self.notes = self.notes, []
        return notes
