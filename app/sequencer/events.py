"""Events the sequencer publishes while a run executes.

Listeners (the storage writer, the CLI progress printer, the GUI's Qt bridge) receive them
through a plain callback so the sequencer stays free of Qt and of storage. Listeners are
called on the sequencer thread: they must return quickly (queue the work, never block on IO).
Every time in an event (``t``, sample and slice times, interval bounds) is **run-relative**:
seconds since the run started, stamped once by the sequencer, which works on a
:class:`~app.sequencer.run_clock.RunClock`. No listener keeps a ``t0`` of its own; ``RunStarted.t0``
records the station clock at the start for provenance only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from app.metrics.histogram import ConfidenceLevel, confidence_records
from app.metrics.steady_state import SteadyStateVerdict
from app.core.records import (ADDED_FIELD, IntervalRecord, MetricResult, PhaseInfo, PhaseStatus,
                              Placement, RunConfig, RunStatus, Window)
from app.sequencer.power_inputs import InputIdentity
from app.sequencer.range_plan import RangePlan
from drivers.interfaces import (GeneratorCeiling, HostRate, InstrumentIdentity, MeasuredPattern,
                                PowerSample, TemperatureSample, WorkloadInterval,
                                WorkloadResult)


@dataclass(frozen=True)
class RunStarted:
    run_id: str
    config: RunConfig
    method_name: str
    method_version: str
    method_compliant: bool
    phases: tuple[PhaseInfo, ...]
    t0: float  # station clock at run start (provenance only: every event time is run-relative)
    wall_start_iso: str
    planned_s: float
    #: the resolved method as run (app.method.record.resolved_method); {} only in synthetic
    #: streams that stand in for a sequencer
    method_json: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Resumption:
    """How an INTERRUPTED run was continued (``app/station/resume.py`` decides, storage keeps it).

    The continuation writes into the same run: phases before ``restart_phase`` keep their
    stored results (``carried``); ``redone`` lists completed phases run again because the
    method allows no restart inside them (the active sequence, method-notes §2)."""

    number: int  # 1 for the run's first resumption
    t: float  # run time at which the continuation began
    wall_iso: str
    restart_phase: int
    cut_phase: int | None  # the phase the station stopped in (None: between phases)
    carried: tuple[int, ...]
    redone: tuple[int, ...]
    interruption: str  # the run's stored reason for stopping, as it read when resumed


@dataclass(frozen=True)
class RunResumed:
    """An INTERRUPTED run continues in this process: announced instead of ``RunStarted``.

    ``started`` describes the run as a start would (id, configuration, method, the whole
    plan, the original start time); ``after_seq`` is the last event number the stored record
    holds, so the writer numbers the continuation's events above it (journal import key)."""

    started: RunStarted
    resumption: Resumption
    after_seq: int = 0


@dataclass(frozen=True)
class InstrumentsIdentified:
    power_meter: InstrumentIdentity
    temperature_meter: InstrumentIdentity | None
    workload_engine: str  # "fio 3.33 (local)", "simulated SUT" …
    #: who reads each power input, with its accuracy formula (empty: one power meter)
    power_inputs: tuple[InputIdentity, ...] = ()


@dataclass(frozen=True)
class PhaseStarted:
    """An attempt of a phase begins (attempt > 1: restarted after a pause).

    ``window_start_s``/``window_end_s`` bound the attempt's planned measurement window (equal
    when the phase has none), so the stored attempt says which part of it a metric covers.
    """

    phase: PhaseInfo
    t: float
    attempt: int = 1
    window_start_s: float = 0.0
    window_end_s: float = 0.0


@dataclass(frozen=True)
class StabilisationExtended:
    """The WMA criterion failed at the end of the stabilisation (method-notes §4), so it grows
    by one interval and the attempt's measurement window moves to these bounds; the phase now
    ends ``extension_s`` later than planned."""

    phase_index: int
    attempt: int
    t: float
    stabilisation_intervals: int
    window_start_s: float
    window_end_s: float
    extension_s: float


@dataclass(frozen=True)
class PhaseFinished:
    phase: PhaseInfo
    status: PhaseStatus
    t: float
    error: str = ""
    workload: WorkloadResult | None = None
    attempt: int = 1


@dataclass(frozen=True)
class PowerSamples:
    """Power samples with their place in the record (one :class:`Placement` per sample)."""

    phase_index: int
    samples: tuple[PowerSample, ...]
    placements: tuple[Placement, ...]


@dataclass(frozen=True)
class TemperatureSamples:
    phase_index: int
    samples: tuple[TemperatureSample, ...]
    placements: tuple[Placement, ...]


@dataclass(frozen=True)
class WorkloadIntervals:
    """Workload slices of one attempt; ``windows`` says per slice which window holds most of it
    (the rule the response-time histogram uses)."""

    phase_index: int
    intervals: tuple[WorkloadInterval, ...]
    attempt: int
    windows: tuple[Window, ...]


@dataclass(frozen=True)
class HostRates:
    """Load hosts' rates as fio's client displays them while a phase runs (``HostRate``,
    times run-relative): shown until the phase's counted figures arrive, never stored or
    counted into a metric."""

    phase_index: int
    rates: tuple[HostRate, ...]


@dataclass(frozen=True)
class IntervalClosed:
    interval: IntervalRecord


