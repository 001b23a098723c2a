"""Driver registry: names the CLI, the wizard and lab configurations use to pick a driver."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from drivers.interfaces import InstrumentError, PowerMeter, TemperatureMeter
from drivers.meters.base import Instrument
from drivers.meters.chroma import Chroma66200
from drivers.meters.hioki import PW3335
from drivers.meters.ptd import PTDPower, PTDTemperature
from drivers.meters.thermo import DAQ970A, Watchport
from drivers.meters.yokogawa import WT210, WT300

POWER_DRIVERS: dict[str, type] = {c.DRIVER: c for c in (WT300, WT210, Chroma66200, PW3335,
                                                         PTDPower)}
TEMPERATURE_DRIVERS: dict[str, type] = {c.DRIVER: c for c in (DAQ970A, Watchport,
                                                               PTDTemperature)}


@dataclass(frozen=True)
class DriverInfo:
    name: str
    kind: str  # "power" | "temperature"
    description: str
    models: tuple[str, ...]
    default_port: int | None
    read_termination: str
    options: tuple[str, ...]


def _lookup(table: dict[str, type], kind: str, driver: str) -> type:
    try:
        return table[driver]
    except KeyError:
        raise InstrumentError(f"unknown {kind} driver {driver!r}; choose one of "
                              f"{', '.join(sorted(table))}") from None


def open_power_meter(driver: str, resource: str, **options: Any) -> PowerMeter:
    """A configured, not yet opened power-meter driver (call ``open()``)."""
    return _lookup(POWER_DRIVERS, "power", driver)(resource, **options)


def open_temperature_meter(driver: str, resource: str, **options: Any) -> TemperatureMeter:
    return _lookup(TEMPERATURE_DRIVERS, "temperature", driver)(resource, **options)


def describe_drivers() -> list[DriverInfo]:
    def info(cls: type[Instrument], kind: str) -> DriverInfo:
        extra = ("range_v", "range_a") if kind == "power" else ()
        return DriverInfo(cls.DRIVER, kind, cls.DESCRIPTION, cls.MODELS, cls.DEFAULT_PORT,
                          cls.READ_TERMINATION, tuple(cls.OPTIONS) + extra)

    return [info(c, "power") for c in POWER_DRIVERS.values()] + \
        [info(c, "temperature") for c in TEMPERATURE_DRIVERS.values()]
