"""Whether a stored run is a compliant measurement: derived, never declared.

``compliant = true`` in a method file is only that file's claim: a copy of the compliant method
with 1 s intervals made the same claim. The verdict here is derived from two things a record
holds — the method it ran (its numbers against the method's ``[compliance]`` minimums,
docs/method-notes.md §2, §3) and the run's own facts (the instruments that answered, phase
attempts, calibration dates, the profiles run).

It is a pure function of the stored run, not a stored column: a verdict written at the end of
a run could disagree with the record it summarises (an older station, a recovered journal), a
verdict derived from the record cannot. :attr:`StoredRun.compliance` computes it once per loaded
run and every view (PDF, xlsx, CLI) only formats the :class:`ComplianceVerdict`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Protocol

from app.sequencer.access_check import method_departures
from app.metrics.formatting import format_duration
from app.method.loader import MethodError
from app.method.model import ComplianceMinimums, Method
from app.method.registry import MethodIdentity, identify
from app.method.taxonomy import TaxonomyError, recorded_classification
from app.core.records import PAUSE_REASON, PhaseInfo, PhaseKind, PhaseStatus, RunConfig, RunStatus
from app.sequencer.events import Resumption, SearchResult
from app.sequencer.search import LOAD_GENERATOR_LIMIT, NO_PROBE_WITHIN
from drivers.interfaces import InstrumentIdentity

#: the workload engine of the simulated SUT names itself so (drivers/simulators/engine.py)
SIMULATED_ENGINE_WORD = "simulated"
REAL_INSTRUMENTS = "Real instruments"
RESUMED = "Resumed after interruption"
#: the rules this module judges by; a change of any rule gets the next number, so an approval
#: given under earlier rules shows what it attested beside today's verdict (app.signoff.revisions).
#: Rules 1 (issue 14): the method's numbers and the run's facts; rules 2 (issue 22): also the
#: normative keys against the registry, every metric VALID, the inlet thermometer, every phase
#: continuous, intensity 100 reached. Rules 1 stay derivable: approvals given under them are
#: checked against the verdict they saw (storwatt-record/1). Rules 3 (issue 38): the calibration
#: judged on the day the run ended, not the day it started.
RULES_VERSION = 3
#: the registry entry's normative content (app.method.registry), when nothing deviates
NORMATIVE = "Normative method content"
METHOD_KEY = "Method key "  # + the normative key a deviation names
CONTINUOUS = "Continuous phases"
THERMOMETER = "Inlet thermometer"
METRICS = "Metrics valid"
INTENSITY = "Intensity 100 reached"
ACCESS_PATTERN = "Access pattern (generator pre-run)"
#: an unsearched profile's (MW2's, a trace replay's) own generator check (method-notes §2)
GENERATOR = "Load generator (pre-run of unsearched profiles)"
CLASSIFICATION = "Classification"


# The protocols' members are read-only properties: the records that satisfy them are frozen
# dataclasses, whose fields a protocol attribute (settable) would not match.
class NamedInstrument(Protocol):
    """A power input as the verdict reads it: its name and who measured it."""

    @property
    def name(self) -> str: ...

    @property
    def identity(self) -> InstrumentIdentity | None: ...


class PhaseFacts(Protocol):
    """A stored phase as the verdict reads it (``app.storage.stored.StoredPhase``)."""

    @property
    def info(self) -> PhaseInfo: ...
    @property
    def status(self) -> PhaseStatus: ...
    @property
    def attempts(self) -> int: ...
    @property
    def error(self) -> str: ...
    @property
    def index(self) -> int: ...


class AttemptFacts(Protocol):
    """One attempt of a phase as the verdict reads it (``app.storage.stored.StoredAttempt``)."""

    @property
    def phase_index(self) -> int: ...
    @property
    def attempt(self) -> int: ...
    @property
    def t_start(self) -> float: ...
    @property
    def t_end(self) -> float | None: ...
    @property
    def status(self) -> PhaseStatus: ...
    @property
    def error(self) -> str: ...


class MetricFacts(Protocol):
    """A stored metric as the verdict reads it."""

    @property
    def name(self) -> str: ...

    @property
    def valid(self) -> bool: ...

    @property
    def reason(self) -> str: ...


class ComplianceFacts(Protocol):
    """What the verdict reads of a run: a whole :class:`~app.storage.stored.StoredRun`, or
    the lighter :class:`~app.storage.run_facts.RunFacts` a run list loads for every run."""

    @property
    def method_name(self) -> str: ...

    @property
    def method_version(self) -> str: ...

    @property
    def status(self) -> RunStatus: ...

    @property
    def started_wall(self) -> str: ...

    @property
    def finished_wall(self) -> str | None: ...

    @property
    def workload_engine(self) -> str: ...

    @property
    def phases(self) -> Sequence[PhaseFacts]: ...

    @property
    def attempts(self) -> Sequence[AttemptFacts]: ...

    @property
    def power_meter(self) -> InstrumentIdentity | None: ...

    @property
    def temperature_meter(self) -> InstrumentIdentity | None: ...

    @property
    def resumptions(self) -> Sequence[Resumption]: ...

    @property
    def power_inputs(self) -> Sequence[NamedInstrument]: ...

    @property
    def metrics(self) -> Sequence[MetricFacts]: ...

    @property
    def search_results(self) -> Sequence[SearchResult]: ...

    @property
    def method(self) -> Method | None: ...

    @property
    def config(self) -> RunConfig: ...


@dataclass(frozen=True)
class Criterion:
    """One rule of compliance, whether the run met it, and the evidence either way."""

    name: str
    met: bool
    evidence: str

    @property
    def verdict(self) -> str:
        return "MET" if self.met else "NOT MET"


@dataclass(frozen=True)
class ComplianceVerdict:
    """Every criterion of a run, in a fixed order; compliant only when all are met."""

    criteria: tuple[Criterion, ...]
    #: the method's name, version, normative SHA-256 and relation to the registry
    identity: MethodIdentity | None = None
    rules_version: int = 0  # the rules that derived it (assess_compliance fills it in)

    @property
    def compliant(self) -> bool:
        return all(c.met for c in self.criteria)

    @property
    def failures(self) -> tuple[Criterion, ...]:
        return tuple(c for c in self.criteria if not c.met)

    @property
    def simulated(self) -> bool:
        """A simulated meter or SUT took part: every report page says SIMULATED."""
        return any(c.name == REAL_INSTRUMENTS and not c.met for c in self.criteria)

    @property
    def label(self) -> str:
        return "COMPLIANT" if self.compliant else "NON-COMPLIANT"

    def banner(self) -> str:
        """The page banner of a non-compliant run: ``SIMULATED — NON-COMPLIANT (not met:
        interval length, real instruments) — not a reportable result``."""
        lead = "SIMULATED — " if self.simulated else ""
        return f"{lead}{self.label} (not met: {self._failed_names()}) — not a reportable result"

    def short(self) -> str:
        """``COMPLIANT`` or ``NON-COMPLIANT (not met: interval length, stabilisation)``."""
        names = self._failed_names()
        return self.label + (f" (not met: {names})" if names else "")

    def _failed_names(self) -> str:
        """The failed criteria by name, the method's deviations counted in one entry (``3
        normative method keys``): each is listed with its evidence below the banner."""
        keys = [c for c in self.failures if c.name.startswith(METHOD_KEY)]
        names = [c.name[:1].lower() + c.name[1:] for c in self.failures
                 if not c.name.startswith(METHOD_KEY)]
        if keys:
            at = next(i for i, c in enumerate(self.failures) if c in keys)
            names.insert(at, f"{len(keys)} normative method key" + ("s" if len(keys) > 1 else ""))
        return ", ".join(names)

    def relation(self) -> str:
        """``registered compliant method`` or ``variant of X: N keys differ (…)``."""
        return self.identity.relation() if self.identity else "method not held by the record"

    def method_label(self, name: str, version: str) -> str:
        """What a run list, the history and compare show for the method: ``lab-strict 1.0
        [variant of emerald-block-v3 3.0.0-sw1: 1 key differs (no deviation)]`` and, when the
        run is not compliant, `` (NON-COMPLIANT)``."""
        text = f"{name} {version} [{self.relation()}]"
        return text if self.compliant else f"{text} ({self.label})"

    def method_line(self) -> str:
        """``emerald-block-v3 3.0.0-sw1 · normative SHA-256 … · registered compliant method``."""
        return self.identity.line() if self.identity else "method not held by the record"

    def lines(self) -> list[str]:
        """The verdict and one line per criterion, for the CLI (``runs show``, ``run``)."""
        return [f"Method      {self.method_line()}",
                f"Compliance  {self.label} (derived from the record under rules "
                f"{self.rules_version}, not the method file's claim)"] + [
                    f"  {c.verdict:8} {c.name}: {c.evidence}" for c in self.criteria]

    def as_json(self) -> dict[str, object]:
        identity = self.identity
        return {"compliant": self.compliant, "rules_version": self.rules_version,
                "method": None if identity is None else {
                    "name": identity.name, "version": identity.version,
                    "normative_sha256": identity.normative_sha256,
                    "relation": identity.relation()},
                "criteria": [{"name": c.name, "verdict": c.verdict, "evidence": c.evidence}
                             for c in self.criteria]}

    def summary(self) -> str:
        """``COMPLIANT`` or ``NON-COMPLIANT: interval 1 s < 60 s; simulated instruments …``."""
        if self.compliant:
            return self.label
        return f"{self.label}: " + "; ".join(c.evidence for c in self.failures)


def assess_compliance(run: ComplianceFacts, rules: int | None = None) -> ComplianceVerdict:
    """The compliance verdict of a stored run (see the module docstring) under ``rules``
    (None: :data:`RULES_VERSION`; 1 re-derives what an approval of a storwatt-record/1 hash
    saw)."""
    rules = RULES_VERSION if rules is None else rules
    if rules not in (1, RULES_VERSION):
        raise ValueError(f"no compliance rules {rules} (known: 1, {RULES_VERSION})")
    method = run.method
    minimums = method.compliance if method else None
    identity = identify(method) if method else None
    if method is None or minimums is None:
        name = f"{run.method_name} {run.method_version}"
        why = ("the record does not hold the method it ran (stored before the station kept "
               "it), so its numbers cannot be judged" if method is None else
               f"method {name} states no [compliance] minimums (the shipped emerald-block-v3 "
               "does)")
        criteria: list[Criterion] = [Criterion("Method minimums", False, why)]
    else:
        interval = method.interval_s
        active = _active(run)
        criteria = _number_criteria(
            method, minimums,
            [(p.name, p.stabilisation_intervals * interval,
              p.measurement_intervals * interval) for p in active],
            [(p.info.name, p.info.planned_s) for p in run.phases
             if p.info.kind is PhaseKind.READY_IDLE])
        criteria.append(_profile_set(run, minimums))
        if rules > 1:
            criteria += _normative(identity)
    criteria += _run_criteria(run, minimums, rules)
    if method is not None and rules > 1:
        criteria += _validity_criteria(run, method)
    return ComplianceVerdict(tuple(criteria), identity, rules)


def assess_method(method: Method) -> ComplianceVerdict:
    """The method-number criteria alone — every plan's interval, stabilisation, measurement,
    ready idle, sample period and profile set against the method's ``[compliance]``
    minimums — whatever ``compliant`` the file claims. A run of a method that passes still
    needs the run's facts (real, calibrated instruments, no pause) to be compliant."""
    minimums = method.compliance
    if minimums is None:
        return ComplianceVerdict((Criterion(
            "Method minimums", False, f"method {method.name} {method.version} states no "
            "[compliance] minimums (the shipped emerald-block-v3 does)"),), identify(method),
            RULES_VERSION)
    interval = method.interval_s
    criteria = _number_criteria(
        method, minimums,
        [(f"{plan.name} {step.profile}", step.stabilisation_intervals * interval,
          step.measurement_intervals * interval) for plan in method.plans for step in plan.active],
        [(f"{plan.name} ready idle", plan.ready_idle_intervals * interval)
         for plan in method.plans])
    criteria.append(_plan_profile_sets(method, minimums))
    identity = identify(method)
    criteria += _normative(identity)
    return ComplianceVerdict(tuple(criteria), identity, RULES_VERSION)


