"""The one run-configuration builder: the entries of a run as typed, checked and turned into
a :class:`RunConfig` (issue 24: "one set of fields, validators, units and rounding, one error
text per rule").

The command line (``app.cli.cmd_run`` fills :class:`RunEntries` from its options), the wizard
(its pages copy their widgets into :class:`RunEntries`), "repeat this run"
(:func:`entries_from_config`) and ``--resume`` (the settings typed beside it, through the command
line's path) all build with :func:`config_from_entries`; each field's rule and text is in
:mod:`app.rules.run_fields`. Pure Python (no Qt): every rule that blocks the wizard's *Next* is
tested
here without a GUI, and the two paths cannot disagree about what is valid.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from pydantic import ValidationError

from app.rules import run_fields as rules
from app.core import units
from app.method.loader import MethodError, load_method
from app.core.records import InstrumentConfig, PowerInput, PowerSupplies, RunConfig, SutDescription
from app.rules.run_fields import DRIVE_TYPES as DRIVE_TYPES  # the pages' choices too
from app.rules.run_fields import CAPACITY_UNITS, EntryError
from app.sequencer.capacity_optimisation import (check_declared_coms, coms_off_during_test,
                                                 declare_coms)
from app.core.station_settings import station_name
from app.station.sut_file import SuppliesModel
from app.labs.target_safety import target_safety

RAID_LEVELS = ("RAID 0", "RAID 1", "RAID 5", "RAID 6", "RAID 10", "JBOD")
#: how the workload choice maps to a lab kind (app.core.records.LAB_KINDS)
WORKLOAD_MODES = {"simulated": "sim", "local-fio": "local-fio", "load-hosts": "local-fio"}


@dataclass(frozen=True)
class RunEntries:
    """A run's entries as typed (strings) and picked (choices), from the wizard's pages or
    the command line's options."""

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
    drive_count: int | str = 1  # the wizard's spin box gives a number, an option its text
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
    #: each instrument's calibration as on its certificate (app.core.calibration checks both)
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
    #: file targets through the page cache (``--buffered-io``; disclosed on the report)
    buffered_io: bool = False


def parse_capacity(text: str, unit: str, decimal_point: str = ".") -> int:
    """'7.3', 'TB' → 7 300 000 000 000 bytes; a unit typed in the field ("7300 GB", "7,3 TB")
    wins over the unit box. The one rule: :func:`app.rules.run_fields.capacity_bytes`."""
    return rules.capacity_bytes(text, unit, decimal_point)


def format_capacity(raw_bytes: int) -> tuple[str, str]:
    """Bytes → (text, unit) for the capacity field, TB when it reads naturally, exact to the
    byte (a repeated set-up must not round 7 300 000 000 123 bytes to 7.3 TB)."""
    unit = "TB" if raw_bytes >= 10**12 else "GB"
    text = format(Decimal(raw_bytes) / CAPACITY_UNITS[unit], "f")
    return (text.rstrip("0").rstrip(".") if "." in text else text), unit


def check_sut(e: RunEntries) -> SutDescription:
    names: dict[str, Any] = {name: rules.sut_name(name, getattr(e, name))
                             for name, _, _ in rules.SUT_NAMES}
    capacity = parse_capacity(e.capacity, e.capacity_unit, e.decimal_point)
    drives = rules.drive_count(e.drive_count)
    raid = rules.raid(e.raid)
    drive_type = rules.drive_type(e.drive_type)
    try:
        available, on = declare_coms(e.coms, e.coms_off)
    except ValueError as exc:
        raise EntryError("coms", str(exc)) from None
    return SutDescription(**names, raw_capacity_bytes=capacity, drive_count=drives,
                          drive_type=drive_type, raid=raid, coms_declared=available,
                          coms_on_during_test=on, notes=rules.notes(e.notes),
                          supply=e.supply.strip(), ashrae_class=e.ashrae_class.strip(),
                          power_supplies=check_supplies(e), input_supplies=e.input_supplies)


def check_supplies(e: RunEntries) -> PowerSupplies:
    """The power supplies by the SUT file's rules (``app.station.sut_file.SuppliesModel``: N+M adds
    up to the count, a nameplate rating in W); a count of 0 declares none."""
    if e.psu_count <= 0:
        return PowerSupplies()
    try:
        watts = units.parse_number(e.psu_nameplate_w, e.decimal_point) \
            if e.psu_nameplate_w.strip() else 0.0
        checked = SuppliesModel(count=e.psu_count, redundancy=e.psu_redundancy.strip(),
                                nameplate_w=watts)
    except units.UnitError as exc:
        raise EntryError("psu_nameplate_w", f"Power supplies: nameplate rating: {exc}.") \
            from None
    except ValidationError as exc:
        raise supplies_error(exc) from None
    return PowerSupplies(checked.count, checked.redundancy.replace(" ", ""), checked.nameplate_w)


