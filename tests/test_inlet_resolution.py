"""The inlet resolution rule judges the instrument, not the weather (issue 24 item 3, row 6c):
a steady 22.4 °C read at 0.1 °C is VALID, as are 22.5 and 23.0 °C; the resolution comes from
the digits of the thermometer's reply (or its driver's statement), never from the steps the
readings show."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.sequencer.conformance import resolution_of_inlet
from drivers.interfaces import TemperatureSample
from drivers.meters.thermo import DAQ970A, Watchport
from drivers.simulators.meter import ThermometerSimulator
from drivers.simulators.direct_meters import SimulatedThermometer
from tests.support.sequences import COMPLIANT, assert_all_valid, run

FAST = {"timeout_s": 1.0, "reconnect_attempts": 1, "reconnect_delay_s": 0.01}


class SteadyInlet(SimulatedThermometer):
    """A well-controlled lab: the inlet never moves from ``celsius``, read at 0.1 °C."""

    def __init__(self, sut, celsius: float) -> None:
        super().__init__(sut)
        self.celsius = celsius

    def read(self, t: float) -> TemperatureSample:
        return replace(super().read(t), celsius=self.celsius)


def test_a_steady_inlet_read_at_a_tenth_is_valid() -> None:
    seq, _ = run(COMPLIANT, thermometer=lambda sut: SteadyInlet(sut, 22.4))
    assert_all_valid(seq)


def test_the_rule_reads_the_stated_resolution_not_the_values() -> None:
    steady = [TemperatureSample(t, c, resolution_c=0.1) for c in (22.4, 22.5, 23.0)
              for t in range(30)]  # the 0.2, 0.5 and 1 °C "grids" that failed before
    assert resolution_of_inlet([s.resolution_c for s in steady], 0.1) is None
    assert "resolves 0.5 °C in 1 of 3" in resolution_of_inlet([0.1, 0.5, 0.1], 0.1)
    assert "stated no resolution for 2 of 2" in resolution_of_inlet([None, None], 0.1)


@pytest.mark.parametrize(("model", "driver"), [("daq970a", DAQ970A), ("watchport", Watchport)])
def test_the_drivers_take_the_resolution_from_their_replies(model: str, driver) -> None:
    with ThermometerSimulator(model, lambda: 22.4) as sim:
        meter = driver(sim.resource, **FAST)
        meter.open()
        try:
            sample = meter.read(1.0)
        finally:
            meter.close()
    assert sample.resolution_c is not None and sample.resolution_c <= 0.1


def test_a_whole_degree_reply_states_one_degree() -> None:
    meter = Watchport("ASRL1::INSTR")
    assert meter.STATED_RESOLUTION_C is None  # the reply's digits tell
    from drivers.meters.values import decode

    assert decode("23C").resolution == 1.0 and decode("+22.4C").resolution == pytest.approx(0.1)
