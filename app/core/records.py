"""Domain records shared by the sequencer, storage, reports and GUI.

Plain frozen dataclasses: they cross thread boundaries (sequencer → writer thread → GUI) and
must never be mutated after publication. Units are in the field names where they are not SI.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from enum import IntEnum, StrEnum
from typing import Any

from drivers.interfaces import ADDED_FIELD  # noqa: F401 (defined with the driver records)


class RunStatus(StrEnum):
    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    ABORTED = "ABORTED"
    FAILED = "FAILED"
    INTERRUPTED = "INTERRUPTED"  # found RUNNING at start-up: the station crashed mid-run


class PhaseKind(StrEnum):
    SEARCH = "search"  # intensity-100 search (first pass)
    RANGING = "ranging"  # dedicated ranging pass on auto range (method-notes §3)
    PREFILL = "prefill"
    CONDITIONING = "conditioning"
    ACTIVE = "active"
    SWEEP = "sweep"  # one step of a stepped-intensity sweep (method-notes §6)
    READY_IDLE = "ready_idle"
    COM_CHECK = "com_check"


class PhaseStatus(StrEnum):
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    ABORTED = "ABORTED"
    FAILED = "FAILED"
    SKIPPED = "SKIPPED"
    INTERRUPTED = "INTERRUPTED"  # RUNNING when the station stopped (set at the next start-up)

    @property
    def cut_short(self) -> bool:
        """The phase started but did not run to its end."""
        return self in (PhaseStatus.ABORTED, PhaseStatus.FAILED, PhaseStatus.INTERRUPTED)


class Window(IntEnum):
    """Where a sample or workload slice lies within its phase attempt.

    Tagged once, by the phase recorder, when the sample arrives; the recorder averages by these
    tags and storage keeps them, so a report selects exactly the samples a figure came from
    without re-deriving any boundary (method-notes §2, §4).
    """

    OUTSIDE = 0  # no metric window (search, pre-fill, conditioning, past the plan)
    STABILISATION = 1
    MEASUREMENT = 2


@dataclass(frozen=True)
class Placement:
    """A sample's place in the run record: phase attempt (1-based), interval index within the
    attempt (−1 = none) and window."""

    attempt: int
    interval: int
    window: Window


@dataclass(frozen=True)
class InstrumentConfig:
    """Which driver talks to which resource; ``driver == "sim"`` uses the simulated lab."""

    driver: str = "sim"
    resource: str = ""
    options: dict[str, Any] = field(default_factory=dict)  # element, channel, ranges …
    calibration_date: str = ""  # ISO date the lab entered (app.core.calibration checks it)
    certificate: str = ""  # the calibration certificate's reference


#: how a power input is wired (method-notes §10, several power inputs): single phase two-wire,
#: or a three-phase wiring whose Σ values the meter sums
WIRINGS = ("1P2W", "3P3W", "3P4W")


@dataclass(frozen=True)
class PowerInput:
    """One of the SUT's power inputs and the meter (element or channel) that reads it.

    The SUT's power is the sum over its inputs (``app.sequencer.power_inputs``); ``driver``
    ``sim`` in a simulated lab is a wire simulator of the model named by ``resource``
    (``wt310``, ``wt333e`` …) carrying its share of the simulated SUT."""

    name: str
    driver: str
    resource: str = ""
    element: int | None = None  # the meter's element (or PTDaemon channel); None: the default
    wiring: str = "1P2W"  # one of WIRINGS
    calibration_date: str = ""  # ISO date the lab entered (app.core.calibration checks it)
    certificate: str = ""  # the calibration certificate's reference


@dataclass(frozen=True)
class PowerSupplies:
    """The SUT's power supplies as its data sheet states them: how many, their redundancy
    (``N+M``: N carry the load, M spare) and the nameplate rating of each, in W (0: not
    declared). The report prints them beside the SUT's maximum measured power."""

    count: int = 0
    redundancy: str = ""
    nameplate_w: float = 0.0

    @property
    def declared(self) -> bool:
        return self.count > 0


@dataclass(frozen=True)
class SutDescription:
    """The system under test as the technician described it.

    The defaults are the simulated SUT's (the simulated labs alone may take them); a real lab
    starts from :data:`UNDECLARED_SUT` and declares every fact (``app.station.sut_file``)."""

    vendor: str = "StorWatt"
    model: str = "Simulated array"
    serial: str = "SIM-0001"
    firmware: str = ""
    #: 7300 GB, the seed's example: only the simulated labs may take it as a default
    raw_capacity_bytes: int = 7_300_000_000_000
    drive_count: int = 50
    drive_type: str = "HDD"  # HDD | SSD
    raid: str = "RAID 6"
    coms_declared: tuple[str, ...] = ()  # ids from the method's [[coms]]
    coms_on_during_test: tuple[str, ...] = ()
    load_hosts: tuple[str, ...] = ()  # "host[:port]" of fio --server instances
    targets: tuple[str, ...] = ()  # files or block devices
    notes: str = ""
    #: the nominal supply, one of the method's ``voltage_ranges`` by id (method-notes §3);
    #: the default is the simulated SUT's 230 V / 50 Hz
    supply: str = "1P-200-240"
    #: the ASHRAE class the SUT is specified for: its inlet's allowable range (method-notes §10)
    ashrae_class: str = "A2"
    power_supplies: PowerSupplies = field(default_factory=PowerSupplies)
    #: each power input (by name) → the supply (1 … count) it measures
    input_supplies: tuple[tuple[str, int], ...] = ()


