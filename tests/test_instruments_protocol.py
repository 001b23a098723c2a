"""Byte-exact protocol: each driver's commands through pyvisa-py (or its socket) to a
recording simulator, compared with the expected sequence in fixtures/instruments."""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import pytest

from drivers.clock import FakeClock
from drivers.fio.engine import FioEngine
from drivers.interfaces import PowerMeter, TemperatureMeter, WorkloadEngine
from drivers.meters.registry import (POWER_DRIVERS, TEMPERATURE_DRIVERS, open_power_meter,
                                     open_temperature_meter)
from drivers.simulators import MeterSimulator, ThermometerSimulator
from drivers.simulators.direct_meters import SimulatedPowerMeter, SimulatedThermometer
from drivers.simulators.engine import SimulatedWorkloadEngine
from drivers.simulators.sut import SimulatedSut

TRANSCRIPTS = json.loads((Path(__file__).parent / "fixtures" / "instruments" /
                          "transcripts.json").read_text())
POWER = ["wt300", "wt210", "chroma66200", "pw3335", "ptd"]
TEMPERATURE = ["daq970a", "watchport", "ptd-temp"]


@pytest.mark.parametrize("driver", POWER)
def test_power_driver_sends_exact_bytes(driver: str) -> None:
    spec = TRANSCRIPTS[driver]
    # a WT300 updating every microsecond: each reading asks its update bit exactly once
    with MeterSimulator(spec["model"], update_s=1e-6) as sim:
        sim.set_state(123.4)
        meter = open_power_meter(driver, sim.resource, timeout_s=1.0)
        meter.open()
        auto = meter.read(1.0)
        meter.set_ranges(300, 2)
        fixed = meter.read(2.0)
        meter.auto_range()
        meter.close()
        exchanges = sim.wait_for_exchanges(len(spec["sent"]))
    assert [e.received.decode() for e in exchanges] == spec["sent"]
    assert any(e.sent.decode().startswith(spec["reading_reply"]) for e in exchanges)
    assert fixed.watts == pytest.approx(123.4) and auto.watts == pytest.approx(123.4)
    assert (fixed.range_v, fixed.range_a) == (300, 2)
    assert fixed.volts == pytest.approx(230.0) and fixed.pf == pytest.approx(0.95)


@pytest.mark.parametrize("driver", TEMPERATURE)
def test_thermometer_driver_sends_exact_bytes(driver: str) -> None:
    spec = TRANSCRIPTS[driver]
    with ThermometerSimulator(spec["model"]) as sim:
        sim.set_temperature(23.5)
        meter = open_temperature_meter(driver, sim.resource, timeout_s=1.0)
        meter.open()
        sample = meter.read(5.0)
        meter.close()
        exchanges = sim.wait_for_exchanges(len(spec["sent"]))
    assert [e.received.decode() for e in exchanges] == spec["sent"]
    assert spec["reading_reply"].encode() in [e.sent for e in exchanges]
    assert sample.celsius == pytest.approx(23.5) and not sample.flags and sample.t == 5.0


def test_wt300_reading_reply_decodes_field_by_field() -> None:
    """The §8 example reply, served verbatim, decodes to the right quantities."""
    with MeterSimulator("wt310") as sim:
        sim.set_state(47.51, volts=230.05, amps=0.2064, pf=0.9984, freq_hz=50.0)
        meter = open_power_meter("wt300", sim.resource, range_v=300, range_a=0.5)
        meter.open()
        s = meter.read(0.0)
        meter.close()
        sent = [e.sent for e in sim.transcript if e.received == b":NUM:NORM:VAL?\n"]
    assert sent == [b"230.05E+00,206.40E-03,47.510E+00,998.40E-03,50.000E+00\n"]
    assert (s.volts, s.amps, s.watts, s.pf, s.freq_hz) == (230.05, 0.2064, 47.51, 0.9984, 50.0)
    # u = (0.001·47.51 + 0.0005·300·0.5) / 47.51 = 0.2579 %
    assert s.uncertainty_pct == pytest.approx((0.001 * 47.51 + 0.0005 * 150) / 47.51 * 100)
    assert not s.flags and s.usable


