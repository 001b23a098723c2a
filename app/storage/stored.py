"""The read model of a stored run: what reports, the history GUI and the CLI are built on.

Everything is frozen. Times are **run-relative seconds** (0 = run start on the station
clock) everywhere: phases, samples, intervals, log events. "No value" is ``NaN`` in arrays and
in float fields (SQL ``NULL``), so a missing volts reading and a NaN reading look the same.
Sample arrays are read-only numpy arrays sorted by time; use :meth:`PowerArrays.between` to
cut a phase or interval out of them without copying.

Every sample, slice and interval carries the placement the recorder gave it when it arrived
(phase attempt, interval index, :class:`~app.core.records.Window`), and the run keeps its phase
attempts and the resolved method it ran: views select by these, they never re-derive a window.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol, TypeVar

import numpy as np

from app.rules.com_verdict import ComRecord, ComVerdict, com_verdicts, open_com_states
from app.rules.compliance import ComplianceFacts, ComplianceVerdict, Criterion, assess_compliance
from app.method.model import Method
from app.method.record import method_from_record
from app.metrics.max_power import MaximumPower, maximum_power
from app.metrics.steady_state import SteadyStateVerdict
from app.core.records import (ADDED_FIELD, AuditEntry, InstrumentConfig, IntervalRecord,
                              MetricResult, PhaseInfo, PhaseStatus, PowerInput, RunConfig,
                              RunStatus, SutDescription, Window, sut_from_dict)
from app.rules.run_outcome import RunVerdict, run_outcome, run_verdict
from app.sequencer.capacity_optimisation import is_com_metric
from app.sequencer.events import HistogramReady, Resumption, SearchResult
from app.sequencer.range_plan import RangePlan
from app.storage.power_inputs import StoredPowerInput
from app.storage.record_cache import StoredRecordHash
from drivers.interfaces import (EXCLUDING_FLAGS, InstrumentIdentity, WorkloadInterval,
                                WorkloadResult)



class VerdictFacts(ComplianceFacts, ComRecord, Protocol):
    """What a run summary's verdicts read of its record: the compliance criteria and each
    COM's state (:class:`app.storage.run_facts.RunFacts`, loaded with the run list)."""

    @property
    def metrics(self) -> Sequence[KeyMetric]: ...


T = TypeVar("T")

#: a run summary built without its record's facts: shown as not compliant, saying why
NOT_DERIVED = ComplianceVerdict((Criterion("Derived verdict", False,
                                           "not derived: the run list was built without "
                                           "the run's record"),))


def per_phase(phase_index: np.ndarray, values: dict[int, int], missing: int) -> np.ndarray:
    """``values[phase]`` for each entry's phase (``missing`` where absent): one vector
    operation per phase, not a Python look-up per sample (issue 27)."""
    out = np.full(len(phase_index), missing, dtype=np.int64)
    for phase in np.unique(phase_index).tolist():
        if phase in values:
            out[phase_index == phase] = values[phase]
    return out


def frozen_array(values: Any, dtype: Any) -> np.ndarray:
    array = np.asarray(values, dtype=dtype)
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class PowerArrays:
    """Power meter samples, one entry per sample, sorted by ``t``.

    ``flags`` holds a frozenset of flag names per sample (``drivers.interfaces.FLAG_*``);
    ``usable`` is the mask of samples that may enter an average (method-notes §3).
    """

    phase_index: np.ndarray  # int64
    t: np.ndarray  # float64, run-relative s
    watts: np.ndarray
    volts: np.ndarray
    amps: np.ndarray
    pf: np.ndarray
    freq_hz: np.ndarray
    range_v: np.ndarray
    range_a: np.ndarray
    uncertainty_pct: np.ndarray
    flags: np.ndarray  # object: frozenset[str]
    attempt: np.ndarray  # int64, 1-based phase attempt
    interval: np.ndarray  # int64, interval index in its attempt, −1 = none
    window: np.ndarray  # int64, app.core.records.Window

    def __len__(self) -> int:
        return len(self.t)

    @cached_property
    def usable(self) -> np.ndarray:
        """Read-only, derived once: reports and views ask for it many times (issue 27)."""
        clean = np.fromiter((not (f & EXCLUDING_FLAGS) for f in self.flags), bool, len(self))
        return frozen_array(clean & ~np.isnan(self.watts), bool)

    def measured_in(self, attempts: dict[int, int]) -> np.ndarray:
        """Mask of samples in the measurement window of their phase's attempt
        ``attempts[phase_index]`` (the samples a phase metric averaged, usable or not)."""
        return (self.window == Window.MEASUREMENT) & (self.attempt == per_phase(
            self.phase_index, attempts, -1))

    def between(self, t_start: float, t_end: float) -> PowerArrays:
        """Samples with ``t_start <= t < t_end`` (views, no copy)."""
        lo, hi = np.searchsorted(self.t, [t_start, t_end], side="left")
        return PowerArrays(**{f.name: getattr(self, f.name)[lo:hi] for f in fields(self)})

    def for_phase(self, index: int) -> PowerArrays:
        mask = self.phase_index == index
        return PowerArrays(**{f.name: getattr(self, f.name)[mask] for f in fields(self)})


