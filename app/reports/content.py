"""What a report says about a stored run, independent of the output format.

Built only from the stored run (:class:`~app.storage.stored.StoredRun`), including the method
it recorded; every figure is the one the record holds (reports format, they never recompute). Every
expected metric gets a line: VALID, INVALID (with the stored reason) or NOT
MEASURED (with the reason derived from the phase and run status) — a missing or invalid figure
must never look like a result (method-notes §4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from app.core import calibration
from app.rules.com_verdict import ComState, ComVerdict, com_verdicts
from app.rules.compliance import ComplianceVerdict
from app.method.loader import load_method
from app.method.model import Method
from app.metrics.max_power import MaximumPower
from app.core.records import (IDLE_METRIC, AuditEntry, AuditKind, MetricResult, PhaseKind,
                              PhaseStatus, RunStatus, in_metric_order)
from app.reports.run_log import complete_log
from app.reports.text import fmt_seconds
from app.signoff.revisions import SignOff, sign_off
from app.storage.stored import StoredAttempt, StoredEvent, StoredPhase, StoredRun
from drivers.interfaces import (FLAG_FREQUENCY_NOT_MEASURED, FLAG_UNCERTAINTY_HIGH,
                                FLAG_UNCERTAINTY_UNKNOWN, InstrumentIdentity)

VALID, INVALID, NOT_MEASURED = "VALID", "INVALID", "NOT MEASURED"
UNIT_TEXT = {"IOPS/W": "I/Os per second per watt", "MiB/s/W": "MiB per second per watt",
             "GB/W": "GB (10^9 bytes) per watt", "ratio": "logical / physical bytes"}
IDLE_TITLE = "Ready idle (raw capacity per watt)"


@dataclass(frozen=True)
class MetricLine:
    """One row of the metrics table."""

    name: str
    title: str
    unit: str
    status: str  # VALID | INVALID | NOT MEASURED
    reason: str
    result: MetricResult | None
    attempt: StoredAttempt | None  # the phase attempt the figure came from

    @property
    def valid(self) -> bool:
        return self.status == VALID

    @property
    def unit_text(self) -> str:
        return UNIT_TEXT.get(self.unit, self.unit)


@dataclass(frozen=True)
class InstrumentSummary:
    role: str  # "Power meter" | "Temperature meter"
    identity: str
    resource: str
    driver: str
    calibration: str
    ranges: str
    sample_interval_s: float
    longest_gap_s: float
    samples: int
    flagged: int  # samples excluded from averages
    worst_uncertainty_pct: float
    worst_uncertainty_t: float
    notes: str


@dataclass(frozen=True)
class ReportContent:
    run: StoredRun
    method: Method | None
    method_note: str  # why the method file could not be used / differs, or ""
    attempts: dict[int, StoredAttempt]  # phase index → its last attempt
    metrics: tuple[MetricLine, ...]
    coms: tuple[ComVerdict, ...]  # the COM disclosure (app.rules.com_verdict)
    instruments: tuple[InstrumentSummary, ...]
    problems: tuple[str, ...]  # everything missing or invalid, in plain words
    signoff: SignOff  # the record's revisions, hash and approvals (app.signoff.revisions)
    events: tuple[StoredEvent, ...] = ()  # the complete log (``app.reports.run_log``)
    #: the SUT input's maximum power, each figure with its window (app.metrics.max_power)
    max_power: MaximumPower | None = None

    @property
    def peak_line(self) -> str:
        """``812.4 W, 1 s window (20 readings of 0.05 s) from 1:02:03 (SR); supplies 2 × 1600 W
        nameplate (1+1) = 3200 W``: the highest 1 s window average beside the nameplate."""
        peak = self.max_power.window if self.max_power else None
        if self.max_power is None or peak is None:
            return "no usable power sample"
        where = max(self.max_power.window_per_phase, key=lambda p: p.watts).where
        text = (f"{peak.watts:.1f} W, {self.max_power.window_label} from "
                f"{fmt_seconds(peak.t_first_s)} ({where})")
        supplies = self.run.config.sut.power_supplies
        if supplies.declared:
            text += (f"; supplies {supplies.count} × {supplies.nameplate_w:g} W nameplate "
                     f"({supplies.redundancy}) = {supplies.count * supplies.nameplate_w:g} W")
        else:
            text += "; supplies' nameplate power not declared"
        return text

    @property
    def max_power_rows(self) -> list[tuple[str, str]]:
        """The three maxima, each naming its window and the sampling period, then per phase
        (method-notes §10)."""
        m = self.max_power
        if m is None or m.single is None:
            return [("Maximum power", "no usable power sample")]
        period = f"{m.period_s:g} s" if math.isfinite(m.period_s) else "no period"
        rows = [("Highest 1 s window average", self.peak_line)]
        if m.phase_average is not None:
            a = m.phase_average
            rows.append(("Highest phase average", f"{a.watts:.1f} W over {a.where} "
                                                  f"({a.readings} readings of {period})"))
        single_where = max(m.single_per_phase, key=lambda p: p.watts).where
        rows.append(("Highest single reading", f"{m.single.watts:.1f} W at "
                     f"{fmt_seconds(m.single.t_s)} ({single_where}) — one reading of {period}; "
                     "it rises as the sampling period shortens"))
        windows = {w.where: w.watts for w in m.window_per_phase}
        averages = {a.where: a.watts for a in m.phase_averages}
        for p in m.single_per_phase:
            window = f"{windows[p.where]:.1f} W" if p.where in windows else "no whole window"
            rows.append((f"… in {p.where}", f"window {window} · average "
                         f"{averages[p.where]:.1f} W · single {p.watts:.1f} W"))
        return rows

    @property
    def compliance(self) -> ComplianceVerdict:
        """The run's derived verdict (app.rules.compliance); views only format it."""
        return self.run.compliance

    @property
    def compliant(self) -> bool:
        return self.compliance.compliant

    @property
    def method_label(self) -> str:
        label = f"{self.run.method_name} {self.run.method_version}"
        return label if self.compliant else f"{label} — {self.compliance.label}"

    @property
    def interval_s(self) -> float:
        return self.method.interval_s if self.method else 60.0

    @property
    def product(self) -> str:
        sut = self.run.config.sut
        return " ".join(p for p in (sut.vendor, sut.model) if p) or "unnamed SUT"

    @property
    def disposition(self) -> AuditEntry | None:
        """QA's latest disposition entry (the run's disposition), or None."""
        return next((e for e in reversed(self.run.audit) if e.kind is AuditKind.DISPOSITION),
                    None)

    @property
    def disposition_text(self) -> str:
        d = self.disposition
        if d is None:
            return "not yet reviewed by QA"
        assert d.disposition is not None  # a disposition entry carries one (app.storage.audit)
        return (f"{d.disposition.value.upper()} by {d.author} on "
                f"{d.created_wall[:19].replace('T', ' ')} UTC: {d.text}")

    def metric_line(self, name: str) -> MetricLine | None:
        return next((m for m in self.metrics if m.name == name), None)


