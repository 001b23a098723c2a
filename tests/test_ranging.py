"""Ranging pass (issue 16 item 2, method-notes §3): auto range while the peaks are recorded,
then fixed ranges per profile derived from them, changed only at profile boundaries; the
wire simulators honour the range commands; the range advisor reuses a stored plan."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from app.method.loader import load_method
from app.core.records import (InstrumentConfig, PhaseKind, RunConfig, RunStatus, SutDescription,
                              Window)
from app.sequencer import events as ev
from app.sequencer.equipment import Lab
from app.sequencer.range_plan import (ENVELOPE_KEY, IDLE_KEY, MAIN_INPUT, PeakRecord, RangePlan,
                                      RangeSetting, choose_range)
from app.sequencer.sequencer import Sequencer
from app.station.session import open_session
from app.labs.simulated import simulated_sut
from app.storage.opening import open_database
from app.storage.range_advisor import RangeAdvisorError, advise
from drivers.clock import FakeClock
from drivers.interfaces import FLAG_OVERRANGE, RangingMeter
from drivers.meters.registry import POWER_DRIVERS, open_power_meter
from drivers.simulators import ElectricalState, MeterSimulator
from drivers.simulators.direct_meters import SimulatedThermometer
from drivers.simulators.engine import SimulatedWorkloadEngine
from tests.support.sequencer_runs import Recorder
from app.storage.repository import load_run
WT300_AMPS = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0)


# --- the rule (method-notes §3, "Ranging rule") -----------------------------------------------
@pytest.mark.parametrize(("rms", "peak", "expected"), [
    (4.6, 4.6 * 1.6, 10.0),  # rms 4.6 A × 1.1 = 5.06 A: above the 5 A rating
    (4.4, 4.4 * 1.6, 5.0),  # 4.84 A fits 5 A; its peak 7.04 A × 1.1 fits 3 × 5 A
    (1.0, 4.5, 2.0),  # a peaky current: 4.5 A × 1.1 / 3 = 1.65 A needs the 2 A range
    (1.0, math.nan, 2.0),  # no peaks reported: the rms alone (1.1 A)
    (30.0, 48.0, 20.0),  # beyond the largest range: the largest (samples will be flagged)
])
def test_smallest_range_covers_rms_and_peak_with_headroom(rms: float, peak: float,
                                                          expected: float) -> None:
    assert choose_range(WT300_AMPS, rms, peak, 3.0, 10.0) == expected


def test_a_meter_without_a_range_list_gets_the_value_rounded_up() -> None:
    """PTDaemon takes any value (``SR,A,<amps>``) and picks the meter's range itself."""
    assert choose_range((), 2.94, 4.7, 3.0, 10.0) == pytest.approx(3.24)
    assert choose_range((), 0.0123, math.nan, 3.0, 0.0) == pytest.approx(0.0123)


def test_a_range_plan_survives_its_json_form() -> None:
    measured = RangeSetting(300.0, 5.0, PeakRecord(230.1, 2.9, 325.4, 4.7, 6))
    plan = RangePlan({MAIN_INPUT: {"MW1": measured,
                                   ENVELOPE_KEY: RangeSetting(300.0, 5.0, PeakRecord())}},
                     "ranging pass", 10.0, 3.0)
    back = RangePlan.from_json(plan.to_json())
    assert back.setting(MAIN_INPUT, "MW1") == plan.setting(MAIN_INPUT, "MW1")
    assert back.setting(MAIN_INPUT, "RR") == plan.setting(MAIN_INPUT, ENVELOPE_KEY)
    assert math.isnan(back.setting(MAIN_INPUT, "RR").evidence.peak_a)


# --- byte-level protocol of the range commands, per driver ------------------------------------
RANGE_BYTES = {
    "wt300": ("wt310", [":INP:VOLT:AUTO ON\n", ":INP:CURR:AUTO ON\n", ":INP:VOLT:RANG 300\n",
                        ":INP:CURR:RANG 2\n", ":NUM:NORM:VAL? 6\n", ":NUM:NORM:VAL? 7\n",
                        ":NUM:NORM:VAL? 8\n", ":NUM:NORM:VAL? 9\n"]),
    "wt210": ("wt210", [":CONF:VOLT:AUTO ON\n", ":CONF:CURR:AUTO ON\n", ":CONF:VOLT:RANG 300V\n",
                        ":CONF:CURR:RANG 2A\n"]),
    "chroma66200": ("chroma66202", ["CONF:VOLT:AUTO ON\n", "CONF:CURR:AUTO ON\n",
                                    "CONF:VOLT:RANG 300\n", "CONF:CURR:RANG 2\n",
                                    "MEAS? VPK+,VPK-,IPK+,IPK-\n"]),
    "pw3335": ("pw3335", [":VOLT1:AUTO ON\r\n", ":CURR1:AUTO ON\r\n", ":VOLT1:RANG 300\r\n",
                          ":CURR1:RANG 2\r\n"]),
    # between Stop and Go, as the reference client changes them (method-notes §8)
    "ptd": ("ptd", ["SR,V,Auto\r\n", "SR,A,Auto\r\n", "Go,1000,0,storwatt\r\n", "Stop\r\n",
                    "SR,V,300\r\n", "SR,A,2\r\n"]),
}
#: drivers that read the waveform peaks (the others range on the rms alone)
PEAK_DRIVERS = ("wt300", "chroma66200")