def test_wt300_element_selection_goes_into_items() -> None:
    with MeterSimulator("wt333e") as sim:
        meter = open_power_meter("wt300", sim.resource, element=3)
        meter.open()
        meter.close()
        sent = [e.received for e in sim.wait_for_exchanges(13)]
    assert b":NUM:NORM:ITEM3 P,3\n" in sent and b":NUM:NORM:ITEM1 U,3\n" in sent


def test_chroma_legacy_fetch_query() -> None:
    with MeterSimulator("chroma66204") as sim:
        meter = open_power_meter("chroma66200", sim.resource, fetch=True)
        meter.open()
        s = meter.read(0.0)
        meter.close()
        assert b"FETC? V,I,W,PF,FREQ\n" in [e.received for e in sim.transcript]
    assert s.watts == pytest.approx(100.0) and math.isfinite(s.uncertainty_pct or math.nan)


def test_concurrent_reads_never_interleave() -> None:
    """One lock per instrument: two threads reading at once still get whole replies."""
    import threading

    # a meter updating every microsecond: 120 readings in a burst are each new data
    with MeterSimulator("wt310", update_s=1e-6) as sim:
        sim.set_state(250.0)
        meter = open_power_meter("wt300", sim.resource, range_v=300, range_a=2)
        meter.open()
        samples: list = []

        def worker() -> None:
            for i in range(40):
                samples.append(meter.read(float(i)))

        threads = [threading.Thread(target=worker) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        meter.close()
    assert len(samples) == 120
    assert all(s.watts == 250.0 and not s.flags for s in samples)


def test_every_meter_implements_the_whole_protocol_the_sequencer_uses() -> None:
    """The sampler reads, reconnects and reports ranges through the protocol itself (issue
    13: no duck typing): every registered driver and the in-process simulated meters have all
    of it, and a simulated meter's reconnect answers with its (simulated) identity."""
    resource = "TCPIP::127.0.0.1::1::SOCKET"
    for cls in POWER_DRIVERS.values():
        assert isinstance(cls(resource), PowerMeter), cls
    for cls in TEMPERATURE_DRIVERS.values():
        assert isinstance(cls(resource), TemperatureMeter), cls
    sut = SimulatedSut()
    meter, thermometer = SimulatedPowerMeter(sut, range_w=600.0), SimulatedThermometer(sut)
    assert isinstance(meter, PowerMeter) and isinstance(thermometer, TemperatureMeter)
    assert meter.ranges == (300.0, 2.0) and meter.read(0.0).range_a == 2.0
    assert meter.reconnect().model == "SIM-PM" and thermometer.reconnect().model == "SIM-TC"


def test_a_workload_engine_says_whether_its_figures_arrive_live() -> None:
    """The sequencer waits for a non-live engine's figures (fio client mode) instead of closing
    intervals without them; ``live`` is part of the protocol, not an optional attribute."""
    engine = SimulatedWorkloadEngine(SimulatedSut(), FakeClock())
    assert isinstance(engine, WorkloadEngine) and engine.live
    assert not FioEngine(["/tmp/x"], clock=FakeClock(), load_hosts=("127.0.0.1",)).live
    assert FioEngine(["/tmp/x"], clock=FakeClock()).live


def test_the_sequencer_reaches_instruments_through_their_protocols_only() -> None:
    """``getattr(meter, "reconnect", None)`` would skip a meter that lacks the method silently
    (no reconnect, no log line); the protocol names it, so the code calls it."""
    root = Path(__file__).resolve().parent.parent
    for path in [*sorted((root / "app" / "sequencer").glob("*.py")),
                 root / "app" / "cli" / "cmd_instruments.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "getattr":
                raise AssertionError(f"{path.name}:{node.lineno}: duck typing via getattr")
        assert "type: ignore" not in path.read_text(encoding="utf-8"), path.name
