"""Driver interfaces: what the sequencer needs from instruments and workload engines.

The domain core (``app``) works against these types and the station clock
(:mod:`drivers.clock`) only. Concrete drivers are chosen and built in a few assembly places,
and nowhere else (tests/test_architecture.py keeps the list): the labs that put a station's
instruments and workload engine together (``app/labs/builder.py``, ``app/labs/local_fio.py``,
``app/labs/simulated.py``), the CLI commands that talk to one instrument or check one target
(``app/cli/cmd_instruments.py``, ``app/cli/cmd_run.py``), and the method loader, which reads a
replay profile's trace with fio's own trace reader (``app/method/loader.py``). These types are
plain dataclasses and ``typing.Protocol`` classes so a driver never needs Qt, SQLAlchemy or the
method model; the app converts its method model into a :class:`WorkloadProfile` before handing
it to an engine.

Time stamps are seconds on the *station clock* (``Clock.now()``), a monotonic clock shared by
the sequencer, the samplers and simulated instruments, so intervals line up without any
wall-clock skew. Wall-clock time is stored once per run, at its start.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, TypeVar, runtime_checkable

#: field metadata of a record field added after storwatt-record/2 was defined
#: (app/storage/record_hash.py): while it holds None (a run stored before it existed) the
#: record's canonical form leaves it out, so that run's hash stays what it was
ADDED_FIELD = "storwatt_record_added"

# ---------------------------------------------------------------------------------------------
# Sample flags. A flagged sample is stored but never averaged silently (method-notes §3).
# ---------------------------------------------------------------------------------------------
FLAG_NO_DATA = "no_data"  # meter reported NAN / "no data" / -1 (first integration not done)
FLAG_OVERRANGE = "overrange"  # INF, 9.9E37, ±999.99E+9, OVR bits, current above fixed range
FLAG_RANGE_CHANGE = "range_change"  # meter changed range during the reading (Chroma -2)
FLAG_INVALID = "invalid"  # meter says the value is invalid (Chroma -3, Hioki ±888.88E+9 …)
FLAG_UNCERTAINTY_HIGH = "uncertainty_high"  # uncertainty above the method's limit (1 %)
FLAG_UNCERTAINTY_UNKNOWN = "uncertainty_unknown"  # range/accuracy unknown: cannot evaluate
FLAG_SENSOR_ERROR = "sensor_error"  # thermometer: open thermocouple, "Sensor Error"
FLAG_GARBAGE = "garbage"  # reply could not be parsed at all
# Set by the phase recorder, not the meter: the reading is good, the SUT's supply is not the
# declared one (method-notes §3); the phase is INVALID but the watts stay in the average.
FLAG_VOLTAGE_OUT_OF_RANGE = "voltage_out_of_range"
FLAG_FREQUENCY_OUT_OF_RANGE = "frequency_out_of_range"
# Set on the sum of several power inputs (method-notes §10, several power inputs): an input
# gave no reading at this instant, or the inputs' readings lie more than half a sample period
# apart; either way the sum is not the SUT's power at one instant, so it is not a number.
FLAG_INPUT_MISSING = "input_missing"
FLAG_INPUTS_MISALIGNED = "inputs_misaligned"
# A reading the interface cannot give at all (PTDaemon's ``RL`` lines carry no frequency): set
# by the driver that knows its protocol, never for a value the interface can give but did not
# (that stays a NaN the rules flag). Not excluding: the watts are good; the supply rule judges
# what was measured and the report discloses what was not (method-notes §3, "not measured by
# this interface").
FLAG_FREQUENCY_NOT_MEASURED = "frequency_not_measured"
# A warning on one input's reading, not a measurement flag: the current is below the span in
# which the model's accuracy formula is trusted (a WT310E below 0.2 A, method-notes §10).
FLAG_LOW_CURRENT = "low_current"
# The reading is not new: the meter says it has not updated since the last reading (WT300
# extended event register), or watts, volts and amps repeated bit for bit longer than the
# method's ``instruments.max_identical_readings`` allows (a frozen meter or a replaying link).
FLAG_STALE = "stale"
# The reading cannot be physical: |PF| > 1, or P > k·U·I·(1 + tolerance) for the wiring's k
# (1 for 1P2W, √3 for 3P3W, 3 for 3P4W; method-notes §8 "Plausibility of a reading").
FLAG_IMPLAUSIBLE = "implausible"

#: Flags that exclude a sample from averages (they stay in storage and reports). A reading
#: whose uncertainty cannot be evaluated is not known to be good (method-notes §3).
EXCLUDING_FLAGS = frozenset(
    {FLAG_NO_DATA, FLAG_OVERRANGE, FLAG_RANGE_CHANGE, FLAG_INVALID, FLAG_SENSOR_ERROR,
     FLAG_GARBAGE, FLAG_UNCERTAINTY_UNKNOWN, FLAG_INPUT_MISSING, FLAG_INPUTS_MISALIGNED,
     FLAG_STALE, FLAG_IMPLAUSIBLE}
)


class AccuracyStatement(Protocol):
    """A meter model's accuracy as the app reads it: the formula it judges each sample's
    uncertainty by, in words for the record and the report. Each driver states it as data
    (:class:`drivers.meters.accuracy.AccuracySpec`); the app never needs more than this."""

    def describe(self) -> str:
        """Every range's formula, the crest factor and the trusted current span."""
        ...


