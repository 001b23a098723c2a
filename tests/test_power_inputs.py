"""Several power inputs per run (issue 16, items 1, 3, 4): the SUT's power is the sum of its
inputs read at one instant, with the inputs' absolute uncertainties added, each input's flags
kept, and an input that drops flagging the total (method-notes §10)."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np
import pytest

from app.labs.builder import build_lab
from app.core.records import PowerInput, RunConfig, RunStatus
from app.sequencer.power_inputs import (PowerInputs, STATED_BY_METER, combined_uncertainty_pct,
                                        sum_inputs)
from app.sequencer.sampler import MeterLost
from app.station.session import open_session
from app.storage.opening import open_database
from app.storage.repository import list_runs, load_run
from drivers.clock import FakeClock, MonotonicClock
from drivers.interfaces import (FLAG_INPUT_MISSING, FLAG_INPUTS_MISALIGNED, FLAG_LOW_CURRENT,
                                FLAG_OVERRANGE, FLAG_UNCERTAINTY_HIGH, IdentityMismatch,
                                InstrumentError, InstrumentTimeout, PowerSample)
from drivers.meters.registry import open_power_meter
from drivers.simulators import MeterSimulator
from drivers.simulators.direct_meters import SimulatedPowerMeter
from drivers.simulators.sut import SimulatedSut

TWO_INPUTS = (PowerInput("psu-a", "sim", "wt310"), PowerInput("psu-b", "sim", "wt310e"))
FOUR_INPUTS = TWO_INPUTS + (PowerInput("shelf-3p", "sim", "wt333e", wiring="3P4W"),
                            PowerInput("shelf-l2", "sim", "wt333e", element=2))


def _check_total(total: PowerSample, names: list[str]) -> None:
    """The total is the sum of its inputs and its uncertainty the sum of theirs, absolute."""
    assert [p.input for p in total.inputs] == names
    assert total.watts == pytest.approx(math.fsum(p.watts for p in total.inputs), rel=1e-12)
    absolute = sum(p.uncertainty_pct / 100 * p.watts for p in total.inputs)
    assert total.uncertainty_pct == pytest.approx(absolute / total.watts * 100, rel=1e-12)
    assert total.usable and not total.flags


@pytest.mark.parametrize("inputs", [TWO_INPUTS, FOUR_INPUTS], ids=["two", "four"])
def test_simulated_lab_sums_its_inputs_on_wire_simulators(inputs) -> None:
    """Two WT310 simulators, then those plus a three-phase WT333E (Σ of 3P4W) and a WT333E
    element: production drivers on loopback sockets, the total equal to the sum."""
    lab = build_lab(RunConfig(lab="sim", power_inputs=inputs), MonotonicClock())
    try:
        identity = lab.power_meter.open()
        assert identity.simulated and identity.driver == "inputs"
        assert [i.name for i in lab.input_identities()] == [i.name for i in inputs]
        for t in (1.0, 2.0, 3.0):
            total = lab.power_meter.read(t)
            _check_total(total, [i.name for i in inputs])
            assert total.t == t and all(abs(p.t - t) < 0.5 for p in total.inputs)
    finally:
        lab.close()
    if len(inputs) == 4:  # the Σ input's range term counts its three elements
        sigma = total.inputs[2]
        assert sigma.uncertainty_pct == pytest.approx(
            (0.001 * sigma.watts + 0.0005 * 3 * sigma.range_v * sigma.range_a)
            / sigma.watts * 100)


def test_combined_uncertainty_is_the_sum_of_absolute_uncertainties() -> None:
    parts = [PowerSample(0.0, 400.0, uncertainty_pct=0.5, input="a"),
             PowerSample(0.0, 100.0, uncertainty_pct=2.0, input="b")]
    # (0.5 % · 400 W + 2 % · 100 W) / 500 W = 4 W / 500 W = 0.8 %
    assert combined_uncertainty_pct(parts, 500.0) == pytest.approx(0.8)
    total = sum_inputs(0.0, parts, 0.5)
    assert total.watts == 500.0 and total.uncertainty_pct == pytest.approx(0.8)
    # the method's 1 % limit is the total's: input b above 1 % does not flag it …
    assert FLAG_UNCERTAINTY_HIGH not in total.flags
    # … but a total above 1 % is flagged, and an unknown input makes it unknown
    worse = sum_inputs(0.0, [parts[0], PowerSample(0.0, 100.0, uncertainty_pct=4.0)], 0.5)
    assert FLAG_UNCERTAINTY_HIGH in worse.flags
    assert combined_uncertainty_pct([parts[0], PowerSample(0.0, 1.0)], 401.0) is None


def test_each_input_keeps_its_flags_and_a_flagged_input_flags_the_total() -> None:
    over = PowerSample(0.0, 90.0, uncertainty_pct=0.3, flags=frozenset({FLAG_OVERRANGE}),
                       input="b")
    low = PowerSample(0.0, 30.0, uncertainty_pct=0.3, flags=frozenset({FLAG_LOW_CURRENT}),
                      input="c")
    total = sum_inputs(0.0, [PowerSample(0.0, 100.0, uncertainty_pct=0.3), over, low], 0.5)
    assert total.inputs[1].flags == {FLAG_OVERRANGE} and FLAG_OVERRANGE in total.flags
    assert not total.usable
    assert FLAG_LOW_CURRENT not in total.flags  # a warning on input c, not a measurement flag


class _SlowMeter(SimulatedPowerMeter):
    """Takes ``delay_s`` of the fake station clock per reading."""

    def __init__(self, sut: SimulatedSut, clock: FakeClock, delay_s: float) -> None:
        super().__init__(sut, share=0.5)
        self.clock, self.delay_s = clock, delay_s

    def read(self, t: float) -> PowerSample:
        self.clock.advance(self.delay_s)
        return super().read(t)


def test_readings_more_than_half_a_period_apart_are_not_summed() -> None:
    sut, clock = SimulatedSut(), FakeClock()
    fast = PowerInputs([(PowerInput("a", "sim"), _SlowMeter(sut, clock, 0.2)),
                        (PowerInput("b", "sim"), _SlowMeter(sut, clock, 0.2))], clock, 1.0)
    assert fast.read(10.0).usable  # 0.2 s apart at a 1 s period: one instant
    slow = PowerInputs([(PowerInput("a", "sim"), _SlowMeter(sut, clock, 0.7)),
                        (PowerInput("b", "sim"), _SlowMeter(sut, clock, 0.7))], clock, 1.0)
    total = slow.read(10.0)
    assert FLAG_INPUTS_MISALIGNED in total.flags and math.isnan(total.watts)
    assert total.inputs[1].t - total.inputs[0].t == pytest.approx(0.7)
    assert all(math.isfinite(p.watts) for p in total.inputs)  # the readings stay as evidence


def test_one_input_dropping_flags_the_total_on_the_wire() -> None:
    with MeterSimulator("wt310") as one, MeterSimulator("wt333e") as three:
        inputs = PowerInputs(
            [(PowerInput("psu-a", "wt300", one.resource),
              open_power_meter("wt300", one.resource, timeout_s=0.3, reconnect_attempts=1,
                               reconnect_delay_s=0.01)),
             (PowerInput("shelf", "wt300", three.resource, wiring="3P4W"),
              open_power_meter("wt300", three.resource, wiring="3P4W", timeout_s=0.3,
                               reconnect_attempts=1, reconnect_delay_s=0.01))],
            MonotonicClock(), 1.0)
        inputs.open()
        try:
            _check_total(inputs.read(1.0), ["psu-a", "shelf"])
            three.faults.inject("silent", count=1)
            dropped = inputs.read(2.0)
            assert FLAG_INPUT_MISSING in dropped.flags and math.isnan(dropped.watts)
            assert dropped.inputs[1].flags == {FLAG_INPUT_MISSING}
            assert dropped.inputs[0].usable  # psu-a's reading is kept
            assert any("power input shelf: no reading" in n for n in inputs.take_notes())
            _check_total(inputs.read(3.0), ["psu-a", "shelf"])  # reconnected by the driver
        finally:
            inputs.close()


class _DroppingMeter(SimulatedPowerMeter):
    """Misses readings number ``drop`` (1-based) and then answers again."""

    def __init__(self, sut: SimulatedSut, share: float, drop: range) -> None:
        super().__init__(sut, share=share)
        self.drop = drop

    def read(self, t: float) -> PowerSample:
        if self.reads + 1 in self.drop:
            self.reads += 1
            raise InstrumentTimeout("simulated drop-out")
        return super().read(t)


def test_an_input_is_lost_at_the_silence_limit_not_after_a_count_of_misses() -> None:
    """As for one meter (app/sequencer/sampler.py): one input silent for 10 readings at 1 s
    leaves 10 flagged instants and the run going (it used to be lost after 5 misses: a dropped
    reply ended the run); silent for the limit, the meter is lost, naming the method key."""
    sut, clock = SimulatedSut(), FakeClock()
    inputs = PowerInputs([(PowerInput("a", "sim"), SimulatedPowerMeter(sut, share=0.5)),
                          (PowerInput("b", "sim"), _DroppingMeter(sut, 0.5, range(1, 31)))],
                         clock, 1.0, silence_limit_s=20.0)
    for k in range(10):
        assert FLAG_INPUT_MISSING in inputs.read(float(k)).flags
        clock.advance(1.0)
    clock.advance(10.0)
    with pytest.raises(MeterLost, match=r"power input b silent for 20\.0 s \(limit \[sampling\] "
                                        r"meter_silence_limit_s = 20 s\)"):
        inputs.read(20.0)


def _run(config: RunConfig, tmp: Path, **patch):
    session = open_session(config, db_url=f"sqlite:///{tmp}/runs.db", clock=FakeClock())
    if patch:
        session.lab.power_inputs.inputs[1] = (config.power_inputs[1], patch["meter"])
    status = session.sequencer.run()
    session.writer.close()
    return status, load_run(session.database, session.sequencer.run_id)


def test_a_whole_run_stores_each_input_and_the_total_is_their_sum(tmp_path: Path) -> None:
    inputs = tuple(PowerInput(f"psu-{k}", "sim") for k in "abcd")
    status, run = _run(RunConfig(lab="sim-direct", power_inputs=inputs), tmp_path)
    assert status is RunStatus.COMPLETED and all(m.valid for m in run.metrics)
    assert [i.name for i in run.power_inputs] == [i.name for i in inputs]
    assert all(len(i.watts) == len(run.power) for i in run.power_inputs)
    summed = np.sum([i.watts for i in run.power_inputs], axis=0)
    assert np.allclose(run.power.watts, summed, rtol=1e-12)
    assert run.power_inputs[0].accuracy.startswith("±(0.1 % of reading + 0.05 % of range)")
    # a run list derives the same verdict from its batched facts (app/storage/run_facts.py):
    # each input's calibration is judged there too, as in the report
    (summary,) = list_runs(open_database(f"sqlite:///{tmp_path}/runs.db"))
    listed = {c.name: c for c in summary.compliance.criteria}
    assert listed == {c.name: c for c in run.compliance.criteria}
    assert "power input psu-a" in listed["Calibration"].evidence


def test_an_input_that_drops_flags_the_totals_of_those_instants(tmp_path: Path) -> None:
    config = RunConfig(lab="sim-direct", power_inputs=(PowerInput("psu-a", "sim"),
                                                       PowerInput("psu-b", "sim")))
    with tempfile.TemporaryDirectory():
        status, run = _run(config, tmp_path,
                           meter=_DroppingMeter(SimulatedSut(), 0.5, range(470, 473)))
    missing = [k for k, f in enumerate(run.power.flags) if FLAG_INPUT_MISSING in f]
    assert len(missing) == 3 and all(math.isnan(run.power.watts[k]) for k in missing)
    assert sum(FLAG_INPUT_MISSING in f for f in run.power_inputs[1].flags) == 3
    assert not any(FLAG_INPUT_MISSING in f for f in run.power_inputs[0].flags)
    assert status is RunStatus.COMPLETED
    assert sum("power input psu-b: no reading" in e.message for e in run.events) == 3
    hit = [m for m in run.metrics if "power-input-missing" in m.reason]
    assert len(hit) == 1 and not hit[0].valid, [m.reason for m in run.metrics]


def test_wt333e_sigma_and_element_commands_byte_for_byte() -> None:
    """Real WT300E SCPI: the wiring first, then Σ items (``U,SIGMA`` …) or the element."""
    with MeterSimulator("wt333e") as sim:
        sim.set_state(690.0, pf=1.0)  # 1 A per phase at 230 V
        meter = open_power_meter("wt300", sim.resource, wiring="3P4W")
        meter.open()
        sample = meter.read(0.0)
        meter.close()
        sent = [e.received for e in sim.transcript]
    assert sent[1] == b":INP:WIR P3W4\n"  # after *IDN?, before the items
    for k, function in enumerate(("U", "I", "P", "LAMB", "FU"), start=1):
        assert f":NUM:NORM:ITEM{k} {function},SIGMA\n".encode() in sent
    assert sample.watts == pytest.approx(690.0) and not sample.flags
    with MeterSimulator("wt333e") as sim:
        sim.load_element(2)
        meter = open_power_meter("wt300", sim.resource, element=2, wiring="1P2W")
        meter.open()
        assert meter.read(0.0).watts == pytest.approx(100.0)
        meter.close()
        sent = [e.received for e in sim.transcript]
    assert b":INP:WIR P1W2\n" in sent and b":NUM:NORM:ITEM3 P,2\n" in sent


def test_wirings_a_meter_cannot_do_are_refused_with_the_reason() -> None:
    with MeterSimulator("wt310") as sim:
        with pytest.raises(IdentityMismatch, match=r"WT310 has 1 element\(s\); wiring 3P4W "
                                                   "needs 3"):
            open_power_meter("wt300", sim.resource, wiring="3P4W").open()
    with pytest.raises(InstrumentError, match="leave out element"):
        open_power_meter("wt300", "TCPIP::127.0.0.1::1::SOCKET", wiring="3P3W", element=1)
    with pytest.raises(InstrumentError, match="wiring '2P' is not known; choose one of "
                                              "1P2W, 3P3W, 3P4W"):
        open_power_meter("wt300", "TCPIP::127.0.0.1::1::SOCKET", wiring="2P")


def test_low_current_is_warned_per_input_from_the_models_data() -> None:
    """WT310E on its smallest range below 0.2 A: a known trap (method-notes §10)."""
    with MeterSimulator("wt310e") as sim:
        sim.set_state(20.0, volts=230.0, amps=0.1)
        meter = open_power_meter("wt300", sim.resource, range_v=300, range_a=0.5)
        meter.open()
        sample = meter.read(0.0)
        meter.close()
    assert FLAG_LOW_CURRENT in sample.flags and sample.usable
    assert meter.accuracy is not None and meter.accuracy.valid_amps == (0.2, 20.0)


def test_each_driver_declares_its_formula_as_data() -> None:
    wt = open_power_meter("wt300", "TCPIP::127.0.0.1::1::SOCKET").accuracy
    assert wt is not None and wt.describe() == (
        "±(0.1 % of reading + 0.1 % of range) on the 5 mA–200 mA ranges; "
        "±(0.1 % of reading + 0.05 % of range) on the 500 mA–20 A ranges; crest factor 3; "
        "trusted from 200 mA to 20 A")
    chroma = open_power_meter("chroma66200", "TCPIP::127.0.0.1::1::SOCKET").accuracy
    assert chroma is not None and "crest factor as set on the meter" in chroma.describe()
    assert open_power_meter("ptd", "127.0.0.1:8888").accuracy is None
    from app.sequencer.power_inputs import accuracy_statement
    assert accuracy_statement(None) == STATED_BY_METER


def test_the_samples_hash_covers_each_inputs_readings(tmp_path: Path) -> None:
    """The hash printed on every report page must change when an input's reading does."""
    from app.storage.opening import open_database
    from app.storage.repository import load_run as reload
    from tests.support.tamper import tamper

    inputs = (PowerInput("psu-a", "sim"), PowerInput("psu-b", "sim"))
    _, run = _run(RunConfig(method="smoke", lab="sim-direct", power_inputs=inputs), tmp_path)
    tamper(tmp_path / "runs.db", "UPDATE power_input_samples SET watts = watts + 1 WHERE id = 5")
    again = reload(open_database(f"sqlite:///{tmp_path}/runs.db"), run.run_id)
    assert again.samples_sha256 != run.samples_sha256
    assert np.array_equal(again.power.watts, run.power.watts, equal_nan=True)


