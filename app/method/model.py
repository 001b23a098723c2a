"""The test method as immutable, validated data.

A method (``resources/methods/*.toml``) declares everything the station must not hard-code:
taxonomy, IO profiles, the phase plan per category, instrument limits, the interval length,
the stability rule and the response-time limit (method-notes intro: "the method is data").
Durations in a phase plan are counted in *intervals* of ``interval_s`` seconds: 60 s in the
compliant method, so they read as minutes there; abbreviated variants shorten ``interval_s``
and the counts and are marked non-compliant.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from app.method.fields import (MAX_PLAN_S, BlockKiB, Celsius, Count, Flag, Ident,
                               IntervalSeconds, Jobs, JobName, Lines, Milliseconds, Name,
                               NonEmpty, Number, OpenPercent, Passes, Percent, Period, Positive,
                               PositiveCount, QueueDepth, RangePercent, Rounds, SilenceSeconds,
                               StallSeconds, Title, WmaPoints)
from app.method.summary import MethodSummary, PlanSummary
from drivers.interfaces import (DEFAULT_SILENCE_LIMIT_S, DEFAULT_STALL_S, ReadingLimits,
                                WorkloadProfile)

KIB = 1024


@dataclass(frozen=True)
class Problem:
    """A rule across keys that a field type cannot check: the key to fix, then any other key
    involved (the loader says which file each comes from), and why."""

    keys: tuple[str, ...]
    why: str


class MethodProblems(ValueError):
    """Raised by the cross-key checks; carries every :class:`Problem` at once."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(f"key '{p.keys[0]}': {p.why}" for p in problems))