#: a meter silent this long fails the phase: longer than one full reconnect of a driver with
#: its default settings (``Instrument.reconnect_span_s``: 11.4 s), so a meter that comes back
#: within one reconnect only leaves a logged gap (docs/reliability.md). The method's default
#: ``[sampling] meter_silence_limit_s`` (app/method/model.py), read by the sampler.
DEFAULT_SILENCE_LIMIT_S = 20.0
#: the fio stall limit when the method does not set one (``[fio] stall_s``,
#: app/method/model.py), read by the fio engine
DEFAULT_STALL_S = 15.0


@dataclass(frozen=True)
class ReadingLimits:
    """The method's limits a power-meter driver judges each reading by. A driver never reads
    the method (it must not import ``app``): the app passes these values in
    (``app.method.model.InstrumentLimits.reading_limits``). The defaults are the shipped
    method's values, for a driver used on its own (``storwatt meter test``); ``None`` turns a
    check off."""

    #: per-sample uncertainty limit, % of the reading (method-notes §3)
    max_uncertainty_pct: float = 1.0
    #: readings in a row with bit-identical watts, volts and amps before the next is stale
    max_identical_readings: int | None = None
    #: how far P may exceed k·U·I before the reading is implausible, % (method-notes §8)
    power_plausibility_tolerance_pct: float = 5.0


class InstrumentError(Exception):
    """A problem talking to an instrument: its message is shown to the technician as is.

    Raise it (or a subclass) with an actionable message: what was expected, what came back,
    and what to check ("WT310 at TCPIP::… answered *IDN? with 'WT200…': switch the meter out of
    WT200 compatibility mode").
    """


class InstrumentTimeout(InstrumentError):
    """The instrument did not answer in time (it may answer again after a reconnect)."""


class InstrumentInterrupted(InstrumentError):
    """A wait for the instrument was ended early: the run is stopping, or the sampler's
    silence limit was reached (``drivers.meters.waits``)."""


class IdentityMismatch(InstrumentError):
    """The instrument at the address is not the one the driver was asked to talk to."""


class InstrumentReplaced(IdentityMismatch):
    """Another instrument answers at the address of the one this session opened (a reconnect
    found a different model or serial). Final for the session: the driver refuses every later
    read and reconnect until :meth:`open` starts a new session, so no reading of the other
    instrument is ever taken as the recorded one's (issue 38)."""

    def __init__(self, message: str, recorded: InstrumentIdentity,
                 found: InstrumentIdentity) -> None:
        super().__init__(message)
        self.recorded = recorded
        self.found = found


class WorkloadError(Exception):
    """The workload engine failed (fio missing, job rejected, exited non-zero, host refused)."""


#: how every simulated instrument's vendor begins (``STORWATT-SIM YOKOGAWA``, ``StorWatt``)
SIMULATED_VENDOR = "STORWATT"
SIMULATOR_IDN_PREFIX = "STORWATT-SIM"


