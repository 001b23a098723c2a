"""The DAQ's rail scan, command by command (issue 42): every byte the driver sends is pinned
(tests/support/scripted_wire.py, pymeasure's ``expected_protocol`` style), and each reply the
instrument can give — numbers, an overload, a short or garbled reply, an error at set-up —
becomes a number, a flagged NaN, or one error naming the instrument."""

from __future__ import annotations

import math

import pytest

from drivers.interfaces import FLAG_GARBAGE, FLAG_OVERRANGE, InstrumentError
from drivers.meters.rail_scan import DaqRailScanner, parse_channels
from tests.support.scripted_wire import expected_protocol

RESOURCE = "TCPIP::127.0.0.1::5025::SOCKET"
IDN = "Keysight Technologies,DAQ970A,MY12345678,A.03.01"
SETUP = [("*IDN?", IDN), ("*CLS", None), ("CONF:VOLT:DC 10,(@101,102,103)", None),
         ("VOLT:DC:NPLC 1,(@101,102,103)", None), ("ROUT:SCAN (@101,102,103)", None),
         ("SYST:ERR?", '+0,"No error"')]


def scanner(**options) -> DaqRailScanner:
    return DaqRailScanner(RESOURCE, channels="101:103", **options)


def test_open_configures_the_scan_and_a_scan_reads_every_channel() -> None:
    script = SETUP + [("READ?", "+2.56012000E+00,+2.55000000E+00,+1.25000000E-01")]
    with expected_protocol(scanner(), script) as daq:
        identity = daq.open()
        scan = daq.scan(12.0)
    assert identity.model == "DAQ970A" and scan.instrument == identity.key
    assert scan.channels == (101, 102, 103)
    assert scan.volts == (2.56012, 2.55, 0.125) and scan.as_mapping()[103] == 0.125
    assert all(not f for f in scan.flags)


def test_an_overloaded_channel_is_a_flagged_nan_and_the_others_stay_numbers() -> None:
    script = SETUP + [("READ?", "+2.56E+00,+9.90000000E+37,+1.0E-01")]
    with expected_protocol(scanner(), script) as daq:
        daq.open()
        scan = daq.scan(0.0)
    assert math.isnan(scan.reading(102)) and FLAG_OVERRANGE in scan.flags[1]
    assert scan.reading(101) == 2.56 and not scan.flags[0]


@pytest.mark.parametrize("reply", ["+2.56E+00,+2.55E+00", "+2.56E+00,+2.55E+00,2.5V",
                                   "+2.56E+00;+2.55E+00;+1.0E-01"])
def test_a_short_or_garbled_reply_is_garbage_in_every_channel(reply: str) -> None:
    with expected_protocol(scanner(), SETUP + [("READ?", reply)]) as daq:
        daq.open()
        scan = daq.scan(0.0)
    assert all(math.isnan(v) for v in scan.volts)
    assert all(FLAG_GARBAGE in f for f in scan.flags)


def test_a_set_up_the_instrument_rejects_stops_the_open_in_its_own_words() -> None:
    script = SETUP[:-1] + [("SYST:ERR?", '-221,"Settings conflict"')]
    with pytest.raises(InstrumentError, match="rejected the set-up.*Settings conflict"):
        with expected_protocol(scanner(), script) as daq:
            daq.open()


def test_options_reach_the_commands() -> None:
    script = [("*IDN?", IDN), ("*CLS", None), ("CONF:VOLT:DC 1,(@201,202)", None),
              ("VOLT:DC:NPLC 10,(@201,202)", None), ("ROUT:SCAN (@201,202)", None),
              ("SYST:ERR?", '+0,"No error"')]
    daq = DaqRailScanner(RESOURCE, channels="201,202", range_v=1.0, nplc=10.0)
    with expected_protocol(daq, script):
        daq.open()


def test_a_scan_the_period_cannot_hold_is_refused_with_both_times() -> None:
    daq = DaqRailScanner(RESOURCE, channels="101:114", nplc=1.0, line_hz=50.0, switch_s=0.005)
    assert daq.scan_time_s == pytest.approx(14 * 0.025)
    daq.check_period(1.0)
    with pytest.raises(InstrumentError, match=r"14 channels .* take 0.350 s a scan, longer "
                                              r"than the 0.2 s sampling period"):
        daq.check_period(0.2)


@pytest.mark.parametrize(("text", "message"), [
    ("101:114", None), ("101,103,201:202", None),
    ("101:99", "must run upwards"), ("140:201", "within one slot"),
    ("141", "channel 141 does not exist"), ("101,101", "names a channel twice"),
    ("a1", "is not a channel"),
])
def test_channel_lists(text: str, message: str | None) -> None:
    if message is None:
        assert len(parse_channels(text)) == len(set(parse_channels(text)))
    else:
        with pytest.raises(InstrumentError, match=message):
            parse_channels(text)


@pytest.mark.parametrize(("options", "message"), [
    ({}, "needs channels="), ({"channels": "101", "range_v": 5.0}, "not a DC-voltage range"),
    ({"channels": "101", "nplc": 3.0}, "not an integration time"),
    ({"channels": "101", "line_hz": 55.0}, "50 or 60 Hz"),
])
def test_impossible_options_are_refused_by_name(options: dict, message: str) -> None:
    with pytest.raises(InstrumentError, match=message):
        DaqRailScanner(RESOURCE, **options)