# --- building ------------------------------------------------------------------------------

def build_content(run: StoredRun) -> ReportContent:
    method, note = _method_of(run)
    attempts = {p.index: a for p in run.phases if (a := run.last_attempt(p.index)) is not None}
    metrics = tuple(_metric_line(run, method, name, attempts)
                    for name in _expected_metrics(run, method))
    coms = com_verdicts(run)
    instruments = _instruments(run)
    problems = _problems(run, metrics, coms, note)
    return ReportContent(run, method, note, attempts, metrics, coms, instruments, problems,
                         sign_off(run), complete_log(run), run.max_power)



def _method_of(run: StoredRun) -> tuple[Method | None, str]:
    """The method the run recorded; runs stored before the record kept it fall back to the
    installed file of that name, and the report says so."""
    if run.method is not None:
        return run.method, ""
    try:
        method = load_method(run.method_name)
    except (KeyError, ValueError, OSError) as exc:
        return None, (f"this run did not record its method, and {run.method_name!r} is not "
                      f"installed on this station ({exc}); titles, stability band and "
                      "confidence levels come from the stored run")
    if method.version != run.method_version:
        return method, (f"this run did not record its method; the installed file is version "
                        f"{method.version}, the run used {run.method_version} (titles and rules "
                        "shown from the installed file)")
    return method, ("this run did not record its method (stored before StorWatt kept it); "
                    "titles and rules shown from the installed file of the same version")