@dataclass(frozen=True, eq=False)
class TemperatureArrays:
    phase_index: np.ndarray
    t: np.ndarray
    celsius: np.ndarray
    flags: np.ndarray  # object: frozenset[str]
    attempt: np.ndarray
    interval: np.ndarray
    window: np.ndarray

    def __len__(self) -> int:
        return len(self.t)

    @cached_property
    def usable(self) -> np.ndarray:
        """Read-only, derived once: reports and views ask for it many times (issue 27)."""
        clean = np.fromiter((not (f & EXCLUDING_FLAGS) for f in self.flags), bool, len(self))
        return frozen_array(clean & ~np.isnan(self.celsius), bool)


@dataclass(frozen=True)
class StoredPhase:
    """A planned phase and what happened to it. ``attempts`` > 1: restarted after a pause
    (its earlier attempt's samples are kept; ``t_start`` is the last attempt's start)."""

    info: PhaseInfo
    status: PhaseStatus
    attempts: int
    t_start: float | None
    t_end: float | None
    error: str
    workload: WorkloadResult | None  # totals, engine and job file as run
    #: a preconditioning phase's PTS steady-state verdict as the sequencer judged it
    #: (method-notes §5): views format it, none judges again; None for other phases and for
    #: runs stored before revision 0020, which kept no verdict
    steady_state: SteadyStateVerdict | None = field(default=None, metadata={ADDED_FIELD: True})

    @property
    def index(self) -> int:
        return self.info.index


@dataclass(frozen=True)
class StoredAttempt:
    """One attempt of a phase, as the sequencer announced and ended it (run-relative s)."""

    phase_index: int
    attempt: int
    t_start: float
    t_end: float | None
    status: PhaseStatus
    error: str
    window_start_s: float  # the attempt's measurement window; equal bounds = none
    window_end_s: float

    @property
    def has_window(self) -> bool:
        return self.window_end_s > self.window_start_s


@dataclass(frozen=True)
class StoredWorkloadSlice:
    """A workload interval (run-relative times; per-slice latency bins are not stored — the
    phase's merged histogram is in ``StoredRun.histograms``), with the attempt it belongs to
    and whether most of it lies in that attempt's measurement window."""

    phase_index: int
    interval: WorkloadInterval
    attempt: int = 1
    window: Window = Window.OUTSIDE


@dataclass(frozen=True)
class StoredEvent:
    """One line of the run log."""

    t: float  # run-relative s
    level: str
    message: str
    phase_index: int | None


class KeyMetric(NamedTuple):
    """A stored metric as a run list shows it (a tuple: 70,000 of them are built per load)."""

    name: str
    value: float  # NaN when not computed
    unit: str
    valid: bool
    reason: str