@dataclass(frozen=True, slots=True)
class InstrumentIdentity:
    """Who answered: kept with every run so a report names the exact meter used."""

    vendor: str
    model: str
    serial: str = ""
    firmware: str = ""
    resource: str = ""  # VISA resource string / host:port
    driver: str = ""
    calibration_date: str = ""  # ISO date, entered by the lab (meters do not report it)

    @property
    def simulated(self) -> bool:
        """A simulator answered: the wire simulators prefix their vendor with
        ``STORWATT-SIM`` and the in-process ones are vendor ``StorWatt``; a run on either is
        never compliant (app.rules.compliance)."""
        return self.vendor.upper().startswith(SIMULATED_VENDOR)

    @property
    def key(self) -> str:
        """What tells one instrument from another of its kind: model and serial (the firmware
        and the address may change without the instrument changing)."""
        return f"{self.model} s/n {self.serial}" if self.serial else self.model

    def describe(self) -> str:
        parts = [self.vendor, self.model]
        if self.serial:
            parts.append(f"s/n {self.serial}")
        if self.firmware:
            parts.append(f"fw {self.firmware}")
        return " ".join(p for p in parts if p)


@dataclass(frozen=True, slots=True)
class PowerSample:
    """One reading of the SUT's input power.

    ``uncertainty_pct`` is the relative uncertainty of ``watts`` (method-notes §8:
    ``u = (k_read·reading + k_range·range) / reading``), or ``None`` when it cannot be
    evaluated (then ``FLAG_UNCERTAINTY_UNKNOWN`` is set). Values that the meter marked as
    special (NaN, over-range …) are carried as ``float('nan')`` with a flag, never as numbers.
    """

    t: float  # station clock, seconds
    watts: float
    volts: float = float("nan")
    amps: float = float("nan")
    pf: float = float("nan")
    freq_hz: float = float("nan")
    range_v: float | None = None
    range_a: float | None = None
    uncertainty_pct: float | None = None
    flags: frozenset[str] = frozenset()
    #: the watts reading's resolution as the meter sent it (W per last digit), None unknown
    resolution_w: float | None = None
    #: the power input this reading is of ("" = the SUT's total, or its only meter)
    input: str = ""
    #: the per-input readings a total was summed from, in the configured order (empty when
    #: the SUT has one meter): each keeps its own flags and uncertainty
    inputs: tuple[PowerSample, ...] = ()
    #: the :attr:`InstrumentIdentity.key` of the instrument session that took this reading
    #: ("" when not stated: a sum over inputs, whose parts state theirs)
    instrument: str = ""

    @property
    def usable(self) -> bool:
        """True when the sample may enter an average (no excluding flag, finite watts)."""
        return not (self.flags & EXCLUDING_FLAGS) and self.watts == self.watts


@dataclass(frozen=True, slots=True)
class TemperatureSample:
    """Inlet temperature in °C (resolution 0.1 °C required, method-notes §3)."""

    t: float
    celsius: float
    flags: frozenset[str] = frozenset()
    #: the reading's resolution in °C as the instrument states it: the step of the last digit
    #: of its reply, or what its driver states for the configured mode; None: not stated
    resolution_c: float | None = None
    #: the :attr:`InstrumentIdentity.key` of the instrument session that took this reading
    instrument: str = ""

    @property
    def usable(self) -> bool:
        return not (self.flags & EXCLUDING_FLAGS) and self.celsius == self.celsius


SampleT = TypeVar("SampleT", covariant=True)  # PowerSample or TemperatureSample


@runtime_checkable
class SampledInstrument(Protocol[SampleT]):
    """What the sequencer's sampler needs from any meter: a reading on its grid and a way back
    after the meter stopped answering. Called from one sampler thread only; the driver holds
    its own lock."""

    def open(self) -> InstrumentIdentity: ...

    def close(self) -> None: ...

    def identify(self) -> InstrumentIdentity: ...

    def read(self, t: float) -> SampleT:
        """Take one reading; ``t`` is the station-clock time stamp to put on it.

        Raises :class:`InstrumentError` when the meter cannot be reached; a reply that arrives
        but carries a special value gives a flagged sample instead.
        """
        ...

    def reconnect(self) -> InstrumentIdentity:
        """Reopen the connection after a failure (backing off between attempts) and return who
        answered; raises :class:`InstrumentError` when the meter stays away, and
        ``IdentityMismatch`` when another meter took its address."""
        ...

    def interrupt(self) -> None:
        """Any thread: end a read or reconnect in progress at once (within a fraction of a
        second) with :class:`InstrumentInterrupted`, and every later one until ``open``."""
        ...

    def end_waits_after(self, seconds: float | None) -> None:
        """Let reads and reconnects wait at most ``seconds`` from now (None: their own
        timeouts only); the sampler's silence limit."""
        ...