def _expected_metrics(run: StoredRun, method: Method | None) -> list[str]:
    """The plan's metrics (what the method asks for this category) plus any stored EP."""
    names: list[str] = []
    if method is not None:
        try:
            plan = method.plan_for(run.config.category)
            names = [method.profile(step.profile).metric for step in plan.active]
            names.append(IDLE_METRIC)
        except KeyError:
            names = []
    names += [m.name for m in run.metrics if m.name.startswith("EP_")]
    if not names:
        names = [IDLE_METRIC]
    return in_metric_order(names)


def _profile_for(method: Method | None, metric: str):
    if method is None:
        return None
    return next((p for p in method.profiles if p.metric == metric), None)


def _phase_for_metric(run: StoredRun, method: Method | None, name: str) -> StoredPhase | None:
    if name == IDLE_METRIC:
        kind, profile_name = PhaseKind.READY_IDLE, None
    else:
        profile = _profile_for(method, name)
        kind = PhaseKind.ACTIVE
        profile_name = profile.name if profile else name.removeprefix("EP_")
    for phase in run.phases:
        if phase.info.kind is kind and (profile_name is None or phase.info.profile == profile_name):
            return phase
    return None


def _metric_line(run: StoredRun, method: Method | None, name: str,
                 attempts: dict[int, StoredAttempt]) -> MetricLine:
    profile = _profile_for(method, name)
    title = IDLE_TITLE if name == IDLE_METRIC else (profile.title if profile else name)
    stored = run.metric(name)
    phase = _phase_for_metric(run, method, name)
    if stored is not None:
        index = stored.phase_index if stored.phase_index is not None else (
            phase.index if phase else None)
        attempt = attempts.get(index) if index is not None else None
        unit = stored.unit
        if stored.valid and _finite(stored.value):
            return MetricLine(name, title, unit, VALID, "", stored, attempt)
        reason = stored.reason or "the value could not be computed"
        return MetricLine(name, title, unit, INVALID, reason, stored, attempt)
    unit = "GB/W" if name == IDLE_METRIC else (profile.metric_unit if profile else "")
    return MetricLine(name, title, unit, NOT_MEASURED, _why_missing(run, phase, name), None,
                      attempts.get(phase.index) if phase else None)


def _finite(value: float) -> bool:
    return value is not None and math.isfinite(value)


def _why_missing(run: StoredRun, phase: StoredPhase | None, name: str) -> str:
    run_state = f"the run ended {run.status}" + (f" ({run.error})" if run.error else "")
    if phase is None:
        what = "ready-idle phase" if name == IDLE_METRIC else f"phase for {name}"
        return f"the run's plan has no {what}"
    if phase.status is PhaseStatus.PENDING:
        return f"phase {phase.info.name} never started: {run_state}"
    if phase.status.cut_short:
        detail = f": {phase.error}" if phase.error else ""
        return f"phase {phase.info.name} {phase.status.value}{detail}"
    if phase.status is PhaseStatus.RUNNING:
        return f"phase {phase.info.name} was still running when {run_state}"
    if phase.status is PhaseStatus.SKIPPED:
        return f"phase {phase.info.name} was skipped"
    return f"phase {phase.info.name} completed but no {name} was stored"


# --- instruments ---------------------------------------------------------------------------

def _typical_interval(t: np.ndarray, phase_index: np.ndarray) -> tuple[float, float]:
    """(median, longest) spacing of consecutive samples within the same phase."""
    if len(t) < 2:
        return math.nan, math.nan
    same = phase_index[1:] == phase_index[:-1]
    steps = np.diff(t)[same]
    if not len(steps):
        return math.nan, math.nan
    return float(np.median(steps)), float(steps.max())


def _calibration(identity: InstrumentIdentity | None, configured: str,
                 certificate: str = "") -> str:
    """The date the meter was opened with (else the one configured) and its certificate."""
    date = (identity.calibration_date if identity else "") or configured
    if not date and not certificate:
        return "not recorded"
    return calibration.describe(date, certificate)


def _power_calibration(run: StoredRun) -> str:
    """The one meter's calibration, or each power input's (each is its own instrument)."""
    config = run.config
    if not config.power_inputs:
        return _calibration(run.power_meter, config.power_meter.calibration_date,
                            config.power_meter.certificate)
    return "; ".join(f"{i.name}: {_calibration(None, i.calibration_date, i.certificate)}"
                     for i in config.power_inputs)


