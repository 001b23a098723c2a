"""PTDaemon's multi-channel mode (issue 16 item 1): byte-level replies, one shared session for
the inputs on one daemon's channels, and a channel's bad sample flagging the total
(docs/method-notes.md §8 gives the reply layout and its public sources)."""

from __future__ import annotations

import math

import pytest

from app.labs.builder import build_lab, open_power_input
from app.core.records import PowerInput, RunConfig
from app.sequencer.power_inputs import PowerInputs
from drivers.clock import MonotonicClock
from drivers.interfaces import (FLAG_GARBAGE, FLAG_NO_DATA, FLAG_UNCERTAINTY_UNKNOWN,
                                InstrumentError)
from drivers.meters.ptd_channels import (MULTI_CHANNEL_READ, PtdDaemons, parse_header,
                                         parse_line)
from drivers.simulators import MeterSimulator

#: the layout of a line PTDaemon 1.10.0 sent for `RL,*,*` with `-c 1,3` (a WT333E), numbers
#: from the public MLPerf v4.1 capture named in method-notes §8
CAPTURED = ("Time,07-11-2024 23:35:19.963,Watts,2371.600000,Volts,239.183333,Amps,3.428667,"
            "PF,0.964059,Watts,800.600000,Volts,239.330000,Amps,3.466000,PF,0.965200,"
            "Watts,785.700000,Volts,238.810000,Amps,3.418000,PF,0.962800,"
            "Watts,785.300000,Volts,239.410000,Amps,3.402000,PF,0.964200\r\n")
BAD = "Time,07-12-2024 08:19:11.325," + ",".join(
    ["Watts,-1.000000,Volts,-1.000000,Amps,-1.000000,PF,-1.000000"] * 4)


def test_the_header_names_the_sum_and_the_channels() -> None:
    header = parse_header("Last 761 samples from sum channel and channels 1 - 3")
    assert header is not None and header.samples == 761 and header.channels == range(1, 4)
    assert parse_header("Last 761 samples") is None  # single-channel RL's header


def test_a_captured_line_splits_into_the_sum_and_each_channel() -> None:
    blocks = parse_line(CAPTURED, range(1, 4))
    assert sorted(blocks) == [0, 1, 2, 3]
    assert blocks[0]["watts"].value == 2371.6
    assert [blocks[c]["watts"].value for c in (1, 2, 3)] == [800.6, 785.7, 785.3]
    assert blocks[2]["volts"].value == 238.81 and blocks[3]["amps"].value == 3.402
    assert blocks[1]["pf"].value == 0.9652 and not blocks[1]["watts"].flags
    assert math.fsum(blocks[c]["watts"].value for c in (1, 2, 3)) == pytest.approx(2371.6)


def test_a_bad_sample_is_no_data_in_every_block() -> None:
    blocks = parse_line(BAD, range(1, 4))
    assert all(math.isnan(blocks[c]["watts"].value) and blocks[c]["watts"].flags == {FLAG_NO_DATA}
               for c in (0, 1, 2, 3))


@pytest.mark.parametrize("line", [
    CAPTURED.replace(",Watts,785.300000,Volts,239.410000,Amps,3.402000,PF,0.964200", ""),  # short
    CAPTURED.replace("PF,0.965200,Watts", "PF,0.965200,Ch2,Watts"),  # a log file's labels
    CAPTURED.replace("Volts,238.810000", "Amps,238.810000"),  # keys out of order
    CAPTURED.replace("Time,", "Time ", 1)])
def test_a_line_of_another_shape_is_garbage_never_a_guess(line: str) -> None:
    blocks = parse_line(line, range(1, 4))
    assert all(blocks[c]["watts"].flags == {FLAG_GARBAGE} for c in (0, 1, 2, 3))


def test_the_simulator_answers_the_documented_layout_byte_for_byte() -> None:
    with MeterSimulator("ptd", channels=2) as sim:
        sim.set_state(200.0, volts=230.0, amps=1.0, pf=0.9)
        sim.load_channels((0.75, 0.25))
        dialect = sim.dialect
        assert dialect.respond("Go,1000,0,storwatt", None)
        header, line = dialect.respond(MULTI_CHANNEL_READ, None).split("\r\n")
        assert header == "Last 1 samples from sum channel and channels 1 - 2"
        assert line.split(",", 2)[2] == (
            "Watts,200.000000,Volts,230.000000,Amps,0.500000,PF,0.900000,"
            "Watts,150.000000,Volts,230.000000,Amps,0.750000,PF,0.900000,"
            "Watts,50.000000,Volts,230.000000,Amps,0.250000,PF,0.900000")
    with MeterSimulator("ptd") as single:  # not in multi-channel mode
        assert "Invalid number of parameters" in single.dialect.respond(MULTI_CHANNEL_READ, None)


def _two_channels(sim: MeterSimulator) -> PowerInputs:
    daemons = PtdDaemons()
    return PowerInputs([(PowerInput(name, "ptd", sim.resource, element=ch),
                         daemons.channel(sim.resource, ch, timeout_s=0.5))
                        for name, ch in (("psu-a", 1), ("psu-b", 2))], MonotonicClock(), 1.0)


