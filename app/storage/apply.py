"""Run events → rows: how each sequencer event is stored, shared by the writer and the import.

:func:`apply_events` applies a list of :class:`Entry` (an event with the writer's sequence
number) inside the caller's transaction and records, per run, the last sequence number it
applied in ``runs.stored_seq``. That number is what makes importing a journal idempotent:
only entries above it are applied, so a journal imported twice — or one whose events the
writer stored after all — never duplicates a row.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from app.method.record import method_sha256
from app.core.records import PhaseInfo, PhaseStatus, RunStatus
from app.sequencer import events as ev
from app.sequencer.event_dispatch import EventTable
from app.storage import schema as s
from app.storage.power_inputs import replace_identities, sample_rows
from app.storage.codec import (encode_flags, generator_to_json, opt_float, pattern_to_json,
                               steady_to_json)
from app.storage.liveness import writer_identity

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Entry:
    """One event as the writer received it, numbered in arrival order."""

    seq: int
    event: ev.RunEvent


@dataclass(frozen=True)
class RunState:
    """What the writer knows about the run being written (committed together with rows)."""

    pk: int | None = None
    wall_t0: float = 0.0  # unix time at run start (finish wall time = this + duration)

    @classmethod
    def of_stored_run(cls, pk: int, started_wall: str) -> RunState:
        return cls(pk, _unix(started_wall))


@dataclass
class _Batch:
    """Sample rows collected during one transaction, inserted with one executemany each."""

    rows: dict[sa.Table, list[dict[str, Any]]] = field(default_factory=dict)

    def add(self, table: sa.Table, rows: list[dict[str, Any]]) -> None:
        self.rows.setdefault(table, []).extend(rows)

    def insert_all(self, conn: Connection) -> None:
        for table, rows in self.rows.items():
            if rows:
                conn.execute(table.insert(), rows)
        self.rows.clear()


#: how the record keeps each run event (the writer drops the ignored ones before its journal)
STORAGE: EventTable[RunState | None] = EventTable("storage")
STORAGE.ignore(ev.Progress, ev.HostRates,
               why="derived from the plan, or display rates: nothing to keep")
STORAGE.ignore(ev.RangesApplied, why="the run log's line for the range change keeps it, and "
               "the range plan is stored from RangePlanReady")


def apply_events(conn: Connection, state: RunState, entries: Sequence[Entry]) -> RunState:
    """Store ``entries`` in the caller's transaction; returns the state after the last one."""
    batch = _Batch()
    stored_seq: dict[int, int] = {}
    for entry in entries:
        event = entry.event
        if not STORAGE.handles(type(event)):
            STORAGE.dispatch(event)  # ignored on purpose, or logged as undecided
            continue
        if state.pk is None and not isinstance(event, (ev.RunStarted, ev.RunResumed)):
            log.warning("run writer: %s before RunStarted ignored", type(event).__name__)
            continue
        state = STORAGE.dispatch(event, conn, state, batch) or state
        stored_seq[state.pk] = entry.seq
    batch.insert_all(conn)
    for pk, seq in stored_seq.items():
        conn.execute(sa.update(s.Run).where(s.Run.id == pk).values(stored_seq=seq))
    if state.pk is not None:
        beat_run(conn, state.pk)
    return state


def beat_run(conn: Connection, pk: int) -> None:
    """The writer is alive: refresh the heartbeat of its RUNNING run."""
    conn.execute(sa.update(s.Run).where(s.Run.id == pk)
                 .where(s.Run.status == RunStatus.RUNNING.value)
                 .values(heartbeat_wall=time.time()))


