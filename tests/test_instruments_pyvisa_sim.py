"""Quick protocol tests through pyvisa-sim YAML definitions (resources/sim/meters.yaml):
the drivers work on any pyvisa backend, not only on the socket simulators."""

from __future__ import annotations

import math

import pytest

from drivers.interfaces import (FLAG_NO_DATA, FLAG_RANGE_CHANGE, FLAG_UNCERTAINTY_HIGH,
                                IdentityMismatch)
from drivers.meters.registry import open_power_meter
from tests.support.instruments import BACKEND



def test_wt300_over_pyvisa_sim() -> None:
    meter = open_power_meter("wt300", "USB0::0x0B21::0x0025::SIM000001::INSTR", backend=BACKEND)
    assert meter.open().model == "WT310"
    s = meter.read(0.0)  # auto range: the meter reports 300 V / 0.5 A
    assert (s.volts, s.amps, s.watts, s.pf, s.freq_hz) == (230.05, 0.2064, 47.51, 0.9984, 50.0)
    assert (s.range_v, s.range_a) == (300.0, 0.5)
    meter.set_ranges(300, 2)
    s = meter.read(1.0)
    assert s.uncertainty_pct == pytest.approx((0.001 * 47.51 + 0.0005 * 600) / 47.51 * 100)
    meter.close()


def test_chroma_over_pyvisa_sim_flags_high_uncertainty() -> None:
    meter = open_power_meter("chroma66200", "USB0::0x1698::0x0837::SIM000002::INSTR",
                             backend=BACKEND, range_v=300, range_a=2)
    meter.open()
    s = meter.read(0.0)  # (0.001·48.12 + 0.001·600)/48.12 = 1.35 % > 1 %
    assert s.watts == 48.12 and FLAG_UNCERTAINTY_HIGH in s.flags
    meter.close()


def test_chroma_integration_markers() -> None:
    meter = open_power_meter("chroma66200", "USB0::0x1698::0x0837::SIM000003::INSTR",
                             backend=BACKEND)
    meter.open()
    s = meter.read(0.0)
    assert math.isnan(s.watts) and {FLAG_NO_DATA, FLAG_RANGE_CHANGE} <= s.flags
    meter.close()


def test_wt200_compat_over_pyvisa_sim() -> None:
    meter = open_power_meter("wt300", "USB0::0x0B21::0x0025::SIM000009::INSTR", backend=BACKEND)
    with pytest.raises(IdentityMismatch, match="WT200 compatibility mode"):
        meter.open()
