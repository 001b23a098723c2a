"""The run writer: turns sequencer events into rows without ever blocking the sequencer.

``RunWriter(database)`` is a :class:`~app.sequencer.events.RunListener`: calling it only puts
the event on a queue. One writer thread, with its own connection, takes everything queued,
applies it in one transaction (samples batched with ``executemany``) and commits at least every
``commit_interval_s`` — so a crash of the station loses at most about a second of samples.

If a commit fails (disk full, database locked) the transaction is rolled back, the events stay
pending, :attr:`RunWriter.failed` turns True, ``on_error`` is called once, and the writer
retries until the problem clears: samples are never dropped silently. ``close()`` drains the
queue and raises :class:`WriterError` if events could not be stored by its deadline.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from app.records import PhaseInfo, PhaseStatus, RunStatus
from app.sequencer import events as ev
from app.storage import schema as s
from app.method.record import method_sha256
from app.storage.codec import encode_flags, opt_float
from app.storage.db import Database
from app.storage.errors import StorageError, WriterError, classify
from app.storage.liveness import HEARTBEAT_INTERVAL_S, writer_identity

log = logging.getLogger(__name__)

COMMIT_INTERVAL_S = 0.5  # ≤ 1 s of samples at risk in a crash (brief: "at most ~1 s")
RETRY_INTERVAL_S = 1.0
ErrorCallback = Callable[[StorageError], None]


@dataclass(frozen=True)
class _RunState:
    """What the writer knows about the run being written (committed together with rows)."""

    pk: int | None = None


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


class _Flush:
    def __init__(self) -> None:
        self.done = threading.Event()


_STOP = object()


class RunWriter:
    """Durable, non-blocking storage of one or more runs' events (see module docstring)."""

    def __init__(self, database: Database, *, on_error: ErrorCallback | None = None,
                 commit_interval_s: float = COMMIT_INTERVAL_S,
                 retry_interval_s: float = RETRY_INTERVAL_S) -> None:
        self.database = database
        self.on_error = on_error
        self.commit_interval_s = commit_interval_s
        self.retry_interval_s = retry_interval_s
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._pending: list[ev.RunEvent] = []
        self._state = _RunState()
        self._error: StorageError | None = None
        self._failed = False
        self._closed = False
        self._abandon = threading.Event()
        self._engine = database.writer_engine()
        self._thread = threading.Thread(target=self._loop, name="run-writer", daemon=True)
        self._thread.start()

    # --- listener side (sequencer thread) ----------------------------------------------------
    def __call__(self, event: ev.RunEvent) -> None:
        if isinstance(event, ev.Progress):
            return  # derived from the plan; nothing to keep
        if self._closed:
            raise WriterError("the run writer is closed: the event was not stored")
        self._queue.put(event)

    @property
    def failed(self) -> bool:
        """True while the last commit attempt failed (events are pending, being retried)."""
        return self._failed

    @property
    def error(self) -> StorageError | None:
        """The most recent storage error (kept after recovery for the log)."""
        return self._error

    @property
    def backlog(self) -> int:
        """Events received but not yet committed."""
        return self._queue.qsize() + len(self._pending)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything queued so far is committed; False on timeout or failure."""
        marker = _Flush()
        self._queue.put(marker)
        return marker.done.wait(timeout) and not self._failed

    def close(self, timeout: float = 10.0) -> None:
        """Store everything queued, stop the thread; raises WriterError if events were lost."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(_STOP)
        self._thread.join(timeout)
        if self._thread.is_alive():
            self._abandon.set()
            self._thread.join(self.retry_interval_s + 5.0)
        self._engine.dispose()
        lost = self.backlog
        if lost:
            raise WriterError(f"{lost} run events could not be stored in {self.database.url}: "
                              f"{self._error or 'the writer did not finish in time'}")

    # --- writer thread ---------------------------------------------------------------------
    def _loop(self) -> None:
        last_commit = time.monotonic()
        flushes: list[_Flush] = []
        stopping = False
        while True:
            wait = self.commit_interval_s - (time.monotonic() - last_commit)
            idle_wait = HEARTBEAT_INTERVAL_S if self._state.pk is not None else None
            stopping |= self._take(max(wait, 0.01) if self._pending else idle_wait, flushes)
            now = time.monotonic()
            due = now - last_commit >= self.commit_interval_s or flushes or stopping
            if self._pending and due:
                if self._commit():
                    last_commit = now
                elif self._abandon.wait(self.retry_interval_s):
                    break
            elif self._state.pk is not None and now - last_commit >= HEARTBEAT_INTERVAL_S:
                self._beat()  # idle (a paused run): still alive, not to be taken for crashed
                last_commit = now
            if not self._pending:
                for marker in flushes:
                    marker.done.set()
                flushes.clear()
                if stopping:
                    self._release_run()
                    break
        for marker in flushes:
            marker.done.set()

    def _take(self, timeout: float | None, flushes: list[_Flush]) -> bool:
        """Move queued events to ``_pending`` (waiting up to ``timeout`` for the first);
        returns True when a stop request was seen."""
        stopping = False
        try:
            item = self._queue.get(timeout=timeout)
            while True:
                if item is _STOP:
                    stopping = True
                elif isinstance(item, _Flush):
                    flushes.append(item)
                else:
                    self._pending.append(item)
                item = self._queue.get_nowait()
        except queue.Empty:
            pass
        return stopping

    def _commit(self) -> bool:
        """Apply all pending events in one transaction; on failure keep them for a retry."""
        try:
            with self._engine.begin() as conn:
                state = _apply_all(conn, self._state, self._pending)
        except Exception as exc:  # noqa: BLE001 - any failure must keep the events
            self._report(classify(exc, self.database.url))
            return False
        self._state = state
        self._pending.clear()
        self._failed = False
        return True

    def _report(self, error: StorageError) -> None:
        first = not self._failed
        self._failed, self._error = True, error
        if first:
            log.error("run writer: %s (%d events kept, retrying)", error, len(self._pending))
            if self.on_error:
                try:
                    self.on_error(error)
                except Exception:  # noqa: BLE001 - a broken callback must not stop storage
                    log.exception("run writer error callback failed")

    def _beat(self) -> None:
        """Refresh the heartbeat of a run with nothing to store; a failure here is left to
        the next real commit to report."""
        try:
            with self._engine.begin() as conn:
                _beat_run(conn, self._state.pk)
        except Exception as exc:  # noqa: BLE001 - retried at the next beat
            log.debug("run writer: heartbeat not stored: %s", exc)

    def _release_run(self) -> None:
        """Closed before RunFinished: give the run up so the next open marks it INTERRUPTED."""
        if self._state.pk is None:
            return
        try:
            with self._engine.begin() as conn:
                conn.execute(sa.update(s.Run).where(s.Run.id == self._state.pk)
                             .where(s.Run.status == RunStatus.RUNNING.value)
                             .values(writer_pid=None))
        except Exception as exc:  # noqa: BLE001 - reopening recovers it by pid anyway
            log.warning("run writer: could not release the run: %s", exc)


