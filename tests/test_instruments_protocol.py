"""Byte-exact protocol: each driver's commands through pyvisa-py (or its socket) to a
recording simulator, compared with the expected sequence in fixtures/instruments."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from drivers.meters.registry import open_power_meter, open_temperature_meter
from drivers.simulators import MeterSimulator, ThermometerSimulator

TRANSCRIPTS = json.loads((Path(__file__).parent / "fixtures" / "instruments" /
                          "transcripts.json").read_text())
POWER = ["wt300", "wt210", "chroma66200", "pw3335", "ptd"]
TEMPERATURE = ["daq970a", "watchport", "ptd-temp"]


@pytest.mark.parametrize("driver", POWER)
def test_power_driver_sends_exact_bytes(driver: str) -> None:
    spec = TRANSCRIPTS[driver]
    with MeterSimulator(spec["model"]) as sim:
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

    with MeterSimulator("wt310") as sim:
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
