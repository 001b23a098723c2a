"""Sequencer runs on the simulated lab with a fake clock (hours of plan in a second), with
every event kept for the test to inspect."""

from __future__ import annotations

from dataclasses import replace

from app.labs.simulated import simulated_sut
from app.method.loader import load_method
from app.method.model import Method
from app.core.records import MetricResult, RunConfig, RunStatus, SutDescription
from app.sequencer import events as ev
from app.sequencer.equipment import Lab
from app.sequencer.sequencer import Sequencer
from drivers.clock import FakeClock
from drivers.simulators.engine import SimulatedWorkloadEngine
from drivers.simulators.direct_meters import SimulatedPowerMeter, SimulatedThermometer
from drivers.simulators.sut import SimulatedSut

#: a media-library plan (no pre-fill, SW and SR): the shortest whole sequences
SHORT = "removable-1"
#: the shipped method with the compliance minimums
COMPLIANT = "emerald-block-v3"


class Recorder:
    def __init__(self) -> None:
        self.events: list[ev.RunEvent] = []
        self.hooks: list = []

    def __call__(self, event: ev.RunEvent) -> None:
        self.events.append(event)
        for hook in self.hooks:
            hook(event)

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]

    def started(self) -> list[str]:
        return [e.phase.name for e in self.of(ev.PhaseStarted)]

    def metric(self, name: str):
        return next(e.metric for e in self.of(ev.MetricComputed) if e.metric.name == name)


def make_run(method: str = "demo", taxonomy: str = "online-3", coms: tuple[str, ...] = (),
             meter=None, engine_fail_after: float | None = None):
    clock = FakeClock()
    config = RunConfig(method=method, taxonomy=taxonomy, lab="sim-direct",
                       sut=SutDescription(coms_declared=coms, coms_on_during_test=coms))
    sut = simulated_sut(config)
    lab = Lab(meter(sut) if meter else SimulatedPowerMeter(sut),
              SimulatedWorkloadEngine(sut, clock, fail_after_s=engine_fail_after),
              SimulatedThermometer(sut), sut.used_capacity_bytes)
    rec = Recorder()
    seq = Sequencer(load_method(method), config, lab, clock, [rec])
    return seq, rec, clock


class ProfileClock:
    """Seconds since the simulated SUT started the named profile (None before, or after)."""

    def __init__(self, sut: SimulatedSut, profile: str) -> None:
        self.sut, self.profile, self.t0 = sut, profile, None

    def __call__(self, t: float) -> float | None:
        running = self.sut.profile
        if running is None or running.name != self.profile or running.kind != "active":
            return None
        if self.t0 is None:
            self.t0 = t
        return t - self.t0


def run_short_sequence(method: str | Method = "demo", sut_setup: dict | None = None,
                       spec: dict | None = None, power=None, thermometer=SimulatedThermometer,
                       clock: FakeClock | None = None) -> tuple[Sequencer, list[ev.RunEvent]]:
    """One whole short sequence on the simulated lab; ``spec`` changes the simulated SUT
    (volts, freq_hz, inlet_c), ``sut_setup`` what the technician declared; ``clock`` the
    station's (a meter that answers late advances it)."""
    method = load_method(method) if isinstance(method, str) else method
    clock = clock or FakeClock()
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
