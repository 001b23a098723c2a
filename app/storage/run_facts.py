"""The facts a compliance verdict reads, for many runs at once (run lists).

A run list (start page, ``storwatt runs list``, the QA history) must show each run's *derived*
verdict (:func:`app.rules.compliance.assess_compliance`), never the method file's claim, without
loading every run's samples. A few queries read what the verdict needs — each run's
configuration, phases, instruments, phase attempts, search outcomes and power inputs, with the
metrics the run list read anyway — and each stored method is
validated once per distinct SHA-256, however many runs used it. The verdict itself is derived
when a view first asks for it (``RunSummary.compliance``): the history shows the rows on
screen, so 10,000 runs do not pay for 10,000 verdicts at load. Runs stored before the record
kept its method get the verdict that says so.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from app.method.model import Method
from app.method.record import method_from_record
from app.core.records import (AuditEntry, PhaseInfo, PhaseKind, PhaseStatus, RunConfig, RunStatus,
                              SutDescription, sut_from_dict)
from app.sequencer.events import Resumption, SearchResult
from app.storage import schema as s
from app.storage.audit import com_results
from app.storage.codec import generator_from_json, pattern_from_json
from app.storage.stored import KeyMetric, StoredAttempt, StoredPhase, config_from_snapshot
from drivers.interfaces import InstrumentIdentity


@dataclass(frozen=True)
class InputFacts:
    """A power input of a run with several: its name and meter (for the calibration check)."""

    name: str
    identity: InstrumentIdentity


@dataclass(frozen=True)
class RunFacts:
    """One run as :class:`app.rules.compliance.ComplianceFacts` (no samples, no intervals)."""

    method_name: str
    method_version: str
    status: RunStatus
    started_wall: str
    workload_engine: str
    phases: tuple[StoredPhase, ...]
    attempts: tuple[StoredAttempt, ...]
    power_meter: InstrumentIdentity | None
    temperature_meter: InstrumentIdentity | None
    method: Method | None
    config_snapshot: dict[str, Any]
    resumptions: tuple[Resumption, ...] = ()
    power_inputs: tuple[InputFacts, ...] = ()
    metrics: tuple[KeyMetric, ...] = ()
    search_results: tuple[SearchResult, ...] = ()
    #: the run's COM results from its audit trail (what its COM verdicts read), oldest first
    audit: tuple[AuditEntry, ...] = ()
    #: when the run ended (calibration must cover it); None while it runs
    finished_wall: str | None = None

    @property
    def config(self) -> RunConfig:
        return config_from_snapshot(self.config_snapshot)

    @cached_property
    def sut(self) -> SutDescription:
        return sut_from_dict(self.config_snapshot.get("sut", {}))


def run_facts(conn: Connection, run_pks: Sequence[int] | None,
              metrics: dict[int, list[KeyMetric]]) -> dict[int, RunFacts]:
    """Run primary key → what its verdict reads, for ``run_pks`` (None: every run);
    ``metrics``: each run's metrics as the run list read them (an INVALID metric is a
    criterion NOT MET). Each run's audited COM results come along: a COM QA has settled
    must read the same in a run list as in the run's report."""
    runs = _where(sa.select(s.Run.id, s.Run.config, s.Run.method_name, s.Run.method_version,
                            s.Run.method_sha256, s.Run.status, s.Run.started_wall,
                            s.Run.workload_engine, s.Run.finished_wall), s.Run.id, run_pks)
    rows = conn.execute(runs).all()
    methods = _methods(conn, {r.method_sha256 for r in rows if r.method_sha256})
    phases, attempts, instruments = (_phases(conn, run_pks), _restarts(conn, run_pks),
                                     _instruments(conn, run_pks))
    resumptions, inputs = _resumptions(conn, run_pks), _inputs(conn, run_pks)
    searches, settled = _searches(conn, run_pks), com_results(conn, run_pks)
    return {r.id: RunFacts(
        r.method_name, r.method_version, RunStatus(r.status), r.started_wall,
        r.workload_engine or "", tuple(phases.get(r.id, ())), tuple(attempts.get(r.id, ())),
        instruments.get((r.id, "power_meter")), instruments.get((r.id, "temperature_meter")),
        methods.get(r.method_sha256), r.config or {}, tuple(resumptions.get(r.id, ())),
        tuple(inputs.get(r.id, ())), tuple(metrics.get(r.id, ())),
        tuple(searches.get(r.id, ())), tuple(settled.get(r.id, ())), r.finished_wall)
        for r in rows}


def _where(query: Any, column: Any, pks: Sequence[int] | None) -> Any:
    return query if pks is None else query.where(column.in_(list(pks)))


def _methods(conn: Connection, digests: set[str]) -> dict[str, Method | None]:
    """Each stored method once, by its SHA-256 (runs share a handful of methods)."""
    if not digests:
        return {}
    first = (sa.select(sa.func.min(s.Run.id)).where(s.Run.method_sha256.in_(list(digests)))
             .group_by(s.Run.method_sha256))
    found = conn.execute(sa.select(s.Run.method_sha256, s.Run.method_json)
                         .where(s.Run.id.in_(first))).all()
    return {digest: method_from_record(data) if data else None for digest, data in found}