@pytest.mark.parametrize("driver", sorted(RANGE_BYTES))
def test_range_commands_and_peak_query_send_exact_bytes(driver: str) -> None:
    model, expected = RANGE_BYTES[driver]
    with MeterSimulator(model) as sim:
        sim.set_state(123.4, volts=230.0, amps=0.6)
        meter = open_power_meter(driver, sim.resource, timeout_s=1.0)
        assert isinstance(meter, RangingMeter) and meter.crest_factor == 3.0
        meter.open()
        meter.auto_range()
        meter.set_ranges(300, 2)
        peak_v, peak_a = meter.peaks()
        meter.close()
        sent = [e.received.decode() for e in sim.wait_for_exchanges(99, timeout_s=0.5)]
    start = sent.index(expected[0])  # after the set-up, which sends none of these
    assert sent[start:start + len(expected)] == expected
    if driver in PEAK_DRIVERS:  # the simulator's sine voltage and PSU current (crest 1.6)
        assert peak_v == pytest.approx(230.0 * math.sqrt(2), rel=1e-3)
        assert peak_a == pytest.approx(0.6 * 1.6, rel=1e-3)
    else:
        assert math.isnan(peak_v) and math.isnan(peak_a)


@pytest.mark.parametrize(("driver", "resource", "expected"), [
    ("wt300", "USB0::0x0B21::0x0025::SIM000001::INSTR", (325.35, 0.33024)),
    ("chroma66200", "USB0::0x1698::0x0837::SIM000002::INSTR", (325.20, 0.344)),
])
def test_peaks_decode_over_pyvisa_sim(driver: str, resource: str,
                                      expected: tuple[float, float]) -> None:
    """The larger magnitude of the positive and negative peak, from canned replies."""
    from tests.support.instruments import BACKEND
    meter = open_power_meter(driver, resource, backend=BACKEND)
    meter.open()
    try:
        assert meter.peaks() == pytest.approx(expected)
    finally:
        meter.close()


def test_every_power_driver_can_be_ranged() -> None:
    for cls in POWER_DRIVERS.values():
        assert isinstance(cls("TCPIP::127.0.0.1::1::SOCKET"), RangingMeter), cls


@pytest.mark.parametrize(("amps", "crest", "over"), [
    (0.45, 1.6, False),  # rms and peak (0.72 A) inside the 0.5 A range at crest factor 3
    (0.75, 1.6, True),  # rms above 140 % of the range
    (0.45, 4.0, True),  # rms inside, but the 1.8 A peak exceeds 3 × 0.5 A
])
def test_the_simulator_honours_a_fixed_range_and_its_crest_factor(amps: float, crest: float,
                                                                  over: bool) -> None:
    state = ElectricalState(amps * 230.0 * 0.95, 230.0, amps, 0.95, 50.0, crest_a=crest)
    with MeterSimulator("wt310", source=lambda: state) as sim:
        meter = open_power_meter("wt300", sim.resource, timeout_s=1.0)
        meter.open()
        meter.set_ranges(300, 0.5)
        sample = meter.read(0.0)
        meter.auto_range()
        auto = meter.read(1.0)
        meter.close()
    assert (FLAG_OVERRANGE in sample.flags) is over
    assert FLAG_OVERRANGE not in auto.flags  # auto range climbs to a range that holds it


