"""The SUT's devices and their DC rails as a lab keeps them in a file (issue 42).

A current-sensor board is wired once and used for many runs, so its description is data: each
device (slot, model, serial, datasheet watts when known), each of its rails (nominal volts, the
supply's tolerance, the DAQ channel of its current sensor and optionally of its voltage), each
sensor's constants (a Hall transducer's offset and sensitivity, or a shunt's resistance) and the
DAQ's stated accuracy. Every number is the lab's own, from its datasheets: the station assumes
none (docs/method-notes.md §3, "Per-device DC rails"). Checked by the same pydantic rules as the
SUT file, refused with the file and the field named.

```json
{"daq": {"pct_reading": 0.004, "pct_range": 0.0007, "range_v": 10},
 "devices": [{"slot": "bay-1", "model": "HDD-X", "serial": "S1", "datasheet_idle_w": 5.0,
              "rails": [{"name": "12V", "nominal_v": 12, "tolerance_pct": 5,
                         "current_channel": 101,
                         "sensor": {"kind": "hall", "offset_v": 2.5, "volts_per_amp": 0.1,
                                    "accuracy_a": 0.012}}]}]}
```
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.metrics.errors import MetricsError
from app.station.sut_file import field_problem
from drivers import guarded_file
from app.metrics.rail_power import (DaqAccuracy, Device, HallTransducer, Rail, Shunt,
                                    scan_channels)

#: a device file is a few kB; past this it is not one
MAX_DEVICE_FILE_BYTES = 1 << 20


class DeviceFileError(ValueError):
    """The device file cannot be read or is not a device description (message names both)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HallModel(_Strict):
    kind: Literal["hall"]
    offset_v: float
    volts_per_amp: float
    accuracy_a: float


class ShuntModel(_Strict):
    kind: Literal["shunt"]
    ohms: float
    tolerance_pct: float


class RailModel(_Strict):
    name: str = Field(min_length=1, max_length=16)
    nominal_v: float
    tolerance_pct: float
    current_channel: int
    voltage_channel: int | None = None
    sensor: Annotated[HallModel | ShuntModel, Field(discriminator="kind")]


class DeviceModel(_Strict):
    slot: str = Field(min_length=1, max_length=40)
    model: str = Field(min_length=1, max_length=80)
    serial: str = Field(default="", max_length=80)
    datasheet_idle_w: float | None = None
    datasheet_active_w: float | None = None
    datasheet_max_w: float | None = None
    rails: list[RailModel] = Field(min_length=1, max_length=14)


class DaqModel(_Strict):
    pct_reading: float
    pct_range: float
    range_v: float


class DeviceFileModel(_Strict):
    daq: DaqModel
    devices: list[DeviceModel] = Field(min_length=1, max_length=64)


def _device(m: DeviceModel) -> Device:
    rails = tuple(Rail(r.name, r.nominal_v, r.current_channel,
                       HallTransducer(r.sensor.offset_v, r.sensor.volts_per_amp,
                                      r.sensor.accuracy_a)
                       if isinstance(r.sensor, HallModel) else
                       Shunt(r.sensor.ohms, r.sensor.tolerance_pct),
                       r.tolerance_pct, r.voltage_channel) for r in m.rails)
    return Device(m.slot, m.model, rails, m.serial, m.datasheet_idle_w, m.datasheet_active_w,
                  m.datasheet_max_w)


def devices_from_json(text: str | bytes, source: str = "the device file"
                      ) -> tuple[tuple[Device, ...], DaqAccuracy]:
    """The devices and the DAQ's accuracy a JSON text describes, or :class:`DeviceFileError`
    naming ``source`` and the field."""
    try:
        model = DeviceFileModel.model_validate_json(text)
        devices = tuple(_device(d) for d in model.devices)
        scan_channels(devices)  # one sensor is never two rails
        return devices, DaqAccuracy(model.daq.pct_reading, model.daq.pct_range,
                                    model.daq.range_v)
    except ValidationError as exc:
        raise DeviceFileError(f"{source}: {field_problem(exc)}") from None
    except MetricsError as exc:
        raise DeviceFileError(f"{source}: {exc}") from None


def load_device_file(path: Path) -> tuple[tuple[Device, ...], DaqAccuracy]:
    """Read a device file through the guarded reader (a regular file, at most
    :data:`MAX_DEVICE_FILE_BYTES`, UTF-8)."""
    try:
        text = guarded_file.read_text(path, "device file", MAX_DEVICE_FILE_BYTES)
    except guarded_file.GuardedFileError as exc:
        raise DeviceFileError(str(exc)) from None
    return devices_from_json(text, f"device file {path}")