def _normative(identity: MethodIdentity | None) -> list[Criterion]:
    """The method's normative content against its registry entry: one NOT MET criterion per
    deviation, naming the key, the registry's value and the run's (app/method/normative.py)."""
    if identity is None or identity.entry is None:
        return [Criterion(NORMATIVE, False, "no registered compliant method to compare with")]
    if not identity.deviations:
        return [Criterion(NORMATIVE, True, f"{identity.relation()} (normative SHA-256 "
                                           f"{identity.normative_sha256[:16]}…)")]
    return [Criterion(f"{METHOD_KEY}{d.key}", False, d.evidence(identity.entry.label))
            for d in identity.deviations]


def _s(seconds: float) -> str:
    return f"{seconds:g} s"


def _active(run: ComplianceFacts) -> list[PhaseInfo]:
    return [p.info for p in run.phases if p.info.kind is PhaseKind.ACTIVE]


def _number_criteria(method: Method, m: ComplianceMinimums,
                     active: list[tuple[str, float, float]],
                     idle: list[tuple[str, float]]) -> list[Criterion]:
    """The method's numbers against the minimums: ``active`` is (name, stabilisation s,
    measurement s) per profile, ``idle`` (name, s) per ready idle."""
    interval = method.interval_s
    period = method.sample_period_s
    return [
        Criterion("Interval length", interval == m.interval_s,
                  f"interval {_s(interval)}" + ("" if interval == m.interval_s else
                                                f" {'<' if interval < m.interval_s else '≠'} "
                                                f"{_s(m.interval_s)}")),
        _each_at_least("Stabilisation", "stabilisation", m.min_stabilisation_s,
                       ((name, stab) for name, stab, _ in active)),
        _each_at_least("Measurement", "measurement", m.min_measurement_s,
                       ((name, meas) for name, _, meas in active)),
        _each_at_least("Ready idle", "", m.min_ready_idle_s, idle,
                       missing="no ready idle phase"),
        Criterion("Sample period", period <= m.max_sample_period_s,
                  f"sample period {_s(period)}" + ("" if period <= m.max_sample_period_s else
                                                   f" > {_s(m.max_sample_period_s)}"))]