def _phases(conn: Connection, pks: Sequence[int] | None) -> dict[int, list[StoredPhase]]:
    query = _where(sa.select(s.Phase.run_id, s.Phase.idx, s.Phase.kind, s.Phase.name,
                             s.Phase.profile, s.Phase.planned_s,
                             s.Phase.stabilisation_intervals, s.Phase.measurement_intervals,
                             s.Phase.status, s.Phase.attempts), s.Phase.run_id, pks)
    found: dict[int, list[StoredPhase]] = defaultdict(list)
    for p in conn.execute(query.order_by(s.Phase.run_id, s.Phase.idx)):
        found[p.run_id].append(StoredPhase(
            PhaseInfo(p.idx, PhaseKind(p.kind), p.name, p.profile, p.planned_s,
                      p.stabilisation_intervals, p.measurement_intervals),
            PhaseStatus(p.status), p.attempts, None, None, "", None))
    return found


def _inputs(conn: Connection, pks: Sequence[int] | None) -> dict[int, list[InputFacts]]:
    """Each multi-input run's inputs with their meters, in the configured order."""
    t = s.PowerInputRow
    query = _where(sa.select(t.run_id, t.name, t.vendor, t.model, t.serial, t.firmware,
                             t.resource, t.driver, t.calibration_date)
                   .order_by(t.run_id, t.position), t.run_id, pks)
    found: dict[int, list[InputFacts]] = defaultdict(list)
    for r in conn.execute(query).all():
        found[r.run_id].append(InputFacts(r.name, InstrumentIdentity(
            r.vendor, r.model, r.serial, r.firmware, r.resource, r.driver, r.calibration_date)))
    return found


def _resumptions(conn: Connection, pks: Sequence[int] | None) -> dict[int, list[Resumption]]:
    """Each resumed run's continuations, oldest first: a resumed run is never compliant."""
    table = s.RunResumptionRow
    query = _where(sa.select(table.run_id, table.number, table.t, table.wall,
                             table.restart_phase, table.cut_phase, table.carried, table.redone,
                             table.interruption).order_by(table.run_id, table.number),
                   table.run_id, pks)
    found: dict[int, list[Resumption]] = defaultdict(list)
    for r in conn.execute(query).all():
        found[r.run_id].append(Resumption(r.number, r._mapping["t"], r.wall, r.restart_phase,
                                          r.cut_phase, tuple(r.carried), tuple(r.redone),
                                          r.interruption))
    return found


def _searches(conn: Connection, pks: Sequence[int] | None) -> dict[int, list[SearchResult]]:
    """Each run's intensity-100 search outcomes and pre-run-only rows: a search that ran out
    of queue depths is a criterion NOT MET, and so is a pre-run access pattern off the method
    or a generator that could not hold an unsearched profile's rate."""
    t = s.SearchResultRow
    query = _where(sa.select(t.run_id, t.profile, t.queue_depth, t.jobs, t.ops_rate,
                             t.ops_unit, t.avg_response_ms, t.note, t.access_pattern,
                             t.generator, t.pre_run_basis)
                   .order_by(t.run_id, t.id), t.run_id, pks)
    found: dict[int, list[SearchResult]] = defaultdict(list)
    for r in conn.execute(query):
        found[r.run_id].append(SearchResult(
            r.profile, r.queue_depth, r.jobs, float("nan") if r.ops_rate is None else r.ops_rate,
            r.ops_unit, float("nan") if r.avg_response_ms is None else r.avg_response_ms,
            note=r.note or "", pattern=pattern_from_json(r.access_pattern),
            generator=tuple(generator_from_json(r.profile, g) for g in r.generator or ()),
            pre_run_basis=r.pre_run_basis))
    return found


def _restarts(conn: Connection, pks: Sequence[int] | None) -> dict[int, list[StoredAttempt]]:
    """The attempts of each phase that ran more than once: the verdict names why it restarted
    and how long it stopped (a phase run once has nothing to say)."""
    table = s.PhaseAttemptRow
    restarted = sa.select(s.Phase.run_id, s.Phase.idx).where(s.Phase.attempts > 1)
    query = _where(sa.select(table.run_id, table.phase_index, table.attempt, table.t_start,
                             table.t_end, table.status, table.error, table.window_start_s,
                             table.window_end_s)
                   .where(sa.tuple_(table.run_id, table.phase_index).in_(restarted)),
                   table.run_id, pks)
    found: dict[int, list[StoredAttempt]] = defaultdict(list)
    for a in conn.execute(query):
        found[a.run_id].append(StoredAttempt(a.phase_index, a.attempt, a.t_start, a.t_end,
                                             PhaseStatus(a.status), a.error, a.window_start_s,
                                             a.window_end_s))
    return found


def _instruments(conn: Connection, pks: Sequence[int] | None
                 ) -> dict[tuple[int, str], InstrumentIdentity]:
    table = s.InstrumentRow
    query = _where(sa.select(table.run_id, table.role, table.vendor, table.model, table.serial,
                             table.firmware, table.resource, table.driver,
                             table.calibration_date), table.run_id, pks)
    return {(i.run_id, i.role): InstrumentIdentity(i.vendor, i.model, i.serial, i.firmware,
                                                   i.resource, i.driver, i.calibration_date)
            for i in conn.execute(query)}
