"""What the new-run wizard collects, checked and turned into a :class:`RunConfig`.

Pure Python (no Qt): the pages only copy widget contents into :class:`WizardEntries`, so every
rule that blocks *Next* is tested here without driving a GUI, and the GUI and a test can never
disagree about what is valid.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from app import units
from app.calibration import CalibrationEntryError, checked_certificate, checked_date
from app.cli.arguments import MAX_INPUT_NAME_CHARS, MAX_NAME_CHARS
from app.method.loader import MethodError, load_method
from pydantic import ValidationError

from app.records import (WIRINGS, InstrumentConfig, PowerInput, PowerSupplies, RunConfig,
                         SutDescription)
from app.sut_file import SuppliesModel
from app.sequencer.capacity_optimisation import (check_declared_coms, check_raid,
                                                 coms_off_during_test, declare_coms)
from app.station import station_name

#: decimal units, method-notes §4: 1 GB = 10⁹ B (never GiB in a capacity figure)
CAPACITY_UNITS = {"GB": 10**9, "TB": 10**12}
DRIVE_TYPES = ("HDD", "SSD")
RAID_LEVELS = ("RAID 0", "RAID 1", "RAID 5", "RAID 6", "RAID 10", "JBOD")
#: how the workload page's choice maps to a lab kind (app.records.LAB_KINDS)
WORKLOAD_MODES = {"simulated": "sim", "local-fio": "local-fio", "load-hosts": "local-fio"}
_HOST = re.compile(r"^[A-Za-z0-9.\-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:]+\](:\d{1,5})?$")


#: a refusal quotes what was typed; a pasted 10 KB value is shown as its start and length
LONG_WORD = re.compile(r"[^\s'\"]{81,}")
MAX_MESSAGE = 600


def _clipped(message: str) -> str:
    message = LONG_WORD.sub(lambda m: f"{m.group()[:40]}… ({len(m.group())} characters)",
                            message)
    return message if len(message) <= MAX_MESSAGE else message[:MAX_MESSAGE - 1] + "…"


class EntryError(ValueError):
    """An entry the wizard cannot accept; ``field`` names the widget to fix."""

    def __init__(self, field_name: str, message: str) -> None:
        message = _clipped(message)
        super().__init__(message)
        self.field = field_name
        self.message = message


@dataclass(frozen=True)
class WizardEntries:
    """Raw wizard entries (strings as typed, choices as picked)."""

    taxonomy: str = ""  # derived on the classification page; set only when repeating a run
    classification_reason: str = ""
    classification_answers: dict = field(default_factory=dict)
    vendor: str = ""
    model: str = ""
    serial: str = ""
    firmware: str = ""
    capacity: str = ""
    capacity_unit: str = "TB"
    decimal_point: str = "."  # the station's locale's, for "7,3 TB"
    drive_count: int = 1
    drive_type: str = "HDD"
    raid: str = "RAID 6"
    coms: tuple[str, ...] = ()  # available in the SUT and on during the test (``--com``)
    coms_off: tuple[str, ...] = ()  # available in the SUT, off during the test (``--com-off``)
    notes: str = ""
    supply: str = SutDescription.supply  # the method's voltage range id (method-notes §3)
    ashrae_class: str = SutDescription.ashrae_class  # allowable inlet class (method-notes §10)
    #: the SUT's power supplies (count 0: not declared), as the SUT file has them
    psu_count: int = 0
    psu_redundancy: str = ""
    psu_nameplate_w: str = ""
    input_supplies: tuple[tuple[str, int], ...] = ()
    workload_mode: str = "simulated"
    simulated_lab: str = "sim"  # "sim" (loopback meters) or "sim-direct"
    targets: tuple[str, ...] = ()
    target_size: str = ""  # scratch file the station creates for a missing target ("": none)
    confirm_device: str = ""  # target paths typed to allow overwriting them, comma separated
    load_hosts: tuple[str, ...] = ()
    method: str = "demo"
    meter_driver: str = "sim"
    meter_resource: str = ""
    thermo_driver: str = "sim"
    thermo_resource: str = ""
    #: each instrument's calibration as on its certificate (app.calibration checks both)
    meter_calibration: str = ""
    meter_certificate: str = ""
    thermo_calibration: str = ""
    thermo_certificate: str = ""
    operator: str = ""
    meter_options: dict = field(default_factory=dict)
    #: the SUT's power inputs from the input table (empty: the one meter above)
    power_inputs: tuple[PowerInput, ...] = ()
    #: set by the instruments page: "passed: …" / "OVERRIDE: …"; never carried over from an
    #: earlier run (the instruments must be tested again)
    instrument_check: str = ""
    #: the earlier run whose range plan the operator confirmed on the review page (the range
    #: advisor, method-notes §3); never carried over: it is confirmed for each run
    range_plan_from: str = ""


def parse_capacity(text: str, unit: str, decimal_point: str = ".") -> int:
    """'7.3', 'TB' → 7 300 000 000 000 bytes; a unit typed in the field ("7300 GB", "7,3 TB")
    wins over the unit box (``app.units.parse_capacity``). Rejects empty, non-numeric, zero
    and negative figures."""
    if unit not in CAPACITY_UNITS:
        raise EntryError("capacity_unit", f"unknown capacity unit {unit!r}; use GB or TB")
    if not text.strip():
        raise EntryError("capacity", "Enter the SUT's raw capacity (e.g. 7300 GB).")
    try:
        return units.parse_capacity(text, unit, decimal_point)
    except units.UnitError as exc:
        if "greater than zero" in str(exc):
            raise EntryError("capacity", f"Raw capacity must be greater than zero (got "
                             f"{text.strip()}).") from None
        raise EntryError("capacity", f"Raw capacity: {exc}.") from None


def format_capacity(raw_bytes: int) -> tuple[str, str]:
    """Bytes → (text, unit) for the capacity field, TB when it reads naturally."""
    unit = "TB" if raw_bytes >= 10**12 else "GB"
    return f"{raw_bytes / CAPACITY_UNITS[unit]:g}", unit


def check_sut(e: WizardEntries) -> SutDescription:
    for name, label in (("vendor", "vendor"), ("model", "model"), ("serial", "serial number"),
                        ("firmware", "firmware")):
        if not getattr(e, name).strip() and name != "firmware":
            raise EntryError(name, f"Enter the SUT's {label}: it identifies the unit in the "
                             "report.")
        if len(getattr(e, name).strip()) > MAX_NAME_CHARS:
            raise EntryError(name, f"The SUT's {label} is longer than {MAX_NAME_CHARS} "
                             "characters.")
    capacity = parse_capacity(e.capacity, e.capacity_unit, e.decimal_point)
    if e.drive_count < 1:
        raise EntryError("drive_count", "The SUT needs at least one drive.")
    try:
        check_raid(e.raid)
    except ValueError as exc:
        raise EntryError("raid", f"{exc}.") from None
    if e.drive_type not in DRIVE_TYPES:
        raise EntryError("drive_type", f"Drive type must be one of {', '.join(DRIVE_TYPES)}.")
    available, on = declare_coms(e.coms, e.coms_off)
    return SutDescription(vendor=e.vendor.strip(), model=e.model.strip(),
                          serial=e.serial.strip(), firmware=e.firmware.strip(),
                          raw_capacity_bytes=capacity,
                          drive_count=e.drive_count, drive_type=e.drive_type,
                          raid=e.raid.strip(), coms_declared=available,
                          coms_on_during_test=on, notes=e.notes.strip(),
                          supply=e.supply, ashrae_class=e.ashrae_class,
                          power_supplies=check_supplies(e), input_supplies=e.input_supplies)


def check_supplies(e: WizardEntries) -> PowerSupplies:
    """The power supplies by the SUT file's rules (``app.sut_file.SuppliesModel``: N+M adds
    up to the count, a nameplate rating in W); a count of 0 declares none."""
    if e.psu_count <= 0:
        return PowerSupplies()
    try:
        watts = units.parse_number(e.psu_nameplate_w, e.decimal_point) \
            if e.psu_nameplate_w.strip() else 0.0
        checked = SuppliesModel(count=e.psu_count, redundancy=e.psu_redundancy.strip(),
                                nameplate_w=watts)
    except (units.UnitError, ValidationError) as exc:
        text = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise EntryError("power_supplies", f"Power supplies: {text.removeprefix('Value error, ')}"
                         ".") from None
    return PowerSupplies(checked.count, checked.redundancy.replace(" ", ""), checked.nameplate_w)


def check_coms(known: Iterable[str], sut: SutDescription) -> None:
    """The run's own rule (``app.session.open_session``) before Start, where it can be fixed:
    every declared COM is one of ``known``, one on is available, parity RAID only on a parity
    RAID level."""
    try:
        check_declared_coms(known, sut)
    except ValueError as exc:
        raise EntryError("coms", f"Capacity optimisation: {exc}.") from None


def method_coms(method_name: str) -> tuple[str, ...]:
    """The COM ids the chosen method offers (an unknown method is the method field's error)."""
    try:
        return tuple(c.id for c in load_method(method_name).coms)
    except MethodError as exc:
        raise EntryError("method", str(exc)) from None


def check_workload(e: WizardEntries, protected: Sequence[str] = ()) -> str:
    """The lab kind for the workload choice; local fio needs targets, load hosts need hosts.
    ``protected``: the station's own files (``app.protected``), refused as targets."""
    if e.workload_mode not in WORKLOAD_MODES:
        raise EntryError("workload_mode", f"unknown workload choice {e.workload_mode!r}")
    if e.workload_mode != "simulated" and not [t for t in e.targets if t.strip()]:
        where = "on the load hosts" if e.workload_mode == "load-hosts" else "on this station"
        raise EntryError("targets", f"fio needs at least one target {where} (a scratch file "
                         "or a block device): add one to the targets list.")
    if e.workload_mode == "local-fio":  # remote paths are checked by the hosts' fio
        from ui.wizard.targets import target_safety  # the fio driver's own check

        for target in (t.strip() for t in e.targets if t.strip()):
            verdict = target_safety(target, e.target_size, e.confirm_device, protected)
            if not verdict.ok:
                raise EntryError("targets", verdict.text.lstrip("✘ "))
    if e.workload_mode == "load-hosts":
        hosts = [h.strip() for h in e.load_hosts if h.strip()]
        if not hosts:
            raise EntryError("load_hosts", "Add at least one load host (host[:port] running "
                             "'fio --server').")
        bad = [h for h in hosts if not _HOST.match(h)]
        if bad:
            raise EntryError("load_hosts", f"Not a host[:port]: {', '.join(bad)}")
    if not e.method:
        raise EntryError("method", "Pick a test method.")
    if e.workload_mode == "simulated":
        return e.simulated_lab
    return WORKLOAD_MODES[e.workload_mode]


def check_instruments(e: WizardEntries) -> tuple[InstrumentConfig, InstrumentConfig]:
    if e.meter_driver != "sim" and not e.meter_resource.strip():
        raise EntryError("meter_resource", "Enter the power meter's address (VISA resource, "
                         "e.g. TCPIP::127.0.0.1::10001::SOCKET).")
    if e.thermo_driver not in ("sim", "none") and not e.thermo_resource.strip():
        raise EntryError("thermo_resource", "Enter the thermometer's address.")
    meter_date, meter_cert = _calibration("meter", "the power meter's", e.meter_calibration,
                                          e.meter_certificate)
    thermo_date, thermo_cert = _calibration("thermo", "the thermometer's", e.thermo_calibration,
                                            e.thermo_certificate)
    return (InstrumentConfig(e.meter_driver, e.meter_resource.strip(), dict(e.meter_options),
                             meter_date, meter_cert),
            InstrumentConfig(e.thermo_driver, e.thermo_resource.strip(),
                             calibration_date=thermo_date, certificate=thermo_cert))


def _calibration(prefix: str, what: str, when: str, certificate: str) -> tuple[str, str]:
    """A calibration date and certificate checked by the one rule (app.calibration), the
    refusal naming the field to fix (``meter_calibration`` …)."""
    try:
        date_text = checked_date(when, what)
    except CalibrationEntryError as exc:
        raise EntryError(f"{prefix}_calibration", f"{str(exc)[0].upper()}{str(exc)[1:]}.") \
            from None
    try:
        return date_text, checked_certificate(certificate, what)
    except CalibrationEntryError as exc:
        raise EntryError(f"{prefix}_certificate", f"{str(exc)[0].upper()}{str(exc)[1:]}.") \
            from None


def check_power_inputs(inputs: tuple[PowerInput, ...]) -> tuple[PowerInput, ...]:
    """The input table's rows: each named once, each real meter with its address."""
    seen: set[str] = set()
    for row, i in enumerate(inputs, start=1):
        if not i.name.strip():
            raise EntryError("power_inputs", f"Power input row {row}: enter a name (e.g. psu-a).")
        if len(i.name) > MAX_INPUT_NAME_CHARS:
            raise EntryError("power_inputs", f"Power input row {row}: the name is longer than "
                             f"{MAX_INPUT_NAME_CHARS} characters.")
        if i.name in seen:
            raise EntryError("power_inputs", f"Power input {i.name!r} is listed twice: each "
                             "input needs its own name.")
        seen.add(i.name)
        if i.driver != "sim" and not i.resource.strip():
            raise EntryError("power_inputs", f"Power input {i.name}: enter the meter's address "
                             "(VISA resource or host:port).")
        if i.wiring not in WIRINGS:
            raise EntryError("power_inputs", f"Power input {i.name}: wiring {i.wiring!r} is not "
                             f"one of {', '.join(WIRINGS)}.")
    return tuple(replace(i, calibration_date=checked[0], certificate=checked[1])
                 for i in inputs
                 for checked in [_input_calibration(i)])


def _input_calibration(i: PowerInput) -> tuple[str, str]:
    try:
        return (checked_date(i.calibration_date, f"power input {i.name}'s"),
                checked_certificate(i.certificate, f"power input {i.name}'s"))
    except CalibrationEntryError as exc:
        raise EntryError("power_inputs", f"{str(exc)[0].upper()}{str(exc)[1:]}.") from None


def check_instruments_tested(e: WizardEntries) -> None:
    """Next needs a passed connection test of the current settings, or the explicit override
    (which the run's configuration records)."""
    if not e.instrument_check:
        raise EntryError("test_connection", "Click “Test connection” (it must pass), or tick "
                         "“Continue without a passed test” — that choice is recorded with "
                         "the run.")


def config_from_wizard(e: WizardEntries) -> RunConfig:
    """The run configuration the wizard's entries describe; raises :class:`EntryError`."""
    sut = check_sut(e)
    lab = check_workload(e)
    targets = tuple(t.strip() for t in e.targets if t.strip()) if lab == "local-fio" else ()
    hosts = (tuple(h.strip() for h in e.load_hosts if h.strip())
             if e.workload_mode == "load-hosts" else ())
    sut = replace(sut, targets=targets, load_hosts=hosts)
    check_coms(method_coms(e.method), sut)
    meter, thermo = check_instruments(e)
    return RunConfig(method=e.method, taxonomy=e.taxonomy, lab=lab, sut=sut, power_meter=meter,
                     power_inputs=check_power_inputs(e.power_inputs), temperature_meter=thermo, operator=e.operator.strip(),
                     classification_reason=e.classification_reason,
                     classification_answers=dict(e.classification_answers),
                     target_size=e.target_size, confirm_device=e.confirm_device,
                     instrument_check=e.instrument_check, range_plan_from=e.range_plan_from,
                     station=station_name())


def sut_entries(sut: SutDescription) -> dict[str, Any]:
    """The SUT page's entries for ``sut`` (an earlier run's, a profile's or a SUT file's)."""
    capacity, unit = format_capacity(sut.raw_capacity_bytes)
    supplies = sut.power_supplies
    return dict(vendor=sut.vendor, model=sut.model, serial=sut.serial, firmware=sut.firmware,
                capacity=capacity, capacity_unit=unit, drive_count=sut.drive_count,
                drive_type=sut.drive_type, raid=sut.raid, coms=tuple(sut.coms_on_during_test),
                coms_off=coms_off_during_test(sut), notes=sut.notes, supply=sut.supply,
                ashrae_class=sut.ashrae_class, psu_count=supplies.count,
                psu_redundancy=supplies.redundancy,
                psu_nameplate_w=f"{supplies.nameplate_w:g}" if supplies.count else "",
                input_supplies=sut.input_supplies)


def entries_from_config(config: RunConfig) -> WizardEntries:
    """The wizard pre-filled from an earlier run (resume = a new run with the same set-up)."""
    sut = config.sut
    if config.lab == "local-fio":
        mode = "load-hosts" if sut.load_hosts else "local-fio"
    else:
        mode = "simulated"
    return WizardEntries(
        taxonomy=config.taxonomy, classification_reason=config.classification_reason,
        classification_answers=dict(config.classification_answers), **sut_entries(sut),
        workload_mode=mode,
        simulated_lab=config.lab if mode == "simulated" else "sim", targets=sut.targets,
        target_size=config.target_size, confirm_device=config.confirm_device,
        load_hosts=sut.load_hosts, method=config.method,
        meter_driver=config.power_meter.driver, meter_resource=config.power_meter.resource,
        thermo_driver=config.temperature_meter.driver,
        thermo_resource=config.temperature_meter.resource,
        meter_calibration=config.power_meter.calibration_date,
        meter_certificate=config.power_meter.certificate,
        thermo_calibration=config.temperature_meter.calibration_date,
        thermo_certificate=config.temperature_meter.certificate, operator=config.operator,
        meter_options=dict(config.power_meter.options), power_inputs=config.power_inputs)