@dataclass(frozen=True)
class RunSummary:
    """One run of a run list — the start page, ``storwatt runs list``, the QA history — with
    its key metrics and latest QA disposition (no samples, no configuration JSON)."""

    run_id: str
    status: RunStatus
    method_name: str
    method_version: str
    method_compliant: bool
    taxonomy: str
    lab: str
    operator: str
    station: str
    sut: str  # "vendor model s/n serial"
    started_wall: str  # ISO 8601 UTC
    finished_wall: str | None
    planned_s: float
    duration_s: float | None
    error: str
    metrics: tuple[KeyMetric, ...] = ()
    disposition: str = ""  # latest QA disposition ("accepted"/"rejected") or ""
    disposition_author: str = ""
    haystack: str = field(default="", compare=False, repr=False)  # lower-case search text
    #: what the run's verdict reads (app.storage.run_facts.RunFacts); None: not loaded
    facts: VerdictFacts | None = field(default=None, compare=False, repr=False)

    @cached_property
    def compliance(self) -> ComplianceVerdict:
        """Derived from the run's record (app.rules.compliance) on first use, never
        ``method_compliant``, the method file's claim."""
        return assess_compliance(self.facts) if self.facts is not None else NOT_DERIVED

    @property
    def invalid_metrics(self) -> int:
        return sum(not m.valid for m in self.metrics)

    @property
    def any_invalid(self) -> bool:
        return self.invalid_metrics > 0

    @cached_property
    def coms(self) -> tuple[ComVerdict, ...]:
        """Each COM's state derived from the record, the technician's audited results
        included (``app.rules.com_verdict``); () for a summary built without its facts."""
        return com_verdicts(self.facts) if self.facts is not None else ()

    @cached_property
    def verdict(self) -> RunVerdict:
        """The same wording and tone on the start page, the run header, the history, compare
        and ``runs show``."""
        return run_verdict_of(self)

    @property
    def status_text(self) -> str:
        return self.verdict.text

    @property
    def searched_status(self) -> str:
        """The status words the history searches and sorts on: the status and the measured
        metrics found INVALID — what the database's own query states for 100,000 runs
        (``app.storage.history``). Each COM's state is derived from the SUT description, its
        check and QA's entries, which no query reads: it is shown (``status_text``), not
        searched."""
        invalid = sum(not m.valid for m in self.metrics if not is_com_metric(m.name))
        return run_verdict(self.status, invalid).text

    def metric(self, name: str) -> KeyMetric | None:
        return next((m for m in self.metrics if m.name == name), None)