#: where a real lab's SUT description starts: nothing of the simulated SUT, every fact to be
#: declared (an empty text or 0 is "not declared", and the report says so)
UNDECLARED_SUT = SutDescription(vendor="", model="", serial="", raw_capacity_bytes=0,
                                drive_count=0, drive_type="", raid="", supply="",
                                ashrae_class="")


def sut_from_dict(data: dict[str, Any]) -> SutDescription:
    """A SUT description from its JSON form (a stored snapshot, a profile, a SUT file's
    fields): lists back to tuples, the supplies back to their record; unknown keys (another
    version's) are dropped."""
    known = {f.name for f in fields(SutDescription)}
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v
                              for k, v in data.items() if k in known}
    if isinstance(values.get("power_supplies"), dict):
        supplies = values["power_supplies"]
        names = {f.name for f in fields(PowerSupplies)}
        values["power_supplies"] = PowerSupplies(**{k: v for k, v in supplies.items()
                                                    if k in names})
    if "input_supplies" in values:
        values["input_supplies"] = tuple((str(n), int(i)) for n, i in values["input_supplies"])
    return SutDescription(**values)


#: labs whose SUT is the simulated one, so the example SUT description above is theirs
SIMULATED_LABS = ("sim", "sim-direct")

#: what ``RunConfig.lab`` may name (built by :func:`app.labs.builder.build_lab`); here, with the
#: record,
#: so the command line can offer the choices without importing the simulators
LAB_KINDS = ("sim", "sim-direct", "local-fio")