def _plan_profile_sets(method: Method, m: ComplianceMinimums) -> Criterion:
    """Each plan runs the whole profile set of every category it serves."""
    problems, seen = [], []
    for plan in method.plans:
        ran = {step.profile for step in plan.active}
        for category in plan.categories:
            required = m.profiles_for(category)
            if required is None:
                problems.append(f"category {category} has no profile set in the method")
            elif lacking := [p for p in required if p not in ran]:
                problems.append(f"{category}: plan {plan.name} lacks {', '.join(lacking)}")
            else:
                seen.append(category)
    if problems:
        return Criterion("Profile set", False, "; ".join(problems))
    return Criterion("Profile set", True, f"every category's profiles in its plan "
                                          f"({', '.join(seen)})")


def _each_at_least(name: str, what: str, minimum: float,
                   durations: Iterable[tuple[str, float]],
                   missing: str = "no active profile phase") -> Criterion:
    durations = list(durations)
    short = [" ".join(filter(None, (phase, what, f"{_s(d)} < {_s(minimum)}")))
             for phase, d in durations if d < minimum]
    if not durations:
        return Criterion(name, False, missing)
    if short:
        return Criterion(name, False, "; ".join(short))
    return Criterion(name, True, f"{what or 'length'} ≥ {_s(minimum)} in every phase "
                                 f"({', '.join(p for p, _ in durations)})")