@runtime_checkable
class PowerMeter(SampledInstrument[PowerSample], Protocol):
    """A power analyzer (method-notes §3: fixed ranges for the testing pass)."""

    @property
    def ranges(self) -> tuple[float, float] | None:
        """Fixed (V, A) ranges in use, or None on auto range."""
        ...

    @property
    def accuracy(self) -> AccuracyStatement | None:
        """The model's accuracy as data (formula per range, crest factor, trusted current
        span), or None when the meter states each sample's uncertainty itself (PTDaemon)."""
        ...


@runtime_checkable
class RangingMeter(PowerMeter, Protocol):
    """A power analyzer the sequencer can range (method-notes §3): auto range for the ranging
    pass, fixed ranges for the testing pass, and the waveform peaks the fixed ranges must hold.

    ``volt_ranges``/``amp_ranges`` list the model's ranges, rising; empty means the meter takes
    any positive value and picks its own range (PTDaemon's ``SR,A,<amps>``). ``crest_factor`` is
    the crest-factor setting the driver configures: a fixed range measures peaks up to
    ``crest_factor`` × range.
    """

    @property
    def volt_ranges(self) -> tuple[float, ...]: ...

    @property
    def amp_ranges(self) -> tuple[float, ...]: ...

    @property
    def crest_factor(self) -> float: ...

    def auto_range(self) -> None: ...

    def set_ranges(self, volts: float, amps: float) -> None: ...

    def peaks(self) -> tuple[float, float]:
        """(voltage peak, current peak) of the latest update, magnitudes of the larger of the
        positive and negative peaks; NaN for a quantity the meter cannot report."""
        ...


@runtime_checkable
class TemperatureMeter(SampledInstrument[TemperatureSample], Protocol):
    """An inlet thermometer (method-notes §3)."""


# ---------------------------------------------------------------------------------------------
# Workload
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WorkloadProfile:
    """One IO profile as a workload engine needs it (converted from the method model).

    ``queue_depth`` × ``jobs`` is the outstanding IO; ``rate_iops`` caps the rate per direction
    (``(read, write)``, method-notes §9: fio needs ``rate_iops=R,W`` or the mix is lost) and is
    the *total* over all jobs and load hosts: engines split it (fio caps each job, method-notes
    §10).
    ``duration_s`` is how long the engine should run before it stops by itself; the sequencer
    may stop it earlier. ``kind`` is ``"active"``, ``"prefill"``, ``"conditioning"``, ``"search"``.
    """

    name: str  # MW1, MW2, RR, RW, SR, SW, PREFILL, HOTBAND …
    block_size: int  # bytes
    read_pct: float  # 0 … 100
    random: bool
    align: int  # bytes
    queue_depth: int = 16
    jobs: int = 1
    rate_iops: tuple[int, int] | None = None
    duration_s: float | None = None
    kind: str = "active"
    #: optional extra streams (hot band): list of (name, offset_pct, size_pct, share_pct,
    #: read_pct, random, block_size) tuples; empty for the plain profiles.
    streams: tuple[tuple[str, float, float, float, float, bool, int], ...] = ()
    #: the streams whose offsets follow the mandated generator's in-band hot-band curve
    #: (drivers/fio/hotband_curve.py) instead of falling uniformly over their range
    curved_streams: tuple[str, ...] = ()
    #: an fio iolog (v2/v3) replayed instead of generated IO (drivers/fio/replay.py); the
    #: block size, mix and pattern above then only describe it
    trace: str | None = None
    #: a pre-fill writes the whole target this many times (PTS preconditioning: 2× the
    #: capacity, method-notes §5); other kinds ignore it
    passes: int = 1

    @property
    def ops_unit(self) -> str:
        """IOPS for random profiles, MiB/s for sequential ones (method-notes §4)."""
        return "IOPS" if self.random else "MiB/s"


@dataclass(frozen=True, slots=True)
class WorkloadInterval:
    """What the workload did between ``t_start`` and ``t_end`` (station clock, seconds).

    ``latency_bins`` uses fio's json+ layout (method-notes §9): total-latency (``lat_ns``,
    submission to completion) bucket midpoint in **nanoseconds** → IO count in this interval,
    only non-empty buckets, reads and writes merged. ``avg_resp_ms`` and ``max_resp_ms`` are
    total latency too, over reads and writes together.
    ``host`` names the load host ("" for local).
    """

    t_start: float
    t_end: float
    read_ios: int
    write_ios: int
    read_bytes: int
    write_bytes: int
    avg_resp_ms: float
    max_resp_ms: float
    latency_bins: dict[int, int] = field(default_factory=dict)
    host: str = ""

    @property
    def duration_s(self) -> float:
        return self.t_end - self.t_start

    @property
    def ios(self) -> int:
        return self.read_ios + self.write_ios

    @property
    def iops(self) -> float:
        d = self.duration_s
        return self.ios / d if d > 0 else float("nan")

    @property
    def mib_per_s(self) -> float:
        d = self.duration_s
        return (self.read_bytes + self.write_bytes) / 2**20 / d if d > 0 else float("nan")