@dataclass(frozen=True)
class RunConfig:
    """Everything that defines a run; stored as a snapshot with it (never edited after)."""

    method: str = "demo"
    taxonomy: str = "online-3"  # category id + level, e.g. "near-online-2"
    lab: str = "sim"  # one of LAB_KINDS
    sut: SutDescription = field(default_factory=SutDescription)
    power_meter: InstrumentConfig = field(default_factory=InstrumentConfig)
    #: the SUT's power inputs, summed; empty = ``power_meter`` is the one input (shorthand)
    power_inputs: tuple[PowerInput, ...] = ()
    temperature_meter: InstrumentConfig = field(default_factory=InstrumentConfig)
    operator: str = ""
    station: str = ""
    classification_reason: str = ""
    #: the classification questions as answered (attribute → answer), so a repeated set-up
    #: shows the answers that gave ``taxonomy``, not the questions' defaults
    classification_answers: dict[str, Any] = field(default_factory=dict)
    #: local-fio: size of the scratch file created for a target that does not exist yet;
    #: "" = create none (a missing target is then refused)
    target_size: str = ""
    #: local-fio: the target paths (block devices, existing files) the operator typed to allow
    #: overwriting them, comma separated (the field keeps its first name for stored runs)
    confirm_device: str = ""
    #: the wizard's instrument connection test: "passed: …", or "OVERRIDE: …" when the
    #: operator went on without a passed test ("" = not started from the wizard)
    instrument_check: str = ""
    #: the earlier run whose range plan the operator confirmed (the range advisor, method-notes
    #: §3); "" = this run finds its ranges with its own ranging pass
    range_plan_from: str = ""
    #: local-fio: write file targets through the page cache although their file system takes
    #: direct IO (disclosed with the workload engine on the report); False: direct wherever
    #: the file system allows it
    buffered_io: bool = False

    @property
    def category(self) -> str:
        """``online-3`` → ``online``; ``near-online-2`` → ``near-online``."""
        head, _, level = self.taxonomy.rpartition("-")
        return head if level.isdigit() else self.taxonomy

    @property
    def level(self) -> int | None:
        _, _, level = self.taxonomy.rpartition("-")
        return int(level) if level.isdigit() else None

    def snapshot(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class PhaseInfo:
    """One planned phase of a run, as the sequencer will execute it."""

    index: int
    kind: PhaseKind
    name: str  # "Conditioning", "MW1", "Ready idle", "COM deduplication" …
    profile: str | None  # profile name for workload phases
    planned_s: float  # planned duration in seconds (estimate for search/prefill)
    stabilisation_intervals: int = 0
    measurement_intervals: int = 0


@dataclass(frozen=True)
class IntervalRecord:
    """One closed (one-minute, in the compliant method) interval of a phase (method-notes §4)."""

    phase_index: int
    profile: str | None
    index: int  # 0-based within the phase
    start_s: float  # seconds since run start
    end_s: float
    avg_power_w: float  # nan if no usable sample
    n_power_samples: int
    ops_rate: float  # IOPS or MiB/s (nan for idle)
    ops_unit: str  # "IOPS" | "MiB/s" | ""
    avg_response_ms: float
    ep: float  # periodic efficiency O_i / P_i
    wma: float  # weighted moving average of ep (nan until defined)
    in_measurement: bool
    stable: bool | None  # verdict so far for measurement intervals, None before
    attempt: int = 1  # the phase attempt this interval belongs to (>1 after a pause)


#: why a phase attempt ended when the operator paused the run (the phase restarts, §2)
PAUSE_REASON = "paused by the operator"
#: the ready-idle metric (method-notes §4: raw capacity per watt)
IDLE_METRIC = "EP_RI"
#: the one order metrics are shown in everywhere (reports, history, compare): the seed's sample
#: Test Data Report's, idle first, then RR RW SR SW MW1 MW2
METRIC_ORDER = (IDLE_METRIC, "EP_RR", "EP_RW", "EP_SR", "EP_SW", "EP_MW1", "EP_MW2")


def metric_rank(name: str) -> int:
    """Sort key of :data:`METRIC_ORDER`; any other metric (a COM check) ranks after them all."""
    return METRIC_ORDER.index(name) if name in METRIC_ORDER else len(METRIC_ORDER)


def in_metric_order(names: Iterable[str]) -> list[str]:
    """The names once each, the Emerald metrics first in :data:`METRIC_ORDER`, any others after
    them in the order given (the sort is stable)."""
    return sorted(dict.fromkeys(names), key=metric_rank)


@dataclass(frozen=True)
class MetricResult:
    """A reported metric (EP_MW1 … EP_RI) with its validity; invalid values are never shown
    as if valid (reports print the reason instead)."""

    name: str  # EP_RR …
    value: float
    unit: str  # IOPS/W | MiB/s/W | GB/W
    valid: bool
    reason: str = ""  # why INVALID
    run_length_s: float = 0.0
    avg_power_w: float = float("nan")
    ops_rate: float = float("nan")  # IOPS, MiB/s, or GB (raw capacity) for EP_RI
    ops_unit: str = ""
    avg_response_ms: float = float("nan")
    phase_index: int | None = None


# --- the audit trail: QA's entries on a run (stored by app.storage.audit) ----------------------

class AuditKind(StrEnum):
    NOTE = "note"
    DISPOSITION = "disposition"
    COM_RESULT = "com_result"  # a technician's heuristic COM result (docs/method-notes.md §2)
    APPROVAL = "approval"  # QA signs one revision of the record


#: entries that change a verdict of the report, so each one starts a new record revision
VERDICT_KINDS = frozenset({AuditKind.DISPOSITION, AuditKind.COM_RESULT})


class Disposition(StrEnum):
    ACCEPTED = "accepted"
    REJECTED = "rejected"


class ComOutcome(StrEnum):
    """What the technician's heuristic check of one COM showed."""

    PASSED = "passed"
    NOT_PASSED = "not-passed"


@dataclass(frozen=True)
class AuditEntry:
    """An audit entry as read back (``run_id`` is the run's public id)."""

    entry_id: int
    run_id: str
    kind: AuditKind
    disposition: Disposition | None
    text: str
    author: str
    created_wall: str
    subject: str | None = None  # COM_RESULT: the COM id
    outcome: ComOutcome | None = None  # COM_RESULT
    revision: int | None = None  # APPROVAL: the record revision approved
    record_sha256: str | None = None  # APPROVAL: that revision's hash
    hash_format: str | None = None  # APPROVAL: the hash's byte form (None: storwatt-record/1)
    verdict_shown: str | None = None  # APPROVAL: the compliance verdict as QA saw it …
    rules_version: int | None = None  # … and the rules version that derived it
    #: APPROVAL of a SIMULATED or NON-COMPLIANT revision, ACCEPTED disposition: why, as confirmed
    confirmation: str | None = None
    #: on which database the entry was made (None: before revision 0017, not recorded)
    made_on: str | None = None
    #: who inserted it (revision 0022): the login, set by the lab server (the client cannot),
    #: or "station NAME, OS account USER" on a station's single-user file; None: not recorded
    db_role: str | None = None

    @property
    def when(self) -> str:
        return wall_text(self.created_wall)

    @property
    def what(self) -> str:
        """``note``, ``ACCEPTED``, ``COM parity-raid PASSED``, ``APPROVED revision 2``."""
        if self.kind is AuditKind.DISPOSITION and self.disposition is not None:
            return self.disposition.upper()
        if self.kind is AuditKind.COM_RESULT and self.outcome is not None:
            return f"COM {self.subject} {self.outcome.upper().replace('-', ' ')}"
        if self.kind is AuditKind.APPROVAL:
            return f"APPROVED revision {self.revision}"
        return "note"

    def describe(self) -> str:
        confirmed = f" (confirmed: {self.confirmation})" if self.confirmation else ""
        return f"{self.when}  {self.what} by {self.author}: {self.text}{confirmed}"


def wall_text(wall: str) -> str:
    """``2026-11-23 02:18:08 UTC`` for a stored ISO 8601 UTC time: how every view prints the
    time of an entry or a revision."""
    return f"{wall[:19].replace('T', ' ')} UTC"
