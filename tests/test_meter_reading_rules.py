"""The method's limits reach the meters, and every reading rule counts over one window (#22).

* ``max_uncertainty_pct`` was never applied: every driver and the in-process simulator judged
  1 % (``drivers/meters/accuracy.py``), so a method asking 0.1 % accepted 0.2 % samples.
* Uncertainty-high samples were counted over the whole attempt, every other flag only in the
  measurement window: a stabilisation burst invalidated a metric for one rule and not another.
* A frozen meter (the same reply again and again) was accepted: the WT300 never asked its
  update bit, and nothing noticed 118 bit-identical readings.
"""

from __future__ import annotations

import math
import random

import pytest

from app.method.loader import load_method
from app.core.records import MetricResult, PhaseKind, RunConfig, RunStatus
from app.sequencer import events as ev
from app.station.session import open_session
from app.labs.simulated import simulated_sut
from app.sequencer.equipment import Lab
from app.sequencer.sequencer import Sequencer
from drivers.clock import FakeClock
from drivers.interfaces import (FLAG_STALE, FLAG_UNCERTAINTY_HIGH, PowerSample,
                                ReadingLimits)
from drivers.meters.registry import open_power_meter
from drivers.simulators import MeterSimulator
from drivers.simulators.direct_meters import SimulatedPowerMeter, SimulatedThermometer
from drivers.simulators.engine import SimulatedWorkloadEngine
from drivers.simulators.state import ElectricalState
from drivers.simulators.sut import SimulatedSut

FAST = {"timeout_s": 0.6, "reconnect_delay_s": 0.02}


def _noisy() -> ElectricalState:
    """A live load: watts and volts move in their last digits from reading to reading."""
    return ElectricalState(200.0 + random.uniform(-0.5, 0.5), 230.0 + random.uniform(-0.3, 0.3))


# --- the uncertainty limit comes from the method ------------------------------------------------
def test_a_method_limit_of_0_1_percent_flags_a_0_2_percent_sample_on_the_wire() -> None:
    with MeterSimulator("wt310", update_s=1e-6) as sim:
        sim.set_state(300.0, volts=230.0, pf=1.0)  # (0.001·300 + 0.0005·600)/300 = 0.2 %
        for limit, flagged in ((1.0, False), (0.1, True)):
            meter = open_power_meter("wt300", sim.resource, range_v=300, range_a=2,
                                     limits=ReadingLimits(max_uncertainty_pct=limit), **FAST)
            meter.open()
            sample = meter.read(0.0)
            meter.close()
            assert sample.uncertainty_pct == pytest.approx(0.2)
            assert (FLAG_UNCERTAINTY_HIGH in sample.flags) is flagged, (limit, sample.flags)


def test_a_run_of_a_0_1_percent_method_judges_by_0_1_percent(tmp_path) -> None:
    """Through the session: the method's limit reaches the lab's meter (the in-process
    simulator reads ±(0.1 % + 0.05 % of range), above 0.1 % on every sample)."""
    smoke = load_method("smoke")
    strict = smoke.model_copy(update={"instruments": smoke.instruments.model_copy(
        update={"max_uncertainty_pct": 0.1})})
    assert strict.instruments.reading_limits().max_uncertainty_pct == 0.1
    session = open_session(RunConfig(method="smoke", lab="sim-direct"), method=strict,
                           db_url=f"sqlite:///{tmp_path / 'runs.sqlite'}", clock=FakeClock())
    try:
        assert session.run() is RunStatus.COMPLETED
        metrics = session.sequencer.metrics
    finally:
        session.close()
    assert metrics and all(not m.valid and "above the 0.1 % uncertainty limit" in m.reason
                           for m in metrics), [(m.name, m.reason) for m in metrics]


# --- every flag counted over the same window ----------------------------------------------------
class HighInStabilisation(SimulatedPowerMeter):
    """Readings 0.5–1.25 s into the active profile ``SW`` (its stabilisation in the demo
    method) come back above the uncertainty limit."""

    def __init__(self, sut: SimulatedSut) -> None:
        super().__init__(sut)
        self.t0: float | None = None
        self.injected = 0

    def read(self, t: float) -> PowerSample:
        sample = super().read(t)
        running = self.sut.profile
        if running is None or running.name != "SW" or running.kind != "active":
            return sample
        self.t0 = t if self.t0 is None else self.t0
        if not 0.5 <= t - self.t0 < 1.25:
            return sample
        self.injected += 1
        return PowerSample(t, sample.watts, sample.volts, sample.amps, sample.pf,
                           sample.freq_hz, sample.range_v, sample.range_a, 1.5,
                           sample.flags | {FLAG_UNCERTAINTY_HIGH}, sample.resolution_w)


def _demo_run(meter) -> dict[str, MetricResult]:
    clock = FakeClock()
    config = RunConfig(method="demo", taxonomy="removable-1", lab="sim-direct")
    sut = simulated_sut(config)
    power = meter(sut)
    lab = Lab(power, SimulatedWorkloadEngine(sut, clock), SimulatedThermometer(sut),
              sut.used_capacity_bytes)
    seq = Sequencer(load_method("demo"), config, lab, clock, [])
    assert seq.run() is RunStatus.COMPLETED, seq.error
    assert getattr(power, "injected", 1) > 0
    return {m.name: m for m in seq.metrics}


