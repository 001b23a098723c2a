"""The PTDaemon driver against replies a real daemon sent (tests/fixtures/ptd, PTDaemon 1.10.0):
Identify without the word "PTDaemon", the 8-field Uncertainty, RR's auto flags and ranges."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drivers.interfaces import (FLAG_UNCERTAINTY_UNKNOWN, IdentityMismatch, InstrumentError,
                                SIMULATOR_IDN_PREFIX)
from drivers.meters.ptd import PTDPower, PTDTemperature
from drivers.meters.ptd_channels import PtdDaemons
from drivers.meters.ptd_replies import (UncertaintyStats, interval_uncertainty_pct,
                                        parse_identify, parse_ranges, parse_uncertainty)
from drivers.simulators import MeterSimulator
from drivers.simulators.faults import FaultKind
from drivers.simulators.server import LineDialect, LineServer

CAPTURES = Path(__file__).parent / "fixtures" / "ptd"
MESSAGES = json.loads((CAPTURES / "resnet50_offline_messages.json").read_text())
SAMPLE_LINE = (CAPTURES / "rl_sample_line.txt").read_text().strip()
OTHER_RANGES = (CAPTURES / "other_replies.txt").read_text().split()


def captured(command: str, nth: int = 0) -> str:
    """The ``nth`` reply the daemon gave to ``command`` in the captured session."""
    return [m["reply"] for m in MESSAGES if m["cmd"] == command][nth]


IDENTIFY = captured("Identify")
RANGING_UNCERTAINTY = captured("Uncertainty", 0)  # auto range: none evaluated
TESTING_UNCERTAINTY = captured("Uncertainty", 1)  # fixed ranges: all evaluated
FAST = {"timeout_s": 1.0, "reconnect_attempts": 1, "reconnect_delay_s": 0.01}


class CapturedDaemon(LineDialect):
    """Answers with the captured daemon's own reply lines; ``uncertainty`` is switchable so a
    test can play the ranging or the testing pass."""

    termination = "\r\n"

    def __init__(self) -> None:
        self.uncertainty = TESTING_UNCERTAINTY
        self.ranges = captured("RR")

    def wants_reply(self, command: str) -> bool:
        return True

    def respond(self, command: str, special: FaultKind | None) -> str | None:
        cmd = command.strip()
        if cmd == "RL,*,*":
            return ("Last 1 samples from sum channel and channels 1 - 3\r\n" + SAMPLE_LINE)
        if cmd == "Uncertainty":
            return self.uncertainty
        if cmd == "RR":
            return self.ranges
        if cmd.startswith("Go,"):
            return next(m["reply"] for m in MESSAGES if m["cmd"].startswith("Go,"))
        if cmd.startswith("SR,"):
            return f"Range {cmd[3]} changed"
        replies = {m["cmd"]: m["reply"] for m in MESSAGES}
        return replies.get(cmd, "Error: unknown command")


# -- the replies, field by field ----------------------------------------------------------------
def test_captured_identify_names_device_version_mode_and_meter() -> None:
    daemon = parse_identify(IDENTIFY)
    assert daemon is not None
    assert daemon.device == "YokogawaWT330_multichannel"
    assert daemon.version == "1.10.0-ed9a21d2-20220817" and daemon.mode == "power"
    assert daemon.meter == "YOKOGAWA WT333E C2XL24034V F1.04"
    assert parse_identify("YOKOGAWA,WT310,C2PH13047V,F1.03") is None  # a meter, not a daemon


def test_captured_uncertainty_is_statistics_since_go_not_its_last_field() -> None:
    testing = parse_uncertainty(TESTING_UNCERTAINTY)  # Uncertainty,0.002410,…,761,0,761,0
    assert testing == UncertaintyStats(0.002410, 0.002262, 0.003380, 761, 0, 761, 0)
    # the maximum since Go bounds every sample: 0.338 %, not the last field's 0
    assert interval_uncertainty_pct(None, testing) == pytest.approx(0.338)
    ranging = parse_uncertainty(RANGING_UNCERTAINTY)  # Uncertainty,-1.0,10000000,0,759,0,0,759
    assert (ranging.evaluated, ranging.unknown) == (0, 759)
    assert interval_uncertainty_pct(None, ranging) is None


def test_an_unevaluated_sample_in_the_interval_is_unknown_even_with_a_maximum() -> None:
    before = UncertaintyStats(0.0024, 0.0022, 0.0033, 10, 0, 10, 0)
    assert interval_uncertainty_pct(before, UncertaintyStats(0.0024, 0.0022, 0.0033, 11, 0, 10,
                                                             1)) is None
    assert interval_uncertainty_pct(before, UncertaintyStats(0.0024, 0.0022, 0.0033, 11, 1, 10,
                                                             0)) is None  # unexplained count
    later = UncertaintyStats(0.0024, 0.0022, 0.0034, 12, 0, 11, 1)
    assert interval_uncertainty_pct(UncertaintyStats(0.0024, 0.0022, 0.0033, 11, 0, 10, 1),
                                    later) == pytest.approx(0.34)


def test_malformed_uncertainty_is_refused_with_the_reply() -> None:
    for reply in ("Uncertainty,0.0015", "Uncertainty,0.1,0.1,0.1,1,0,x,0", "Error: no data"):
        with pytest.raises(InstrumentError, match="answered Uncertainty with"):
            parse_uncertainty(reply)


def test_captured_rr_is_amps_then_volts_each_with_its_auto_flag() -> None:
    both_auto = parse_ranges(captured("RR"))  # Ranges,1,10.000000,1,300.000000
    assert (both_auto.amps_auto, both_auto.volts_auto) == (1, 1)
    assert both_auto.present() == (300.0, 10.0)
    volts_fixed, fixed = (parse_ranges(r) for r in OTHER_RANGES)
    assert (volts_fixed.amps_auto, volts_fixed.volts_auto) == (1, 0)
    assert (fixed.amps_auto, fixed.volts_auto) == (0, 0)
    assert parse_ranges("Ranges,-1,-1.000000,-1,-1.000000").present() == (None, None)
    with pytest.raises(InstrumentError, match="answered RR with 'Ranges,V,Auto,A,Auto'"):
        parse_ranges("Ranges,V,Auto,A,Auto")


# -- the driver against the captured daemon ----------------------------------------------------
def test_driver_accepts_the_real_daemon_and_reads_its_uncertainty_and_ranges() -> None:
    daemon = CapturedDaemon()
    with LineServer(daemon) as server:
        meter = PtdDaemons().channel(server.resource, 2, **FAST)
        identity = meter.open()
        try:
            assert identity.model == "PTDaemon YokogawaWT330_multichannel"
            assert identity.firmware == "1.10.0-ed9a21d2-20220817" and not identity.simulated
            daemon.uncertainty = RANGING_UNCERTAINTY  # auto range: the ranging pass
            auto = meter.read(1.0)
            assert auto.watts == pytest.approx(806.4)  # channel 2's block of the captured line
            assert (auto.range_v, auto.range_a) == (300.0, 10.0)  # from RR
            assert auto.uncertainty_pct is None and FLAG_UNCERTAINTY_UNKNOWN in auto.flags
            meter.set_ranges(239.42, 8.1675)  # the testing pass's values in the capture
            daemon.uncertainty = TESTING_UNCERTAINTY
            fixed = meter.read(2.0)
            assert fixed.uncertainty_pct == pytest.approx(0.338) and fixed.usable
        finally:
            meter.close()
        sent = [e.received.decode().strip() for e in server.wait_for_exchanges(99, 0.3)]
    # ranges change between Stop and Go, as the captured client changed them
    assert sent[sent.index("SR,V,239.42") - 1] == "Stop"
    assert sent[sent.index("SR,A,8.1675") + 1].startswith("Go,")


def test_power_and_temperature_clients_refuse_the_other_mode_by_name() -> None:
    daemon = CapturedDaemon()
    with LineServer(daemon) as server:
        with pytest.raises(IdentityMismatch, match="PTDaemon measuring power"):
            PTDTemperature(server.resource, **FAST).open()
    temperature = IDENTIFY.replace("mode=power", "mode=temperature")
    with pytest.raises(IdentityMismatch, match="mode 'temperature', not 'power'"):
        PTDPower("127.0.0.1:8888")._identity_from(temperature)
    with pytest.raises(IdentityMismatch, match="no version= and mode= fields"):
        PTDPower("127.0.0.1:8888")._identity_from("YOKOGAWA,WT310,C2PH13047V,F1.03")


# -- the simulator speaks the same layouts ------------------------------------------------------
def test_simulator_answers_in_the_captured_layouts() -> None:
    with MeterSimulator("ptd") as sim:
        meter = PTDPower(sim.resource, **FAST)
        identity = meter.open()
        try:
            assert identity.simulated and identity.model == "PTDaemon StorWattSimulatedMeter"
            assert meter.read(1.0).uncertainty_pct is None  # auto range: unknown
            meter.set_ranges(300, 2)
            assert meter.read(2.0).uncertainty_pct == pytest.approx(0.15)
            replies = {e.received.decode().strip(): e.sent.decode().strip()
                       for e in sim.wait_for_exchanges(12, 0.3)}
        finally:
            meter.close()
    assert replies["Identify"].startswith(SIMULATOR_IDN_PREFIX)
    # asked on auto range: the WT300 ranges 100 W at 230 V needs (0.46 A)
    assert parse_ranges(replies["RR"]).present() == (300.0, 0.5)
    assert parse_uncertainty(replies["Uncertainty"]) == UncertaintyStats(
        0.0015, 0.0015, 0.0015, 1, 0, 1, 0)