@dataclass(frozen=True, slots=True)
class WorkloadResult:
    """Totals of a finished workload run, reconciled with the engine's own final report."""

    read_ios: int
    write_ios: int
    read_bytes: int
    write_bytes: int
    runtime_s: float
    exit_code: int = 0
    engine: str = ""  # "fio 3.33", "simulated SUT"
    job_text: str = ""  # the job file as run (stored with the run, shown in the report)
    error: str = ""


class DirectionRates:
    """Totals of a record carrying read and write rates (fio's ETA line and a load host's shown
    rate both do): IOPS and MiB/s, with fio's bandwidth in KiB/s."""

    __slots__ = ()
    read_iops: float
    write_iops: float
    read_kib_s: float
    write_kib_s: float

    @property
    def iops(self) -> float:
        return self.read_iops + self.write_iops

    @property
    def mib_per_s(self) -> float:
        return (self.read_kib_s + self.write_kib_s) / 1024


@dataclass(frozen=True, slots=True)
class HostRate(DirectionRates):
    """A load host's IO rate as fio's client displays it while a phase runs (its ETA line):
    fio's rates over its last display period, rounded to 4 digits. For showing only: the
    phase's counted figures are its :class:`WorkloadInterval` s, which arrive at its end.
    ``t`` is when the line arrived (station clock; run time once the sequencer re-based it)."""

    host: str
    t: float
    read_iops: float
    write_iops: float
    read_kib_s: float
    write_kib_s: float


@runtime_checkable
class LiveRates(Protocol):
    """An engine that shows rates while a phase runs before its figures arrive (fio on load
    hosts): ``live_rates()`` hands over the rates seen since the last call."""

    def live_rates(self) -> list[HostRate]: ...