def test_each_input_is_ranged_on_its_own_readings(tmp_path: Path) -> None:
    """The ranging pass (method-notes §3) keys its plan by input: each input's meter gets auto
    range, then fixed ranges from its own peaks, every change an event naming the input."""
    from app.sequencer import events as ev

    seen: list = []
    inputs = (PowerInput("psu-a", "sim"), PowerInput("shelf", "sim", wiring="3P4W"))
    session = open_session(RunConfig(method="smoke", lab="sim-direct", power_inputs=inputs),
                           db_url=f"sqlite:///{tmp_path}/runs.db", clock=FakeClock(),
                           listeners=[seen.append])
    assert session.sequencer.run() is RunStatus.COMPLETED
    session.writer.close()
    applied = [e for e in seen if isinstance(e, ev.RangesApplied)]
    assert {e.input_name for e in applied} == {"psu-a", "shelf"}
    assert any(e.amps is None for e in applied) and any(e.amps is not None for e in applied)
    plan = load_run(session.database, session.sequencer.run_id).range_plan
    assert plan is not None and set(plan.settings) == {"psu-a", "shelf"}
    # the three-phase shelf carries 3/4 of the load: its current range is the larger
    assert plan.setting("shelf", "*").amps > plan.setting("psu-a", "*").amps