# --- the sequencer on the wire simulators -----------------------------------------------------
def wire_run(step_profile: str | None = None, step_factor: float = 1.0, model: str = "wt310",
             driver: str = "wt300"):
    """A smoke run with the production WT300 driver on a loopback WT310 (fake clock); the
    current is multiplied by ``step_factor`` once the active phase ``step_profile`` starts."""
    clock = FakeClock()
    config = RunConfig(method="smoke", lab="sim")
    sut = simulated_sut(config)
    stepped = {"on": False}

    def source() -> ElectricalState:
        watts, volts, amps, pf, hz = sut.electrical_state()
        k = step_factor if stepped["on"] else 1.0
        return ElectricalState(watts * k, volts, amps * k, pf, hz)

    sim = MeterSimulator(model, source=source, clock=clock)  # updates on the run's clock
    sim.start()
    meter = open_power_meter(driver, sim.resource, timeout_s=2.0)
    lab = Lab(meter, SimulatedWorkloadEngine(sut, clock), SimulatedThermometer(sut))
    rec = Recorder()

    def step(event: ev.RunEvent) -> None:
        if isinstance(event, ev.PhaseStarted) and event.phase.name == step_profile:
            stepped["on"] = True

    rec.hooks.append(step)
    seq = Sequencer(load_method("smoke"), config, lab, clock, [rec])
    try:
        status = seq.run()
    finally:
        meter.close()
        sim.stop()
    sent = [e.received.decode().strip() for e in sim.transcript]
    return seq, rec, status, sent


def test_command_log_shows_auto_range_then_fixed_ranges_from_the_peaks() -> None:
    seq, rec, status, sent = wire_run()
    assert status is RunStatus.COMPLETED, seq.error
    ranging = [c for c in sent if c.startswith(":INP:") and "CFAC" not in c]
    plan = rec.of(ev.RangePlanReady)[0].plan
    mw1 = plan.setting(MAIN_INPUT, "MW1")
    # auto range for the pass, the peaks read during it, then the fixed ranges of MW1
    assert ranging[:2] == [":INP:VOLT:AUTO ON", ":INP:CURR:AUTO ON"]
    fixed = [c for c in ranging if "RANG " in c]
    assert fixed[:2] == [f":INP:VOLT:RANG {mw1.volts:g}", f":INP:CURR:RANG {mw1.amps:g}"]
    first_fixed = sent.index(fixed[0])
    assert ":NUM:NORM:VAL? 8" in sent[:first_fixed]  # current peaks read on auto range
    assert ":NUM:NORM:VAL? 8" not in sent[first_fixed:]  # never during the testing pass
    # the ranges are those the rule derives from the recorded peaks
    e = mw1.evidence
    assert e.samples > 0 and e.peak_a == pytest.approx(e.rms_a * 1.6, rel=0.02)
    assert mw1.amps == choose_range(WT300_AMPS, e.rms_a, e.peak_a, 3.0, 10.0)
    assert all(m.valid for m in seq.metrics), [(m.name, m.reason) for m in seq.metrics]
    stored = [e for e in rec.of(ev.LogMessage) if e.message.startswith("range change")]
    assert len(stored) == len(rec.of(ev.RangesApplied)) >= 2


def test_ptdaemon_is_ranged_on_the_rms_it_logged() -> None:
    """PTDaemon gives no uncertainty on auto range and no peaks: the pass still records the
    rms, and the testing pass sends the needed value (``SR,A,<amps>``), as the reference
    client does with the largest amps of its ranging log."""
    seq, rec, status, sent = wire_run(model="ptd", driver="ptd")
    assert status is RunStatus.COMPLETED, seq.error
    mw1 = rec.of(ev.RangePlanReady)[0].plan.setting(MAIN_INPUT, "MW1")
    assert math.isnan(mw1.evidence.peak_a) and mw1.evidence.samples > 0
    assert mw1.amps == choose_range((), mw1.evidence.rms_a, math.nan, 3.0, 10.0)
    ranges = [c for c in sent if c.startswith("SR,")]
    assert ranges[:2] == ["SR,V,Auto", "SR,A,Auto"]
    assert ranges[2:4] == [f"SR,V,{mw1.volts:g}", f"SR,A,{mw1.amps:g}"]
    # the daemon's 8-field Uncertainty read as the real one is: unknown on auto range, the
    # simulator's 0.15 % on fixed ranges (not a sample count, as the last field would give)
    samples = [s for e in rec.of(ev.PowerSamples) for s in e.samples]
    fixed = [s for s in samples if s.range_a is not None and s.range_a == mw1.amps]
    assert fixed and all(s.uncertainty_pct == pytest.approx(0.15) for s in fixed)
    auto = [s for s in samples if s.uncertainty_pct is None]
    assert auto and all(s.range_v == 300.0 for s in auto)  # on auto range: what RR reports


