"""A device's DC power from its rails, as the seed's current-sensor board measures it.

[SPC-1 framework] (docs/method-notes.md §3, "Per-device DC rails") reads each disk's 3.3 V, 5 V
and 12 V rails through Hall-effect current transducers into a 16-bit DAQ, current only, and
takes each rail at its nominal volts. So a rail's power is ``V × I`` per reading, where

* ``I`` comes from the DAQ's voltage reading through the rail's **current sensor** — a Hall
  transducer (``I = (V_out − offset) / sensitivity``) or a shunt (``I = V_shunt / R``) — whose
  constants are data the lab types from the sensor's datasheet (no default is shipped: the
  project has not read the transducer's datasheet, and a wrong sensitivity scales every figure);
* ``V`` is the rail's own voltage channel when it has one, else its nominal volts, whose
  uncertainty is then the supply's declared tolerance.

A device's power is the sum of its rails. Uncertainties add linearly (worst case), as the
station's meter uncertainty does (method-notes §8): for a product, the relative uncertainties
add; for a sum, the absolute ones. A reading the DAQ flagged (overload) makes its rail and its
device NaN for that scan, never a number.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.metrics.errors import MetricsError


def _positive(owner: str, name: str, value: float) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise MetricsError(f"{owner}: {name} must be a positive number (got {value!r})")


def _not_negative(owner: str, name: str, value: float) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
        raise MetricsError(f"{owner}: {name} must be a number ≥ 0 (got {value!r})")


@dataclass(frozen=True)
class DaqAccuracy:
    """The DAQ's stated DC-voltage accuracy on the range in use: ``±(pct_reading % of the
    reading + pct_range % of the range)`` — the form DMM datasheets state it in; the numbers
    are the lab's, from its DAQ's datasheet and calibration certificate."""

    pct_reading: float
    pct_range: float
    range_v: float

    def __post_init__(self) -> None:
        _not_negative("DAQ accuracy", "pct_reading", self.pct_reading)
        _not_negative("DAQ accuracy", "pct_range", self.pct_range)
        _positive("DAQ accuracy", "range_v", self.range_v)

    def volts(self, reading_v: float) -> float:
        """The absolute uncertainty (V) of one voltage reading."""
        return abs(reading_v) * self.pct_reading / 100 + self.range_v * self.pct_range / 100


@dataclass(frozen=True)
class HallTransducer:
    """A voltage-output Hall current transducer: ``V_out = offset_v + volts_per_amp × I``.

    ``accuracy_a``: the transducer's own stated error in amps (its datasheet gives it as a % of
    its rated current; the lab types the product)."""

    offset_v: float
    volts_per_amp: float
    accuracy_a: float

    def __post_init__(self) -> None:
        if not math.isfinite(self.offset_v):
            raise MetricsError(f"Hall transducer: offset_v must be a number (got "
                               f"{self.offset_v!r})")
        _positive("Hall transducer", "volts_per_amp", self.volts_per_amp)
        _not_negative("Hall transducer", "accuracy_a", self.accuracy_a)

    def amps(self, reading_v: float) -> float:
        return (reading_v - self.offset_v) / self.volts_per_amp

    def amps_uncertainty(self, reading_v: float, daq: DaqAccuracy) -> float:
        return self.accuracy_a + daq.volts(reading_v) / self.volts_per_amp


@dataclass(frozen=True)
class Shunt:
    """A shunt resistor read across: ``I = V / R``; ``tolerance_pct`` of its resistance."""

    ohms: float
    tolerance_pct: float

    def __post_init__(self) -> None:
        _positive("shunt", "ohms", self.ohms)
        _not_negative("shunt", "tolerance_pct", self.tolerance_pct)

    def amps(self, reading_v: float) -> float:
        return reading_v / self.ohms

    def amps_uncertainty(self, reading_v: float, daq: DaqAccuracy) -> float:
        return abs(self.amps(reading_v)) * self.tolerance_pct / 100 + daq.volts(reading_v) / \
            self.ohms


CurrentSensor = HallTransducer | Shunt


@dataclass(frozen=True)
class Rail:
    """One supply rail of a device: its nominal volts, the DAQ channel its current sensor is
    read on, and optionally a channel that measures its voltage."""

    name: str  # "12V", "5V", "3.3V" …
    nominal_v: float
    current_channel: int
    sensor: CurrentSensor
    #: the supply's declared tolerance (%), the rail voltage's uncertainty when not measured
    #: (the lab's figure for its supply: no default is assumed)
    tolerance_pct: float
    voltage_channel: int | None = None

    def __post_init__(self) -> None:
        _positive(f"rail {self.name}", "nominal_v", self.nominal_v)
        _not_negative(f"rail {self.name}", "tolerance_pct", self.tolerance_pct)
        if self.voltage_channel == self.current_channel:
            raise MetricsError(f"rail {self.name}: its voltage and current are read on one "
                               f"channel ({self.current_channel})")

    @property
    def channels(self) -> tuple[int, ...]:
        return (self.current_channel,) + ((self.voltage_channel,)
                                          if self.voltage_channel is not None else ())


@dataclass(frozen=True)
class Device:
    """A device of the SUT (a drive in its slot) and its rails; datasheet watts when known."""

    slot: str
    model: str
    rails: tuple[Rail, ...]
    serial: str = ""
    datasheet_idle_w: float | None = None
    datasheet_active_w: float | None = None
    datasheet_max_w: float | None = None

    def __post_init__(self) -> None:
        if not self.rails:
            raise MetricsError(f"device {self.slot}: no rails (a device is measured on at "
                               "least one)")
        names = [r.name for r in self.rails]
        if len(set(names)) != len(names):
            raise MetricsError(f"device {self.slot}: a rail is named twice ({', '.join(names)})")


@dataclass(frozen=True)
class RailPower:
    """One rail at one scan: watts and their absolute uncertainty (NaN when not measured)."""

    watts: float
    uncertainty_w: float


def rail_power(rail: Rail, readings: Mapping[int, float], daq: DaqAccuracy) -> RailPower:
    """The rail's power from one scan's channel readings (volts per channel; NaN: flagged)."""
    sensed = readings.get(rail.current_channel, math.nan)
    if rail.voltage_channel is None:
        volts = rail.nominal_v
        u_volts = rail.nominal_v * rail.tolerance_pct / 100
    else:
        volts = readings.get(rail.voltage_channel, math.nan)
        u_volts = daq.volts(volts)
    if not (math.isfinite(sensed) and math.isfinite(volts)):
        return RailPower(math.nan, math.nan)
    amps = rail.sensor.amps(sensed)
    u_amps = rail.sensor.amps_uncertainty(sensed, daq)
    watts = volts * amps
    # a product: relative uncertainties add (as absolute terms: |I|·u_V + |V|·u_I)
    return RailPower(watts, abs(amps) * u_volts + abs(volts) * u_amps)


def device_power(device: Device, readings: Mapping[int, float],
                 daq: DaqAccuracy) -> RailPower:
    """The device's power at one scan: its rails summed, their uncertainties added."""
    rails = [rail_power(rail, readings, daq) for rail in device.rails]
    return RailPower(sum(r.watts for r in rails), sum(r.uncertainty_w for r in rails))