def _unix(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def _get_or_create(conn: Connection, table: sa.Table, key: dict[str, Any],
                   values: dict[str, Any]) -> int:
    where = [table.c[k] == v for k, v in key.items()]
    pk = conn.execute(sa.select(table.c.id).where(*where)).scalar()
    if pk is None:
        return conn.execute(table.insert().values(**key, **values)).inserted_primary_key[0]
    if values:
        conn.execute(table.update().where(table.c.id == pk).values(**values))
    return pk


def _phase_row(pk: int, phase: PhaseInfo) -> dict[str, Any]:
    return dict(run_id=pk, idx=phase.index, kind=phase.kind.value, name=phase.name,
                profile=phase.profile, planned_s=phase.planned_s,
                stabilisation_intervals=phase.stabilisation_intervals,
                measurement_intervals=phase.measurement_intervals,
                status=PhaseStatus.PENDING.value, attempts=0, error="")


@STORAGE.on
def _on_run_started(conn: Connection, _s: RunState, _b: _Batch, e: ev.RunStarted) -> RunState:
    cfg = e.config
    station = (_get_or_create(conn, s.Station.__table__, {"name": cfg.station}, {})
               if cfg.station else None)
    sut = _get_or_create(conn, s.Sut.__table__,
                         {"vendor": cfg.sut.vendor, "model": cfg.sut.model,
                          "serial": cfg.sut.serial},
                         {"raw_capacity_bytes": cfg.sut.raw_capacity_bytes,
                          "drive_count": cfg.sut.drive_count, "drive_type": cfg.sut.drive_type})
    pk = conn.execute(s.Run.__table__.insert().values(
        uuid=e.run_id, station_id=station, sut_id=sut, config=cfg.snapshot(),
        method_name=e.method_name, method_version=e.method_version,
        method_compliant=e.method_compliant,
        method_json=e.method_json or None,
        method_sha256=method_sha256(e.method_json) if e.method_json else None,
        taxonomy=cfg.taxonomy, lab=cfg.lab,
        operator=cfg.operator, status=RunStatus.RUNNING.value, started_wall=e.wall_start_iso,
        t0=e.t0, planned_s=e.planned_s, error="", workload_engine="",
        **writer_identity())).inserted_primary_key[0]
    if e.phases:
        conn.execute(s.Phase.__table__.insert(), [_phase_row(pk, p) for p in e.phases])
    return RunState(pk, _unix(e.wall_start_iso))


@STORAGE.on
def _on_run_resumed(conn: Connection, _s: RunState, _b: _Batch, e: ev.RunResumed) -> RunState:
    """The continuation of an INTERRUPTED run writes into that run (claimed for this writer by
    :func:`app.storage.resumption.claim_run`); its resumption is recorded once."""
    run = conn.execute(sa.select(s.Run.id, s.Run.started_wall)
                       .where(s.Run.uuid == e.started.run_id)).one()
    r = e.resumption
    _get_or_create(conn, s.RunResumptionRow.__table__, {"run_id": run.id, "number": r.number},
                   dict(t=r.t, wall=r.wall_iso, restart_phase=r.restart_phase,
                        cut_phase=r.cut_phase, carried=list(r.carried), redone=list(r.redone),
                        interruption=r.interruption))
    return RunState.of_stored_run(run.id, run.started_wall)


@STORAGE.on
def _on_instruments(conn: Connection, st: RunState, _b: _Batch,
                    e: ev.InstrumentsIdentified) -> None:
    table = s.InstrumentRow.__table__
    conn.execute(sa.update(s.Run).where(s.Run.id == st.pk).values(
        workload_engine=e.workload_engine))
    for role, ident in (("power_meter", e.power_meter), ("temperature_meter",
                                                         e.temperature_meter)):
        conn.execute(table.delete().where(table.c.run_id == st.pk, table.c.role == role))
        if ident is not None:
            conn.execute(table.insert().values(
                run_id=st.pk, role=role, vendor=ident.vendor, model=ident.model,
                serial=ident.serial, firmware=ident.firmware, resource=ident.resource,
                driver=ident.driver, calibration_date=ident.calibration_date))
    replace_identities(conn, st.pk, e.power_inputs)


def _phase_where(st: RunState, index: int) -> Any:
    return sa.update(s.Phase).where(s.Phase.run_id == st.pk, s.Phase.idx == index)


def _ensure_phase(conn: Connection, st: RunState, phase: PhaseInfo) -> None:
    """A phase outside the announced plan (should not happen) is stored rather than lost."""
    exists = conn.execute(sa.select(s.Phase.id).where(s.Phase.run_id == st.pk,
                                                      s.Phase.idx == phase.index)).scalar()
    if exists is None:
        conn.execute(s.Phase.__table__.insert().values(**_phase_row(st.pk, phase)))


@STORAGE.on
def _on_phase_started(conn: Connection, st: RunState, _b: _Batch,
                      e: ev.PhaseStarted) -> None:
    _ensure_phase(conn, st, e.phase)
    conn.execute(_phase_where(st, e.phase.index).values(
        status=PhaseStatus.RUNNING.value, t_start=e.t, t_end=None, error="",
        attempts=e.attempt, steady_state=None))  # a new attempt's rounds are judged afresh
    conn.execute(s.PhaseAttemptRow.__table__.insert().values(
        run_id=st.pk, phase_index=e.phase.index, attempt=e.attempt, t_start=e.t, t_end=None,
        status=PhaseStatus.RUNNING.value, error="", window_start_s=e.window_start_s,
        window_end_s=e.window_end_s))


@STORAGE.on
def _on_stabilisation_extended(conn: Connection, st: RunState, _b: _Batch,
                               e: ev.StabilisationExtended) -> None:
    """The recorded measurement window of the attempt moves (method-notes §4)."""
    attempts = s.PhaseAttemptRow
    conn.execute(sa.update(attempts).where(
        attempts.run_id == st.pk, attempts.phase_index == e.phase_index,
        attempts.attempt == e.attempt).values(window_start_s=e.window_start_s,
                                              window_end_s=e.window_end_s))


@STORAGE.on
def _on_phase_finished(conn: Connection, st: RunState, _b: _Batch,
                       e: ev.PhaseFinished) -> None:
    _ensure_phase(conn, st, e.phase)
    attempts = s.PhaseAttemptRow
    conn.execute(sa.update(attempts).where(
        attempts.run_id == st.pk, attempts.phase_index == e.phase.index,
        attempts.attempt == e.attempt).values(status=e.status.value, t_end=e.t, error=e.error))
    values: dict[str, Any] = dict(status=e.status.value, t_end=e.t, error=e.error)
    w = e.workload
    if w is not None:
        values.update(read_ios=w.read_ios, write_ios=w.write_ios, read_bytes=w.read_bytes,
                      write_bytes=w.write_bytes, runtime_s=opt_float(w.runtime_s),
                      exit_code=w.exit_code, engine=w.engine, job_text=w.job_text,
                      workload_error=w.error)
    conn.execute(_phase_where(st, e.phase.index).values(**values))


@STORAGE.on
def _on_steady_state(conn: Connection, st: RunState, _b: _Batch,
                     e: ev.SteadyStateJudged) -> None:
    """The phase keeps the latest PTS steady-state verdict of its rounds (revision 0020)."""
    conn.execute(_phase_where(st, e.phase_index).values(steady_state=steady_to_json(e.verdict)))


@STORAGE.on
def _on_power(_c: Connection, st: RunState, batch: _Batch, e: ev.PowerSamples) -> None:
    pk, i = st.pk, e.phase_index
    batch.add(s.PowerSampleRow.__table__, [
        {"run_id": pk, "phase_index": i, "t": p.t, "watts": opt_float(p.watts),
         "volts": opt_float(p.volts), "amps": opt_float(p.amps), "pf": opt_float(p.pf),
         "freq": opt_float(p.freq_hz), "range_v": opt_float(p.range_v),
         "range_a": opt_float(p.range_a), "uncertainty_pct": opt_float(p.uncertainty_pct),
         "flags": encode_flags(p.flags), "attempt": where.attempt,
         "interval_idx": where.interval, "window_code": int(where.window)}
        for p, where in zip(e.samples, e.placements, strict=True)])
    batch.add(s.PowerInputSampleRow.__table__, sample_rows(pk, e.samples))


@STORAGE.on
def _on_temperature(_c: Connection, st: RunState, batch: _Batch,
                    e: ev.TemperatureSamples) -> None:
    batch.add(s.TemperatureSampleRow.__table__, [
        {"run_id": st.pk, "phase_index": e.phase_index, "t": x.t,
         "celsius": opt_float(x.celsius), "flags": encode_flags(x.flags),
         "attempt": where.attempt, "interval_idx": where.interval,
         "window_code": int(where.window)}
        for x, where in zip(e.samples, e.placements, strict=True)])


@STORAGE.on
def _on_workload(_c: Connection, st: RunState, batch: _Batch,
                 e: ev.WorkloadIntervals) -> None:
    batch.add(s.WorkloadIntervalRow.__table__, [
        {"run_id": st.pk, "phase_index": e.phase_index, "t_start": w.t_start,
         "t_end": w.t_end, "read_ios": w.read_ios, "write_ios": w.write_ios,
         "read_bytes": w.read_bytes, "write_bytes": w.write_bytes,
         "avg_resp_ms": opt_float(w.avg_resp_ms), "max_resp_ms": opt_float(w.max_resp_ms),
         "host": w.host, "attempt": e.attempt, "window_code": int(window)}
        for w, window in zip(e.intervals, e.windows, strict=True)])


@STORAGE.on
def _on_interval(conn: Connection, st: RunState, _b: _Batch, e: ev.IntervalClosed) -> None:
    r = e.interval
    conn.execute(s.IntervalRow.__table__.insert().values(
        run_id=st.pk, phase_index=r.phase_index, profile=r.profile, idx=r.index,
        start_s=r.start_s, end_s=r.end_s, avg_power_w=opt_float(r.avg_power_w),
        n_power_samples=r.n_power_samples, ops_rate=opt_float(r.ops_rate), ops_unit=r.ops_unit,
        avg_response_ms=opt_float(r.avg_response_ms), ep=opt_float(r.ep), wma=opt_float(r.wma),
        in_measurement=r.in_measurement, stable=r.stable, attempt=r.attempt))


@STORAGE.on
def _on_histogram(conn: Connection, st: RunState, _b: _Batch, e: ev.HistogramReady) -> None:
    ns = sorted(e.bins)
    conn.execute(s.HistogramRow.__table__.insert().values(
        run_id=st.pk, phase_index=e.phase_index, profile=e.profile,
        bins={"ns": ns, "count": [e.bins[k] for k in ns]},
        confidence_ms={repr(float(k)): opt_float(v) for k, v in e.confidence_ms.items()},
        ceiling_ms=opt_float(e.ceiling_ms), above_ceiling=e.above_ceiling, attempt=e.attempt))


@STORAGE.on
def _on_search(conn: Connection, st: RunState, _b: _Batch, e: ev.SearchResult) -> None:
    rate = e.rate_iops or (None, None)
    conn.execute(s.SearchResultRow.__table__.insert().values(
        run_id=st.pk, profile=e.profile, queue_depth=e.queue_depth, jobs=e.jobs,
        ops_rate=opt_float(e.ops_rate), ops_unit=e.ops_unit,
        avg_response_ms=opt_float(e.avg_response_ms), rate_read_iops=rate[0],
        rate_write_iops=rate[1],
        probes=[[qd, opt_float(r), opt_float(ms)] for qd, r, ms in e.probes], note=e.note,
        generator=[generator_to_json(g) for g in e.generator],
        access_pattern=pattern_to_json(e.pattern), pre_run_basis=e.pre_run_basis))


@STORAGE.on
def _on_range_plan(conn: Connection, st: RunState, _b: _Batch, e: ev.RangePlanReady) -> None:
    conn.execute(sa.update(s.Run).where(s.Run.id == st.pk).values(range_plan=e.plan.to_json()))


def _store_metric(conn: Connection, st: RunState, m: Any) -> None:
    """Insert or replace by name: RunFinished repeats the metrics MetricComputed announced."""
    values = dict(value=opt_float(m.value), unit=m.unit, valid=m.valid, reason=m.reason,
                  run_length_s=m.run_length_s, avg_power_w=opt_float(m.avg_power_w),
                  ops_rate=opt_float(m.ops_rate), ops_unit=m.ops_unit,
                  avg_response_ms=opt_float(m.avg_response_ms), phase_index=m.phase_index)
    _get_or_create(conn, s.MetricRow.__table__, {"run_id": st.pk, "name": m.name}, values)


@STORAGE.on
def _on_metric(conn: Connection, st: RunState, _b: _Batch, e: ev.MetricComputed) -> None:
    _store_metric(conn, st, e.metric)


@STORAGE.on
def _on_log(conn: Connection, st: RunState, _b: _Batch, e: ev.LogMessage) -> None:
    conn.execute(s.EventRow.__table__.insert().values(
        run_id=st.pk, t=e.t, level=e.level, message=e.message,
        phase_index=e.phase_index))


@STORAGE.on
def _on_teardown_failed(conn: Connection, st: RunState, _b: _Batch,
                        e: ev.TeardownFailed) -> None:
    """Kept in the run's log with the other events a technician reads back (``runs show``)."""
    conn.execute(s.EventRow.__table__.insert().values(
        run_id=st.pk, t=e.t, level="WARNING", message=e.describe(), phase_index=None))


@STORAGE.on
def _on_run_finished(conn: Connection, st: RunState, batch: _Batch, e: ev.RunFinished) -> None:
    batch.insert_all(conn)  # the rows before the final status, so a guard that makes a
    # finished run's facts immutable (issue 39) never has to let a late row through
    for metric in e.metrics:
        _store_metric(conn, st, metric)
    conn.execute(sa.update(s.Run).where(s.Run.id == st.pk).values(
        status=e.status.value, duration_s=e.t, error=e.error, writer_pid=None,
        finished_wall=_finish_wall(st, e.t)))


def _finish_wall(st: RunState, t: float) -> str:
    """Start wall time plus the run's duration (``t`` is run-relative): right also when the
    run is stored later from its journal."""
    finish = datetime.fromtimestamp(st.wall_t0, timezone.utc) + timedelta(seconds=t)
    return finish.isoformat(timespec="seconds")

