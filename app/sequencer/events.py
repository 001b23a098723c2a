"""Events the sequencer publishes while a run executes.

Listeners (the storage writer, the CLI progress printer, the GUI's Qt bridge) receive them
through a plain callback so the sequencer stays free of Qt and of storage. Listeners are
called on the sequencer thread: they must return quickly (queue the work, never block on IO).
Time stamps ``t`` are station-clock seconds; ``run_t`` values are seconds since run start.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from app.metrics.histogram import ConfidenceLevel, confidence_records
from app.records import (IntervalRecord, MetricResult, PhaseInfo, PhaseStatus, RunConfig,
                         RunStatus)
from drivers.interfaces import (InstrumentIdentity, PowerSample, TemperatureSample,
                                WorkloadInterval, WorkloadResult)


@dataclass(frozen=True)
class RunStarted:
    run_id: str
    config: RunConfig
    method_name: str
    method_version: str
    method_compliant: bool
    phases: tuple[PhaseInfo, ...]
    t0: float  # station clock at run start
    wall_start_iso: str
    planned_s: float


@dataclass(frozen=True)
class InstrumentsIdentified:
    power_meter: InstrumentIdentity
    temperature_meter: InstrumentIdentity | None
    workload_engine: str  # "fio 3.33 (local)", "simulated SUT" …


@dataclass(frozen=True)
class PhaseStarted:
    phase: PhaseInfo
    t: float


@dataclass(frozen=True)
class PhaseFinished:
    phase: PhaseInfo
    status: PhaseStatus
    t: float
    error: str = ""
    workload: WorkloadResult | None = None


@dataclass(frozen=True)
class PowerSamples:
    phase_index: int
    samples: tuple[PowerSample, ...]


@dataclass(frozen=True)
class TemperatureSamples:
    phase_index: int
    samples: tuple[TemperatureSample, ...]


@dataclass(frozen=True)
class WorkloadIntervals:
    phase_index: int
    intervals: tuple[WorkloadInterval, ...]


@dataclass(frozen=True)
class IntervalClosed:
    interval: IntervalRecord


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
class RunFinished:
    status: RunStatus
    t: float
    metrics: tuple[MetricResult, ...] = field(default_factory=tuple)
    error: str = ""


RunEvent = (RunStarted | InstrumentsIdentified | PhaseStarted | PhaseFinished | PowerSamples
            | TemperatureSamples | WorkloadIntervals | IntervalClosed | HistogramReady
            | SearchResult | MetricComputed | Progress | LogMessage | RunFinished)


class RunListener(Protocol):
    def __call__(self, event: RunEvent) -> None: ...