#: each supplies field in the words of the form, and the entry it belongs to (focus goes there)
SUPPLY_FIELDS = {"count": ("psu_count", "count"), "redundancy": ("psu_redundancy", "redundancy"),
                 "nameplate_w": ("psu_nameplate_w", "nameplate rating (W, from the label)")}


def supplies_error(exc: ValidationError) -> EntryError:
    """A supplies rule broken, named by its field in the form's words, never pydantic's
    ("Input should be greater than 0"), with the entry to focus (issue 41)."""
    first = exc.errors()[0]
    field = str(first["loc"][0]) if first["loc"] else ""
    entry, words = SUPPLY_FIELDS.get(field, ("psu_count", "supplies"))
    text = first["msg"].removeprefix("Value error, ")
    if first["type"] in ("greater_than", "greater_than_equal", "less_than_equal"):
        limit = first.get("ctx", {})
        bound = next(iter(limit.values()), "")
        bound = f"{bound:g}" if isinstance(bound, (int, float)) else bound
        text = {"greater_than": f"must be more than {bound}",
                "greater_than_equal": f"must be at least {bound}",
                "less_than_equal": f"must be at most {bound}"}[first["type"]]
    elif first["type"] == "string_too_short":
        text = "is missing (N+M, e.g. 1+1)"
    return EntryError(entry, f"Power supplies: {words} {text}." if field else
                      f"Power supplies: {text}.")


def check_coms(known: Iterable[str], sut: SutDescription) -> None:
    """The run's own rule (``app.station.session.open_session``) before Start, where it can be
    fixed:
    every declared COM is one of ``known``, one on is available, parity RAID only on a parity
    RAID level."""
    try:
        check_declared_coms(known, sut)
    except ValueError as exc:  # its text names the COM rule ("unknown COM id …")
        raise EntryError("coms", str(exc)) from None


def method_coms(method_name: str) -> tuple[str, ...]:
    """The COM ids the chosen method offers (an unknown method is the method field's error)."""
    try:
        return tuple(c.id for c in load_method(method_name).coms)
    except MethodError as exc:
        raise EntryError("method", str(exc)) from None


def check_workload(e: RunEntries) -> str:
    """The lab kind for the workload choice; local fio needs targets, load hosts need hosts
    (whether each target may be written: :func:`check_targets`)."""
    if e.workload_mode not in WORKLOAD_MODES:
        raise EntryError("workload_mode", f"unknown workload choice {e.workload_mode!r}")
    if e.workload_mode != "simulated" and not [t for t in e.targets if t.strip()]:
        where = "on the load hosts" if e.workload_mode == "load-hosts" else "on this station"
        raise EntryError("targets", f"local-fio needs at least one --target {where} (Targets in "
                         "the wizard): a scratch file or a block device.")
    if e.workload_mode == "load-hosts" and not rules.load_hosts(e.load_hosts):
        raise EntryError("load_hosts", "Add at least one load host (host[:port] running "
                         "'fio --server').")
    if not e.method:
        raise EntryError("method", "Pick a test method.")
    if e.workload_mode == "simulated":
        return e.simulated_lab
    return WORKLOAD_MODES[e.workload_mode]


def check_targets(e: RunEntries, protected: Sequence[str] = ()) -> None:
    """The fio driver's own safety check of each local target, before Start (the run's lab
    checks again when it opens). ``protected``: the station's own files (``app.core.protected``)."""
    if e.workload_mode != "local-fio":  # remote paths are checked by the hosts' fio
        return
    for target in (t.strip() for t in e.targets if t.strip()):
        verdict = target_safety(target, e.target_size, e.confirm_device, protected)
        if not verdict.ok:
            raise EntryError("targets", verdict.text.lstrip("✘ "))


def check_instruments(e: RunEntries) -> tuple[InstrumentConfig, InstrumentConfig]:
    """The one power meter and the thermometer, each with its address and calibration."""
    address, when, certificate = rules.instrument(
        "meter", e.meter_driver, e.meter_resource, e.meter_calibration, e.meter_certificate)
    meter = InstrumentConfig(e.meter_driver, address, dict(e.meter_options), when, certificate)
    address, when, certificate = rules.instrument(
        "thermo", e.thermo_driver, e.thermo_resource, e.thermo_calibration,
        e.thermo_certificate)
    return meter, InstrumentConfig(e.thermo_driver, address, calibration_date=when,
                                   certificate=certificate)


