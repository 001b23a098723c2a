"""A bench that identifies as real, for the end-to-end test of the compliant path (issue 24).

The shipped simulators answer every identity query with ``STORWATT-SIM`` first, so a run on
them is never compliant (conformance row 7c). Here, in ``tests/`` only, the same wire dialects
answer as the real instruments do: the 2-channel PTDaemon with the captured Identify line of a
real PTDaemon 1.10.0 (tests/fixtures/ptd), the WT310E and the DAQ970A with their own ``*IDN?``
layouts. The drivers talk to them over TCP exactly as to the real ones.

The SUT cannot be real under a fake clock (real IO takes real time), so :class:`StandInSut`
is the simulated engine naming itself as a stand-in; the test says so wherever it uses it.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from drivers.clock import Clock
from drivers.simulators.dialects import DaqDialect, PtdDialect, WT300Dialect
from drivers.simulators.engine import SimulatedWorkloadEngine
from drivers.simulators.meter import MeterSimulator
from drivers.simulators.server import LineServer
from drivers.simulators.state import ElectricalState

FIXTURES = Path(__file__).parent.parent / "fixtures" / "ptd"
#: the Identify reply of the real PTDaemon 1.10.0 (WT333E, multi-channel) in the capture
PTD_IDENTIFY = next(m["reply"] for m in json.loads(
    (FIXTURES / "resnet50_offline_messages.json").read_text()) if m["cmd"] == "Identify")
WT310E_IDN = "YOKOGAWA,WT310E,C2PH13047V,F1.03"
DAQ970A_IDN = "Keysight Technologies,DAQ970A,MY58001234,A.03.01"
#: a steady 600 W SUT on 230 V / 50 Hz
STEADY = ElectricalState(600.0, 230.0, 2.74, 0.95, 50.0)


class SteadySupply:
    """A steady SUT as a real analyzer reads it: the last digits move (±0.1 % in watts, volts
    and amps, seeded), so the method's identical-readings rule (a frozen meter) never trips on
    a stand-in the way it did on a constant one (every PTDaemon sample 'stale')."""

    def __init__(self, seed: int = 24) -> None:
        self._rng = random.Random(seed)
        self._lock = threading.Lock()

    def __call__(self) -> ElectricalState:
        with self._lock:
            w, v, a = (1 + self._rng.gauss(0, 0.001) for _ in range(3))
        return replace(STEADY, watts=STEADY.watts * w, volts=STEADY.volts * v,
                       amps=STEADY.amps * a)


class _RealPtdDialect(PtdDialect):
    def respond(self, command: str, special):
        if command.strip() == "Identify":
            return PTD_IDENTIFY
        return super().respond(command, special)


class RealPtd(MeterSimulator):
    """A PTDaemon in multi-channel mode that identifies as the captured real daemon."""

    def __init__(self, source: Callable[[], ElectricalState] | None = None,
                 channels: int = 2) -> None:
        source = source or SteadySupply()
        super().__init__("ptd", source, channels=channels)

    def _dialect(self, model: str, compat: bool):
        return _RealPtdDialect(self.state, channels=self.channels)


class RealWt310e(MeterSimulator):
    """A WT310E answering ``*IDN?`` as the real one does."""

    def __init__(self, source: Callable[[], ElectricalState] | None = None,
                 clock: Clock | None = None) -> None:
        source = source or SteadySupply()
        super().__init__("wt310", source, clock=clock)

    def _dialect(self, model: str, compat: bool):
        # its data updates follow the run's clock, as the shipped simulator's: the driver
        # asks the update bit before every reading (drivers/meters/yokogawa.py)
        return WT300Dialect(self.state, WT310E_IDN, 1, self.clock.now, self.update_s)


def real_daq970a(celsius: Callable[[], float] = lambda: 22.4) -> LineServer:
    """A DAQ970A thermocouple channel reading a steady inlet, as the real one identifies."""
    return LineServer(DaqDialect(celsius, DAQ970A_IDN))


class StandInSut(SimulatedWorkloadEngine):
    """The simulated SUT's engine, naming itself a stand-in (not "simulated"): the only way to
    run a day-long compliant sequence under a fake clock. Test-only."""

    def check(self) -> str:
        super().check()
        return "storage stand-in for a real SUT (tests/support/real_bench.py)"