def test_ranges_change_only_at_profile_boundaries() -> None:
    seq, rec, status, _ = wire_run()
    assert status is RunStatus.COMPLETED
    started = {e.phase.index: e.t for e in rec.of(ev.PhaseStarted)}
    finished = {e.phase.index: e.t for e in rec.of(ev.PhaseFinished)}
    closed = [e.interval for e in rec.of(ev.IntervalClosed)]
    changes = rec.of(ev.RangesApplied)
    assert [c.auto for c in changes] == [True] + [False] * (len(changes) - 1)
    for change in changes:
        previous = finished.get(change.phase_index - 1, 0.0)
        assert previous <= change.t <= started[change.phase_index]
        # never inside an interval of any phase
        assert not any(iv.start_s < change.t < iv.end_s for iv in closed)
    testing = [p for p in seq.phases if p.kind in (PhaseKind.ACTIVE, PhaseKind.READY_IDLE)]
    assert {c.phase_index for c in changes[1:]} <= {p.index for p in testing}


def test_a_load_step_beyond_the_fixed_range_flags_samples_and_invalidates_the_phase() -> None:
    seq, rec, status, _ = wire_run(step_profile="RR", step_factor=2.5)
    assert status is RunStatus.COMPLETED
    rr = next(p for p in seq.phases if p.name == "RR")
    flagged = [s for e in rec.of(ev.PowerSamples) if e.phase_index == rr.index
               for s, where in zip(e.samples, e.placements)
               if FLAG_OVERRANGE in s.flags and where.window is Window.MEASUREMENT]
    assert flagged
    metric = rec.metric("EP_RR")
    assert not metric.valid
    assert f"{len(flagged)} flagged power sample(s)" in metric.reason and "over-range" in \
        metric.reason
    assert rec.metric("EP_RW").valid  # before the step


# --- the range advisor ------------------------------------------------------------------------
def stored_run(db_url: str, config: RunConfig):
    session = open_session(config, db_url=db_url, clock=FakeClock())
    session.run()
    session.close()
    return session