def check_power_inputs(inputs: tuple[PowerInput, ...]) -> tuple[PowerInput, ...]:
    """The input table's rows (or ``--power-input`` options):
    :func:`app.rules.run_fields.power_inputs`."""
    return rules.power_inputs(inputs)


def check_input_supplies(sut: SutDescription, inputs: tuple[PowerInput, ...]) -> None:
    """Every power input the SUT description maps to a supply is one of the run's inputs."""
    names = [i.name for i in inputs]
    unmapped = sorted({n for n, _ in sut.input_supplies} - set(names)) if names else []
    if unmapped:
        raise EntryError("power_inputs", f"The SUT description maps power input(s) "
                         f"{', '.join(unmapped)} to a supply, but the run's inputs are "
                         f"{', '.join(names)}.")


def check_instruments_tested(e: RunEntries) -> None:
    """Next needs a passed connection test of the current settings, or the explicit override
    (which the run's configuration records)."""
    if not e.instrument_check:
        raise EntryError("test_connection", "Click “Test connection” (it must pass), or tick "
                         "“Continue without a passed test” — that choice is recorded with "
                         "the run.")


def config_from_entries(e: RunEntries) -> RunConfig:
    """The run configuration ``e`` describes; raises :class:`EntryError` naming the entry.
    Entries only: whether a target may be written is the file system's state, which the run's
    lab checks when it opens (the wizard asks early too, :func:`check_targets`)."""
    sut = check_sut(e)
    rules.drives_within_max_config(sut.drive_count, e.classification_answers)
    lab = check_workload(e)
    targets = tuple(t.strip() for t in e.targets if t.strip()) if lab == "local-fio" else ()
    hosts = rules.load_hosts(e.load_hosts) if e.workload_mode == "load-hosts" else ()
    sut = replace(sut, targets=targets, load_hosts=hosts)
    check_coms(method_coms(e.method), sut)
    meter, thermo = check_instruments(e)
    inputs = check_power_inputs(e.power_inputs)
    check_input_supplies(sut, inputs)
    return RunConfig(method=e.method, taxonomy=e.taxonomy, lab=lab, sut=sut, power_meter=meter,
                     power_inputs=inputs, temperature_meter=thermo,
                     operator=rules.operator(e.operator),
                     classification_reason=e.classification_reason,
                     classification_answers=dict(e.classification_answers),
                     target_size=e.target_size, confirm_device=e.confirm_device,
                     instrument_check=e.instrument_check, range_plan_from=e.range_plan_from,
                     buffered_io=e.buffered_io, station=station_name())


def with_max_config_default(e: RunEntries) -> RunEntries:
    """``e`` with the maximum-configuration answer defaulted to the SUT's drive count where
    it is not answered — the one default the wizard's classification page and ``storwatt run``
    share (``app.rules.run_fields.default_max_config``); answers given are kept as given."""
    if rules.MAX_CONFIG_ANSWER in e.classification_answers:
        return e
    most = rules.default_max_config(e.drive_count)
    if most is None:
        return e
    return replace(e, classification_answers={**e.classification_answers,
                                              rules.MAX_CONFIG_ANSWER: most})


def sut_entries(sut: SutDescription) -> dict[str, Any]:
    """The SUT's entries for ``sut`` (an earlier run's, a profile's or a SUT file's)."""
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


def workload_entries(config: RunConfig) -> dict[str, Any]:
    """The workload entries of ``config``: the lab kind back to the choice that gives it."""
    sut = config.sut
    if config.lab == "local-fio":
        mode = "load-hosts" if sut.load_hosts else "local-fio"
    else:
        mode = "simulated"
    return dict(workload_mode=mode, simulated_lab=config.lab if mode == "simulated" else "sim",
                targets=sut.targets, target_size=config.target_size,
                confirm_device=config.confirm_device, load_hosts=sut.load_hosts,
                buffered_io=config.buffered_io)


def entries_from_config(config: RunConfig) -> RunEntries:
    """The entries of an earlier run (repeat this run = a new run with the same set-up)."""
    return RunEntries(
        taxonomy=config.taxonomy, classification_reason=config.classification_reason,
        classification_answers=dict(config.classification_answers), **sut_entries(config.sut),
        **workload_entries(config), method=config.method,
        meter_driver=config.power_meter.driver, meter_resource=config.power_meter.resource,
        thermo_driver=config.temperature_meter.driver,
        thermo_resource=config.temperature_meter.resource,
        meter_calibration=config.power_meter.calibration_date,
        meter_certificate=config.power_meter.certificate,
        thermo_calibration=config.temperature_meter.calibration_date,
        thermo_certificate=config.temperature_meter.certificate, operator=config.operator,
        meter_options=dict(config.power_meter.options), power_inputs=config.power_inputs)