class Frozen(BaseModel):
    """Base for method records: immutable, unknown keys rejected (a typo is an error), and no
    NaN or infinity anywhere (see ``app.method.fields`` for the ranges)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class Stream(Frozen):
    """One IO stream of a multi-stream profile (the hot band, method-notes §2): its share of
    all IOs, its mix and its slice of the address range (percent of the target)."""

    name: JobName
    share_pct: OpenPercent
    read_pct: Percent
    pattern: Literal["random", "sequential"]
    block_size_kib: BlockKiB
    offset_pct: Percent = 0.0
    size_pct: RangePercent = 100.0
    #: where inside its range a random stream's offsets fall: ``uniform``, or on the mandated
    #: generator's hot-band curve, crowded at the range's start (method-notes §2, "The
    #: in-band curve"; drivers/fio/hotband_curve.py)
    distribution: Literal["uniform", "reference-hotband-curve"] = "uniform"

    @model_validator(mode="after")
    def _inside_target(self) -> "Stream":
        if self.offset_pct + self.size_pct > 100:
            raise ValueError(f"stream {self.name}: offset_pct {self.offset_pct:g} + size_pct "
                             f"{self.size_pct:g} runs past the end of the target (100 %)")
        if self.distribution != "uniform" and self.pattern != "random":
            raise ValueError(f"stream {self.name}: a {self.distribution} places random IOs; "
                             f"a {self.pattern} stream has none")
        return self

    @property
    def curved(self) -> bool:
        return self.distribution == "reference-hotband-curve"

    def describe(self) -> str:
        """``hot1: 28 % of the IOs, 8 KiB random 70/30 over 10–18 % of the target``."""
        return (f"{self.name}: {self.share_pct:g} % of the IOs, {self.block_size_kib:g} KiB "
                f"{self.pattern} {self.read_pct:g}/{100 - self.read_pct:g} over "
                f"{self.offset_pct:g}–{self.offset_pct + self.size_pct:g} % of the target"
                + (", offsets on the reference generator's in-band curve" if self.curved
                   else ""))

    def as_tuple(self) -> tuple[str, float, float, float, float, bool, int]:
        """The engine-facing form (``WorkloadProfile.streams``)."""
        return (self.name, self.offset_pct, self.size_pct, self.share_pct, self.read_pct,
                self.pattern == "random", int(self.block_size_kib * KIB))


#: the demand-intensity matrix's workload preconditioning phase (method-notes §5, §6)
STEADY_STATE_PHASE = "PTS steady state"

#: the station's default tolerance on a derived profile's achieved rate, in % of its target
#: (method-notes §2, "What ran is judged"): not the specification's number, which states none
DERIVED_RATE_TOLERANCE_PCT = 5.0

def derived_target(reference_rate: float, share_pct: float) -> int:
    """A derived profile's rate from its reference's measured rate (MW2: 25 % of MW1's IOPS;
    at least 2, one per direction). The sequencer asks for it and the achieved-rate rule
    judges the phase against it (method-notes §2)."""
    return max(2, round(reference_rate * share_pct / 100))


#: how far a multi-stream profile's shares may miss 100 % (rounding in a hand-written file)
SHARE_TOLERANCE_PCT = 0.01


class IOProfile(Frozen):
    """One IO profile row of the method (method-notes §2 table).

    A profile with ``streams`` runs them all at once as one workload, each at its share of the
    IOs over its address range (the hot band); its own block size, mix and pattern are then the
    headline figures the tables show, and ``pattern`` decides the metric's unit."""

    name: Name
    title: Title
    block_size_kib: BlockKiB
    read_pct: Percent
    #: 100 = "enough IO to reach the response-time limit / max throughput";
    #: anything else is a percentage of ``intensity_of``'s measured IOPS (MW2 = 25 % of MW1).
    intensity_pct: Percent
    intensity_of: str | None = None
    align_kib: BlockKiB
    pattern: Literal["random", "sequential"]
    metric: str  # EP_MW1 …
    metric_unit: Literal["IOPS/W", "MiB/s/W"]
    streams: tuple[Stream, ...] = ()
    #: an fio iolog (v2/v3) to replay instead of generated IO (docs/method-notes.md §6); the
    #: loader resolves a relative path against the method file's folder and checks the file
    trace: Name | None = None

    @model_validator(mode="after")
    def _unit_follows_pattern(self) -> "IOProfile":
        """The metric is computed from IOPS for a random pattern and MiB/s for a sequential
        one (:attr:`ops_unit`), so a declared unit that disagrees would print one figure
        under the other's unit (docs/method-notes.md, "A metric's unit follows its
        pattern")."""
        expected = f"{self.ops_unit}/W"
        if self.metric_unit != expected:
            raise ValueError(f"profile {self.name}: a {self.pattern} pattern is measured in "
                             f"{self.ops_unit}, so {self.metric} is in {expected}, not "
                             f"{self.metric_unit}")
        return self

    @model_validator(mode="after")
    def _streams_add_up(self) -> "IOProfile":
        if self.trace is not None and (self.streams or self.derived):
            raise ValueError(f"profile {self.name}: a trace replay runs the trace alone, at "
                             "its own pace (no streams, intensity_pct 100)")
        if not self.streams:
            return self
        names = [s.name for s in self.streams]
        if len(set(names)) != len(names):
            raise ValueError(f"profile {self.name}: a stream name is listed twice ({names})")
        if self.derived:  # fio's flow weights set the shares; a rate cap would fight them
            raise ValueError(f"profile {self.name}: a multi-stream profile runs at intensity "
                             f"100 (got intensity_pct {self.intensity_pct:g})")
        return self

    @field_validator("intensity_pct")
    @classmethod
    def _some_io(cls, v: float) -> float:
        if v <= 0:
            raise ValueError("must be above 0 % (a profile without IO measures nothing)")
        return v

    @property
    def derived(self) -> bool:
        """Runs at a share of another profile's measured IOPS instead of being searched."""
        return self.intensity_pct < 100

    def derived_target(self, reference_rate: float) -> int:
        """The rate this profile runs at, from its reference's measured rate."""
        return derived_target(reference_rate, self.intensity_pct)

    @property
    def random(self) -> bool:
        return self.pattern == "random"

    @property
    def ops_unit(self) -> str:
        return "IOPS" if self.random else "MiB/s"

    def at_intensity(self, search: IntensitySearch, step: int, duration_s: float | None,
                     kind: str) -> WorkloadProfile:
        """This profile at intensity step ``step`` of the search: ``step`` outstanding IOs per
        job for a single-stream profile; for a multi-stream one (the hot band) ``step`` ×
        ``search.stream_iops_per_step`` IOPS in all, each stream capped at its share at the
        deepest listed queue depth (method-notes §2). The search probes and the phases that
        run at the intensity it found both build their workload here."""
        if not self.streams:
            return self.to_workload(queue_depth=step, jobs=search.jobs, duration_s=duration_s,
                                    kind=kind)
        return self.to_workload(queue_depth=search.queue_depths[-1], jobs=search.jobs,
                                rate_iops=search.stream_rate(step, self.read_pct),
                                duration_s=duration_s, kind=kind)

    def to_workload(self, queue_depth: int = 16, jobs: int = 1,
                    rate_iops: tuple[int, int] | None = None,
                    duration_s: float | None = None, kind: str = "active") -> WorkloadProfile:
        """The engine-facing form of this profile."""
        return WorkloadProfile(
            name=self.name,
            block_size=int(self.block_size_kib * KIB),
            read_pct=self.read_pct,
            random=self.random,
            align=int(self.align_kib * KIB),
            queue_depth=queue_depth,
            jobs=jobs,
            rate_iops=rate_iops,
            duration_s=duration_s,
            kind=kind,
            streams=tuple(s.as_tuple() for s in self.streams),
            curved_streams=tuple(s.name for s in self.streams if s.curved),
            trace=self.trace,
        )


class ActiveStep(Frozen):
    """One profile of the active test: stabilisation then measurement (method-notes §2)."""

    profile: Name
    stabilisation_intervals: Count
    measurement_intervals: PositiveCount


