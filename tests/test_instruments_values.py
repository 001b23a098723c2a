"""Special values, uncertainty arithmetic, options and resource strings (no transport)."""

from __future__ import annotations

import math

import pytest

from drivers.interfaces import (FLAG_GARBAGE, FLAG_INVALID, FLAG_NO_DATA, FLAG_OVERRANGE,
                                FLAG_RANGE_CHANGE, FLAG_SENSOR_ERROR, InstrumentError)
from drivers.meters.accuracy import AccuracySpec, RangeAccuracy
from drivers.meters.registry import (POWER_DRIVERS, TEMPERATURE_DRIVERS, describe_drivers,
                                     open_power_meter, open_temperature_meter)
from drivers.meters.transport import parse_host_port
from drivers.meters.values import CHROMA, GENERIC, HIOKI, PTD, WATCHPORT, decode, decode_fields
from drivers.simulators import FaultPlan
from drivers.simulators.dialects import hioki_nr3, nr3


@pytest.mark.parametrize("token,specials,flag", [
    ("NAN", GENERIC, FLAG_NO_DATA), ("INF", GENERIC, FLAG_OVERRANGE),
    ("-INF", GENERIC, FLAG_OVERRANGE), ("9.9E+37", GENERIC, FLAG_OVERRANGE),
    ("9.91E+37", GENERIC, FLAG_NO_DATA), ("1.2E+38", GENERIC, FLAG_OVERRANGE),
    ("+999.99E+9", HIOKI, FLAG_OVERRANGE), ("-999.99E+9", HIOKI, FLAG_OVERRANGE),
    ("+888.88E+9", HIOKI, FLAG_INVALID), ("-777.77E+9", HIOKI, FLAG_NO_DATA),
    ("-1", CHROMA, FLAG_NO_DATA), ("-2", CHROMA, FLAG_RANGE_CHANGE),
    ("-3", CHROMA, FLAG_INVALID), ("-1.000000", PTD, FLAG_NO_DATA),
    ("Error: meter not responding", GENERIC, FLAG_INVALID), ("#?garbled", GENERIC, FLAG_GARBAGE),
    ("", GENERIC, FLAG_GARBAGE),
])
def test_special_values_become_flagged_nan(token: str, specials, flag: str) -> None:
    d = decode(token, specials)
    assert math.isnan(d.value) and d.flags == {flag}


@pytest.mark.parametrize("token,specials,value", [
    ("230.05E+00", GENERIC, 230.05), ("+206.40E-3", HIOKI, 0.2064), ("-1.5", CHROMA, -1.5),
    ("0.97", CHROMA, 0.97), ("+2.34500000E+01", GENERIC, 23.45), ("+22.2500C", WATCHPORT, 22.25),
    ("-999.98E+9", HIOKI, -999.98e9),
])
def test_ordinary_values_pass(token: str, specials, value: float) -> None:
    assert decode(token, specials).value == pytest.approx(value) \
        and not decode(token, specials).flags


def test_sensor_mode_and_field_count() -> None:
    assert decode("+9.90000000E+37", sensor=True).flags == {FLAG_SENSOR_ERROR}
    assert decode("Sensor Error", sensor=True).flags == {FLAG_SENSOR_ERROR}
    fields = decode_fields("1,2,3", 5)
    assert len(fields) == 5 and all(f.flags == {FLAG_GARBAGE} for f in fields)


def test_uncertainty_formula() -> None:
    spec = AccuracySpec((150.0, 300.0), (RangeAccuracy(2.0, 0.001, 0.0005),))
    # (0.001·123.4 + 0.0005·300·2)/123.4·100
    assert spec.power_uncertainty_pct(123.4, 300, 2) == pytest.approx(0.343111831)
    assert spec.power_uncertainty_pct(123.4, 600, 2) is None  # range not in the spec
    assert spec.power_uncertainty_pct(123.4, 300, 5) is None
    assert spec.power_uncertainty_pct(math.nan, 300, 2) is None
    assert spec.power_uncertainty_pct(123.4, None, 2) is None


def test_simulator_number_formats() -> None:
    assert nr3(230.05) == "230.05E+00" and nr3(0.2064) == "206.40E-03"
    assert hioki_nr3(230.05) == "+230.05E+0" and len(hioki_nr3(0.9984)) == 10


def test_fault_plan_counts_down_and_skips_non_measurements() -> None:
    plan = FaultPlan()
    plan.inject("nan", count=2)
    assert plan.take(measurement=False) is None
    assert plan.take(True) is not None and plan.take(True) is not None
    assert plan.take(True) is None and plan.active is None
    plan.inject("silent", count=None)
    assert all(plan.take(False) for _ in range(5))
    plan.clear()
    assert plan.take(False) is None
    with pytest.raises(ValueError):
        plan.inject("explode")


@pytest.mark.parametrize("resource", ["COM1", "", "TCPIP::127.0.0.1::notaport::SOCKET",
                                      "192.168.1.20:10001"])
def test_invalid_visa_resource_says_what_is_expected(resource: str) -> None:
    with pytest.raises(InstrumentError, match=r"expected one of: TCPIP::<host>::<port>::SOCKET"):
        open_power_meter("wt300", resource)


def test_ptd_addresses() -> None:
    assert parse_host_port("127.0.0.1", 8888) == ("127.0.0.1", 8888)
    assert parse_host_port("127.0.0.1:9000", 8888) == ("127.0.0.1", 9000)
    assert parse_host_port("TCPIP::127.0.0.1::8889::SOCKET", 8888) == ("127.0.0.1", 8889)
    with pytest.raises(InstrumentError, match="host:port"):
        parse_host_port("TCPIP::127.0.0.1::INSTR", 8888)


def test_registry_and_option_errors() -> None:
    assert set(POWER_DRIVERS) == {"wt300", "wt210", "chroma66200", "pw3335", "ptd"}
    assert set(TEMPERATURE_DRIVERS) == {"daq970a", "watchport", "ptd-temp"}
    info = {d.name: d for d in describe_drivers()}
    assert info["pw3335"].read_termination == "\r\n" and info["ptd"].default_port == 8888
    assert info["watchport"].read_termination == "\r"
    with pytest.raises(InstrumentError, match="choose one of"):
        open_power_meter("wt999", "GPIB0::1::INSTR")
    with pytest.raises(InstrumentError, match="give both range_v and range_a"):
        open_power_meter("wt300", "GPIB0::1::INSTR", range_v=300)
    with pytest.raises(InstrumentError, match="tc_type|thermocouple type"):
        open_temperature_meter("daq970a", "GPIB0::9::INSTR", tc_type="Q")
    meter = open_power_meter("wt300", "GPIB0::1::INSTR")
    with pytest.raises(InstrumentError, match="not open"):
        meter.read(0.0)
