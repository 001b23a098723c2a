"""The simulated SUT is the seed's sample system (issue 24 item 10): its ready idle prints the
sample report's EP_RI 12.317 GB/W whatever the seed (592.7 W sat on the edge of the span that
prints it, and a 0.3 % idle noise printed 12.316 in 5 of 8 seeds)."""

from __future__ import annotations

import pytest

from app.method.loader import load_method
from app.metrics.formatting import format_figure
from app.core.records import RunConfig
from app.sequencer.equipment import Lab
from app.sequencer.sequencer import Sequencer
from app.labs.simulated import simulated_sut
from drivers.clock import FakeClock
from drivers.simulators.direct_meters import SimulatedPowerMeter, SimulatedThermometer
from drivers.simulators.engine import SimulatedWorkloadEngine


@pytest.mark.parametrize("seed", [1, 4, 7])
def test_ep_ri_prints_the_seeds_12_317(seed: int) -> None:
    clock, config = FakeClock(), RunConfig(method="demo", lab="sim-direct")
    sut = simulated_sut(config, seed=seed)
    lab = Lab(SimulatedPowerMeter(sut), SimulatedWorkloadEngine(sut, clock),
              SimulatedThermometer(sut), sut.used_capacity_bytes)
    sequencer = Sequencer(load_method("demo"), config, lab, clock, [])
    sequencer.run()
    idle = next(m for m in sequencer.metrics if m.name == "EP_RI")
    assert format_figure(idle.value) == "12.317", idle.avg_power_w