def _profile_set(run: ComplianceFacts, m: ComplianceMinimums) -> Criterion:
    category = run.config.category
    required = m.profiles_for(category)
    if required is None:
        return Criterion("Profile set", False,
                         f"category {category or '(none)'} has no profile set in the method")
    done = [p.info.profile for p in run.phases if p.info.kind is PhaseKind.ACTIVE
            and p.status is PhaseStatus.COMPLETED]
    lacking = [p for p in required if p not in done]
    if lacking:
        return Criterion("Profile set", False,
                         f"{category}: profiles not run to completion: {', '.join(lacking)}")
    return Criterion("Profile set", True, f"{category}: {' '.join(required)} all completed")


def _instruments(run: ComplianceFacts) -> list[tuple[str, InstrumentIdentity | None, str]]:
    """(role, identity, calibration date the lab configured) of each instrument role used."""
    config = run.config
    dates = {i.name: i.calibration_date for i in config.power_inputs}
    found = [(f"power input {i.name}", i.identity, dates.get(i.name, ""))
             for i in run.power_inputs] \
        or [("power meter", run.power_meter, config.power_meter.calibration_date)]
    if run.temperature_meter is not None:
        found.append(("thermometer", run.temperature_meter,
                      config.temperature_meter.calibration_date))
    return found


