"""One whole short sequence on the simulated lab, on a fake clock, with any meter swapped in:
the rules on the readings are tested by breaking one reading on purpose (issue 14, issue 24)."""

from __future__ import annotations

from dataclasses import replace

from app.method.loader import load_method
from app.method.model import Method
from app.records import MetricResult, RunConfig, RunStatus, SutDescription
from app.sequencer import events as ev
from app.sequencer.lab import Lab
from app.sequencer.sequencer import Sequencer
from app.sim_lab import simulated_sut
from drivers.clock import FakeClock
from drivers.simulators.direct_meters import SimulatedPowerMeter, SimulatedThermometer
from drivers.simulators.engine import SimulatedWorkloadEngine
from drivers.simulators.sut import SimulatedSut

#: a media-library plan (no pre-fill, SW and SR): the shortest whole sequences
SHORT = "removable-1"
#: the shipped method with the compliance minimums
COMPLIANT = "emerald-block-v3"


def run(method: str | Method = "demo", sut_setup: dict | None = None, spec: dict | None = None,
        power=None, thermometer=SimulatedThermometer) -> tuple[Sequencer, list[ev.RunEvent]]:
    """One whole short sequence on the simulated lab; ``spec`` changes the simulated SUT
    (volts, freq_hz, inlet_c), ``sut_setup`` what the technician declared; ``power`` and
    ``thermometer`` build the meters from the simulated SUT."""
    method = load_method(method) if isinstance(method, str) else method
    clock = FakeClock()
    config = RunConfig(method=method.name, taxonomy=SHORT, lab="sim-direct",
                       sut=SutDescription(**(sut_setup or {})))
    sut = simulated_sut(config)
    if spec:
        sut = SimulatedSut(replace(sut.spec, **spec), seed=sut.seed)
    events: list[ev.RunEvent] = []
    lab = Lab(power(sut) if power else SimulatedPowerMeter(sut),
              SimulatedWorkloadEngine(sut, clock),
              thermometer(sut) if thermometer else None, sut.used_capacity_bytes)
    seq = Sequencer(method, config, lab, clock, [events.append])
    assert seq.run() is RunStatus.COMPLETED, seq.error
    return seq, events


def metrics(seq: Sequencer) -> dict[str, MetricResult]:
    return {m.name: m for m in seq.metrics}


def assert_all_valid(seq: Sequencer) -> None:
    bad = [(m.name, m.reason) for m in seq.metrics if not m.valid]
    assert not bad, bad
