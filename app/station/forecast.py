"""The verdict as far as it is known before a run: method, instruments, calibration, SUT.

Why: a run on simulated power with real IO (local fio + the ``sim`` meter) was offered as
"This compliant run takes about 20 h", and only the history said SIMULATED — NON-COMPLIANT
afterwards. The forecast judges the run as planned — every phase as the method plans it,
one attempt each, the configured instruments and calibration dates — with the same rules the
stored run will be judged by (:func:`app.rules.compliance.assess_compliance`), so the review page,
the start confirmation and the run view can say before Start what the record will say.
It can only be more optimistic than the final verdict (a pause, an abort or an invalid
metric are not known yet), so it is always labelled a forecast.

The one entry point is :func:`forecast`: when the verdict's API changes, only its body
changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone

from app.rules.compliance import (INTENSITY, METRICS, ComplianceVerdict, assess_compliance,
                                  assess_method)
from app.labs.builder import Source, plan_lab
from app.method.model import Method
from app.core.records import PhaseStatus, RunConfig, RunStatus
from app.sequencer.events import Resumption
from app.sequencer.plan import build_phases
from app.storage.stored import StoredAttempt, StoredPhase
from drivers.interfaces import SIMULATED_VENDOR, InstrumentIdentity

#: how the forecast is introduced wherever it is shown
FORECAST_LEAD = "FORECAST (before the run: method, instruments, calibration, SUT)"
#: one INVALID metric's criterion is named "Metric EP_…" (app.rules.compliance)
METRIC_PREFIX = "Metric "
#: the workload engine word app.rules.compliance reads as a simulated SUT
SIMULATED_SUT = "simulated SUT"


@dataclass(frozen=True)
class _PlannedInput:
    name: str
    identity: InstrumentIdentity | None


@dataclass(frozen=True)
class PlannedRun:
    """The facts :func:`app.rules.compliance.assess_compliance` reads, for a run not started yet:
    every planned phase COMPLETED in one attempt, never resumed."""

    config: RunConfig
    method: Method | None
    method_name: str
    method_version: str
    started_wall: str
    workload_engine: str
    phases: tuple[StoredPhase, ...]
    power_meter: InstrumentIdentity | None
    temperature_meter: InstrumentIdentity | None
    power_inputs: tuple[_PlannedInput, ...] = ()
    status: RunStatus = RunStatus.COMPLETED
    attempts: tuple[StoredAttempt, ...] = ()
    resumptions: tuple[Resumption, ...] = field(default_factory=tuple)
    #: not known before the run: the criteria that read them are left out (OUTCOME_CRITERIA)
    metrics: tuple = ()
    search_results: tuple = ()
    #: the planned end (start + every planned phase): a calibration that expires before it is
    #: NOT MET in the forecast, so the review page says so before Start
    finished_wall: str | None = None


def _identity(driver: str, resource: str, calibration_date: str,
              source: Source) -> InstrumentIdentity | None:
    """The instrument as far as the configuration names it (no *IDN? before the run): a
    simulator is named as one, whatever driver id the lab gave it."""
    if source is Source.NONE:
        return None
    simulated = source is not Source.DRIVER
    return InstrumentIdentity(SIMULATED_VENDOR if simulated else "(configured)",
                              f"simulator (driver {driver})" if simulated else driver,
                              resource=resource, driver=driver,
                              calibration_date=calibration_date)


def planned_run(config: RunConfig, method: Method, now: datetime | None = None) -> PlannedRun:
    plan = plan_lab(config)
    phases = tuple(StoredPhase(info, PhaseStatus.COMPLETED, 1, None, None, "", None)
                   for info in build_phases(method, config))
    meter = config.power_meter
    inputs = tuple(_PlannedInput(i.name, _identity(i.driver, i.resource, i.calibration_date,
                                                   plan.power))
                   for i in config.power_inputs)
    thermometer = config.temperature_meter
    start = now or datetime.now(timezone.utc)
    end = start + timedelta(seconds=sum(p.info.planned_s for p in phases))
    return PlannedRun(
        config=config, method=method, method_name=method.name, method_version=method.version,
        started_wall=start.isoformat(timespec="seconds"),
        finished_wall=end.isoformat(timespec="seconds"),
        workload_engine="fio" if plan.real_io else SIMULATED_SUT, phases=phases,
        power_meter=_identity(meter.driver, meter.resource, meter.calibration_date,
                              plan.power),
        temperature_meter=_identity(thermometer.driver, thermometer.resource,
                                    thermometer.calibration_date, plan.temperature),
        power_inputs=inputs)


def forecast(config: RunConfig, method: Method, now: datetime | None = None) -> ComplianceVerdict:
    """The verdict the run of ``config`` will get if it runs to its end without a pause: the
    criteria on what only the run can show (its metrics, the intensity its search finds) are
    left out, and the forecast's wording says so."""
    verdict = assess_compliance(planned_run(config, method, now))
    return replace(verdict, criteria=tuple(c for c in verdict.criteria if not _outcome(c.name)))


def _outcome(criterion: str) -> bool:
    return criterion in (METRICS, INTENSITY) or criterion.startswith(METRIC_PREFIX)


def forecast_text(verdict: ComplianceVerdict) -> str:
    """One line for the review page, the confirmation and the run view's banner."""
    if verdict.compliant:
        return (f"{FORECAST_LEAD}: COMPLIANT if the run completes without a pause and every "
                "metric is VALID")
    lead = "SIMULATED — " if verdict.simulated else ""
    return f"{FORECAST_LEAD}: {lead}{verdict.short()} — not a reportable result"


def forecast_evidence(verdict: ComplianceVerdict, method: Method | None = None) -> list[str]:
    """Each rule the forecast finds not met, with its evidence; with ``method``, only the
    rules the set-up decides (instruments, calibration, SUT) — the method's own numbers are
    said once, beside the method's name."""
    numbers = {c.name for c in assess_method(method).failures} if method else set()
    return [f"{c.name}: {c.evidence}" for c in verdict.failures if c.name not in numbers]