def _run_criteria(run: ComplianceFacts, m: ComplianceMinimums | None,
                  rules: int) -> list[Criterion]:
    continuous = _uninterrupted(run) if rules > 1 else _uninterrupted_active(run)
    return [_completed(run), _real_instruments(run), continuous, _not_resumed(run),
            _calibration(run, m, rules),
            Criterion("Configuration unchanged", True,
                      "the record holds one configuration snapshot, taken at the start; the "
                      "station offers no way to change it during a run")]


def _completed(run: ComplianceFacts) -> Criterion:
    """The planned durations count only if the run and each phase ran to their end."""
    short = [f"{p.info.name} {p.status.value}" for p in run.phases
             if p.status not in (PhaseStatus.COMPLETED, PhaseStatus.SKIPPED)]
    if run.status is not RunStatus.COMPLETED or short:
        return Criterion("Run completed", False, f"run {run.status.value}"
                         + (f": {', '.join(short)}" if short else ""))
    return Criterion("Run completed", True, "the run and every phase COMPLETED")


def _real_instruments(run: ComplianceFacts) -> Criterion:
    simulated = [f"{role} {ident.describe()}" for role, ident, _ in _instruments(run)
                 if ident is not None and ident.simulated]
    if run.power_meter is None:
        simulated.append("no power meter identified")
    if SIMULATED_ENGINE_WORD in run.workload_engine.lower():
        simulated.append(f"SUT: {run.workload_engine}")
    if simulated:
        return Criterion(REAL_INSTRUMENTS, False,
                         "simulated instruments: " + ", ".join(simulated))
    return Criterion(REAL_INSTRUMENTS, True, "every instrument and the SUT are real")


def _uninterrupted(run: ComplianceFacts) -> Criterion:
    """The seed's "four continuous test phases" (method-notes §2): a pause or restart in any
    phase — conditioning, ready idle as much as an active profile — breaks it."""
    paused = [_restart(run, p.index, p.info.name, p.attempts) for p in run.phases
              if p.attempts > 1]
    if paused:
        return Criterion(CONTINUOUS, False, "phases not continuous: " + ", ".join(paused))
    return Criterion(CONTINUOUS, True, "every phase ran in one attempt")


def _uninterrupted_active(run: ComplianceFacts) -> Criterion:
    """Rules 1: only a pause in an active profile broke the sequence."""
    paused = [_restart(run, p.index, p.info.name, p.attempts, stopped=False)
              for p in run.phases if p.info.kind is PhaseKind.ACTIVE and p.attempts > 1]
    if paused:
        return Criterion("Uninterrupted active sequence", False,
                         "pause in the active sequence: " + ", ".join(paused))
    return Criterion("Uninterrupted active sequence", True,
                     "every active profile ran in one attempt")


def _not_resumed(run: ComplianceFacts) -> Criterion:
    """The method's phases are continuous (method-notes §2): a run continued after its station
    stopped (app/station/resume.py) keeps figures useful for engineering, never a compliant
    result."""
    if not run.resumptions:
        return Criterion(RESUMED, True, "never resumed: the phases ran as one continuous run")
    names = {p.index: p.info.name for p in run.phases}
    texts = []
    for r in run.resumptions:
        cut = (f"during {names.get(r.cut_phase, r.cut_phase)}" if r.cut_phase is not None
               else "between phases")
        text = (f"resumed {r.wall_iso} after the station stopped {cut}; continued from "
                f"{names.get(r.restart_phase, r.restart_phase)}")
        if r.redone:
            text += f", running {', '.join(names.get(i, str(i)) for i in r.redone)} again"
        texts.append(text)
    return Criterion(RESUMED, False, "; ".join(texts))