class Sweep(Frozen):
    """A stepped-intensity section of a plan (docs/method-notes.md §6, the SPC-1-like BSU
    sweep): ``profile`` runs at ``unit_iops`` × n IOPS for each n of ``units`` in turn, with
    ``queue_depth_per_unit`` × n outstanding IOs (capped), each step a measured phase; the
    sweep stops at the first step whose average response time passes the method's limit or
    whose IOPS rose less than ``min_gain_pct`` over the step before
    (:func:`app.metrics.sweep.stop_reason`)."""

    #: the metric of a step is ``<name>_<unit>_<n>`` (``SPC1_BSU_20``)
    name: JobName
    profile: Name
    unit: JobName = "BSU"
    #: a Business Scaling Unit asks for 50 IOPS (spc1-power-framework seed, §II)
    unit_iops: Positive = 50.0
    units: NonEmpty[PositiveCount]
    #: the seed's scaling: depth 2 at 1 BSU, 4 at 2 BSUs … (one more IO every 25 IOPS)
    queue_depth_per_unit: PositiveCount = 2
    max_queue_depth: QueueDepth = 256
    stabilisation_intervals: Count = 0
    measurement_intervals: PositiveCount = 1
    #: "IOPS stop rising": a step that gains less than this over the previous one ends it
    min_gain_pct: Percent = 2.0

    @field_validator("units")
    @classmethod
    def _rising_units(cls, v: tuple[int, ...]) -> tuple[int, ...]:
        if any(b <= a for a, b in zip(v, v[1:])):
            raise ValueError(f"units must rise strictly, each step asking for more IO than the "
                             f"last (got {list(v)})")
        return v

    def metric(self, units: int) -> str:
        """``SPC1_BSU_20``: the stored metric of the step at ``units``."""
        return f"{self.name}_{self.unit}_{units}"

    def phase_name(self, units: int) -> str:
        return f"{self.name} {self.unit} {units}"

    def rate_iops(self, units: int) -> int:
        return max(1, round(self.unit_iops * units))

    def queue_depth(self, units: int) -> int:
        return min(self.max_queue_depth, self.queue_depth_per_unit * units)

    def step_intervals(self) -> int:
        return self.stabilisation_intervals + self.measurement_intervals


class DemandIntensity(Frozen):
    """The PTS demand-intensity matrix (docs/method-notes.md §6; pts-synthetic-workload seed):
    ``profile`` at every thread count × queue depth, unthrottled, each cell a measured phase
    on the sweep mechanism (metric ``<name>_T<t>_Q<q>``). The matrix runs whole — the seed
    compares every loop — and the reports mark each thread loop's saturation point and the
    sweet spot under each response-time ceiling (:mod:`app.metrics.demand_intensity`)."""

    name: JobName = "DI"
    profile: Name
    threads: NonEmpty[Jobs] = (2, 4, 8, 16)
    queue_depths: NonEmpty[QueueDepth] = (1, 2, 4, 8, 16, 32)
    stabilisation_intervals: Count = 0
    measurement_intervals: PositiveCount = 1
    #: saturation: the first queue depth of a thread loop after which the next depth gains
    #: less than this much IOPS (project reading, method-notes §6)
    saturation_gain_pct: OpenPercent = 10.0
    #: the sweet-spot table: the highest IOPS whose average response time is within each
    ceilings_ms: NonEmpty[Milliseconds] = (1.0, 2.0, 5.0, 10.0, 30.0)
    #: workload-dependent preconditioning before the cells (the seed's "Run Workload
    #: Dependent PC – RND 8KiB RW65; T4Q8" to steady state): one round per interval at these
    #: threads × depth until the PTS steady state (method-notes §5) or this many rounds; 0 = none
    steady_state_rounds: Count = 0
    steady_state_threads: Jobs = 4
    steady_state_queue_depth: QueueDepth = 8
    steady_state_window: Rounds = 5
    steady_state_range_pct: OpenPercent = 20.0
    steady_state_slope_pct: OpenPercent = 10.0

    @model_validator(mode="after")
    def _window_fits(self) -> "DemandIntensity":
        if 0 < self.steady_state_rounds < self.steady_state_window:
            raise ValueError(f"steady_state_rounds {self.steady_state_rounds} is fewer than "
                             f"one steady_state_window ({self.steady_state_window} rounds)")
        return self

    @field_validator("threads", "queue_depths")
    @classmethod
    def _rising(cls, v: tuple[int, ...]) -> tuple[int, ...]:
        if any(b <= a for a, b in zip(v, v[1:])):
            raise ValueError(f"must rise strictly (got {list(v)})")
        return v

    def cells(self) -> tuple[tuple[int, int], ...]:
        """(threads, queue depth) in run order: each thread loop steps its queue depths."""
        return tuple((t, q) for t in self.threads for q in self.queue_depths)

    def metric(self, threads: int, qd: int) -> str:
        return f"{self.name}_T{threads}_Q{qd}"

    def phase_name(self, threads: int, qd: int) -> str:
        return f"{self.name} T{threads} Q{qd}"

    def step_intervals(self) -> int:
        return self.stabilisation_intervals + self.measurement_intervals


class PhasePlan(Frozen):
    """The four continuous phases for a set of taxonomy categories."""

    name: Name
    categories: NonEmpty[Name]
    prefill: Flag = True
    prefill_block_kib: BlockKiB = 256
    #: how many times the pre-fill writes the whole target (PTS preconditioning: "WIPC 2x
    #: user capacity SEQ 128KiB", method-notes §5; Emerald: once)
    prefill_passes: Passes = 1
    #: abbreviated variants only: stop the pre-fill after this many intervals (None = fill the
    #: whole target, as the method asks)
    prefill_max_intervals: PositiveCount | None = None
    conditioning_profile: Name | None = None
    conditioning_intervals: Count = 0
    #: may be empty when the plan has a ``sweep`` or a ``demand_intensity`` matrix
    active: tuple[ActiveStep, ...] = ()
    #: a stepped-intensity sweep after the active profiles (docs/method-notes.md §6)
    sweep: Sweep | None = None
    #: the PTS thread × queue-depth matrix after the sweep (docs/method-notes.md §6)
    demand_intensity: DemandIntensity | None = None
    ready_idle_intervals: PositiveCount
    #: every declared COM gets a check of this length, so it needs time (≥ 1 interval)
    com_check_intervals: PositiveCount = 1

    @model_validator(mode="after")
    def _measures_something(self) -> "PhasePlan":
        if not self.active and self.sweep is None and self.demand_intensity is None:
            raise ValueError(f"plan {self.name}: needs active profiles, a sweep or a "
                             "demand_intensity matrix")
        return self