@dataclass(frozen=True, eq=False)
class StoredRun:
    """A complete stored run. ``samples_sha256`` identifies the stored samples (see
    :func:`app.storage.repository.samples_digest` for the canonical byte form)."""

    run_id: str
    config_snapshot: dict[str, Any]  # RunConfig.snapshot() as stored — do not mutate
    method_name: str
    method_version: str
    method_compliant: bool
    method_json: dict[str, Any] | None  # the resolved method as run (None: stored before 0.2)
    method_sha256: str | None
    status: RunStatus
    started_wall: str  # ISO 8601 UTC
    finished_wall: str | None
    t0: float  # station clock at run start (only meaningful on the recording PC)
    planned_s: float
    duration_s: float | None  # run-relative end (last sample time for INTERRUPTED runs)
    error: str
    workload_engine: str
    phases: tuple[StoredPhase, ...]
    attempts: tuple[StoredAttempt, ...]
    power_meter: InstrumentIdentity | None
    temperature_meter: InstrumentIdentity | None
    metrics: tuple[MetricResult, ...]
    intervals: tuple[IntervalRecord, ...]
    histograms: tuple[HistogramReady, ...]
    search_results: tuple[SearchResult, ...]
    events: tuple[StoredEvent, ...]
    workload: tuple[StoredWorkloadSlice, ...]
    power: PowerArrays
    temperature: TemperatureArrays
    samples_sha256: str
    #: QA's audit trail when the run was loaded, oldest first (``app.storage.audit``); the
    #: latest disposition entry is the run's disposition
    audit: tuple[AuditEntry, ...] = ()
    #: the SUT's power inputs, each with its meter, formula and readings (empty: one meter)
    power_inputs: tuple[StoredPowerInput, ...] = ()
    #: each continuation after an interruption, oldest first (``app/station/resume.py``); a resumed
    #: run's phases were not continuous, so it is never compliant (``app.rules.compliance``)
    resumptions: tuple[Resumption, ...] = ()
    #: the fixed ranges the testing pass held (None: the run did not range its meter)
    range_plan: RangePlan | None = None
    #: each revision's record hash as stored when it was first computed, with its basis
    #: (``app.storage.record_cache``): views use one only while the run's basis matches
    record_hashes: tuple[StoredRecordHash, ...] = ()
    #: the lab database (as shown) where this run's audit entries are added, when it is not
    #: the database the run was loaded from (``app.storage.audit.signoff_home``); not a fact
    signoff_home: str = field(default="", compare=False)
    #: the lab login that stored the run, recorded by the server (revision 0022; None: a
    #: station's own file, or stored before 0022). Provenance, not a fact: a copy of the run
    #: compares equal whoever stored it
    writer_role: str | None = field(default=None, compare=False)

    @property
    def config(self) -> RunConfig:
        return config_from_snapshot(self.config_snapshot)

    @property
    def taxonomy(self) -> str:
        return str(self.config_snapshot.get("taxonomy", ""))

    @property
    def job_files(self) -> dict[int, str]:
        """Phase index → the workload job file as run (phases that ran one)."""
        return {p.index: p.workload.job_text for p in self.phases
                if p.workload is not None and p.workload.job_text}

    def phase(self, index: int) -> StoredPhase:
        return next(p for p in self.phases if p.index == index)

    @property
    def method(self) -> Method | None:
        """The method exactly as the run used it, from the record (None for runs stored
        before the record kept it)."""
        return method_from_record(self.method_json) if self.method_json else None

    def with_record_hashes(self, hashes: tuple[StoredRecordHash, ...]) -> StoredRun:
        """This run with ``hashes`` as its stored record hashes; what was derived once from
        its facts (basis, verdict) is kept, as the hashes are not among the facts."""
        run = replace(self, record_hashes=hashes)
        for derived in ("facts_basis", "compliance"):
            if derived in self.__dict__:
                run.__dict__[derived] = self.__dict__[derived]
        return run

    def once(self, name: str, derive: Callable[[StoredRun], T]) -> T:
        """``derive(self)``, computed once per loaded run and kept with it under ``name``,
        like a cached property: for a value derived from the facts above storage (the record
        hash's basis, :func:`app.storage.record_hash.facts_basis`)."""
        if name not in self.__dict__:
            self.__dict__[name] = derive(self)
        return self.__dict__[name]

    @cached_property
    def compliance(self) -> ComplianceVerdict:
        """Whether this run is a compliant measurement, derived once per loaded run from the
        record alone (app.rules.compliance); ``method_compliant`` is only the method file's
        claim."""
        return assess_compliance(self)

    @cached_property
    def max_power(self) -> MaximumPower:
        """The SUT input's maximum power — highest 1 s window average, highest phase average,
        highest single reading (app.metrics.max_power) — derived once from the stored samples;
        reports and the bundle take it from here, the verifier derives it again."""
        power = self.power
        return maximum_power(power.t, power.watts, power.usable, power.phase_index,
                             {p.index: p.info.name for p in self.phases})

    @property
    def sut(self) -> SutDescription:
        return sut_from_dict(self.config_snapshot.get("sut", {}))

    @cached_property
    def coms(self) -> tuple[ComVerdict, ...]:
        """Each COM's state derived from the record and the audit trail as loaded."""
        return com_verdicts(self)

    @cached_property
    def verdict(self) -> RunVerdict:
        """The run's one-line outcome, as its summary in a run list words it."""
        return run_verdict_of(self)

    def last_attempt(self, phase_index: int) -> StoredAttempt | None:
        """The attempt whose samples count for the phase's figures (the latest one)."""
        found = [a for a in self.attempts if a.phase_index == phase_index]
        return max(found, key=lambda a: a.attempt) if found else None

    def last_attempts(self) -> dict[int, int]:
        """Phase index → number of its last attempt (phases that started)."""
        return {a.phase_index: a.attempt for a in sorted(self.attempts,
                                                         key=lambda a: a.attempt)}

    def attempt_intervals(self, phase_index: int,
                          attempt: int | None = None) -> tuple[IntervalRecord, ...]:
        """Interval records of one attempt of a phase (by default its last), in order."""
        if attempt is None:
            last = self.last_attempt(phase_index)
            attempt = last.attempt if last else 1
        return tuple(r for r in self.intervals
                     if r.phase_index == phase_index and r.attempt == attempt)

    def metric(self, name: str) -> MetricResult | None:
        return next((m for m in self.metrics if m.name == name), None)


def run_verdict_of(run: RunSummary | StoredRun) -> RunVerdict:
    """A stored run's outcome: its metrics and the state of each COM (the COM checks' metrics
    are COM states, not measurements)."""
    if isinstance(run, RunSummary) and run.facts is None:
        return run_outcome(run.status, run.metrics)  # no record to derive the COMs from
    return run_outcome(run.status, run.metrics, open_com_states(run.coms))


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """Only the fields ``cls`` knows: snapshots written by another version still load."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


def config_from_snapshot(snapshot: dict[str, Any]) -> RunConfig:
    """Rebuild the RunConfig a run was started with from its JSON snapshot."""
    data = _known(RunConfig, snapshot)
    data["sut"] = sut_from_dict(snapshot.get("sut", {}))
    for meter in ("power_meter", "temperature_meter"):
        data[meter] = InstrumentConfig(**_known(InstrumentConfig, snapshot.get(meter, {})))
    data["power_inputs"] = tuple(PowerInput(**_known(PowerInput, p))
                                 for p in snapshot.get("power_inputs", ()))
    return RunConfig(**data)
