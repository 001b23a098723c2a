"""The SUT description a lab keeps: one JSON file per system under test, which the command
line takes (``storwatt run --sut FILE``) and the wizard saves and loads.

A lab tests the same array again and again; typing its vendor, serial, capacity, RAID and
power supplies for every run invites the typo that makes EP_RI wrong. The file holds what the
report states about the SUT and is checked by the same rules as the wizard's fields
(``app.core.units`` for the capacity, with its one rounding; the bounds of
``app.rules.run_fields``). Capacity
is written as text with its decimal unit ("7.3 TB", 1 GB = 10^9 bytes).

Example::

    {"vendor": "Acme", "model": "StoreMax 9000", "serial": "SM9-000123", "firmware": "4.2.1",
     "raw_capacity": "7.3 TB", "drives": 24, "drive_type": "SSD", "raid": "RAID 10",
     "coms_on": ["thin-provisioning"], "coms_off": [], "supply": "1P-200-240",
     "ashrae_class": "A2",
     "power_supplies": {"count": 2, "redundancy": "1+1", "nameplate_w": 1600},
     "power_inputs": {"psu-a": 1, "psu-b": 2}}
"""

from __future__ import annotations

import json
import os
import re
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from app.core import plain_text, units
from app.core.records import PowerSupplies, SutDescription
from app.rules.run_fields import MAX_DRIVES, MAX_NAME_CHARS, MAX_NOTES_CHARS
from app.sequencer.capacity_optimisation import declare_coms
from drivers import guarded_file

#: a SUT file is a few hundred bytes of JSON (its notes at most MAX_NOTES_CHARS): anything
#: beyond this is no SUT description, and a link to /dev/zero must not be read to MemoryError
MAX_SUT_FILE_BYTES = 1 << 20
#: "N+M": N supplies carry the load, M are spare
_REDUNDANCY = re.compile(r"^(\d+)\+(\d+)$")
#: the bounds of the command line's and the wizard's fields (app.rules.run_fields)
Text = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]


#: the file's one-line texts (``notes`` may hold line breaks)
ONE_LINE_FIELDS = ("vendor", "model", "serial", "firmware", "raw_capacity", "raid", "supply",
                   "ashrae_class")


class SutFileError(ValueError):
    """A SUT file that cannot be read or does not describe a SUT; the message names the file
    and the field."""


class SuppliesModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    count: int = Field(ge=1, le=1000)
    redundancy: str = Field(min_length=3, max_length=20)
    nameplate_w: float = Field(gt=0, le=1e6, allow_inf_nan=False)

    @model_validator(mode="after")
    def _redundancy_adds_up(self) -> "SuppliesModel":
        m = _REDUNDANCY.match(self.redundancy.replace(" ", ""))
        if m is None:
            raise ValueError(f"redundancy {self.redundancy!r} is not N+M (e.g. 1+1)")
        if int(m.group(1)) + int(m.group(2)) != self.count:
            raise ValueError(f"redundancy {self.redundancy} names "
                             f"{int(m.group(1)) + int(m.group(2))} supplies, "
                             f"count says {self.count}")
        return self


class SutFileModel(BaseModel):
    """The file's fields; every one the report states is required."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    vendor: Text
    model: Text
    serial: Text
    firmware: str = Field(default="", max_length=MAX_NAME_CHARS)
    raw_capacity: str = Field(min_length=1, max_length=40)
    drives: int = Field(ge=1, le=MAX_DRIVES)
    drive_type: Literal["HDD", "SSD"]
    raid: Text
    coms_on: tuple[str, ...] = ()
    coms_off: tuple[str, ...] = ()
    supply: Text
    ashrae_class: Text
    power_supplies: SuppliesModel
    power_inputs: dict[str, int] = Field(default_factory=dict)
    notes: str = Field(default="", max_length=MAX_NOTES_CHARS)

    @model_validator(mode="after")
    def _plain_text(self) -> "SutFileModel":
        """Every text of the file by the rule of every typed text (``app.core.plain_text``):
        a file is typed too, and its vendor reaches every QA PC's terminal."""
        texts = [(name, getattr(self, name)) for name in ONE_LINE_FIELDS]
        texts += [("coms", com) for com in self.coms_on + self.coms_off]
        texts += [("power_inputs", name) for name in self.power_inputs]
        for name, text in texts + [("notes", self.notes)]:
            why = plain_text.refusal(text, name, multiline=name == "notes")
            if why is not None:
                raise ValueError(why)
        return self

    @model_validator(mode="after")
    def _inputs_name_a_supply(self) -> "SutFileModel":
        for name, supply in self.power_inputs.items():
            if not 1 <= supply <= self.power_supplies.count:
                raise ValueError(f"power input {name!r} is mapped to supply {supply}; the SUT "
                                 f"has supplies 1 … {self.power_supplies.count}")
        return self