def test_two_channels_of_one_daemon_share_one_session_and_are_summed() -> None:
    with MeterSimulator("ptd", channels=2) as sim:
        sim.set_state(300.0, amps=1.5)
        sim.load_channels((2 / 3, 1 / 3))
        inputs = _two_channels(sim)
        inputs.open()
        try:
            sim.dialect.ranges = {"V": "300", "A": "2"}  # fixed: the daemon states u
            for t in (1.0, 2.0):
                total = inputs.read(t)
                assert [p.watts for p in total.inputs] == pytest.approx([200.0, 100.0])
                assert total.watts == pytest.approx(300.0) and total.usable
                assert total.uncertainty_pct == pytest.approx(0.15)
        finally:
            inputs.close()
        log = [e.received for e in sim.transcript
               if e.received.startswith((b"Go", b"RL", b"Stop", b"Uncertainty"))]
        replies = [e.sent for e in sim.transcript if e.received == b"RL,*,*\r\n"]
    # one Go and one Stop for the daemon; one RL,*,* and one Uncertainty per instant
    assert log == [b"Go,1000,0,storwatt\r\n", b"RL,*,*\r\n", b"Uncertainty\r\n",
                   b"RL,*,*\r\n", b"Uncertainty\r\n", b"Stop\r\n"]
    assert replies[0].startswith(b"Last 1 samples from sum channel and channels 1 - 2\r\nTime,")
    assert replies[0].endswith(b",PF,0.950000\r\n")


def test_one_channels_bad_sample_flags_the_total() -> None:
    with MeterSimulator("ptd", channels=2) as sim:
        inputs = _two_channels(sim)
        inputs.open()
        try:
            sim.dialect.ranges = {"V": "300", "A": "2"}  # fixed: the daemon states u
            sim.fail_channel(2)
            total = inputs.read(1.0)
            assert total.inputs[1].flags >= {FLAG_NO_DATA} and math.isnan(total.inputs[1].watts)
            assert not total.usable and FLAG_NO_DATA in total.flags
            # the good channel's reading is kept, but the daemon states one uncertainty, its sum
            # channel's, and the sum's sample is bad: it counts as "unknown" (method-notes §8)
            good = total.inputs[0]
            assert good.watts == pytest.approx(sim.state().watts / 2)
            assert good.uncertainty_pct is None and FLAG_UNCERTAINTY_UNKNOWN in good.flags
        finally:
            inputs.close()


def test_a_channel_named_twice_or_missing_is_refused_with_the_reason() -> None:
    daemons = PtdDaemons()
    daemons.channel("127.0.0.1:8888", 1)
    with pytest.raises(InstrumentError, match="channel 1 is named by two power inputs"):
        daemons.channel("127.0.0.1:8888", 1)
    with pytest.raises(InstrumentError, match="no option wiring"):
        daemons.channel("127.0.0.1:8888", 2, wiring="3P4W")
    with MeterSimulator("ptd", channels=2) as sim:
        meter = PtdDaemons().channel(sim.resource, 3, timeout_s=0.5)
        meter.open()
        try:
            with pytest.raises(InstrumentError, match=r"reports channels \[1, 2\], not channel 3"):
                meter.read(1.0)
        finally:
            meter.close()
    with MeterSimulator("ptd") as single:
        meter = PtdDaemons().channel(single.resource, 1, timeout_s=0.5)
        meter.open()
        try:
            with pytest.raises(InstrumentError, match="not in multi-channel mode"):
                meter.read(1.0)
        finally:
            meter.close()


def test_channels_share_the_daemons_ranges_at_the_largest_request() -> None:
    with MeterSimulator("ptd", channels=2) as sim:
        daemons = PtdDaemons()
        a, b = (daemons.channel(sim.resource, ch, timeout_s=0.5) for ch in (1, 2))
        a.open(), b.open()
        try:
            a.set_ranges(300.0, 5.0)
            b.set_ranges(150.0, 10.0)
            assert a.ranges == b.ranges == (300.0, 10.0)
            a.auto_range()
            assert b.ranges is None
        finally:
            a.close(), b.close()
        sent = [e.received for e in sim.transcript if e.received.startswith(b"SR,")]
    assert sent == [b"SR,V,300\r\n", b"SR,A,5\r\n", b"SR,V,300\r\n", b"SR,A,10\r\n",
                    b"SR,V,Auto\r\n", b"SR,A,Auto\r\n"]


def test_a_simulated_lab_runs_two_channels_of_one_daemon() -> None:
    inputs = (PowerInput("psu-a", "sim", "ptd", element=1),
              PowerInput("psu-b", "sim", "ptd", element=2))
    lab = build_lab(RunConfig(lab="sim", power_inputs=inputs), MonotonicClock())
    try:
        assert lab.power_meter.open().simulated
        total = lab.power_meter.read(1.0)
        assert [p.input for p in total.inputs] == ["psu-a", "psu-b"]
        assert total.inputs[0].watts == pytest.approx(total.inputs[1].watts, rel=1e-6)
        assert total.watts == pytest.approx(math.fsum(p.watts for p in total.inputs))
    finally:
        lab.close()


def test_the_wizards_row_test_opens_one_channel_as_the_run_does() -> None:
    config = RunConfig(lab="sim", power_inputs=(PowerInput("psu-a", "sim", "ptd", element=1),
                                                PowerInput("psu-b", "sim", "ptd", element=2)))
    meter, teardown = open_power_input(config, "psu-b")
    try:
        assert meter.open().simulated and meter.read(1.0).watts > 0
    finally:
        teardown.run()