def test_uncertainty_high_in_stabilisation_is_not_counted_like_any_other_flag() -> None:
    metrics = _demo_run(HighInStabilisation)
    assert all(m.valid for m in metrics.values()), {n: m.reason for n, m in metrics.items()}


# --- fresh data -----------------------------------------------------------------------------
def test_a_held_wt300_is_flagged_stale_by_its_own_update_bit() -> None:
    with MeterSimulator("wt310", source=_noisy) as sim:
        meter = open_power_meter("wt300", sim.resource, **FAST)
        meter.open()
        assert FLAG_STALE not in meter.read(0.0).flags
        sim.faults.inject("hold", count=None)  # the HOLD key: the data stops updating
        held = [meter.read(float(k)) for k in (1, 2)]
        sim.faults.clear()
        after = meter.read(3.0)
        meter.close()
        asked = sum(e.received == b":STAT:EESR?\n" for e in sim.transcript)
    assert all(FLAG_STALE in s.flags and not s.usable for s in held), [s.flags for s in held]
    assert held[0].watts == held[1].watts  # the same reply twice
    assert FLAG_STALE not in after.flags and after.usable
    assert asked >= 4  # once per reading at least (more while it waited for an update)


def test_a_meter_without_an_update_bit_is_caught_by_the_identical_readings_rule() -> None:
    """The Chroma's protocol says nothing about freshness: a held meter repeats one reply,
    and the reading after ``max_identical_readings`` identical ones is stale."""
    limits = ReadingLimits(max_identical_readings=3)
    with MeterSimulator("chroma66203", source=_noisy) as sim:
        meter = open_power_meter("chroma66200", sim.resource, limits=limits, **FAST)
        meter.open()
        live = [meter.read(float(k)) for k in range(20)]
        sim.faults.inject("hold", count=None)
        held = [meter.read(float(k)) for k in range(20, 26)]
        meter.close()
    assert not any(FLAG_STALE in s.flags for s in live)  # a noisy simulator never trips it
    assert [FLAG_STALE in s.flags for s in held] == [False, False, False, True, True, True]
    assert len({s.watts for s in held}) == 1


def test_the_simulated_sut_never_trips_the_shipped_limit() -> None:
    """The shipped method allows 10 identical readings; the project's simulators carry the
    SUT's noise, so 300 readings of the simulated SUT on the wire never repeat that long."""
    limit = load_method("emerald-block-v3").instruments.max_identical_readings
    sut = simulated_sut(RunConfig(lab="sim"))
    with MeterSimulator("chroma66203", source=lambda: ElectricalState(*sut.electrical_state())) \
            as sim:
        meter = open_power_meter("chroma66200", sim.resource,
                                 limits=ReadingLimits(max_identical_readings=2), **FAST)
        meter.open()
        samples = [meter.read(float(k)) for k in range(300)]
        meter.close()
    assert limit == 10 and not any(FLAG_STALE in s.flags for s in samples)
    assert all(math.isfinite(s.watts) for s in samples)


@pytest.mark.parametrize("freeze_as", ["hold", "cycle of three"])
def test_a_meter_frozen_in_ready_idle_makes_ep_ri_invalid(freeze_as: str) -> None:
    """The case seen: a stand-in repeating one reply from a point on gave bit-identical
    readings and EP_RI stayed VALID. Here the production Chroma driver (no freshness status)
    on a loopback 66203 holds its reply from ready idle on — or, disguised (issue 38, seen
    11), cycles through three replies, one a reading; with the method's limit at 3 the idle
    phase's later readings are stale, counted, and EP_RI is INVALID naming them."""
    smoke = load_method("smoke")
    method = smoke.model_copy(update={"instruments": smoke.instruments.model_copy(
        update={"max_identical_readings": 3}), "plans": tuple(  # 8 s of idle: a cycle of
        p.model_copy(update={"ready_idle_intervals": 8}) for p in smoke.plans)})  # 3 shows
    clock = FakeClock()
    config = RunConfig(method="smoke", taxonomy="removable-1", lab="sim")
    sut = simulated_sut(config)
    live = [lambda: ElectricalState(*sut.electrical_state())]
    cycle = [ElectricalState(*sut.electrical_state()) for _ in range(3)]
    sim = MeterSimulator("chroma66203", source=lambda: live[0]())
    sim.start()
    meter = open_power_meter("chroma66200", sim.resource,
                             limits=method.instruments.reading_limits(), **FAST)
    lab = Lab(meter, SimulatedWorkloadEngine(sut, clock), SimulatedThermometer(sut),
              sut.used_capacity_bytes)

    def freeze(event) -> None:
        if isinstance(event, ev.PhaseStarted) and event.phase.kind is PhaseKind.READY_IDLE:
            if freeze_as == "hold":
                sim.faults.inject("hold", count=None)
            else:
                turn = iter(range(10**9))  # the next state at each reading
                live[0] = lambda: cycle[next(turn) % 3]

    seen: list[PowerSample] = []

    def watch(event) -> None:
        freeze(event)
        if isinstance(event, ev.PowerSamples):
            seen.extend(event.samples)
    seq = Sequencer(method, config, lab, clock, [watch])
    try:
        assert seq.run() is RunStatus.COMPLETED, seq.error
    finally:
        meter.close()
        sim.stop()
    metrics = {m.name: m for m in seq.metrics}
    if freeze_as != "hold":  # the premise: no two readings in a row alike, three in turn
        last = [(s.watts, s.volts, s.amps) for s in seen[-9:]]
        assert len(set(last)) == 3 and all(a != b for a, b in zip(last, last[1:])), last
    assert not metrics["EP_RI"].valid and " stale;" in metrics["EP_RI"].reason, \
        metrics["EP_RI"].reason
    assert all(m.valid for n, m in metrics.items() if n != "EP_RI"), \
        {n: m.reason for n, m in metrics.items()}


