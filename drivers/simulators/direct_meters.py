"""In-process simulated meters reading the simulated SUT directly.

These skip the wire protocol and exist for sequencer tests that run on a fake clock (a socket
round trip per simulated second would make a 7-hour plan take minutes). The demo and the GUI
use the wire-level simulators in ``drivers.simulators`` with the real drivers instead.
Fault injection: ``fail_after`` readings the meter stops answering (raises a timeout).
"""

from __future__ import annotations

from drivers.interfaces import (FLAG_OVERRANGE, FLAG_UNCERTAINTY_HIGH, InstrumentError,
                                InstrumentIdentity, InstrumentTimeout, PowerSample,
                                ReadingLimits, TemperatureSample)
from drivers.meters.accuracy import AccuracySpec, uniform
from drivers.simulators.state import PSU_CURRENT_CREST, SINE_CREST
from drivers.simulators.sut import SimulatedSut

#: accuracy of the simulated analyzer: ±(0.1 % of reading + 0.05 % of range)
K_READ, K_RANGE = 0.001, 0.0005
SIM_RANGE_V = 300.0
#: the WT300's ranges at crest factor 3 (the simulated analyzer ranges like one)
SIM_VOLT_RANGES = (15.0, 30.0, 60.0, 150.0, 300.0, 600.0)
SIM_AMP_RANGES = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0)
SIM_CREST_FACTOR = 3.0


class _SimulatedInstrument:
    """Identity and life cycle shared by the in-process simulated meters."""

    def __init__(self, sut: SimulatedSut, model: str, resource: str) -> None:
        self.sut = sut
        self.identity = InstrumentIdentity("StorWatt", model, "0001", "1.0", resource, "sim")

    def open(self) -> InstrumentIdentity:
        return self.identity

    def identify(self) -> InstrumentIdentity:
        return self.identity

    def reconnect(self) -> InstrumentIdentity:
        """Nothing to reopen: the meter reads the SUT in-process, so a "reconnect" after an
        injected fault only reports who answers (the fault itself stays)."""
        return self.identity

    def interrupt(self) -> None:
        """Nothing blocks: a read returns (or fails) at once."""

    def end_waits_after(self, seconds: float | None) -> None:
        """Nothing blocks, so there is no wait to bound."""

    def close(self) -> None:
        pass


class SimulatedPowerMeter(_SimulatedInstrument):
    """Reads the SUT in-process and ranges like a WT300 at crest factor 3: on auto range it
    picks the smallest ranges holding the rms and the peak; on fixed ranges a reading whose
    rms exceeds the range, or whose peak exceeds the crest factor × range, is over-range."""

    def __init__(self, sut: SimulatedSut, range_w: float = 1200.0,
                 fail_after: int | None = None, resolution_w: float = 0.01,
                 share: float = 1.0, limits: ReadingLimits | None = None) -> None:
        super().__init__(sut, "SIM-PM", "sim://power")
        self.limits = limits or ReadingLimits()
        self.share = share  # the part of the SUT's power this meter's input carries
        self.range_w = range_w * share
        self.resolution_w = resolution_w  # reads are rounded to it, as a display would
        self.fail_after = fail_after
        self.reads = 0
        #: fixed ranges, as a compliant testing pass uses: 300 V and the current range that
        #: makes ``range_w`` full scale, until the sequencer ranges the meter itself
        self._fixed: tuple[float, float] | None = (SIM_RANGE_V, self.range_w / SIM_RANGE_V)
        #: every range command, in order, like a wire simulator's transcript
        self.commands: list[str] = []

    @property
    def ranges(self) -> tuple[float, float] | None:
        return self._fixed

    @property
    def volt_ranges(self) -> tuple[float, ...]:
        return SIM_VOLT_RANGES

    @property
    def amp_ranges(self) -> tuple[float, ...]:
        return SIM_AMP_RANGES

    @property
    def crest_factor(self) -> float:
        return SIM_CREST_FACTOR

    def auto_range(self) -> None:
        self._fixed = None
        self.commands.append("AUTO")

    def set_ranges(self, volts: float, amps: float) -> None:
        if volts not in SIM_VOLT_RANGES or amps not in SIM_AMP_RANGES:
            raise InstrumentError(f"{volts:g} V / {amps:g} A is not a range pair of the "
                                  "simulated meter")
        self._fixed = (volts, amps)
        self.commands.append(f"RANGE {volts:g} V {amps:g} A")

    def peaks(self) -> tuple[float, float]:
        _, volts, amps, _, _ = self.sut.electrical_state()
        return volts * SINE_CREST, amps * self.share * PSU_CURRENT_CREST

    def _present(self, volts: float, amps: float) -> tuple[float, float]:
        if self._fixed is not None:
            return self._fixed
        return (_smallest(SIM_VOLT_RANGES, volts, volts * SINE_CREST),
                _smallest(SIM_AMP_RANGES, amps, amps * PSU_CURRENT_CREST))

    @property
    def accuracy(self) -> AccuracySpec:
        return AccuracySpec(SIM_VOLT_RANGES, uniform(SIM_AMP_RANGES, K_READ, K_RANGE),
                            crest_factor=SIM_CREST_FACTOR)

    def read(self, t: float) -> PowerSample:
        self.reads += 1
        if self.fail_after is not None and self.reads > self.fail_after:
            raise InstrumentTimeout("simulated power meter stopped answering (fault injection)")
        watts, volts, amps, pf, hz = self.sut.electrical_state()
        watts, amps = watts * self.share, amps * self.share
        watts = round(watts / self.resolution_w) * self.resolution_w
        range_v, range_a = self._present(volts, amps)
        unc = (K_READ * watts + K_RANGE * range_v * range_a) / watts * 100
        flags = {FLAG_UNCERTAINTY_HIGH} if unc > self.limits.max_uncertainty_pct else set()
        if amps > range_a or amps * PSU_CURRENT_CREST > SIM_CREST_FACTOR * range_a:
            flags.add(FLAG_OVERRANGE)
        return PowerSample(t, watts, volts, amps, pf, hz, range_v, range_a, unc,
                           frozenset(flags), self.resolution_w)


def _smallest(ranges: tuple[float, ...], rms: float, peak: float) -> float:
    return next((r for r in ranges if rms <= r and peak <= SIM_CREST_FACTOR * r), ranges[-1])


class SimulatedThermometer(_SimulatedInstrument):
    def __init__(self, sut: SimulatedSut) -> None:
        super().__init__(sut, "SIM-TC", "sim://temp")

    def read(self, t: float) -> TemperatureSample:
        return TemperatureSample(t, self.sut.inlet_celsius(), resolution_c=0.1)  # rounded so
