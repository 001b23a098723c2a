"""Meter links that misbehave byte by byte (#25 item 3, item 7 and the minors): every read is
bounded in bytes and time, a reply is one reply however it arrives, replies are parsed as
the manual prints them, and a reading that cannot be physical is flagged.

Stand-ins on loopback sockets (``tests/support/standin.py``) send what no well-behaved
simulator would; limits are short so no test waits more than about a second.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterator

import pytest

from drivers.interfaces import (FLAG_GARBAGE, FLAG_IMPLAUSIBLE, InstrumentError,
                                InstrumentTimeout)
from drivers.meters.registry import open_power_meter
from drivers.meters.transport import MAX_REPLY_BYTES, SocketTransport, VisaTransport
from drivers.meters.values import decode_fields
from drivers.simulators import MeterSimulator
from tests.support.bounded import outcome_within
from tests.support.standin import Chunk, StandIn
from tests.support.time_budget import budget_s

FAST = {"timeout_s": 1.0, "reconnect_attempts": 1, "reconnect_delay_s": 0.01}
#: a read timeout no test here waits out: a read ended before it was ended by something else
LONG_S = 60.0
CHROMA_IDN = "Chroma ATE,66203,S1,1.20"
#: fixed ranges: a Chroma on auto range asks for them with each reading
CHROMA = {**FAST, "range_v": 300, "range_a": 2}


def chroma(reading: str | None = None, **extra: list[Chunk]):
    """An answer function for a Chroma 66203 stand-in: ``*IDN?``, silent set-up commands,
    and the reading reply given (or ``extra[command]``'s chunks)."""
    def answer(command: str) -> list[Chunk]:
        if command == "*IDN?":
            return [(f"{CHROMA_IDN}\n".encode(), 0.0)]
        if command in extra:
            return extra[command]
        if command.startswith("MEAS?") and reading is not None:
            return [(f"{reading}\n".encode(), 0.0)]
        return []
    return answer


def _timed_outcome(call, what: str, quiet_s: float = 3.0
                   ) -> tuple[BaseException | None, float]:
    """What ``call`` raised and the seconds it took; a call still running after ``quiet_s``
    (a quiet machine's seconds, scaled by the time budget) fails the test instead of hanging
    the suite."""
    start = time.monotonic()
    error = outcome_within(call, what, budget_s(quiet_s))
    return error, time.monotonic() - start


def _stream() -> Iterator[Chunk]:
    while True:
        yield b"x" * 4096, 0.0005


# --- item 3: a meter streaming without a line end ---------------------------------------------
@pytest.mark.parametrize("kind", ["visa", "socket"])
def test_a_meter_streaming_without_a_line_end_costs_one_error_not_the_station(kind) -> None:
    with StandIn(lambda command: _stream()) as standin:
        # a timeout far past the test's patience: only the byte bound can end this read
        if kind == "visa":
            link = VisaTransport(standin.resource, timeout_s=LONG_S)
        else:
            link = SocketTransport("127.0.0.1", standin.port, timeout_s=LONG_S)
        link.write("RL")
        error, _ = _timed_outcome(link.read, "a read of a streaming meter", 1.0)
        link.close()
    assert isinstance(error, InstrumentError) and "without a line end" in str(error), error
    assert not isinstance(error, InstrumentTimeout)  # ended by the byte bound, not the clock
    assert f"more than any reply ({MAX_REPLY_BYTES} bytes)" in str(error)


def test_a_trickle_never_extends_the_timeout() -> None:
    """One byte every 0.1 s keeps a slice from timing out; the reply's deadline still holds."""
    def trickle(command: str) -> Iterator[Chunk]:
        while True:
            yield b"1", 0.1
    with StandIn(trickle) as standin:
        link = VisaTransport(standin.resource, timeout_s=0.5)
        link.write(":NUM:NORM:VAL?")
        # a read the trickle extended would last for ever: past the patience, under 1 s on
        # a quiet machine (scaled by the time budget on a busy one)
        error, took = _timed_outcome(link.read, "a read of a trickling meter", 1.0)
        link.close()
    assert isinstance(error, InstrumentTimeout) and "did not answer within 0.5 s" in str(error)
    assert took >= 0.5  # the timeout's whole length: load only stretches it


def test_the_driver_reconnects_after_a_streaming_reply_and_reads_again() -> None:
    streams = itertools.count()

    def answer(command: str):
        if command.startswith("MEAS?") and next(streams) == 0:
            return _stream()
        return chroma("230.05,0.5012,114.30,0.99,50.00")(command)
    with StandIn(answer) as standin:
        meter = open_power_meter("chroma66200", standin.resource, **CHROMA)
        meter.open()
        error = outcome_within(lambda: meter.read(0.0), "a streaming reading", 3.0)
        assert isinstance(error, InstrumentError), error
        sample = meter.read(1.0)  # reconnects first, then reads
        meter.close()
    assert sample.watts == pytest.approx(114.30) and not sample.flags


# --- minors: a reply split by a pause, a reply sent twice, a refused connection --------------
@pytest.mark.parametrize("pause_s", [0.15, 0.4])
def test_a_reply_split_by_a_pause_is_one_reply(pause_s: float) -> None:
    split = [(b"230.05,0.5012", 0.0), (b",114.30,0.99,50.00\n", pause_s)]
    with StandIn(chroma(**{"MEAS? V,I,W,PF,FREQ": split})) as standin:
        meter = open_power_meter("chroma66200", standin.resource, **CHROMA)
        meter.open()
        sample = meter.read(0.0)
        meter.close()
    assert sample.watts == pytest.approx(114.30) and sample.volts == pytest.approx(230.05)
    assert not sample.flags


def test_a_meter_sending_every_reply_twice_never_makes_readings_stale() -> None:
    count = itertools.count(1)

    def twice(command: str) -> list[Chunk]:
        if command.startswith("MEAS?"):
            reply = f"230.00,0.50,{100 + next(count)}.00,0.99,50.00\n".encode()
            return [(reply + reply, 0.0)]
        return [(data * 2, pause) for data, pause in chroma()(command)]
    with StandIn(twice) as standin:
        meter = open_power_meter("chroma66200", standin.resource, **CHROMA)
        meter.open()
        watts = [meter.read(float(k)).watts for k in range(5)]
        meter.close()
    assert watts == [101.0, 102.0, 103.0, 104.0, 105.0]  # each the answer to its own query


def test_a_refused_connection_names_the_address_once() -> None:
    with StandIn(chroma()) as standin:
        port = standin.port  # closed below: nothing listens there any more
    meter = open_power_meter("chroma66200", f"TCPIP::127.0.0.1::{port}::SOCKET",
                             timeout_s=0.3, reconnect_attempts=1, reconnect_delay_s=0.01)
    with pytest.raises(InstrumentError) as err:
        meter.reconnect()
    text = str(err.value)
    assert text.count(f"127.0.0.1::{port}") == 1, text
    assert "refused the connection" in text and "connection lost" not in text


# --- item 7: replies parsed as the manual prints them ------------------------------------------
def test_a_unit_suffix_the_manual_does_not_print_is_unreadable_not_megawatts() -> None:
    with StandIn(chroma("230.05,2.845,654300.0MW,0.99,50.00")) as standin:
        meter = open_power_meter("chroma66200", standin.resource, **CHROMA)
        meter.open()
        sample = meter.read(0.0)
        meter.close()
    assert math.isnan(sample.watts) and FLAG_GARBAGE in sample.flags and not sample.usable
    assert math.isnan(sample.volts) and math.isnan(sample.freq_hz)


def test_a_semicolon_locale_reply_keeps_no_fragment() -> None:
    """``229,95;0,215;48,12;0,97;50`` splits into five comma fields by chance; ``229`` and
    the rest must not become volts and hertz."""
    fields = decode_fields("229,95;0,215;48,12;0,97;50", 5)
    assert all(math.isnan(f.value) and f.flags == {FLAG_GARBAGE} for f in fields)


def test_an_impossible_reading_is_flagged_implausible() -> None:
    with MeterSimulator("wt310", update_s=1e-6) as sim:
        meter = open_power_meter("wt300", sim.resource, range_v=300, range_a=5, **FAST)
        meter.open()
        sim.set_state(1000.0, volts=230.0, amps=1.0, pf=0.95)  # 1000 W from 230 VA
        over = meter.read(0.0)
        sim.set_state(200.0, volts=230.0, pf=1.2)  # |PF| > 1
        pf = meter.read(1.0)
        sim.set_state(200.0, volts=230.0, pf=0.95)
        good = meter.read(2.0)
        meter.close()
    assert FLAG_IMPLAUSIBLE in over.flags and not over.usable
    assert FLAG_IMPLAUSIBLE in pf.flags and not pf.usable
    assert not good.flags


@pytest.mark.parametrize("wiring,k", [("3P3W", math.sqrt(3)), ("3P4W", 3.0)])
def test_three_phase_sums_are_judged_with_their_wirings_factor(wiring: str, k: float) -> None:
    """Σ values are per-phase volts and amps with the summed power: a balanced 690 W load is
    plausible under √3 (3P3W, line-to-line volts) and 3 (3P4W, phase volts)."""
    with MeterSimulator("wt333e", update_s=1e-6) as sim:
        sim.set_state(690.0, pf=1.0)
        meter = open_power_meter("wt300", sim.resource, wiring=wiring, **FAST)
        meter.open()
        sample = meter.read(0.0)
        meter.close()
    assert sample.watts == pytest.approx(690.0) and not sample.flags
    assert sample.watts <= k * sample.volts * sample.amps * 1.001
