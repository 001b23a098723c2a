"""The test method as immutable, validated data.

A method (``resources/methods/*.toml``) declares everything the station must not hard-code:
taxonomy, IO profiles, the phase plan per category, instrument limits, the interval length,
the stability rule and the response-time limit (method-notes intro: "the method is data").
Durations in a phase plan are counted in *intervals* of ``interval_s`` seconds: 60 s in the
compliant method, so they read as minutes there; abbreviated variants shorten ``interval_s``
and the counts and are marked non-compliant.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from app.method.summary import MethodSummary, PlanSummary
from drivers.interfaces import WorkloadProfile

KIB = 1024


class Frozen(BaseModel):
    """Base for method records: immutable, unknown keys rejected (a typo is an error)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class IOProfile(Frozen):
    """One IO profile row of the method (method-notes §2 table)."""

    name: str
    title: str
    block_size_kib: float = Field(gt=0)
    read_pct: float = Field(ge=0, le=100)
    #: 100 = "enough IO to reach the response-time limit / max throughput";
    #: anything else is a percentage of ``intensity_of``'s measured IOPS (MW2 = 25 % of MW1).
    intensity_pct: float = Field(gt=0, le=100)
    intensity_of: str | None = None
    align_kib: float = Field(gt=0)
    pattern: Literal["random", "sequential"]
    metric: str  # EP_MW1 …
    metric_unit: Literal["IOPS/W", "MiB/s/W"]

    @property
    def random(self) -> bool:
        return self.pattern == "random"

    @property
    def ops_unit(self) -> str:
        return "IOPS" if self.random else "MiB/s"

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
        )


class ActiveStep(Frozen):
    """One profile of the active test: stabilisation then measurement (method-notes §2)."""

    profile: str
    stabilisation_intervals: int = Field(ge=0)
    measurement_intervals: int = Field(ge=1)


class PhasePlan(Frozen):
    """The four continuous phases for a set of taxonomy categories."""

    name: str
    categories: tuple[str, ...]
    prefill: bool = True
    prefill_block_kib: float = 256
    #: abbreviated variants only: stop the pre-fill after this many intervals (None = fill the
    #: whole target, as the method asks)
    prefill_max_intervals: int | None = Field(default=None, ge=1)
    conditioning_profile: str | None = None
    conditioning_intervals: int = Field(ge=0, default=0)
    active: tuple[ActiveStep, ...]
    ready_idle_intervals: int = Field(ge=1)
    com_check_intervals: int = Field(ge=0, default=0)


class StabilityRule(Frozen):
    """Weighted moving average of periodic efficiency (method-notes §4, configurable)."""

    wma_points: int = Field(ge=1)
    weights: tuple[float, ...]  # newest first
    tolerance_pct: float = Field(gt=0, lt=100)

    @model_validator(mode="after")
    def _weights_match(self) -> "StabilityRule":
        if len(self.weights) != self.wma_points:
            raise ValueError(
                f"weights has {len(self.weights)} entries but wma_points is {self.wma_points}")
        if any(w <= 0 for w in self.weights):
            raise ValueError("weights must all be positive")
        return self


