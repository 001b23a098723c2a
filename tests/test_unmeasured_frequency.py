"""PTDaemon-metered runs can be valid (issue 24 item 2; conformance row 5, method-notes §3
"not measured by this interface"): PTDaemon's ``RL`` lines carry no frequency, so its samples
say the frequency was not measured by the interface and the supply rule judges the volts;
a meter that can give the frequency but did not (NaN, unmarked) still fails the rule."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from app.method.loader import load_method
from app.core.records import SutDescription
from app.sequencer.conformance import SiteRules
from app.sequencer.power_inputs import sum_inputs
from drivers.interfaces import (FLAG_FREQUENCY_NOT_MEASURED, FLAG_FREQUENCY_OUT_OF_RANGE,
                                PowerSample)
from drivers.meters.ptd import PTDPower
from drivers.simulators import MeterSimulator
from drivers.simulators.direct_meters import SimulatedPowerMeter
from tests.support.sequencer_runs import COMPLIANT, assert_all_valid
from tests.support.sequencer_runs import run_short_sequence as run
from app.storage.repository import load_run

CAPTURED_LINE = (Path(__file__).parent / "fixtures" / "ptd" / "rl_sample_line.txt").read_text()
FAST = {"timeout_s": 1.0, "reconnect_attempts": 1, "reconnect_delay_s": 0.01}
RULES = SiteRules.declared(load_method(COMPLIANT), SutDescription())


class RlLikeMeter(SimulatedPowerMeter):
    """The simulated SUT read through an interface without frequency; ``marked`` says so as
    the PTDaemon driver does, unmarked it is a meter that could have given the Hz and did not."""

    def __init__(self, sut, marked: bool) -> None:
        super().__init__(sut)
        self.marked = marked

    def read(self, t: float) -> PowerSample:
        sample = super().read(t)
        flags = sample.flags | ({FLAG_FREQUENCY_NOT_MEASURED} if self.marked else set())
        return replace(sample, freq_hz=float("nan"), flags=frozenset(flags))


def test_the_captured_rl_line_has_no_frequency_and_the_driver_marks_each_sample() -> None:
    assert "Freq" not in CAPTURED_LINE and "Watts" in CAPTURED_LINE
    with MeterSimulator("ptd") as sim:
        meter = PTDPower(sim.resource, **FAST)
        meter.open()
        try:
            samples = [meter.read(t) for t in (1.0, 2.0)]
        finally:
            meter.close()
    assert all(FLAG_FREQUENCY_NOT_MEASURED in s.flags and s.freq_hz != s.freq_hz
               for s in samples)


def test_the_supply_rule_judges_what_the_interface_measures() -> None:
    good = PowerSample(1.0, 500.0, volts=230.0, uncertainty_pct=0.2)
    unmeasurable = replace(good, flags=frozenset({FLAG_FREQUENCY_NOT_MEASURED}))
    assert FLAG_FREQUENCY_OUT_OF_RANGE not in RULES.supply_flags(unmeasurable)
    assert FLAG_FREQUENCY_OUT_OF_RANGE in RULES.supply_flags(good)  # could give it, did not
    # a sum: judged on the inputs that measure Hz; all without Hz → not judged
    wt = replace(good, freq_hz=70.0, input="a")
    both_ptd = sum_inputs(1.0, [replace(unmeasurable, input="a"),
                                replace(unmeasurable, input="b")], 0.5)
    mixed = sum_inputs(1.0, [wt, replace(unmeasurable, input="b")], 0.5)
    assert FLAG_FREQUENCY_OUT_OF_RANGE not in RULES.supply_flags(both_ptd)
    assert FLAG_FREQUENCY_OUT_OF_RANGE in RULES.supply_flags(mixed)
    assert RULES.supply_reading(mixed)[1] == 70.0


def test_a_run_read_through_an_interface_without_hz_is_valid() -> None:
    seq, _ = run(COMPLIANT, power=lambda sut: RlLikeMeter(sut, marked=True))
    assert_all_valid(seq)


def test_a_frequency_the_meter_could_give_but_did_not_stays_invalid() -> None:
    seq, _ = run(COMPLIANT, power=lambda sut: RlLikeMeter(sut, marked=False))
    for m in seq.metrics:
        assert not m.valid and "supply frequency outside 47–63 Hz" in m.reason, m.reason
        assert "not measured by the meter" in m.reason


def test_the_report_discloses_the_frequency_the_interface_did_not_measure(tmp_path) -> None:
    from app.core.records import InstrumentConfig, PowerInput, RunConfig
    from app.reports.content import build_content
    from app.station.session import open_session
    from drivers.clock import FakeClock

    config = RunConfig(method="smoke", lab="sim", power_inputs=(
        PowerInput("psu-a", "sim", "ptd", calibration_date="2026-01-05", certificate="C-1"),),
        temperature_meter=InstrumentConfig(calibration_date="2026-02-01", certificate="T-9"))
    session = open_session(config, db_url=f"sqlite:///{tmp_path}/runs.db", clock=FakeClock())
    session.sequencer.run()
    session.writer.close()
    content = build_content(load_run(session.database, session.sequencer.run_id))
    power, thermometer = content.instruments
    assert "frequency not measured by this interface in" in power.notes
    assert power.calibration == "psu-a: 2026-01-05 (certificate C-1)"  # item 1 too
    assert thermometer.calibration == "2026-02-01 (certificate T-9)"