# --- event → rows -----------------------------------------------------------------------------

def _apply_all(conn: Connection, state: _RunState, events: list[ev.RunEvent]) -> _RunState:
    batch = _Batch()
    for event in events:
        handler = _HANDLERS.get(type(event))
        if handler is None:
            continue
        if state.pk is None and not isinstance(event, ev.RunStarted):
            log.warning("run writer: %s before RunStarted ignored", type(event).__name__)
            continue
        state = handler(conn, state, batch, event) or state
    batch.insert_all(conn)
    if state.pk is not None:
        _beat_run(conn, state.pk)
    return state


def _beat_run(conn: Connection, pk: int) -> None:
    conn.execute(sa.update(s.Run).where(s.Run.id == pk)
                 .where(s.Run.status == RunStatus.RUNNING.value)
                 .values(heartbeat_wall=time.time()))


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


def _on_run_started(conn: Connection, _s: _RunState, _b: _Batch, e: ev.RunStarted) -> _RunState:
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
        heartbeat_wall=time.time(), **writer_identity())).inserted_primary_key[0]
    if e.phases:
        conn.execute(s.Phase.__table__.insert(), [_phase_row(pk, p) for p in e.phases])
    return _RunState(pk)


def _on_instruments(conn: Connection, st: _RunState, _b: _Batch,
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


def _phase_where(st: _RunState, index: int) -> Any:
    return sa.update(s.Phase).where(s.Phase.run_id == st.pk, s.Phase.idx == index)


def _ensure_phase(conn: Connection, st: _RunState, phase: PhaseInfo) -> None:
    """A phase outside the announced plan (should not happen) is stored rather than lost."""
    exists = conn.execute(sa.select(s.Phase.id).where(s.Phase.run_id == st.pk,
                                                      s.Phase.idx == phase.index)).scalar()
    if exists is None:
        conn.execute(s.Phase.__table__.insert().values(**_phase_row(st.pk, phase)))


def _on_phase_started(conn: Connection, st: _RunState, _b: _Batch,
                      e: ev.PhaseStarted) -> None:
    _ensure_phase(conn, st, e.phase)
    conn.execute(_phase_where(st, e.phase.index).values(
        status=PhaseStatus.RUNNING.value, t_start=e.t, t_end=None, error="",
        attempts=e.attempt))
    conn.execute(s.PhaseAttemptRow.__table__.insert().values(
        run_id=st.pk, phase_index=e.phase.index, attempt=e.attempt, t_start=e.t, t_end=None,
        status=PhaseStatus.RUNNING.value, error="", window_start_s=e.window_start_s,
        window_end_s=e.window_end_s))


def _on_phase_finished(conn: Connection, st: _RunState, _b: _Batch,
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


def _on_power(_c: Connection, st: _RunState, batch: _Batch, e: ev.PowerSamples) -> None:
    pk, i = st.pk, e.phase_index
    batch.add(s.PowerSampleRow.__table__, [
        {"run_id": pk, "phase_index": i, "t": p.t, "watts": opt_float(p.watts),
         "volts": opt_float(p.volts), "amps": opt_float(p.amps), "pf": opt_float(p.pf),
         "freq": opt_float(p.freq_hz), "range_v": opt_float(p.range_v),
         "range_a": opt_float(p.range_a), "uncertainty_pct": opt_float(p.uncertainty_pct),
         "flags": encode_flags(p.flags), "attempt": where.attempt,
         "interval_idx": where.interval, "window_code": int(where.window)}
        for p, where in zip(e.samples, e.placements, strict=True)])


def _on_temperature(_c: Connection, st: _RunState, batch: _Batch,
                    e: ev.TemperatureSamples) -> None:
    batch.add(s.TemperatureSampleRow.__table__, [
        {"run_id": st.pk, "phase_index": e.phase_index, "t": x.t,
         "celsius": opt_float(x.celsius), "flags": encode_flags(x.flags),
         "attempt": where.attempt, "interval_idx": where.interval,
         "window_code": int(where.window)}
        for x, where in zip(e.samples, e.placements, strict=True)])


def _on_workload(_c: Connection, st: _RunState, batch: _Batch,
                 e: ev.WorkloadIntervals) -> None:
    batch.add(s.WorkloadIntervalRow.__table__, [
        {"run_id": st.pk, "phase_index": e.phase_index, "t_start": w.t_start,
         "t_end": w.t_end, "read_ios": w.read_ios, "write_ios": w.write_ios,
         "read_bytes": w.read_bytes, "write_bytes": w.write_bytes,
         "avg_resp_ms": opt_float(w.avg_resp_ms), "max_resp_ms": opt_float(w.max_resp_ms),
         "host": w.host, "attempt": e.attempt, "window_code": int(window)}
        for w, window in zip(e.intervals, e.windows, strict=True)])


def _on_interval(conn: Connection, st: _RunState, _b: _Batch, e: ev.IntervalClosed) -> None:
    r = e.interval
    conn.execute(s.IntervalRow.__table__.insert().values(
        run_id=st.pk, phase_index=r.phase_index, profile=r.profile, idx=r.index,
        start_s=r.start_s, end_s=r.end_s, avg_power_w=opt_float(r.avg_power_w),
        n_power_samples=r.n_power_samples, ops_rate=opt_float(r.ops_rate), ops_unit=r.ops_unit,
        avg_response_ms=opt_float(r.avg_response_ms), ep=opt_float(r.ep), wma=opt_float(r.wma),
        in_measurement=r.in_measurement, stable=r.stable, attempt=r.attempt))


def _on_histogram(conn: Connection, st: _RunState, _b: _Batch, e: ev.HistogramReady) -> None:
    ns = sorted(e.bins)
    conn.execute(s.HistogramRow.__table__.insert().values(
        run_id=st.pk, phase_index=e.phase_index, profile=e.profile,
        bins={"ns": ns, "count": [e.bins[k] for k in ns]},
        confidence_ms={repr(float(k)): opt_float(v) for k, v in e.confidence_ms.items()},
        ceiling_ms=opt_float(e.ceiling_ms), above_ceiling=e.above_ceiling))


def _on_search(conn: Connection, st: _RunState, _b: _Batch, e: ev.SearchResult) -> None:
    rate = e.rate_iops or (None, None)
    conn.execute(s.SearchResultRow.__table__.insert().values(
        run_id=st.pk, profile=e.profile, queue_depth=e.queue_depth, jobs=e.jobs,
        ops_rate=opt_float(e.ops_rate), ops_unit=e.ops_unit,
        avg_response_ms=opt_float(e.avg_response_ms), rate_read_iops=rate[0],
        rate_write_iops=rate[1],
        probes=[[qd, opt_float(r), opt_float(ms)] for qd, r, ms in e.probes]))


def _store_metric(conn: Connection, st: _RunState, m: Any) -> None:
    """Insert or replace by name: RunFinished repeats the metrics MetricComputed announced."""
    values = dict(value=opt_float(m.value), unit=m.unit, valid=m.valid, reason=m.reason,
                  run_length_s=m.run_length_s, avg_power_w=opt_float(m.avg_power_w),
                  ops_rate=opt_float(m.ops_rate), ops_unit=m.ops_unit,
                  avg_response_ms=opt_float(m.avg_response_ms), phase_index=m.phase_index)
    _get_or_create(conn, s.MetricRow.__table__, {"run_id": st.pk, "name": m.name}, values)


def _on_metric(conn: Connection, st: _RunState, _b: _Batch, e: ev.MetricComputed) -> None:
    _store_metric(conn, st, e.metric)


def _on_log(conn: Connection, st: _RunState, _b: _Batch, e: ev.LogMessage) -> None:
    conn.execute(s.EventRow.__table__.insert().values(
        run_id=st.pk, t=e.t, level=e.level, message=e.message,
        phase_index=e.phase_index))


def _on_run_finished(conn: Connection, st: _RunState, _b: _Batch, e: ev.RunFinished) -> None:
    for metric in e.metrics:
        _store_metric(conn, st, metric)
    conn.execute(sa.update(s.Run).where(s.Run.id == st.pk).values(
        status=e.status.value, duration_s=e.t, error=e.error, writer_pid=None,
        finished_wall=datetime.now(timezone.utc).isoformat(timespec="seconds")))


_HANDLERS: dict[type, Callable[..., _RunState | None]] = {
    ev.RunStarted: _on_run_started,
    ev.InstrumentsIdentified: _on_instruments,
    ev.PhaseStarted: _on_phase_started,
    ev.PhaseFinished: _on_phase_finished,
    ev.PowerSamples: _on_power,
    ev.TemperatureSamples: _on_temperature,
    ev.WorkloadIntervals: _on_workload,
    ev.IntervalClosed: _on_interval,
    ev.HistogramReady: _on_histogram,
    ev.SearchResult: _on_search,
    ev.MetricComputed: _on_metric,
    ev.LogMessage: _on_log,
    ev.RunFinished: _on_run_finished,
}

__all__ = ["RunWriter", "COMMIT_INTERVAL_S"]