# --- repeats of any short period are stale (issue 38, seen 11) ---------------------------------
#: each way a frozen meter can disguise itself, as (watts, volts) states replayed in turn
DISGUISES = {
    "identical": [ElectricalState(500.0, 230.0)],
    "1-LSB alternation": [ElectricalState(500.0, 230.0), ElectricalState(500.01, 230.0)],
    "cycle of three": [ElectricalState(500.0, 230.0), ElectricalState(503.0, 231.0),
                       ElectricalState(497.0, 229.0)],
    "cycle of four": [ElectricalState(500.0 + 3 * k, 230.0 - k) for k in range(4)],
}


@pytest.mark.parametrize("disguise", sorted(DISGUISES))
def test_a_held_meter_in_disguise_is_stale(disguise: str) -> None:
    """The identical-run rule let a stand-in through that alternated its reply by one digit or
    cycled through three replies (EP_RI VALID). Judged on watts, volts and amps together,
    each within one last digit of one of the few readings before, every disguise is stale
    after the method's limit — on the wire, through the production Chroma driver."""
    states = DISGUISES[disguise]
    with MeterSimulator("chroma66203", source=_noisy) as sim:
        meter = open_power_meter("chroma66200", sim.resource,
                                 limits=ReadingLimits(max_identical_readings=3), **FAST)
        meter.open()
        held = []
        for k in range(12):  # the stand-in replays its states one reading each
            state = states[k % len(states)]
            sim.set_state(state.watts, state.volts)
            held.append(meter.read(float(k)))
        meter.close()
    stale = [FLAG_STALE in s.flags for s in held]
    assert stale[-6:] == [True] * 6 and not all(stale), (disguise, stale)


def test_a_steady_load_alternating_one_digit_in_watts_with_live_volts_is_not_stale() -> None:
    """The counterpart: a real steady load read at full resolution can alternate by one digit
    in watts alone while its volts and amps keep moving (the simulators keep that noise):
    300 readings at the shipped method's limit, none stale."""
    limit = load_method("emerald-block-v3").instruments.max_identical_readings
    rng = random.Random(38)
    turn = iter(range(10**9))

    def steady() -> ElectricalState:
        return ElectricalState(500.0 + 0.01 * (next(turn) % 2), 230.0 + rng.gauss(0, 0.23))
    with MeterSimulator("chroma66203", source=steady) as sim:
        meter = open_power_meter("chroma66200", sim.resource,
                                 limits=ReadingLimits(max_identical_readings=limit), **FAST)
        meter.open()
        samples = [meter.read(float(k)) for k in range(300)]
        meter.close()
    assert len({s.watts for s in samples}) == 2  # watts alone would look held
    assert not any(FLAG_STALE in s.flags for s in samples)


def test_the_repeat_rule_on_each_quantity_and_period() -> None:
    """:class:`RepeatRun` directly: a period up to REPEAT_PERIODS is a repeat, one longer is
    not; one digit is the tolerance, two are news; any quantity that moves is news."""
    from drivers.meters.power import REPEAT_PERIODS, RepeatRun
    steps = (0.1, 0.01, 0.0001)

    def run_length(readings) -> int:
        run = RepeatRun()
        return [run.add(r, steps) for r in readings][-1]
    base = [(500.0 + k, 230.0 + k, 2.0 + k) for k in range(REPEAT_PERIODS + 1)]
    assert run_length(base[:REPEAT_PERIODS] * 3) == 2 * REPEAT_PERIODS + 1
    assert run_length(base * 3) == 1  # a cycle longer than the rule sees
    one = [(500.0, 230.0, 2.0), (500.1, 230.01, 2.0001)] * 4
    assert run_length(one) == 8
    for q in range(3):  # any one quantity moving by two digits a reading is news
        moved = [tuple(v + 2 * steps[i] * k * (i == q) for i, v in
                       enumerate((500.0, 230.0, 2.0))) for k in range(8)]
        assert run_length(moved) == 1, q
        assert run_length([(500.0, 230.0, 2.0)] * 8) == 8  # while the others stand still