def scan_channels(devices: Sequence[Device]) -> tuple[int, ...]:
    """Every channel the devices need, in scan order (ascending), each once; a channel two
    rails claim is refused (one sensor cannot be two rails)."""
    owners: dict[int, str] = {}
    for device in devices:
        for rail in device.rails:
            for channel in rail.channels:
                owner = f"{device.slot} {rail.name}"
                if channel in owners:
                    raise MetricsError(f"channel {channel} is given to {owners[channel]} and "
                                       f"to {owner}")
                owners[channel] = owner
    return tuple(sorted(owners))


#: the device states a datasheet states power for, and the Device field holding each
DATASHEET_STATES = {"idle": "datasheet_idle_w", "active": "datasheet_active_w",
                    "max": "datasheet_max_w"}


@dataclass(frozen=True)
class DatasheetCheck:
    """A device's measured power in one state against its datasheet's figure ([SPC-1
    framework]: checking vendors' power specifications under typical load)."""

    slot: str
    state: str
    measured_w: float
    uncertainty_w: float
    datasheet_w: float | None

    @property
    def exceeds_pct(self) -> float | None:
        """How far the measurement is above the datasheet, in % of it, when it is above by more
        than its uncertainty; None otherwise (within, below, or nothing to compare)."""
        if self.datasheet_w is None or not math.isfinite(self.measured_w):
            return None
        if self.measured_w - self.uncertainty_w <= self.datasheet_w:
            return None
        return (self.measured_w / self.datasheet_w - 1) * 100

    def text(self) -> str:
        measured = (f"{self.measured_w:.3f} W ± {self.uncertainty_w:.3f} W"
                    if math.isfinite(self.measured_w) else "not measured")
        if self.datasheet_w is None:
            return f"{self.slot} {self.state}: {measured}; no datasheet figure to compare"
        head = f"{self.slot} {self.state}: {measured} against the datasheet's " \
               f"{self.datasheet_w:g} W"
        if not math.isfinite(self.measured_w):
            return head
        exceeds = self.exceeds_pct
        if exceeds is not None:
            return f"{head}: exceeds it by {exceeds:.1f} %"
        if abs(self.measured_w - self.datasheet_w) <= self.uncertainty_w:
            return f"{head}: within the measurement's uncertainty"
        return f"{head}: below it"


def datasheet_check(device: Device, state: str, measured: Sequence[RailPower]
                    ) -> DatasheetCheck:
    """The mean of ``measured`` (the device's scans in ``state``) against its datasheet;
    the mean's uncertainty is the largest of the scans' (a worst case, as every sum here).
    A scan that is no number makes the whole check "not measured"."""
    if state not in DATASHEET_STATES:
        raise MetricsError(f"state {state!r}: choose one of {', '.join(DATASHEET_STATES)}")
    watts = [p.watts for p in measured]
    mean = sum(watts) / len(watts) if watts and all(map(math.isfinite, watts)) else math.nan
    worst = max((p.uncertainty_w for p in measured), default=math.nan)
    return DatasheetCheck(device.slot, state, mean, worst,
                          getattr(device, DATASHEET_STATES[state]))