def _restart(run: ComplianceFacts, index: int, name: str, attempts: int,
             stopped: bool = True) -> str:
    """``SR paused (2 attempts)``, or with the reason when something other than the operator's
    pause restarted it (an intensity re-check, method-notes §2)."""
    mine = sorted((a for a in run.attempts if a.phase_index == index), key=lambda a: a.attempt)
    reasons = sorted({a.error for a in mine if a.attempt < attempts and a.error}
                     - {PAUSE_REASON})
    gaps = [b.t_start - a.t_end for a, b in zip(mine, mine[1:]) if a.t_end is not None]
    length = f", stopped {format_duration(sum(gaps))}" if stopped and sum(gaps) > 0 else ""
    if not reasons:
        return f"{name} paused ({attempts} attempts{length})"
    return f"{name} restarted ({attempts} attempts{length}: {'; '.join(reasons)})"


def _validity_criteria(run: ComplianceFacts, method: Method) -> list[Criterion]:
    return [_thermometer(run), *_metrics_valid(run, method), _intensity(run),
            *_pre_run_generator(run), *_access_patterns(run, method),
            _classification(run, method)]


def _pre_run_generator(run: ComplianceFacts) -> list[Criterion]:
    """An unsearched profile's null-engine pre-run (MW2 at its derived rate, a trace replay)
    judged by the search's generator rule once its phase measured the rate (the row's note,
    ``Sequencer._publish_pre_run``): a limit there means the figure is the generator's. A run
    stored before the station pre-ran them holds no such row, and gets no criterion."""
    rows = [r for r in run.search_results if not r.searched]
    if not rows:
        return []
    failed = [f"{r.profile}: {r.note}" for r in rows if r.note.startswith(LOAD_GENERATOR_LIMIT)]
    if failed:
        return [Criterion(GENERATOR, False, "; ".join(failed))]
    return [Criterion(GENERATOR, True, "fio alone held "
                      + ", ".join(f"{r.profile} ({r.pre_run_basis})" for r in rows)
                      + " with room to spare, in the null-engine pre-run of each job file")]


def _access_patterns(run: ComplianceFacts, method: Method) -> list[Criterion]:
    """The pattern each searched profile's job file drew in its null-engine pre-run against
    the profile's definition (method-notes §2, ``app.sequencer.access_check``): a job file that does
    not
    make the method's workload measured something else. A run stored before the station
    measured patterns holds none, and gets no criterion (its verdict stays what it was)."""
    measured = [r for r in run.search_results if r.pattern is not None]
    if not measured:
        return []
    traces = [r.profile for r in run.search_results if r.pattern is None and not r.searched]
    failed = [f"{r.profile}: {'; '.join(d)}" for r in measured
              if (d := method_departures(r.pattern, method))]
    if failed:
        return [Criterion(ACCESS_PATTERN, False, "; ".join(failed))]
    return [Criterion(ACCESS_PATTERN, True, "as the method asks for "
                      + ", ".join(f"{r.profile} ({r.pattern.ios} IOs logged)" if r.pattern.ios
                                  else f"{r.profile} (modelled)" for r in measured)
                      + ", in the null-engine pre-run of each job file"
                      + (f"; {', '.join(traces)}: the trace's own offsets, not checked"
                         if traces else ""))]


def _classification(run: ComplianceFacts, method: Method) -> Criterion:
    """The taxonomy derived from the answers the run recorded (method-notes §1: the highest
    level whose attributes all hold; a lower one may be requested, never one they rule out)."""
    config = run.config
    try:
        derived = recorded_classification(method, config.taxonomy,
                                          config.classification_answers)
    except (TaxonomyError, MethodError) as exc:
        return Criterion(CLASSIFICATION, False, str(exc).replace("\n", "; "))
    return Criterion(CLASSIFICATION, True, f"{config.taxonomy} allowed by the recorded "
                                           f"answers (derived: {derived.label})")


def _thermometer(run: ComplianceFacts) -> Criterion:
    """The method reads the SUT's inlet temperature (method-notes §3, §10): without a
    thermometer no metric can show its site was within the inlet class."""
    if run.temperature_meter is None:
        return Criterion(THERMOMETER, False, "no inlet thermometer took part in the run")
    return Criterion(THERMOMETER, True, f"inlet thermometer {run.temperature_meter.describe()}")


