"""'Test connection' on the instruments page: open the meter, read once, describe what came
back (identity, range, a reading with its uncertainty). No Qt: the page runs it on a worker
thread and shows the text, so a slow or dead instrument never freezes the wizard."""

from __future__ import annotations

import time
from dataclasses import dataclass

from app.labs.builder import open_lab_meters, open_power_input
from app.metrics.formatting import format_figure
from app.core.records import InstrumentConfig, RunConfig
from drivers.interfaces import InstrumentError, PowerMeter, PowerSample, TemperatureMeter
from drivers.meters.registry import POWER_DRIVERS, TEMPERATURE_DRIVERS

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


def driver_models(driver: str) -> str:
    """The models a driver id speaks to ("wt300" → "WT310, WT310E, …"), "" if unknown: an id
    alone means nothing to a technician holding a meter."""
    cls = POWER_DRIVERS.get(driver) or TEMPERATURE_DRIVERS.get(driver)
    return ", ".join(getattr(cls, "MODELS", ())) if cls is not None else ""


def with_models(driver: str) -> str:
    """``wt300 (WT310, WT310E, …)``, or the id alone when no models are listed."""
    models = driver_models(driver)
    return f"{driver} ({models})" if models else driver


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
    return (f"reading {format_figure(s.watts)} W {unc} at {s.volts:.1f} V, {s.freq_hz:.1f} Hz, PF "
            f"{s.pf:.3f}; range {range_text}{flags}")


def _read_power(meter: PowerMeter, label: str) -> ConnectionReport:
    """Identify and read ``meter`` once (it is already constructed, not yet opened)."""
    try:
        identity = meter.open()
        sample = meter.read(time.monotonic())
    except (InstrumentError, OSError) as exc:
        return failed_report(label, exc)
    return ConnectionReport(True, f"{identity.describe()} — {describe_sample(sample)}")


def failed_report(label: str, exc: Exception) -> ConnectionReport:
    """``wt300 at <resource>: <why>``, naming the resource once: a driver's error already
    starts with it ("TCPIP::…::SOCKET did not answer within 2 s")."""
    text = str(exc)
    driver, _, resource = label.partition(" at ")
    if resource and resource in text:
        label = driver
    return ConnectionReport(False, f"{label}: {text}")


def probe_raised(exc: Exception) -> ConnectionReport:
    """The test itself raised (a driver failing in a way it should have reported): say so,
    with the exception's type, instead of leaving "Testing…" on screen."""
    return ConnectionReport(False, f"the test could not run: {type(exc).__name__}: {exc}")


def _read_thermometer(meter: TemperatureMeter | None, label: str) -> ConnectionReport:
    if meter is None:
        return ConnectionReport(True, "no thermometer: inlet temperature will not be recorded")
    try:
        identity = meter.open()
        sample = meter.read(time.monotonic())
    except (InstrumentError, OSError, ValueError) as exc:
        return failed_report(label, exc)
    flags = f" (flags: {', '.join(sorted(sample.flags))})" if sample.flags else ""
    return ConnectionReport(True,
                            f"{identity.describe()} — inlet {sample.celsius:.1f} °C{flags}")


def _where(cfg: InstrumentConfig) -> str:
    return f"{cfg.driver} at {cfg.resource or '(none)'}"


def check_power_input(config: RunConfig, name: str) -> ConnectionReport:
    """Open one power input's meter as the run will (:func:`app.labs.builder.open_power_input`),
    identify and read it once, close it: the input table's per-row "Test connection"."""
    try:
        meter, teardown = open_power_input(config, name)
    except (InstrumentError, KeyError, ValueError, OSError) as exc:
        return ConnectionReport(False, f"cannot open power input {name}: {exc}")
    try:
        return _read_power(meter, f"power input {name}")
    finally:
        teardown.run()


def check_lab_instruments(config: RunConfig) -> tuple[ConnectionReport, ConnectionReport]:
    """Open the meters exactly as a run of ``config`` will
    (:func:`app.labs.builder.open_lab_meters`:
    same lab kind, driver, resource and simulator), identify and read each once, close them.
    Returns the (power meter, thermometer) reports."""
    try:
        meters = open_lab_meters(config)
    except (InstrumentError, KeyError, ValueError, OSError, ImportError) as exc:
        failed = ConnectionReport(False, f"cannot open {_where(config.power_meter)}: {exc}")
        return failed, ConnectionReport(False, "not tested: the power meter could not be "
                                        "opened")
    try:
        return (_read_power(meters.power_meter, _where(config.power_meter)),
                _read_thermometer(meters.temperature_meter, _where(config.temperature_meter)))
    finally:
        meters.close()