@dataclass(frozen=True)
class SteadyStateJudged:
    """The PTS steady-state verdict over the workload preconditioning's rounds so far
    (method-notes §5), after a round closed and the verdict changed. Judged once, by the
    sequencer (``app.sequencer.sweep.SweepSteps.judge``); storage keeps the latest with its
    phase and every view formats it, none judges again."""

    phase_index: int
    attempt: int
    verdict: SteadyStateVerdict


@dataclass(frozen=True)
class HistogramReady:
    """Response-time histogram of a phase's measurement interval (fio json+ bins, ns → count)."""

    phase_index: int
    profile: str
    bins: dict[int, int]
    #: level % → response time ms; None where the IO count does not support the level
    confidence_ms: dict[float, float | None]
    ceiling_ms: float
    above_ceiling: int
    #: the phase attempt the histogram belongs to (a resumed run may redo a completed phase)
    attempt: int = 1

    @property
    def ios(self) -> int:
        return sum(self.bins.values())

    def levels(self) -> tuple[ConfidenceLevel, ...]:
        """The confidence levels as every view shows them ("n/a (N IOs)" when unsupported)."""
        return confidence_records(self.confidence_ms, self.ios)


@dataclass(frozen=True)
class SearchResult:
    """Outcome of the intensity-100 search for one profile."""

    profile: str
    queue_depth: int
    jobs: int
    ops_rate: float
    ops_unit: str
    avg_response_ms: float
    rate_iops: tuple[int, int] | None = None
    probes: tuple[tuple[int, float, float], ...] = ()  # (qd, ops_rate, avg_resp_ms)
    #: why the figure is not intensity 100 within the method's tolerance ("load generator
    #: limit reached: …"), or what a re-check before an active profile found; "" otherwise
    note: str = ""
    #: what the load generator alone reached with this profile's job file at each listed
    #: step, on fio's null engine before the probes (method-notes §2)
    generator: tuple[GeneratorCeiling, ...] = ()
    #: the access pattern fio drew from this profile's job file in the same null-engine
    #: pre-run, from its per-IO log (app/sequencer/access_check.py judges it); None when not
    #: measured
    #: (a trace replay, a run stored before the station measured it)
    pattern: MeasuredPattern | None = field(default=None, metadata={ADDED_FIELD: True})
    #: set on a profile that is not searched (MW2 at the rate derived from MW1, a trace
    #: replay at the trace's pace): the row holds only its null-engine pre-run, run before
    #: its active phase, and this says on what basis it ran (method-notes §2); None for a
    #: searched profile
    pre_run_basis: str | None = field(default=None, metadata={ADDED_FIELD: True})

    @property
    def searched(self) -> bool:
        """An intensity search's outcome, not a pre-run-only row."""
        return self.pre_run_basis is None


@dataclass(frozen=True)
class RangesApplied:
    """A power input's ranges changed (method-notes §3): to auto range before a ranging pass,
    or to fixed ranges at a profile boundary, before the phase (and its stabilisation)
    starts. ``key`` is the range plan's profile key; volts and amps are None on auto range."""

    t: float
    phase_index: int
    input_name: str
    key: str
    volts: float | None
    amps: float | None

    @property
    def auto(self) -> bool:
        return self.volts is None


@dataclass(frozen=True)
class RangePlanReady:
    """The fixed ranges of the testing pass are known: from this run's ranging pass or from
    an earlier run of the same SUT (the range advisor); stored with the run."""

    t: float
    plan: RangePlan


@dataclass(frozen=True)
class MetricComputed:
    metric: MetricResult


@dataclass(frozen=True)
class Progress:
    elapsed_s: float
    eta_s: float
    fraction: float  # 0 … 1 of the whole plan
    phase_index: int
    phase_fraction: float


@dataclass(frozen=True)
class LogMessage:
    level: str  # INFO | WARNING | ERROR
    message: str
    t: float
    phase_index: int | None = None


@dataclass(frozen=True)
class TeardownFailed:
    """A piece of the lab did not close cleanly at the end of the run (an instrument left in
    remote, fio not stopped, a simulator's port left open). The run's figures are decided
    already and stand; the technician sees which piece and why, to check it before the next
    run (docs/reliability.md). ``t`` is run-relative, like every event time."""

    component: str  # "power meter", "fio engine", "power input PSU-A" …
    error: str
    t: float

    def describe(self) -> str:
        """The one line every view shows (log, console, stored event)."""
        return f"teardown of the {self.component} failed: {self.error}"


@dataclass(frozen=True)
class RunFinished:
    status: RunStatus
    t: float
    metrics: tuple[MetricResult, ...] = field(default_factory=tuple)
    error: str = ""


RunEvent = (RunStarted | RunResumed | InstrumentsIdentified | PhaseStarted
            | StabilisationExtended | PhaseFinished | PowerSamples
            | TemperatureSamples | WorkloadIntervals | HostRates | IntervalClosed
            | SteadyStateJudged | HistogramReady
            | SearchResult | RangesApplied | RangePlanReady | MetricComputed | Progress
            | LogMessage | TeardownFailed | RunFinished)


class RunListener(Protocol):
    # positional-only: the sequencer passes the event positionally, so ``list.append`` (or any
    # one-argument callable, whatever it names its parameter) is a listener too
    def __call__(self, event: RunEvent, /) -> None: ...