@runtime_checkable
class BlockingControl(Protocol):
    """An engine whose ``start()`` and ``stop()`` wait on processes: fio checks each job file
    with ``fio --parse-only`` and waits for every client's final document, up to seconds
    with load hosts. When ``control_blocks()`` the sequencer makes these calls beside its
    sampling loop, so the meters stay on their grid (issue 27)."""

    def control_blocks(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class HostClock:
    """A load host's clock against the station's wall clock, measured before a run.

    ``offset_s`` is host − station (positive: the host is ahead), ``uncertainty_s`` the
    half-width of the interval the measurement proves it lies in; ``error`` says why a host
    could not be measured (then both are NaN)."""

    host: str
    offset_s: float = float("nan")
    uncertainty_s: float = float("nan")
    error: str = ""

    @property
    def worst_s(self) -> float:
        """The largest offset the measurement allows (NaN when not measured)."""
        return abs(self.offset_s) + self.uncertainty_s


@dataclass(frozen=True, slots=True)
class GeneratorCeiling:
    """What the load generator alone reaches with a profile's own job file: the same file run
    on fio's ``null`` engine, which does no IO at all, so any limit is the generator's
    (method-notes §2, "The generator is never the bottleneck"). ``asked_iops`` is the total
    cap the file carries (a multi-stream profile at a search step; None when uncapped), and
    ``share_error_pts`` the largest distance of a stream's measured share of the IOs from its
    asked share, in percentage points (0 for a single-stream profile)."""

    profile: str
    step: int  # the search step (queue depth, or rate step of a multi-stream profile)
    iops: float
    mib_s: float
    asked_iops: float | None = None
    share_error_pts: float = 0.0
    seconds: float = 0.0

    def kept_up(self, tolerance: float = 0.9, share_pts: float = 0.5) -> bool:
        """The generator delivered the asked rate (to ``tolerance``) in the asked shares."""
        rate_ok = self.asked_iops is None or self.iops >= tolerance * self.asked_iops
        return rate_ok and self.share_error_pts <= share_pts


@dataclass(frozen=True, slots=True)
class StreamPattern:
    """One stream of a multi-stream profile as fio's per-IO log showed it in the pre-run:
    its share of all the profile's IOs, its read share, where it went (% of the range) and,
    for a band on the in-band curve, ``curve``: (x % of the band, measured % of the band's
    reads below x, the reference curve's %)."""

    name: str
    share_pct: float
    read_pct: float
    low_pct: float
    high_pct: float
    sequential_pct: float
    uniformity_p: float
    curve: tuple[tuple[float, float, float], ...] = ()


@dataclass(frozen=True, slots=True)
class MeasuredPattern:
    """A profile's access pattern as measured in the null-engine pre-run of its own job file,
    from fio's per-IO log (drivers/fio/access_log.py, method-notes §2): not a log of the
    measured run. ``low_pct``/``high_pct`` bound the offsets in % of the range,
    ``uniformity_p`` is the chi-square p of the offsets over 64 equal slices (uniform), and
    ``source`` says what measured it."""

    profile: str
    ios: int
    seconds: float
    read_pct: float
    sequential_pct: float
    aligned: bool
    uniformity_p: float
    low_pct: float
    high_pct: float
    streams: tuple[StreamPattern, ...] = ()
    source: str = ""
    #: % of the IOs at an offset no other IO of its pass touched, over every job and load host
    #: (drivers/fio/access_log.py); None when not measured (modelled, or stored before issue
    #: 38: left out of the record's canonical form, so that run's hash stays what it was)
    distinct_pct: float | None = field(default=None, metadata={ADDED_FIELD: True})


@runtime_checkable
class WorkloadEngine(Protocol):
    """Drives IO against the SUT. Used from the sequencer thread only.

    Life cycle per profile: ``start(profile)`` → repeated ``poll()`` (returns the intervals that
    completed since the last call, possibly none) → ``stop()`` (idempotent; returns the totals).
    ``running`` turns False when the engine finished by itself (duration reached or failure);
    a failure is reported by ``poll()`` or ``stop()`` raising :class:`WorkloadError`.
    ``live`` says whether ``poll()`` hands over each slice while the profile runs; fio in
    client mode (load hosts) reports only at the end, so the sequencer must not close an
    interval for want of figures that are still coming.
    """

    # read-only: a wrapper (app.labs.local_fio.SutFollowingEngine) passes its engine's on
    @property
    def name(self) -> str: ...

    @property
    def live(self) -> bool: ...

    def check(self) -> str:
        """Verify the engine can run (binary found, version OK, targets safe); returns a
        human-readable description ("fio 3.33 on /dev/sdb"). Raises WorkloadError."""
        ...

    def start(self, profile: WorkloadProfile) -> None: ...

    def generator_ceiling(self, profile: WorkloadProfile, step: int) -> GeneratorCeiling:
        """Run ``profile``'s own job file with no IO behind it for its ``duration_s`` (fio's
        null engine), before the search probes it, and say what the generator alone reached.
        Never touches a target. Raises WorkloadError."""
        ...

    def access_pattern(self, profile: WorkloadProfile) -> MeasuredPattern | None:
        """Run ``profile``'s own job file on fio's null engine with fio's per-IO log on, for a
        short slice, and say what pattern it drew (read share, sequence, uniformity, each
        stream's share and range, a band's curve); None for a replayed trace. Never touches
        a target. Raises WorkloadError."""
        ...

    def poll(self) -> list[WorkloadInterval]: ...

    def stop(self) -> WorkloadResult: ...

    @property
    def running(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class DataSetMeasure:
    """The measured reducibility of a COM data set's written region, read back on the host
    that wrote it (``drivers/fio/data_set.py``): the evidence a data-reduction COM is judged
    against, instead of fio's requested percentages."""

    path: str
    block_size: int
    blocks: int
    distinct_blocks: int
    sampled_bytes: int
    compressed_bytes: int

    @property
    def dedupe_ratio(self) -> float:
        return self.blocks / self.distinct_blocks if self.distinct_blocks else float("nan")

    @property
    def compression_ratio(self) -> float:
        return (self.sampled_bytes / self.compressed_bytes if self.compressed_bytes
                else float("nan"))

    def describe(self) -> str:
        return (f"{self.path}: {self.blocks} blocks of {self.block_size // 1024} KiB, "
                f"{self.distinct_blocks} distinct (dedupe {self.dedupe_ratio:.3f}:1 by hash); "
                f"{self.sampled_bytes / 2**20:.1f} MiB sampled compress to "
                f"{self.compressed_bytes / 2**20:.1f} MiB (zlib {self.compression_ratio:.3f}:1)")