def test_the_advisor_reuses_a_stored_plan_without_a_ranging_pass(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    config = RunConfig(method="smoke", lab="sim-direct")
    first = stored_run(url, config)
    database = open_database(url)
    try:
        advised = advise(database, config)
        assert advised.run_id == first.run_id
        assert load_run(database, first.run_id).range_plan == replace(advised.plan,
                                                                     source="ranging pass")
        other = replace(config, sut=replace(config.sut, drive_count=24))
        with pytest.raises(RangeAdvisorError, match="drive_count 50"):
            advise(database, other, first.run_id)
        with pytest.raises(RangeAdvisorError, match="no completed run"):
            advise(database, other)
        # issue 28: a plan found with another meter or in another lab is not offered
        meter = replace(config, power_meter=InstrumentConfig("wt300", "TCPIP::10.0.0.7::INST0"))
        with pytest.raises(RangeAdvisorError, match="no completed run"):
            advise(database, meter)
        with pytest.raises(RangeAdvisorError, match="meter_driver 'sim'"):
            advise(database, meter, first.run_id)
        with pytest.raises(RangeAdvisorError, match="lab 'sim-direct'"):
            advise(database, replace(config, lab="sim"), first.run_id)
    finally:
        database.close()
    second = stored_run(url, replace(config, range_plan_from=first.run_id[:8]))
    mw1 = advised.plan.setting(MAIN_INPUT, "MW1")
    # pre-fill and search on auto range as always, then the advised ranges: no peaks kept
    assert second.lab.power_meter.commands == ["AUTO", f"RANGE {mw1.volts:g} V {mw1.amps:g} A"]
    database = open_database(url)
    try:
        run = load_run(database, second.run_id)
    finally:
        database.close()
    assert run.status is RunStatus.COMPLETED
    assert run.range_plan == advised.plan  # the first run's evidence, not new peaks
    from app.cli.cmd_runs import run_json

    assert run_json(run)["range_plan"]["source"] == f"run {first.run_id}"
    assert run.config.range_plan_from == first.run_id[:8]
    assert any(f"range plan from run {first.run_id}" in e.message for e in run.events)
    # every range change is in the report's run log, stamped no later than its phase start
    from app.reports.run_log import complete_log

    change = next(e for e in complete_log(run) if e.message.startswith("range change")
                  and "before MW1: fixed ranges" in e.message)
    assert change.t <= next(p.t_start for p in run.phases if p.info.name == "MW1")


def test_an_advised_plan_saves_the_dedicated_ranging_pass() -> None:
    """The point of the advisor: a day-long run does not range every profile twice."""
    from app.sequencer.plan import build_phases

    demo = load_method("demo")
    kinds = [p.kind for p in build_phases(demo, RunConfig(method="demo"))]
    assert PhaseKind.RANGING in kinds
    advised = RunConfig(method="demo", range_plan_from="1234abcd")
    assert PhaseKind.RANGING not in [p.kind for p in build_phases(demo, advised)]


def test_the_cli_asks_for_the_advised_run_id_off_a_terminal(tmp_path, capsys) -> None:
    from app.cli.main import main

    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    first = stored_run(url, RunConfig(method="smoke", lab="sim-direct"))
    assert main(["run", "--lab", "sim-direct", "--method", "smoke", "--db", url,
                 "--ranging", "advisor"]) == 1
    err = capsys.readouterr().err
    assert f"range plan of run {first.run_id[:8]}" in err
    assert f"confirm it with --range-plan-from {first.run_id[:8]}" in err


def test_an_advised_plan_the_meter_cannot_hold_is_refused_before_any_io() -> None:
    plan = RangePlan({MAIN_INPUT: {ENVELOPE_KEY: RangeSetting(250.0, 5.0, PeakRecord()),
                                   IDLE_KEY: RangeSetting(300.0, 5.0, PeakRecord())}},
                     "run abc", 10.0, 3.0)
    config = RunConfig(method="smoke", lab="sim-direct", sut=SutDescription())
    from tests.support.sequencer_runs import make_run
    seq, rec, _ = make_run("smoke")
    seq = Sequencer(seq.method, config, seq.lab, FakeClock(), [rec], range_plan=plan)
    assert seq.run() is RunStatus.FAILED
    assert "250 V for main *, which is not a range of this meter" in seq.error
    assert not rec.of(ev.PhaseStarted)


def test_the_wizard_shows_the_advised_plan_and_records_the_operators_tick(qtbot,
                                                                           tmp_path) -> None:
    """The review page offers the stored plan of the same SUT, unticked; ticking it is the
    confirmation the run's configuration records."""
    from app.station.run_entries import RunEntries
    from ui.wizard.profiles import SutProfileStore
    from ui.wizard.wizard import NewRunWizard
    from tests.support.gui import click_next, fill_sut
    from app.storage.range_advisor import AdvisedPlan

    stored = RangeSetting(300.0, 5.0, PeakRecord(230.0, 2.9, 325.0, 4.7, 26))
    plan = RangePlan({MAIN_INPUT: {ENVELOPE_KEY: stored}}, "run 1234abcd", 10.0, 3.0)
    asked = []

    def advice(config: RunConfig) -> AdvisedPlan:
        asked.append(config.sut)
        return AdvisedPlan("1234abcd" + "0" * 24, "2026-11-22T10:00:00+00:00", plan)

    wizard = NewRunWizard(entries=RunEntries(method="smoke"), simulated_lab="sim-direct",
                          store=SutProfileStore(tmp_path / "profiles.json"), range_advice=advice)
    qtbot.addWidget(wizard)
    wizard.show()
    qtbot.waitExposed(wizard)
    click_next(qtbot, wizard)
    fill_sut(qtbot, wizard)
    for _ in range(3):
        click_next(qtbot, wizard)
    review = wizard.review_page
    assert wizard.currentPage() is review and asked[-1].vendor == "Acme"
    assert review.reuse_ranges.isVisible() and not review.reuse_ranges.isChecked()
    assert "run 1234abcd" in review.reuse_ranges.text()
    assert "300 V / 5 A" in review.range_plan.text()
    assert wizard.run_config().range_plan_from == ""  # not confirmed: a ranging pass runs
    review.reuse_ranges.setChecked(True)
    assert wizard.run_config().range_plan_from == "1234abcd" + "0" * 24


def test_range_events_survive_the_run_journal() -> None:
    """A crash before the database took the plan must not lose it: the journal codec knows
    the range events (a run recovered from its journal keeps its range plan)."""
    import json

    from app.storage.event_codec import event_from_json, event_to_json

    no_peaks = RangeSetting(300.0, 5.0, PeakRecord(230.1, 2.9, math.nan, math.nan, 6))
    plan = RangePlan({MAIN_INPUT: {"MW1": no_peaks}}, "ranging pass", 10.0, 3.0)
    for event in (ev.RangePlanReady(6.0, plan), ev.RangesApplied(6.0, 2, MAIN_INPUT, "MW1",
                                                                 300.0, 5.0),
                  ev.RangesApplied(0.0, 0, MAIN_INPUT, "", None, None)):
        text = json.dumps(event_to_json(event), allow_nan=False)
        back = event_from_json(json.loads(text))
        assert type(back) is type(event)
        if isinstance(event, ev.RangePlanReady):
            assert back.plan.setting(MAIN_INPUT, "MW1").amps == 5.0
            assert math.isnan(back.plan.setting(MAIN_INPUT, "MW1").evidence.peak_a)
        else:
            assert back == event
