"""Adversarial runs: the method's rules on the readings, broken on purpose (issue 14).

Each test runs the simulated lab on a fake clock with one fault injected — an over-range
burst, readings whose uncertainty cannot be evaluated, a 150 V or 70 Hz supply, a 40 °C inlet,
a 90 s thermometer outage, a whole-degree thermometer, no thermometer — and checks that the
phase metric ends INVALID with a reason naming the rule and the evidence; its counterpart
shows the same run passes without the fault (or within the method's tolerance). The CLI
tests refuse a real-lab run whose SUT set-up is left at the simulated example.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from app.cli.main import main
from app.method.loader import load_method
from app.method.model import RangingRule
from app.core.records import InstrumentConfig, RunConfig, SutDescription
from app.sequencer import events as ev
from drivers.clock import FakeClock
from drivers.interfaces import (FLAG_FREQUENCY_OUT_OF_RANGE, FLAG_OVERRANGE, FLAG_SENSOR_ERROR,
                                FLAG_UNCERTAINTY_UNKNOWN, FLAG_VOLTAGE_OUT_OF_RANGE, PowerSample,
                                TemperatureSample)
from drivers.simulators.direct_meters import SimulatedPowerMeter, SimulatedThermometer
from drivers.simulators.sut import SimulatedSut
from tests.support.sequencer_runs import ProfileClock, assert_all_valid, metrics
from tests.support.sequencer_runs import run_short_sequence as run


class FaultyPowerMeter(SimulatedPowerMeter):
    """Readings of the active ``profile`` between ``start`` and ``end`` seconds after it began
    come back as ``fault``: an over-range burst or no evaluable uncertainty."""

    def __init__(self, sut: SimulatedSut, profile: str, start: float, end: float,
                 fault: str) -> None:
        super().__init__(sut)
        self.since, self.start, self.end, self.fault = ProfileClock(sut, profile), start, end, \
            fault
        self.injected = 0

    def read(self, t: float) -> PowerSample:
        sample = super().read(t)
        since = self.since(t)
        if since is None or not self.start <= since < self.end:
            return sample
        self.injected += 1
        if self.fault == FLAG_OVERRANGE:  # the peak the meter could not read
            return replace(sample, watts=float("nan"), flags=frozenset({FLAG_OVERRANGE}))
        return replace(sample, uncertainty_pct=None, watts=sample.watts * 3,
                       flags=frozenset({FLAG_UNCERTAINTY_UNKNOWN}))


class FaultyThermometer(SimulatedThermometer):
    """An inlet sensor that opens for ``outage`` seconds into ``profile``, or reads whole
    degrees only (a 1 °C resolution sensor)."""

    def __init__(self, sut: SimulatedSut, profile: str = "SR", outage: tuple[float, float]
                 | None = None, whole_degrees: bool = False) -> None:
        super().__init__(sut)
        self.since, self.outage, self.whole_degrees = ProfileClock(sut, profile), outage, \
            whole_degrees

    def read(self, t: float) -> TemperatureSample:
        sample = super().read(t)
        since = self.since(t)
        if self.outage and since is not None and self.outage[0] <= since < self.outage[1]:
            return TemperatureSample(t, float("nan"), frozenset({FLAG_SENSOR_ERROR}))
        if self.whole_degrees:  # its reply ("23") states 1 °C, as drivers read the digits
            return TemperatureSample(t, float(round(sample.celsius)), resolution_c=1.0)
        return sample


# --- flagged power samples (issue 14 item 2) ----------------------------------------------------
def test_an_over_range_burst_in_the_measurement_window_invalidates_the_phase() -> None:
    burst = lambda sut: FaultyPowerMeter(sut, "SW", 5.0, 5.75, FLAG_OVERRANGE)  # noqa: E731 - a meter factory, named
    seq, events = run(power=burst)
    sw = metrics(seq)["EP_SW"]
    assert not sw.valid
    assert ("3 flagged power sample(s) in the measurement window (3 over-range; per interval "
            "#6: 3), beyond the method's tolerance of 0 (instruments.max_flagged_power_samples; "
            "method-notes §3)") in sw.reason
    assert metrics(seq)["EP_SR"].valid  # the burst is counted where it happened only


def test_over_range_in_stabilisation_is_not_counted_and_a_tolerance_admits_a_burst() -> None:
    in_stabilisation = lambda sut: FaultyPowerMeter(sut, "SW", 0.5, 1.25,  # noqa: E731 - a meter factory, named
                                                    FLAG_OVERRANGE)
    seq, _ = run(power=in_stabilisation)
    assert_all_valid(seq)
    demo = load_method("demo")
    tolerant = demo.model_copy(update={"instruments": demo.instruments.model_copy(
        update={"max_flagged_power_samples": 3})})
    seq, _ = run(tolerant, power=lambda sut: FaultyPowerMeter(sut, "SW", 5.0, 5.75,
                                                               FLAG_OVERRANGE))
    assert_all_valid(seq)


def test_readings_without_an_evaluable_uncertainty_are_counted_and_never_averaged() -> None:
    unknown = lambda sut: FaultyPowerMeter(sut, "SR", 5.0, 5.75,  # noqa: E731 - a meter factory, named
                                           FLAG_UNCERTAINTY_UNKNOWN)
    seq, _ = run(power=unknown)
    sr = metrics(seq)["EP_SR"]
    assert not sr.valid and "3 uncertainty-not-evaluable" in sr.reason
    clean, _ = run()
    # the injected readings triple the watts: averaged, they would move the mean by ~15 %
    assert sr.avg_power_w == pytest.approx(metrics(clean)["EP_SR"].avg_power_w, rel=0.01)


def test_a_1_2_percent_uncertainty_invalidates_every_metric() -> None:
    # ±(0.1 % of reading + 0.05 % of a 13 kW range) at ~600–730 W: 1.0–1.2 %
    wide_range = lambda sut: SimulatedPowerMeter(sut, range_w=13_000.0)  # noqa: E731 - a meter factory, named
    # the ranges as configured: no ranging pass would pick this range (method-notes §3)
    as_configured = load_method("demo").model_copy(update={"ranging": RangingRule()})
    seq, _ = run(as_configured, power=wide_range)
    ri = metrics(seq)["EP_RI"]  # ~593 W idle: 1.2 % on every sample
    assert not ri.valid and "power sample(s) above the 1 % uncertainty limit" in ri.reason


# --- the "Minimum Accuracy" table read as the meter's resolution (item 3) ---------------------
def test_a_meter_reading_in_10_watt_steps_fails_the_accuracy_table() -> None:
    coarse = lambda sut: SimulatedPowerMeter(sut, resolution_w=10.0)  # noqa: E731 - a meter factory, named
    seq, _ = run(power=coarse)
    for m in seq.metrics:
        assert not m.valid
        assert re.search(r"(\d+) of \1 power sample\(s\) of the measurement window read coarser "
                         r"than the method's minimum-accuracy table, read as the meter's "
                         r"resolution \(worst 10 W at \d+\.0 W where 1 W is required; "
                         r"instruments.min_accuracy; method-notes §3\)", m.reason), m.reason
    seq, _ = run(power=lambda sut: SimulatedPowerMeter(sut, resolution_w=1.0))
    assert_all_valid(seq)


def test_the_resolution_comes_from_the_digits_the_meter_sent_and_the_band_from_the_power() -> None:
    from app.sequencer.conformance import resolution_problem
    from drivers.meters.values import decode

    assert [decode(t).resolution for t in ("592.7", "47.51E+00", "0.59E+03", "+206.40E-3")] == \
        pytest.approx([0.1, 0.01, 10.0, 1e-5])
    limits = load_method("demo").instruments
    # 8 W read to 0.1 W: the table asks 0.01 W up to 10 W; 50 W to 0.1 W is enough
    assert "worst 0.1 W at 8.0 W where 0.01 W is required" in resolution_problem(
        [(8.0, 0.1), (50.0, 0.1)], limits)
    assert resolution_problem([(50.0, 0.1), (150.0, 1.0), (9.0, None)], limits) is None


# --- supply (item 5) ----------------------------------------------------------------------------
def test_a_150_volt_supply_invalidates_every_metric_naming_the_range_and_worst_value() -> None:
    seq, events = run(spec={"volts": 150.0})
    for m in seq.metrics:
        assert not m.valid
        assert re.search(r"supply voltage outside the declared supply 1P-200-240 \(200–240 V "
                         r"single phase\) in (\d+) of \1 power sample\(s\) of the measurement "
                         r"window, worst 1(49\.\d|50\.\d) V \(instruments.voltage_ranges; "
                         r"method-notes §3\)", m.reason), m.reason
    flagged = [s for e in events if isinstance(e, ev.PowerSamples) for s in e.samples]
    assert flagged and all(FLAG_VOLTAGE_OUT_OF_RANGE in s.flags for s in flagged)
    assert all(s.usable for s in flagged)  # the watts are good; only the supply is not


def test_a_70_hz_supply_invalidates_every_metric() -> None:
    seq, _ = run(spec={"freq_hz": 70.0})
    for m in seq.metrics:
        assert not m.valid and "supply frequency outside 47–63 Hz in" in m.reason
        assert "worst 70.0 Hz (instruments.frequency_hz; method-notes §3)" in m.reason
        assert "supply voltage" not in m.reason


def test_a_115_volt_60_hz_sut_declared_low_line_is_valid() -> None:
    seq, events = run(sut_setup={"supply": "1P-100-120"}, spec={"volts": 115.0, "freq_hz": 60.0})
    assert_all_valid(seq)
    samples = [s for e in events if isinstance(e, ev.PowerSamples) for s in e.samples]
    assert not any({FLAG_VOLTAGE_OUT_OF_RANGE, FLAG_FREQUENCY_OUT_OF_RANGE} & s.flags
                   for s in samples)


def test_the_230_volt_simulated_sut_declared_low_line_is_invalid() -> None:
    seq, _ = run(sut_setup={"supply": "1P-100-120"})
    assert all(not m.valid and "declared supply 1P-100-120" in m.reason for m in seq.metrics)


def test_a_supply_the_method_does_not_know_is_refused_before_the_run() -> None:
    with pytest.raises(KeyError, match="supply '1P-220-230' is not one of the method's voltage "
                       r"ranges \(1P-100-120, 1P-200-240, 3P-200-480\)"):
        run(sut_setup={"supply": "1P-220-230"})


# --- inlet temperature (item 6): the compliant method, so windows are minutes long ----------
COMPLIANT = "emerald-block-v3"


def test_a_compliant_short_sequence_with_a_good_inlet_is_valid() -> None:
    seq, _ = run(COMPLIANT)
    assert_all_valid(seq)


def test_a_90_second_thermometer_outage_invalidates_the_phase() -> None:
    outage = lambda sut: FaultyThermometer(sut, "SR", outage=(900.0, 990.0))  # noqa: E731 - a meter factory, named
    seq, _ = run(COMPLIANT, thermometer=outage)
    sr = metrics(seq)["EP_SR"]
    assert not sr.valid
    # readings every 5 s: the gap between the last good one and the next is 95 s
    assert "inlet temperature missing for 95.0 s (limit 60 s, " \
        "instruments.max_temperature_interval_s; method-notes §3)" in sr.reason
    assert metrics(seq)["EP_SW"].valid


def test_a_40_c_inlet_is_invalid_for_class_a2_and_valid_for_a4() -> None:
    seq, _ = run(COMPLIANT, spec={"inlet_c": 40.0})
    for m in seq.metrics:
        assert not m.valid
        assert "outside ASHRAE A2's allowable 10–35 °C in" in m.reason, m.reason
        assert "(instruments.inlet_classes; method-notes §10)" in m.reason
    seq, _ = run(COMPLIANT, sut_setup={"ashrae_class": "A4"}, spec={"inlet_c": 40.0})
    assert_all_valid(seq)


def test_a_whole_degree_thermometer_fails_the_resolution_rule() -> None:
    coarse = lambda sut: FaultyThermometer(sut, whole_degrees=True)  # noqa: E731 - a meter factory, named
    seq, _ = run(COMPLIANT, thermometer=coarse)
    for m in seq.metrics:
        assert not m.valid
        assert re.search(r"the inlet thermometer resolves 1 °C in \d+ of \d+ reading\(s\) "
                         r"\(as its replies state\)", m.reason), m.reason
        assert "the method requires 0.1 °C (instruments.temperature_resolution_c" in m.reason


def test_no_thermometer_invalidates_every_metric() -> None:
    seq, _ = run("demo", thermometer=None)
    for m in seq.metrics:
        assert not m.valid
        assert "no inlet temperature reading in the measurement window: a thermometer at the " \
            "SUT inlet is required (method-notes §3)" in m.reason


# --- a real lab never takes the simulated SUT's facts (items 4, 5, 6) ----------------------
def test_local_fio_without_capacity_supply_and_class_is_refused(tmp_path: Path,
                                                                capsys) -> None:
    target = tmp_path / "scratch.dat"
    assert main(["run", "--lab", "local-fio", "--target", str(target), "--target-size", "1M",
                 "--method", "smoke", "--db", f"sqlite:///{tmp_path / 'x.db'}"]) == 1
    err = capsys.readouterr().err
    assert "--lab local-fio needs --sut FILE (the SUT description) or --vendor, --model, " \
        "--serial, --capacity-gb, --supply, --ashrae-class, --drives, --raid: nothing of the " \
        "simulated SUT is used outside the simulated labs" in err
    assert not target.exists()
    assert main(["run", "--lab", "local-fio", "--target", str(target), "--target-size", "1M",
                 "--capacity-gb", "1", "--ashrae-class", "A2", "--drives", "2", "--raid",
                 "RAID 1", "--vendor", "Acme", "--model", "M1", "--serial", "S1",
                 "--method", "smoke", "--db", f"sqlite:///{tmp_path / 'x.db'}"]) == 1
    assert "--lab local-fio needs --sut FILE (the SUT description) or --supply:" \
        in capsys.readouterr().err


def test_the_declared_set_up_reaches_the_run_config(tmp_path: Path) -> None:
    from app.cli.cmd_run import config_from_args
    from app.cli.main import build_parser

    args = build_parser().parse_args(["run", "--lab", "local-fio", "--target",
                                      str(tmp_path / "x"), "--target-size", "1M",
                                      "--capacity-gb", "480", "--supply", "3P-200-480",
                                      "--ashrae-class", "A3", "--drives", "4", "--raid",
                                      "RAID 10", "--vendor", "Acme", "--model", "M1",
                                      "--serial", "S1"])
    sut = config_from_args(args).sut
    assert (sut.vendor, sut.model, sut.serial) == ("Acme", "M1", "S1")  # never the simulated SUT's
    assert (sut.raw_capacity_bytes, sut.supply, sut.ashrae_class) == (480 * 10**9,
                                                                      "3P-200-480", "A3")
    sim = config_from_args(build_parser().parse_args(["run"])).sut
    assert (sim.raw_capacity_bytes, sim.supply, sim.ashrae_class) == (7300 * 10**9,
                                                                      "1P-200-240", "A2")


@pytest.mark.fio
def test_local_fio_with_a_real_power_meter_never_uses_the_simulated_thermometer(
        tmp_path: Path) -> None:
    from app.labs.builder import build_lab
    from drivers.simulators import ElectricalState, MeterSimulator

    meter = MeterSimulator("wt310", source=lambda: ElectricalState(500.0, 230.0, 2.2, 0.99,
                                                                    50.0))
    meter.start()
    try:
        config = RunConfig(lab="local-fio", sut=SutDescription(targets=(str(tmp_path / "t"),)),
                           power_meter=InstrumentConfig("wt300", meter.resource),
                           target_size="1M")
        lab = build_lab(config, FakeClock())
        try:
            assert lab.temperature_meter is None
            assert "no inlet thermometer: every metric INVALID" in lab.description
        finally:
            lab.close()
        rehearsal = build_lab(replace(config, power_meter=InstrumentConfig()), FakeClock())
        try:  # all simulated, and labelled so: the simulated inlet goes with it
            assert isinstance(rehearsal.temperature_meter, SimulatedThermometer)
        finally:
            rehearsal.close()
    finally:
        meter.stop()
