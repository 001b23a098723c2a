"""Per-device DC power from rail readings (issue 42): each figure is recomputed here by the
definition (V × I per rail, rails summed, linear worst-case uncertainty) from generated
sensors and readings, and the conversions are checked against their inverses."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.metrics.errors import MetricsError
from app.metrics.rail_power import (DaqAccuracy, Device, HallTransducer, Rail, Shunt,
                                    device_power, rail_power, scan_channels)

DAQ = DaqAccuracy(pct_reading=0.004, pct_range=0.0007, range_v=10.0)
finite = st.floats(min_value=-5.0, max_value=10.0, allow_nan=False)
amps = st.floats(min_value=0.0, max_value=6.0)
halls = st.builds(HallTransducer, offset_v=st.floats(min_value=0.0, max_value=3.0),
                  volts_per_amp=st.floats(min_value=0.01, max_value=1.0),
                  accuracy_a=st.floats(min_value=0.0, max_value=0.1))
shunts = st.builds(Shunt, ohms=st.floats(min_value=0.001, max_value=1.0),
                   tolerance_pct=st.floats(min_value=0.0, max_value=2.0))


@settings(max_examples=200, deadline=None)
@given(sensor=st.one_of(halls, shunts), current=amps)
def test_a_sensor_reading_converts_back_to_its_current(sensor, current: float) -> None:
    reading = (sensor.offset_v + sensor.volts_per_amp * current
               if isinstance(sensor, HallTransducer) else current * sensor.ohms)
    assert sensor.amps(reading) == pytest.approx(current, rel=1e-9, abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(sensor=st.one_of(halls, shunts), sensed=finite, volts=st.floats(1.0, 13.0),
       tolerance=st.floats(0.0, 10.0))
def test_rail_power_is_volts_times_amps_with_linear_uncertainty(
        sensor, sensed: float, volts: float, tolerance: float) -> None:
    nominal = Rail("12V", volts, 101, sensor, tolerance)
    got = rail_power(nominal, {101: sensed}, DAQ)
    current = sensor.amps(sensed)
    assert got.watts == pytest.approx(volts * current, rel=1e-12, abs=1e-12)
    u_i = sensor.amps_uncertainty(sensed, DAQ)
    assert got.uncertainty_w == pytest.approx(abs(current) * volts * tolerance / 100
                                              + volts * u_i, rel=1e-12, abs=1e-12)
    measured = Rail("12V", volts, 101, sensor, tolerance, voltage_channel=102)
    got = rail_power(measured, {101: sensed, 102: volts}, DAQ)
    assert got.uncertainty_w == pytest.approx(abs(current) * DAQ.volts(volts) + volts * u_i,
                                              rel=1e-12, abs=1e-12)


def test_a_device_sums_its_rails_and_a_flagged_channel_is_no_number() -> None:
    hall = HallTransducer(offset_v=2.5, volts_per_amp=0.1, accuracy_a=0.012)
    disk = Device("bay-1", "HDD-X", (Rail("12V", 12.0, 101, hall, 5.0),
                                     Rail("5V", 5.0, 102, hall, 5.0)))
    got = device_power(disk, {101: 2.56, 102: 2.55}, DAQ)
    assert got.watts == pytest.approx(12.0 * 0.6 + 5.0 * 0.5)
    parts = [rail_power(r, {101: 2.56, 102: 2.55}, DAQ) for r in disk.rails]
    assert got.uncertainty_w == pytest.approx(sum(p.uncertainty_w for p in parts))
    assert math.isnan(device_power(disk, {101: math.nan, 102: 2.55}, DAQ).watts)
    assert math.isnan(device_power(disk, {102: 2.55}, DAQ).watts)  # channel not scanned


def test_the_scan_list_holds_each_channel_once_and_refuses_a_shared_one() -> None:
    hall = HallTransducer(2.5, 0.1, 0.0)
    a = Device("bay-1", "M", (Rail("12V", 12.0, 103, hall, 5.0, voltage_channel=104),
                              Rail("5V", 5.0, 101, hall, 5.0)))
    b = Device("bay-2", "M", (Rail("12V", 12.0, 102, hall, 5.0),))
    assert scan_channels([a, b]) == (101, 102, 103, 104)
    c = Device("bay-3", "M", (Rail("5V", 5.0, 102, hall, 5.0),))
    with pytest.raises(MetricsError, match="channel 102 is given to bay-2 12V and to bay-3 5V"):
        scan_channels([a, b, c])


@pytest.mark.parametrize(("make", "message"), [
    (lambda: HallTransducer(2.5, 0.0, 0.0), "volts_per_amp must be a positive number"),
    (lambda: Shunt(-0.01, 1.0), "ohms must be a positive number"),
    (lambda: Rail("5V", 5.0, 101, Shunt(0.01, 1.0), -1.0), "tolerance_pct must be a number ≥ 0"),
    (lambda: Rail("5V", 5.0, 101, Shunt(0.01, 1.0), 5.0, voltage_channel=101),
     "read on one channel"),
    (lambda: Device("bay-1", "M", ()), "no rails"),
    (lambda: DaqAccuracy(0.004, 0.0007, 0.0), "range_v must be a positive number"),
])
def test_impossible_sensor_and_rail_data_is_refused_by_name(make, message: str) -> None:
    with pytest.raises(MetricsError, match=message):
        make()