class StabilityRule(Frozen):
    """Weighted moving average of periodic efficiency (method-notes §4, configurable)."""

    wma_points: WmaPoints
    weights: NonEmpty[Number]  # newest first
    tolerance_pct: OpenPercent
    #: how far the EP_i may drift across the measurement window (least-squares line, % of the
    #: window's mean EP): the project's reading of the WMA rule, method-notes §4
    max_drift_pct: OpenPercent
    #: stabilisation extends interval by interval while the WMA criterion fails at its end,
    #: up to this many intervals in all (method-notes §4: the WMA shows "when it is appropriate
    #: to start a measurement interval"); a plan's own count above it is never cut
    max_stabilisation_intervals: Count

    @model_validator(mode="after")
    def _weights_match(self) -> "StabilityRule":
        if len(self.weights) != self.wma_points:
            raise ValueError(
                f"weights has {len(self.weights)} entries but wma_points is {self.wma_points}")
        if any(w <= 0 for w in self.weights):
            raise ValueError(f"weights must all be above 0 (got {list(self.weights)})")
        return self


class ResponseTimeRule(Frozen):
    """Response-time limit for 'intensity 100' and the histogram's levels (method-notes §2, §5)."""

    max_avg_ms: Milliseconds
    ceiling_ms: Milliseconds
    confidence_levels: NonEmpty[Number]

    @field_validator("confidence_levels")
    @classmethod
    def _levels_in_range(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        if not v or any(not 0 < x < 100 for x in v):
            raise ValueError("confidence levels must be percentages strictly between 0 and 100")
        return v


class IntensitySearch(Frozen):
    """The first pass that finds 'intensity 100' per profile (method-notes §2)."""

    probe_s: Period  # how long each queue-depth probe runs
    queue_depths: NonEmpty[QueueDepth]  # tried in order until the limit is crossed
    jobs: Jobs = 1
    #: refine between the last probe within the response-time limit and the first over it
    #: until a probe's average is within this % below the limit (project reading, §2)
    tolerance_pct: OpenPercent = 5.0
    #: the first interval of each searched random active profile re-checks the response
    #: time at the chosen intensity; over the limit, the profile restarts lower (§2)
    recheck: Flag = True
    #: the longest a probe waits for its load generator's IO to start (fio client mode: ~2 s
    #: to connect, send the job and lay out the file); the probe is timed from its IO, and
    #: one with no IO by then fails the search (app/sequencer/probe_window.py)
    startup_s: Period = 10.0
    #: a multi-stream profile (the hot band) is probed by total rate, not by outstanding IO:
    #: its probe at listed step n asks for n × this many IOPS in all, every stream capped at
    #: its share and given the deepest listed queue depth (method-notes §2, "How the share is
    #: achieved") — fio's ``flow`` weights, which held the shares before, throttle the
    #: generator itself to a few hundred IOPS
    stream_iops_per_step: Positive = 1000.0
    #: before a profile's probes, its job file runs this long on fio's null engine at every
    #: listed step (method-notes §2, "The generator is never the bottleneck") …
    generator_check_s: Period = 2.0
    #: … and a result above this share of what the generator alone reached is the load
    #: generator's, not the SUT's ("load generator limit reached")
    generator_max_share_pct: OpenPercent = 50.0
    #: a profile run at a share of another's measured rate (MW2) is INVALID when the rate it
    #: achieved over its measurement interval leaves ± this % of its target; not stated, the
    #: station's default applies (:data:`DERIVED_RATE_TOLERANCE_PCT`, method-notes §2)
    derived_rate_tolerance_pct: OpenPercent | None = None

    @property
    def derived_rate_tolerance(self) -> float:
        """The achieved-rate tolerance this method judges by (its own, or the default)."""
        if self.derived_rate_tolerance_pct is None:
            return DERIVED_RATE_TOLERANCE_PCT
        return self.derived_rate_tolerance_pct

    def stream_rate(self, step: int, read_pct: float) -> tuple[int, int]:
        """The total ``rate_iops=R,W`` of a multi-stream profile at search step ``step``; the
        job file gives each stream its share of it, split by the stream's own mix."""
        total = max(2, round(step * self.stream_iops_per_step))
        reads = round(total * read_pct / 100)
        return reads, total - reads

    def max_probes(self, random: bool) -> int:
        """The most probes one profile can take: the list, then for a random profile the
        refinement's bisection of the widest gap between two listed depths."""
        gaps = [b - a for a, b in zip(self.queue_depths, self.queue_depths[1:])]
        widest = max(gaps, default=1)
        refine = math.ceil(math.log2(widest)) if random and widest > 1 else 0
        return len(self.queue_depths) + refine

    @field_validator("queue_depths")
    @classmethod
    def _rising(cls, v: tuple[int, ...]) -> tuple[int, ...]:
        if any(b <= a for a, b in zip(v, v[1:])):
            raise ValueError(f"queue depths must rise strictly, each probe loading the SUT "
                             f"more than the last (got {list(v)})")
        return v


class RangingRule(Frozen):
    """``[ranging]``: how the power meter's fixed ranges are found (method-notes §3).

    ``mode``: ``search`` records the peaks while the intensity search probes each profile
    (no time added); ``dedicated`` adds a ranging pass after the search that runs every
    active profile and ready idle for ``profile_s`` on auto range; ``off`` leaves the meter's
    ranges as configured. Either pass is over before the active sequence starts; the testing
    pass then holds, per profile, the smallest ranges whose rms rating covers the rms maximum
    and whose rating × crest factor covers the peak, both with ``headroom_pct`` to spare.
    """

    mode: Literal["search", "dedicated", "off"] = "off"
    profile_s: Period = 60.0
    headroom_pct: Percent = 10.0
    #: the analyzer's crest-factor setting must be at least this (method-notes §10: ≥ 3)
    min_crest_factor: Positive = 3.0


class AccuracyBand(Frozen):
    """Minimum absolute accuracy below a power level (method-notes §3)."""

    up_to_w: Positive | None = None  # None = no upper bound
    abs_w: Positive


class VoltageRange(Frozen):
    """A nominal supply the method accepts (method-notes §3); a SUT set-up declares one by
    its :attr:`id`, e.g. ``1P-200-240``."""

    phases: Literal[1, 3]
    min_v: Positive
    max_v: Positive

    @model_validator(mode="after")
    def _ordered(self) -> "VoltageRange":
        if self.min_v > self.max_v:
            raise ValueError(f"min_v {self.min_v:g} V is above max_v {self.max_v:g} V")
        return self

    @property
    def id(self) -> str:
        return f"{self.phases}P-{self.min_v:g}-{self.max_v:g}"

    def describe(self) -> str:
        phase = "single phase" if self.phases == 1 else "three phase"
        return f"{self.min_v:g}–{self.max_v:g} V {phase}"


class InletClass(Frozen):
    """An ASHRAE thermal class's allowable inlet range (method-notes §10); the SUT set-up
    declares which class the SUT is specified for."""

    name: Name
    min_c: Celsius
    max_c: Celsius

    @model_validator(mode="after")
    def _ordered(self) -> "InletClass":
        if self.min_c >= self.max_c:
            raise ValueError(f"min_c {self.min_c:g} °C is not below max_c {self.max_c:g} °C")
        return self


class InstrumentLimits(Frozen):
    max_power_interval_s: Period
    max_uncertainty_pct: OpenPercent
    min_accuracy: NonEmpty[AccuracyBand]
    voltage_ranges: NonEmpty[VoltageRange]
    frequency_hz: tuple[Positive, Positive]
    temperature_resolution_c: Positive
    max_temperature_interval_s: Period
    inlet_classes: NonEmpty[InletClass]
    #: flagged power samples (over-range, no data, invalid, uncertainty not evaluable …) a
    #: measurement window may hold before its metric is INVALID (method-notes §3: none)
    max_flagged_power_samples: Count = 0
    #: power readings in a row with bit-identical watts, volts and amps before the next one
    #: is flagged stale (docs/method-notes.md §3, "Fresh readings")
    max_identical_readings: PositiveCount = 10
    #: how far a reading's watts may exceed k·U·I before it is implausible, % (method-notes
    #: §8, "Plausibility of a reading")
    power_plausibility_tolerance_pct: OpenPercent = 5.0

    def reading_limits(self) -> ReadingLimits:
        """The limits a power-meter driver judges each reading by (drivers never read the
        method: these values are passed in)."""
        return ReadingLimits(self.max_uncertainty_pct, self.max_identical_readings,
                             self.power_plausibility_tolerance_pct)

    @field_validator("frequency_hz")
    @classmethod
    def _band(cls, v: tuple[float, float]) -> tuple[float, float]:
        if v[0] > v[1]:
            raise ValueError(f"the lower frequency {v[0]:g} Hz is above the upper {v[1]:g} Hz")
        return v

    @model_validator(mode="after")
    def _declarable(self) -> "InstrumentLimits":
        """A SUT set-up names its supply and class: each name must pick exactly one."""
        for what, names in (("voltage_ranges", [r.id for r in self.voltage_ranges]),
                            ("inlet_classes", [c.name for c in self.inlet_classes])):
            if len(set(names)) != len(names):
                raise ValueError(f"{what} lists one entry twice ({', '.join(names)})")
        return self

    def required_resolution_w(self, watts: float) -> float | None:
        """The "Minimum Accuracy" step for a reading of ``watts``, read as the resolution the
        meter must resolve (method-notes §3): the tightest band that holds it."""
        holding = [b for b in self.min_accuracy if b.up_to_w is None or watts <= b.up_to_w]
        if not holding:
            return None
        return min(holding, key=lambda b: math.inf if b.up_to_w is None else b.up_to_w).abs_w

    def supply(self, declared: str) -> VoltageRange:
        """The voltage range a SUT set-up declared by id; a KeyError lists the choices."""
        for r in self.voltage_ranges:
            if r.id == declared:
                return r
        raise KeyError(f"supply {declared!r} is not one of the method's voltage ranges "
                       f"({', '.join(r.id for r in self.voltage_ranges)})")

    def inlet_class(self, declared: str) -> InletClass:
        """The ASHRAE class a SUT set-up declared; a KeyError lists the choices."""
        for c in self.inlet_classes:
            if c.name == declared:
                return c
        raise KeyError(f"ASHRAE class {declared!r} is not one of the method's inlet classes "
                       f"({', '.join(c.name for c in self.inlet_classes)})")


class ProfileSet(Frozen):
    """The active profiles a category must run, all of them (method-notes §2)."""

    categories: NonEmpty[Name]
    profiles: NonEmpty[Name]


class ComplianceMinimums(Frozen):
    """What a run must meet to be reported as compliant (method-notes §2, §3, §4).

    Only the shipped method states these; a variant cannot set them (the loader refuses), so a
    lab file can shorten a run but never make a shortened run read as compliant. The verdict
    itself is :func:`app.rules.compliance.assess_compliance`."""

    interval_s: Positive
    min_stabilisation_s: Positive
    min_measurement_s: Positive
    min_ready_idle_s: Positive
    max_sample_period_s: Positive
    max_calibration_age_days: PositiveCount
    profile_sets: NonEmpty[ProfileSet]

    def profiles_for(self, category: str) -> tuple[str, ...] | None:
        """The profile set a category must run (None: the method states none for it)."""
        for entry in self.profile_sets:
            if category in entry.categories:
                return entry.profiles
        return None


class ComDefinition(Frozen):
    """A capacity-optimisation method the vendor may declare (method-notes §2 phase 4)."""

    id: Name
    title: Title


class FioSettings(Frozen):
    """``[fio]``: how the station watches a real fio (not a method rule: the same for every
    method, set per method file so a slow target can be given more time)."""

    #: no IO completed for this long → the phase FAILED "fio stalled" (docs/reliability.md)
    stall_s: StallSeconds = DEFAULT_STALL_S




class SamplingSettings(Frozen):
    """``[sampling]``: when a meter that stopped answering ends the run (a station setting,
    set per method file like ``[fio]``)."""

    #: no reply from a meter for this long → the phase FAILED "… silent for N s"
    meter_silence_limit_s: SilenceSeconds = DEFAULT_SILENCE_LIMIT_S


class Method(Frozen):
    """A versioned test method or abbreviated variant of one."""

    name: Ident
    version: Ident
    title: Title
    #: the file's claim only; compliance is derived (:mod:`app.rules.compliance`)
    compliant: Flag
    variant_of: Ident | None = None
    description: Lines = ""
    interval_s: IntervalSeconds
    sample_period_s: Period
    taxonomy_file: Name
    stability: StabilityRule
    response_time: ResponseTimeRule
    search: IntensitySearch
    instruments: InstrumentLimits
    profiles: NonEmpty[IOProfile]
    plans: NonEmpty[PhasePlan]
    coms: NonEmpty[ComDefinition]
    compliance: ComplianceMinimums | None = None
    fio: FioSettings = FioSettings()
    ranging: RangingRule = RangingRule()
    sampling: SamplingSettings = SamplingSettings()

    @property
    def temperature_period_s(self) -> float:
        """How often the thermometer is read: five power periods, within the method's limit."""
        return min(self.sample_period_s * 5, self.instruments.max_temperature_interval_s)

    @model_validator(mode="after")
    def _references_resolve(self) -> "Method":
        """Rules across keys that a field type cannot check; each problem names its keys."""
        problems = self._reference_problems()
        if not problems:  # the run-order rules look profiles up by name
            problems += self._run_order_problems()
        period, limit = self.sample_period_s, self.instruments.max_power_interval_s
        if period > limit:
            problems.append(Problem(("sample_period_s", "instruments.max_power_interval_s"),
                                    f"{period:g} s exceeds instruments.max_power_interval_s "
                                    f"({limit:g} s, method-notes §3)"))
        if period > self.interval_s:
            problems.append(Problem(("sample_period_s", "interval_s"),
                                    f"{period:g} s is longer than interval_s "
                                    f"({self.interval_s:g} s): an interval needs a sample"))
        silence, slowest = self.sampling.meter_silence_limit_s, self.temperature_period_s
        if silence <= max(period, slowest):
            problems.append(Problem(("sampling.meter_silence_limit_s", "sample_period_s"),
                                    f"{silence:g} s is not longer than the slowest meter's "
                                    f"sampling period ({max(period, slowest):g} s): one "
                                    "missed reply would end the run"))
        if self.variant_of is not None and self.compliant:
            problems.append(Problem(("compliant",), f"a variant of {self.variant_of} is "
                                    "abbreviated and must say compliant = false"))
        if problems:
            raise MethodProblems(problems)
        return self

    def _reference_problems(self) -> list[Problem]:
        names = [p.name for p in self.profiles]
        known = f"(profiles: {', '.join(names)})"
        problems = []
        if len(set(names)) != len(names):
            problems.append(Problem(("profiles",), f"a profile name is listed twice {known}"))
        for i, p in enumerate(self.profiles):
            if p.intensity_of is not None and p.intensity_of not in names:
                problems.append(Problem((f"profiles.{i}.intensity_of", "profiles"),
                                        f"profile {p.name}: {p.intensity_of!r} is not a "
                                        f"profile {known}"))
            if p.derived and p.intensity_of is None:
                problems.append(Problem((f"profiles.{i}.intensity_of",
                                         f"profiles.{i}.intensity_pct"),
                                        f"profile {p.name}: intensity_pct {p.intensity_pct:g} "
                                        "(below 100) needs intensity_of, the profile whose "
                                        "measured IOPS it takes a share of"))
        problems += self._share_problems()
        for i, plan in enumerate(self.plans):
            for j, step in enumerate(plan.active):
                if step.profile not in names:
                    problems.append(Problem((f"plans.{i}.active.{j}.profile", "profiles"),
                                            f"plan {plan.name}: unknown profile "
                                            f"{step.profile!r} {known}"))
            problems += self._sweep_problems(i, plan, names, known)
            if plan.conditioning_profile and plan.conditioning_profile not in names:
                problems.append(Problem((f"plans.{i}.conditioning_profile", "profiles"),
                                        f"plan {plan.name}: unknown profile "
                                        f"{plan.conditioning_profile!r} {known}"))
        categories = [c for plan in self.plans for c in plan.categories]
        if len(set(categories)) != len(categories):
            problems.append(Problem(("plans",),
                                    f"a category is in more than one plan ({categories})"))
        ids = [c.id for c in self.coms]
        if len(set(ids)) != len(ids):
            problems.append(Problem(("coms",), f"a COM id is listed twice ({ids})"))
        return problems

    def _sweep_problems(self, i: int, plan: PhasePlan, names: list[str],
                        known: str) -> list[Problem]:
        """A sweep steps an IOPS rate and a demand-intensity matrix the outstanding IO, so
        their profile must be a random (IOPS) profile the steps may load: intensity 100, no
        trace."""
        problems = []
        for section in ("sweep", "demand_intensity"):
            stepped = getattr(plan, section)
            if stepped is None:
                continue
            key = (f"plans.{i}.{section}.profile", "profiles")
            if stepped.profile not in names:
                problems.append(Problem(key, f"plan {plan.name}: unknown {section} profile "
                                             f"{stepped.profile!r} {known}"))
                continue
            p = self.profile(stepped.profile)
            if not p.random or p.derived or p.trace is not None:
                problems.append(Problem(key, f"plan {plan.name}: {section} profile {p.name} "
                                             "must be a random (IOPS) profile at intensity 100 "
                                             "without a trace; the steps set its load"))
        return problems

    def _share_problems(self) -> list[Problem]:
        """A multi-stream profile's shares must add up to 100 %; the problem lists every
        share's key, since any of them may be the one to fix."""
        problems = []
        for i, p in enumerate(self.profiles):
            total = sum(s.share_pct for s in p.streams)
            if p.streams and abs(total - 100) > SHARE_TOLERANCE_PCT:
                shares = ", ".join(f"profiles.{i}.streams.{k}.share_pct = {s.share_pct:g}"
                                   for k, s in enumerate(p.streams))
                problems.append(Problem((f"profiles.{i}.streams",),
                                        f"profile {p.name}: stream shares add up to "
                                        f"{total:g} %, not 100 % ({shares})"))
        return problems

    def _run_order_problems(self) -> list[Problem]:
        """What a run would only find out hours in: a conditioning phase without a workload,
        a derived intensity whose reference has no measured IOPS yet, a plan of weeks."""
        problems = []
        for i, plan in enumerate(self.plans):
            if plan.conditioning_intervals and plan.conditioning_profile is None:
                problems.append(Problem((f"plans.{i}.conditioning_profile",
                                         f"plans.{i}.conditioning_intervals"),
                                        f"plan {plan.name}: {plan.conditioning_intervals} "
                                        "conditioning intervals need a conditioning_profile"))
            measured = set(self.search_profiles(plan))
            if plan.conditioning_intervals:
                problems += self._reference_measured(plan, f"plans.{i}.conditioning_profile",
                                                     plan.conditioning_profile, measured)
            for j, step in enumerate(plan.active):
                problems += self._reference_measured(plan, f"plans.{i}.active.{j}.profile",
                                                     step.profile, measured)
                measured.add(step.profile)  # its metric carries measured IOPS from here on
            if self.ranging.mode == "search" and not self.search_profiles(plan):
                problems.append(Problem(("ranging.mode", f"plans.{i}.active"),
                                        f"plan {plan.name} searches no profile, so a ranging "
                                        "pass during the search would see no load; use mode "
                                        "= \"dedicated\""))
            total_s = self._plan_max_s(plan)
            if total_s > MAX_PLAN_S:
                problems.append(Problem((f"plans.{i}", "interval_s"),
                                        f"plan {plan.name} would last up to {total_s / 3600:g} h "
                                        f"with every COM checked (limit "
                                        f"{MAX_PLAN_S / 3600:g} h); check interval_s, the "
                                        "interval counts, search.probe_s and "
                                        "ranging.profile_s"))
        return problems

    def _reference_measured(self, plan: PhasePlan, key: str, name: str | None,
                            measured: set[str]) -> list[Problem]:
        if name is None or not self.profile(name).derived:
            return []
        profile = self.profile(name)
        if profile.intensity_of in measured:
            return []
        index = [p.name for p in self.profiles].index(name)
        return [Problem((key, f"profiles.{index}.intensity_of"),
                        f"plan {plan.name}: {name} runs at {profile.intensity_pct:g} % of "
                        f"{profile.intensity_of}'s measured IOPS, but {profile.intensity_of} "
                        f"is neither searched in this plan nor run before {name}")]

    def _plan_max_s(self, plan: PhasePlan) -> float:
        """The longest a plan can take, pre-fill aside: timed part, whole search, every COM."""
        return (self.plan_duration_s(plan, len(self.coms)) + self.search_max_s(plan)
                + self.ranging_pass_s(plan) + (plan.prefill_max_intervals or 0) * self.interval_s)

    def ranging_pass_s(self, plan: PhasePlan) -> float:
        """Length of a dedicated ranging pass: each active profile, then ready idle."""
        if self.ranging.mode != "dedicated":
            return 0.0
        return (len(plan.active) + 1) * self.ranging.profile_s

    def search_max_s(self, plan: PhasePlan) -> float:
        """The longest the intensity search of a plan can take (every probe and refinement;
        a re-check that restarts a profile is not counted)."""
        return self.search.probe_s * sum(self.search.max_probes(self.profile(name).random)
                                         for name in self.search_profiles(plan))

    # --- look-ups -------------------------------------------------------------------------
    @property
    def label(self) -> str:
        """``name version`` plus NON-COMPLIANT for abbreviated variants (shown everywhere)."""
        tag = "" if self.compliant else " [NON-COMPLIANT abbreviated variant]"
        return f"{self.name} {self.version}{tag}"

    def profile(self, name: str) -> IOProfile:
        for p in self.profiles:
            if p.name == name:
                return p
        raise KeyError(f"method {self.name} has no profile {name!r}")

    def plan_for(self, category: str) -> PhasePlan:
        """The phase plan for a taxonomy category id (``online``, ``removable`` …)."""
        for plan in self.plans:
            if category in plan.categories:
                return plan
        raise KeyError(f"method {self.name} has no test procedure for category {category!r}")

    def tested_categories(self) -> tuple[str, ...]:
        return tuple(c for plan in self.plans for c in plan.categories)

    def plan_intervals(self, plan: PhasePlan, declared_coms: int = 0) -> int:
        """Length of the timed part of a plan in intervals (prefill and search excluded:
        their length depends on the SUT)."""
        active = sum(s.stabilisation_intervals + s.measurement_intervals for s in plan.active)
        if plan.sweep is not None:  # every step, as if the stop rule never fired
            active += plan.sweep.step_intervals() * len(plan.sweep.units)
        if plan.demand_intensity is not None:
            di = plan.demand_intensity
            active += di.step_intervals() * len(di.cells()) + di.steady_state_rounds
        return (plan.conditioning_intervals + active + plan.ready_idle_intervals
                + plan.com_check_intervals * declared_coms)

    def plan_duration_s(self, plan: PhasePlan, declared_coms: int = 0) -> float:
        return self.plan_intervals(plan, declared_coms) * self.interval_s

    def search_profiles(self, plan: PhasePlan) -> tuple[str, ...]:
        """Profiles at intensity 100 need a search probe; MW2 derives from MW1 (method-notes §2)
        and a trace replay runs at the trace's own pace (§6)."""
        return tuple(s.profile for s in plan.active
                     if self.profile(s.profile).intensity_pct >= 100
                     and self.profile(s.profile).trace is None)

    def phase_names(self, plan: PhasePlan) -> tuple[str, ...]:
        """Phases in execution order (method-notes §2), COM checks omitted: pre-fill → intensity
        search → ranging pass (method-notes §3) → conditioning → active profiles → ready idle."""
        names = ["Pre-fill"] if plan.prefill else []
        if self.search.queue_depths and self.search_profiles(plan):
            names.append("Intensity search")
        if self.ranging.mode == "dedicated":
            names.append("Ranging pass")
        if plan.conditioning_intervals:
            names.append("Conditioning")
        sweep = [plan.sweep.phase_name(n) for n in plan.sweep.units] if plan.sweep else []
        if plan.demand_intensity is not None:
            di = plan.demand_intensity
            sweep += [STEADY_STATE_PHASE] if di.steady_state_rounds else []
            sweep += [di.phase_name(t, q) for t, q in di.cells()]
        return tuple(names + [s.profile for s in plan.active] + sweep + ["Ready idle"])

    def summary(self) -> MethodSummary:
        """Name, version, compliance and per plan the phases and timed duration."""
        return MethodSummary(self.name, self.version, self.title, self.label, self.compliant,
                             self.variant_of, self.interval_s,
                             tuple(self._plan_summary(plan) for plan in self.plans))

    def _plan_summary(self, plan: PhasePlan) -> PlanSummary:
        search_s = self.search_max_s(plan)
        com_s = plan.com_check_intervals * self.interval_s
        excluded = []
        if plan.prefill:
            excluded.append(f"pre-fill up to {plan.prefill_max_intervals * self.interval_s:g} s"
                            if plan.prefill_max_intervals else
                            f"pre-fill of the whole capacity ({plan.prefill_block_kib:g} KiB "
                            "sequential writes)")
        if search_s:
            excluded.append(f"intensity search up to {search_s:g} s")
        if self.ranging_pass_s(plan):
            excluded.append(f"ranging pass {self.ranging_pass_s(plan):g} s")
        note = f"excludes {', '.join(excluded + [f'{com_s:g} s per declared COM'])}"
        return PlanSummary(plan.name, plan.categories, self.phase_names(plan),
                           self.plan_duration_s(plan), search_s, com_s, note)