class ResponseTimeRule(Frozen):
    """Response-time limit for 'intensity 100' and the histogram's levels (method-notes §2, §5)."""

    max_avg_ms: float = Field(gt=0)
    ceiling_ms: float = Field(gt=0)
    confidence_levels: tuple[float, ...]

    @field_validator("confidence_levels")
    @classmethod
    def _levels_in_range(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        if not v or any(not 0 < x < 100 for x in v):
            raise ValueError("confidence levels must be percentages strictly between 0 and 100")
        return v


class IntensitySearch(Frozen):
    """The first pass that finds 'intensity 100' per profile (method-notes §2)."""

    probe_s: float = Field(gt=0)  # how long each queue-depth probe runs
    queue_depths: tuple[int, ...]  # tried in order until the limit is crossed
    jobs: int = Field(ge=1, default=1)


class AccuracyBand(Frozen):
    """Minimum absolute accuracy below a power level (method-notes §3)."""

    up_to_w: float | None = None  # None = no upper bound
    abs_w: float = Field(gt=0)


class VoltageRange(Frozen):
    phases: Literal[1, 3]
    min_v: float
    max_v: float


class InstrumentLimits(Frozen):
    max_power_interval_s: float = Field(gt=0)
    max_uncertainty_pct: float = Field(gt=0)
    min_accuracy: tuple[AccuracyBand, ...]
    voltage_ranges: tuple[VoltageRange, ...]
    frequency_hz: tuple[float, float]
    temperature_resolution_c: float = Field(gt=0)
    max_temperature_interval_s: float = Field(gt=0)


class ComDefinition(Frozen):
    """A capacity-optimisation method the vendor may declare (method-notes §2 phase 4)."""

    id: str
    title: str


class Method(Frozen):
    """A versioned test method or abbreviated variant of one."""

    name: str
    version: str
    title: str
    compliant: bool
    variant_of: str | None = None
    description: str = ""
    interval_s: float = Field(gt=0)
    sample_period_s: float = Field(gt=0)
    taxonomy_file: str
    stability: StabilityRule
    response_time: ResponseTimeRule
    search: IntensitySearch
    instruments: InstrumentLimits
    profiles: tuple[IOProfile, ...]
    plans: tuple[PhasePlan, ...]
    coms: tuple[ComDefinition, ...]

    @model_validator(mode="after")
    def _references_resolve(self) -> "Method":
        """Cross-references a field type cannot check; each problem names its key path."""
        problems = self._reference_problems()
        if self.sample_period_s > self.instruments.max_power_interval_s:
            problems.append(("sample_period_s", f"{self.sample_period_s:g} s exceeds "
                             f"instruments.max_power_interval_s "
                             f"({self.instruments.max_power_interval_s:g} s, method-notes §3)"))
        if self.variant_of is not None and self.compliant:
            problems.append(("compliant", f"a variant of {self.variant_of} is abbreviated and "
                             "must say compliant = false"))
        if problems:
            raise ValueError("\n".join(f"key '{key}': {why}" for key, why in problems))
        return self

    def _reference_problems(self) -> list[tuple[str, str]]:
        names = [p.name for p in self.profiles]
        known = f"(profiles: {', '.join(names)})"
        problems = []
        if len(set(names)) != len(names):
            problems.append(("profiles", f"a profile name is listed twice {known}"))
        for i, p in enumerate(self.profiles):
            if p.intensity_of is not None and p.intensity_of not in names:
                problems.append((f"profiles.{i}.intensity_of",
                                 f"profile {p.name}: {p.intensity_of!r} is not a profile {known}"))
            if p.intensity_pct < 100 and p.intensity_of is None:
                problems.append((f"profiles.{i}.intensity_of",
                                 f"profile {p.name}: intensity below 100 needs intensity_of"))
        for i, plan in enumerate(self.plans):
            for j, step in enumerate(plan.active):
                if step.profile not in names:
                    problems.append((f"plans.{i}.active.{j}.profile",
                                     f"plan {plan.name}: unknown profile {step.profile!r} {known}"))
            if plan.conditioning_profile and plan.conditioning_profile not in names:
                problems.append((f"plans.{i}.conditioning_profile",
                                 f"plan {plan.name}: unknown profile "
                                 f"{plan.conditioning_profile!r} {known}"))
        categories = [c for plan in self.plans for c in plan.categories]
        if len(set(categories)) != len(categories):
            problems.append(("plans", f"a category is in more than one plan ({categories})"))
        return problems

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
        return (plan.conditioning_intervals + active + plan.ready_idle_intervals
                + plan.com_check_intervals * declared_coms)

    def plan_duration_s(self, plan: PhasePlan, declared_coms: int = 0) -> float:
        return self.plan_intervals(plan, declared_coms) * self.interval_s

    def search_profiles(self, plan: PhasePlan) -> tuple[str, ...]:
        """Profiles at intensity 100 need a search probe; MW2 derives from MW1 (method-notes §2)."""
        return tuple(s.profile for s in plan.active if self.profile(s.profile).intensity_pct >= 100)

    def phase_names(self, plan: PhasePlan) -> tuple[str, ...]:
        """Phases in execution order (method-notes §2), COM checks omitted: pre-fill → intensity
        search → conditioning → active profiles → ready idle."""
        names = ["Pre-fill"] if plan.prefill else []
        if self.search.queue_depths and self.search_profiles(plan):
            names.append("Intensity search")
        if plan.conditioning_intervals:
            names.append("Conditioning")
        return tuple(names + [s.profile for s in plan.active] + ["Ready idle"])

    def summary(self) -> MethodSummary:
        """Name, version, compliance and per plan the phases and timed duration."""
        return MethodSummary(self.name, self.version, self.title, self.label, self.compliant,
                             self.variant_of, self.interval_s,
                             tuple(self._plan_summary(plan) for plan in self.plans))

    def _plan_summary(self, plan: PhasePlan) -> PlanSummary:
        search_s = (len(self.search.queue_depths) * len(self.search_profiles(plan))
                    * self.search.probe_s)
        com_s = plan.com_check_intervals * self.interval_s
        excluded = []
        if plan.prefill:
            excluded.append(f"pre-fill up to {plan.prefill_max_intervals * self.interval_s:g} s"
                            if plan.prefill_max_intervals else
                            f"pre-fill of the whole capacity ({plan.prefill_block_kib:g} KiB "
                            "sequential writes)")
        if search_s:
            excluded.append(f"intensity search up to {search_s:g} s")
        note = f"excludes {', '.join(excluded + [f'{com_s:g} s per declared COM'])}"
        return PlanSummary(plan.name, plan.categories, self.phase_names(plan),
                           self.plan_duration_s(plan), search_s, com_s, note)
