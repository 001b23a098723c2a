"""In-process simulated meters reading the simulated SUT directly.

These skip the wire protocol and exist for sequencer tests that run on a fake clock (a socket
round trip per simulated second would make a 7-hour plan take minutes). The demo and the GUI
use the wire-level simulators in ``drivers.simulators`` with the real drivers instead.
Fault injection: ``fail_after`` readings the meter stops answering (raises a timeout).
"""

from __future__ import annotations

from drivers.interfaces import (FLAG_UNCERTAINTY_HIGH, InstrumentIdentity, InstrumentTimeout,
                                PowerSample, TemperatureSample)
from drivers.simulators.sut import SimulatedSut

#: accuracy of the simulated analyzer: ±(0.1 % of reading + 0.05 % of range)
K_READ, K_RANGE = 0.001, 0.0005
SIM_RANGE_V = 300.0


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
    def __init__(self, sut: SimulatedSut, range_w: float = 1200.0,
                 fail_after: int | None = None, resolution_w: float = 0.01) -> None:
        super().__init__(sut, "SIM-PM", "sim://power")
        self.range_w = range_w
        self.resolution_w = resolution_w  # reads are rounded to it, as a display would
        self.fail_after = fail_after
        self.reads = 0

    @property
    def ranges(self) -> tuple[float, float]:
        """Fixed ranges, as a compliant testing pass uses: 300 V and the current range that
        makes ``range_w`` full scale."""
        return SIM_RANGE_V, self.range_w / SIM_RANGE_V

    def read(self, t: float) -> PowerSample:
        self.reads += 1
        if self.fail_after is not None and self.reads > self.fail_after:
            raise InstrumentTimeout("simulated power meter stopped answering (fault injection)")
        watts, volts, amps, pf, hz = self.sut.electrical_state()
        watts = round(watts / self.resolution_w) * self.resolution_w
        unc = (K_READ * watts + K_RANGE * self.range_w) / watts * 100
        flags = frozenset({FLAG_UNCERTAINTY_HIGH}) if unc > 1.0 else frozenset()
        return PowerSample(t, watts, volts, amps, pf, hz, *self.ranges, unc, flags,
                           self.resolution_w)


class SimulatedThermometer(_SimulatedInstrument):
    def __init__(self, sut: SimulatedSut) -> None:
        super().__init__(sut, "SIM-TC", "sim://temp")

    def read(self, t: float) -> TemperatureSample:
        return TemperatureSample(t, self.sut.inlet_celsius())
