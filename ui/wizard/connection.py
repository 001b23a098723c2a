"""'Test connection' on the instruments page: open the meter, read once, describe what came
back (identity, range, a reading with its uncertainty). No Qt: the page runs it on a worker
thread and shows the text, so a slow or dead instrument never freezes the wizard."""

from __future__ import annotations

import time
from dataclasses import dataclass

from app.sim_lab import simulated_sut
from app.records import RunConfig
from drivers.interfaces import InstrumentError, PowerMeter, PowerSample
from drivers.meters.registry import (POWER_DRIVERS, TEMPERATURE_DRIVERS, open_power_meter,
                                     open_temperature_meter)
from drivers.simulators.direct_meters import SimulatedPowerMeter, SimulatedThermometer

SIMULATED = "sim"


@dataclass(frozen=True)
class ConnectionReport:
    ok: bool
    text: str


def power_drivers() -> list[str]:
    """Names the power-meter registry offers (``drivers.meters.registry.POWER_DRIVERS``)."""
    return sorted(POWER_DRIVERS)


def temperature_drivers() -> list[str]:
    return sorted(TEMPERATURE_DRIVERS)


def _open_meter(driver: str, resource: str, config: RunConfig, options: dict) -> PowerMeter:
    if driver == SIMULATED:
        return SimulatedPowerMeter(simulated_sut(config))
    return open_power_meter(driver, resource, **options)


def describe_sample(s: PowerSample) -> str:
    unc = f"± {s.uncertainty_pct:.2f} %" if s.uncertainty_pct is not None else \
        "uncertainty cannot be evaluated"
    ranges = []
    if s.range_v is not None:
        ranges.append(f"{s.range_v:g} V")
    if s.range_a is not None:
        ranges.append(f"{s.range_a:g} A")
    range_text = " / ".join(ranges) if ranges else "unknown (auto range?)"
    flags = f"; flags: {', '.join(sorted(s.flags))}" if s.flags else ""
    return (f"reading {s.watts:.3f} W {unc} at {s.volts:.1f} V, {s.freq_hz:.1f} Hz, PF "
            f"{s.pf:.3f}; range {range_text}{flags}")


def check_power_meter(driver: str, resource: str, config: RunConfig,
                     options: dict | None = None) -> ConnectionReport:
    """Open, identify and read the meter once; always closes it again."""
    try:
        meter = _open_meter(driver, resource, config, options or {})
    except (InstrumentError, KeyError, ValueError, OSError, ImportError) as exc:
        return ConnectionReport(False, f"cannot open {driver} at {resource or '(none)'}: {exc}")
    try:
        identity = meter.open()
        sample = meter.read(time.monotonic())
    except (InstrumentError, OSError) as exc:
        return ConnectionReport(False, f"{driver} at {resource or '(none)'}: {exc}")
    finally:
        try:
            meter.close()
        except (InstrumentError, OSError):
            pass
    return ConnectionReport(True, f"{identity.describe()} — {describe_sample(sample)}")


def check_thermometer(driver: str, resource: str, config: RunConfig) -> ConnectionReport:
    if driver == "none":
        return ConnectionReport(True, "no thermometer: inlet temperature will not be recorded")
    try:
        if driver == SIMULATED:
            meter = SimulatedThermometer(simulated_sut(config))
        else:
            meter = open_temperature_meter(driver, resource)
        identity = meter.open()
        try:
            sample = meter.read(time.monotonic())
        finally:
            meter.close()
    except (InstrumentError, OSError, ValueError) as exc:
        return ConnectionReport(False, f"{driver} at {resource or '(none)'}: {exc}")
    flags = f" (flags: {', '.join(sorted(sample.flags))})" if sample.flags else ""
    return ConnectionReport(True,
                            f"{identity.describe()} — inlet {sample.celsius:.1f} °C{flags}")