def _metrics_valid(run: ComplianceFacts, method: Method) -> list[Criterion]:
    """Each EP metric of the profiles the run ran, and EP_RI, VALID: one NOT MET line per
    INVALID (or missing) metric with its reason. COM outcomes are not criteria."""
    profiles = {p.name: p for p in method.profiles}
    wanted = [profiles[p.info.profile].metric for p in run.phases
              if p.info.kind is PhaseKind.ACTIVE and p.info.profile in profiles]
    wanted = list(dict.fromkeys(wanted + ["EP_RI"]))
    found = {m.name: m for m in run.metrics}
    failed = [Criterion(f"Metric {name}", False,
                        "not computed" if name not in found else
                        f"INVALID: {found[name].reason or 'no reason recorded'}")
              for name in wanted if name not in found or not found[name].valid]
    return failed or [Criterion(METRICS, True, f"{', '.join(wanted)} all VALID")]


def _intensity(run: ComplianceFacts) -> Criterion:
    """Intensity 100 found in every searched profile (method-notes §2): a search that ran
    out of queue depths measured the load generator, one with no probe within the limit
    measured nothing the method defines; "no whole queue depth left between the probes" is
    the closest the probes can come, so it meets the rule with its note."""
    searched = [r for r in run.search_results if r.searched]
    failed = [f"{r.profile}: {r.note}" for r in searched
              if r.note.startswith((LOAD_GENERATOR_LIMIT, NO_PROBE_WITHIN))]
    if failed:
        return Criterion(INTENSITY, False, "; ".join(failed))
    if not searched:
        return Criterion(INTENSITY, True, "no profile searched")
    notes = [f"{r.profile}: {r.note}" for r in searched if r.note]
    return Criterion(INTENSITY, True, f"found for {', '.join(r.profile for r in searched)}"
                     + (f" (notes: {'; '.join(notes)})" if notes else ""))


def run_end(run: ComplianceFacts) -> date:
    """The day the run ended, or, not ended (running, interrupted, or only planned), the day
    its planned phases end: a calibration must cover the whole run (issue 38, seen 4), and
    ready idle comes last."""
    if run.finished_wall:
        return datetime.fromisoformat(run.finished_wall).date()
    planned = sum(p.info.planned_s for p in run.phases)
    return (datetime.fromisoformat(run.started_wall) + timedelta(seconds=planned)).date()


def _calibration(run: ComplianceFacts, m: ComplianceMinimums | None,
                 rules: int = RULES_VERSION) -> Criterion:
    """Every instrument's calibration known, not after the run's start, and not older than
    the method's limit on the day the run *ended* (rules 3, method-notes §3, §10; rules 1
    and 2 judged the start day, and re-derive what an approval under them saw)."""
    limit = m.max_calibration_age_days if m else None
    started = datetime.fromisoformat(run.started_wall).date()
    ended = run_end(run) if rules >= 3 else started
    problems, seen = [], []
    for role, ident, configured in _instruments(run):
        text = (ident.calibration_date if ident else "") or configured
        when = _date(text)
        if when is None:
            problems.append(f"{role} calibration date {'missing' if not text else repr(text)}")
        elif when > started:
            problems.append(f"{role} calibrated {when} after the run ({started})")
        elif limit is not None and (ended - when).days > limit:
            problems.append(f"{role} calibrated {when}, {(ended - when).days} days before "
                            + (f"the run's end ({ended})" if rules >= 3 else "the run")
                            + f" > {limit} days")
        else:
            seen.append(f"{role} {when}")
    if problems:
        return Criterion("Calibration", False, "; ".join(problems))
    if limit is None:
        return Criterion("Calibration", False, "the method states no calibration limit")
    at = f" at the run's end ({ended})" if rules >= 3 else ""
    return Criterion("Calibration", True, f"within {limit} days{at}: {', '.join(seen)}")


def _date(text: str) -> date | None:
    try:
        return date.fromisoformat(text.strip()[:10]) if text.strip() else None
    except ValueError:
        return None