def _ranges(values: np.ndarray, unit: str) -> str:
    finite = np.unique(values[np.isfinite(values)])
    if not len(finite):
        return f"{unit} range not reported"
    return ", ".join(f"{v:g} {unit}" for v in finite)


def _instruments(run: StoredRun) -> tuple[InstrumentSummary, ...]:
    config = run.config
    power = run.power
    step, gap = _typical_interval(power.t, power.phase_index)
    unc = power.uncertainty_pct
    worst = float(np.nanmax(unc)) if np.isfinite(unc).any() else math.nan
    worst_t = float(power.t[int(np.nanargmax(unc))]) if np.isfinite(unc).any() else math.nan
    high = sum(FLAG_UNCERTAINTY_HIGH in f for f in power.flags)
    unknown = sum(FLAG_UNCERTAINTY_UNKNOWN in f for f in power.flags)
    volts = power.volts[np.isfinite(power.volts)]
    freq = power.freq_hz[np.isfinite(power.freq_hz)]
    notes = []
    if len(volts):
        notes.append(f"input voltage {volts.min():.1f}–{volts.max():.1f} V")
    if len(freq):
        notes.append(f"frequency {freq.min():.2f}–{freq.max():.2f} Hz")
    unmeasured = sum(FLAG_FREQUENCY_NOT_MEASURED in f for f in power.flags)
    if unmeasured:  # method-notes §3 "not measured by this interface": disclosed, not judged
        notes.append(f"frequency not measured by this interface in {unmeasured} sample(s) "
                     "(the supply rule judged the volts)")
    notes.append(f"{high} sample(s) above the uncertainty limit, {unknown} with uncertainty "
                 "not evaluable")
    meter = run.power_meter
    summaries = [InstrumentSummary(
        "Power meter", meter.describe() if meter else "not identified (no identity stored)",
        meter.resource if meter else config.power_meter.resource,
        meter.driver if meter else config.power_meter.driver,
        _power_calibration(run),
        "; ".join(f"{i.name}: {_ranges(i.range_v, 'V')}, {_ranges(i.range_a, 'A')}"
                  for i in run.power_inputs)  # several inputs: each has its own
        or f"{_ranges(power.range_v, 'V')}; {_ranges(power.range_a, 'A')}", step, gap, len(power),
        int((~power.usable).sum()), worst, worst_t, "; ".join(notes))]
    temp = run.temperature
    if run.temperature_meter is not None or len(temp):
        t_step, t_gap = _typical_interval(temp.t, temp.phase_index)
        ok = temp.celsius[temp.usable]
        span = f"inlet {ok.min():.1f}–{ok.max():.1f} °C" if len(ok) else "no usable reading"
        identity = run.temperature_meter
        summaries.append(InstrumentSummary(
            "Temperature meter", identity.describe() if identity else "not identified",
            identity.resource if identity else config.temperature_meter.resource,
            identity.driver if identity else config.temperature_meter.driver,
            _calibration(identity, config.temperature_meter.calibration_date,
                         config.temperature_meter.certificate), "—", t_step,
            t_gap, len(temp), int((~temp.usable).sum()), math.nan, math.nan, span))
    return tuple(summaries)


# --- what is wrong --------------------------------------------------------------------------

def _problems(run: StoredRun, metrics: tuple[MetricLine, ...], coms: tuple[ComVerdict, ...],
              method_note: str) -> tuple[str, ...]:
    problems = []
    problems += [f"NON-COMPLIANT ({c.name}): {c.evidence}" for c in run.compliance.failures]
    if run.status is not RunStatus.COMPLETED:
        problems.append(f"run {run.status.value}" + (f": {run.error}" if run.error else ""))
    for phase in run.phases:
        if phase.status.cut_short:
            problems.append(f"phase {phase.info.name} {phase.status.value}"
                            + (f": {phase.error}" if phase.error else ""))
        elif phase.attempts > 1:
            problems.append(f"phase {phase.info.name} was restarted ({phase.attempts} attempts); "
                            "figures come from the last, uninterrupted attempt")
    for line in metrics:
        if line.status != VALID:
            problems.append(f"{line.name} {line.status}: {line.reason}")
    for com in coms:
        if com.state not in (ComState.PASSED, ComState.NOT_AVAILABLE):
            problems.append(f"COM {com.title}: {com.result}")
    if method_note:
        problems.append(method_note)
    return tuple(problems)