def sut_from_file_model(m: SutFileModel) -> SutDescription:
    """The record the file describes; raises ValueError for a capacity that is no capacity."""
    try:
        capacity = units.parse_capacity(m.raw_capacity, "GB")
    except units.UnitError as exc:
        raise ValueError(f"raw_capacity: {exc}") from None
    available, on = declare_coms(m.coms_on, m.coms_off)
    return SutDescription(
        vendor=m.vendor.strip(), model=m.model.strip(), serial=m.serial.strip(),
        firmware=m.firmware.strip(), raw_capacity_bytes=capacity, drive_count=m.drives,
        drive_type=m.drive_type, raid=m.raid.strip(), coms_declared=available,
        coms_on_during_test=on, notes=m.notes, supply=m.supply, ashrae_class=m.ashrae_class,
        power_supplies=PowerSupplies(m.power_supplies.count,
                                     m.power_supplies.redundancy.replace(" ", ""),
                                     m.power_supplies.nameplate_w),
        input_supplies=tuple(m.power_inputs.items()))


def field_problem(exc: ValidationError) -> str:
    """A lab file's first broken rule as ``field.path: message (and N more)``: the one line
    a technician reads to fix the file (the SUT file, the device file)."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "the file"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {first['msg']}{more}"


def load_sut_file(path: Path) -> SutDescription:
    """The SUT a file describes, or :class:`SutFileError` naming the file and field."""
    try:
        text = guarded_file.read_text(path, "SUT file", MAX_SUT_FILE_BYTES)
    except guarded_file.GuardedFileError as exc:
        raise SutFileError(str(exc)) from None
    try:
        return sut_from_file_model(SutFileModel.model_validate_json(text))
    except ValidationError as exc:
        raise SutFileError(f"SUT file {path}: {field_problem(exc)}") from None
    except ValueError as exc:
        raise SutFileError(f"SUT file {path}: {exc}") from None


def sut_file_json(sut: SutDescription) -> str:
    """The file form of ``sut`` (refused with :class:`SutFileError` when a field the file
    requires is not declared)."""
    supplies = sut.power_supplies
    off = [c for c in sut.coms_declared if c not in sut.coms_on_during_test]
    data = {"vendor": sut.vendor, "model": sut.model, "serial": sut.serial,
            "firmware": sut.firmware, "raw_capacity": f"{_gb(sut.raw_capacity_bytes)} GB",
            "drives": sut.drive_count, "drive_type": sut.drive_type, "raid": sut.raid,
            "coms_on": list(sut.coms_on_during_test), "coms_off": off, "supply": sut.supply,
            "ashrae_class": sut.ashrae_class,
            "power_supplies": {"count": supplies.count, "redundancy": supplies.redundancy,
                               "nameplate_w": supplies.nameplate_w},
            "power_inputs": dict(sut.input_supplies), "notes": sut.notes}
    try:
        SutFileModel.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise SutFileError("the SUT description cannot be saved: "
                           f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}") from None
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _gb(raw_bytes: int) -> str:
    """Bytes as exact decimal GB ("7300", "0.016"): the file round-trips to the byte."""
    text = format(Decimal(raw_bytes).scaleb(-9), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def save_sut_file(path: Path, sut: SutDescription) -> None:
    """Write ``sut`` to ``path`` atomically (a crash mid-save keeps the old file)."""
    text = sut_file_json(sut)
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise SutFileError(f"SUT file {path}: cannot save it ({exc})") from None
