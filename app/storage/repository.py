"""Queries of the read side: list runs, resolve id prefixes, load one run completely.

Each call reads in one transaction, so a run being written by another process is seen as a
consistent snapshot (WAL). The read model types live in :mod:`app.storage.stored`.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from app.core.records import (IntervalRecord, MetricResult, PhaseInfo, PhaseKind, PhaseStatus,
                              RunStatus, Window)
from app.sequencer.events import HistogramReady, Resumption, SearchResult
from app.sequencer.range_plan import RangePlan
from app.storage import schema as s
from app.storage.audit import audit_trail, latest_dispositions_query, signoff_home
from app.storage.codec import (decode_flags, encode_flags, generator_from_json, nan_if_none,
                               pattern_from_json, steady_from_json)
from app.storage.power_inputs import StoredPowerInput, load_power_inputs
from app.storage.record_cache import load_record_hashes
from app.storage.db import Database
from app.storage.run_facts import RunFacts, run_facts
from app.storage.run_ids import resolve_run_id
from app.storage.stored import (KeyMetric, PowerArrays, RunSummary, StoredAttempt,
                                StoredEvent,
                                StoredPhase, StoredRun, StoredWorkloadSlice, TemperatureArrays,
                                frozen_array)
from drivers.interfaces import InstrumentIdentity, WorkloadInterval, WorkloadResult

DIGEST_HEADER = b"storwatt-samples-v1\n"
POWER_COLUMNS = ("phase_index", "t", "watts", "volts", "amps", "pf", "freq", "range_v",
                 "range_a", "uncertainty_pct")
PLACEMENT_COLUMNS = ("attempt", "interval_idx", "window_code")


# --- listing ----------------------------------------------------------------------------------

def run_list_query() -> sa.Select:
    """The run list's columns: runs outer-joined with their station and SUT, newest first."""
    return (sa.select(s.Run.id, s.Run.uuid, s.Run.status, s.Run.method_name,
                      s.Run.method_version, s.Run.method_compliant, s.Run.taxonomy, s.Run.lab,
                      s.Run.operator, s.Station.name.label("station"), s.Sut.vendor,
                      s.Sut.model, s.Sut.serial, s.Run.started_wall, s.Run.finished_wall,
                      s.Run.planned_s, s.Run.duration_s, s.Run.error)
            .outerjoin(s.Station, s.Run.station_id == s.Station.id)
            .outerjoin(s.Sut, s.Run.sut_id == s.Sut.id)
            .order_by(s.Run.started_wall.desc(), s.Run.id.desc()))


def list_runs(database: Database, *, status: RunStatus | str | None = None,
              method: str | None = None, sut_serial: str | None = None,
              since: str | None = None, limit: int | None = None,
              station: str | None = None) -> list[RunSummary]:
    """Runs newest first with their key metrics and latest QA disposition, in three queries
    (runs, their metrics, their dispositions). ``since`` is an ISO date/time compared with the
    start time; ``station``: only the runs recorded by the station of that name. The QA
    history reads a page at a time instead (:mod:`app.storage.run_pages`)."""
    query = run_list_query()
    if status is not None:
        query = query.where(s.Run.status == str(status))
    if method is not None:
        query = query.where(s.Run.method_name == method)
    if sut_serial is not None:
        query = query.where(s.Sut.serial == sut_serial)
    if since is not None:
        query = query.where(s.Run.started_wall >= since)
    if station is not None:
        query = query.where(s.Station.name == station)
    if limit is not None:
        query = query.limit(limit)
    with database.read() as conn:
        rows = conn.execute(query).all()
        # a few runs: only theirs (all runs: no IN list of 10,000)
        return summaries(conn, rows, None if limit is None else [r.id for r in rows])


def summaries(conn: Connection, rows: Sequence[Any], pks: Sequence[int] | None
              ) -> list[RunSummary]:
    """``rows`` of :func:`run_list_query` as run summaries with their metrics, latest QA
    disposition and verdict facts, read for the runs ``pks`` (None: every run)."""
    metrics = sa.select(s.MetricRow.run_id, s.MetricRow.name, s.MetricRow.value,
                        s.MetricRow.unit, s.MetricRow.valid, s.MetricRow.reason)
    decided_query = latest_dispositions_query(pks)
    if pks is not None:
        metrics = metrics.where(s.MetricRow.run_id.in_(pks))
    by_run: dict[int, list[KeyMetric]] = defaultdict(list)
    for pk, name, value, unit, valid, reason in conn.execute(metrics).all():
        by_run[pk].append(KeyMetric(name, math.nan if value is None else value, unit,
                                    bool(valid), reason or ""))
    decided = {pk: (d, a) for pk, d, a in conn.execute(decided_query)}
    facts = run_facts(conn, pks, by_run)
    return [_summary(r, tuple(by_run.get(r.id, ())), *decided.get(r.id, ("", "")),
                     facts[r.id]) for r in rows]


def _summary(r: Any, metrics: tuple[KeyMetric, ...], disposition: str,
             author: str, facts: RunFacts) -> RunSummary:
    sut = " ".join(filter(None, (r.vendor, r.model, r.serial and f"s/n {r.serial}")))
    row = RunSummary(r.uuid, RunStatus(r.status), r.method_name, r.method_version,
                     bool(r.method_compliant), r.taxonomy, r.lab, r.operator or "",
                     r.station or "", sut, r.started_wall, r.finished_wall, r.planned_s,
                     r.duration_s, r.error or "", metrics, disposition or "", author or "",
                     facts=facts)
    text = " ".join((row.run_id, row.sut, row.method_name, row.method_version, row.taxonomy,
                     row.lab, row.operator, row.station, row.searched_status, row.disposition,
                     row.error))
    object.__setattr__(row, "haystack", text.lower())  # derived once, never compared
    return row


# --- one run ----------------------------------------------------------------------------------

def load_run(database: Database, run_id: str) -> StoredRun:
    """Everything stored about one run (``run_id`` may be an unambiguous prefix)."""
    uuid = resolve_run_id(database, run_id)
    with database.read() as conn:
        run = conn.execute(sa.select(s.Run.__table__).where(s.Run.uuid == uuid)).one()
        pk = run.id
        power, power_codes = _power(conn, pk)
        temperature, temp_codes = _temperature(conn, pk)
        identities = _instruments(conn, pk)
        inputs = load_power_inputs(conn, pk)
        return StoredRun(
            run_id=uuid, config_snapshot=run.config, method_name=run.method_name,
            method_version=run.method_version, method_compliant=run.method_compliant,
            method_json=run.method_json, method_sha256=run.method_sha256,
            status=RunStatus(run.status), started_wall=run.started_wall,
            finished_wall=run.finished_wall, t0=run.t0, planned_s=run.planned_s,
            duration_s=run.duration_s, error=run.error, workload_engine=run.workload_engine,
            phases=_phases(conn, pk), attempts=_attempts(conn, pk),
            power_meter=identities.get("power_meter"),
            temperature_meter=identities.get("temperature_meter"),
            metrics=_metrics(conn, pk), intervals=_intervals(conn, pk),
            histograms=_histograms(conn, pk), search_results=_searches(conn, pk),
            events=_events(conn, pk), workload=_workload(conn, pk), power=power,
            temperature=temperature,
            samples_sha256=samples_digest(power, power_codes, temperature, temp_codes, inputs),
            audit=tuple(audit_trail(conn, uuid)), resumptions=_resumptions(conn, pk),
            range_plan=RangePlan.from_json(run.range_plan) if run.range_plan else None,
            power_inputs=inputs, record_hashes=load_record_hashes(conn, pk),
            signoff_home=signoff_home(database.url), writer_role=run.writer_role)


def _rows(conn: Connection, entity: Any, pk: int, *order: Any) -> Sequence[Any]:
    """Rows of one run's child table (attribute access by column name)."""
    return conn.execute(sa.select(entity.__table__).where(entity.run_id == pk)
                        .order_by(*order, entity.id)).all()


def _columns(conn: Connection, table: sa.Table, names: Sequence[str], pk: int) -> list[tuple]:
    query = (sa.select(*(table.c[n] for n in names))
             .where(table.c.run_id == pk).order_by(table.c.t, table.c.id))
    return [tuple(r) for r in conn.execute(query)]


def _placements(rows: list[tuple]) -> dict[str, np.ndarray]:
    """The placement columns (the last three of each row) as read-only int64 arrays."""
    tags = np.array([r[-3:] for r in rows], dtype=np.int64).reshape(len(rows), 3)
    return {"attempt": frozen_array(tags[:, 0], np.int64),
            "interval": frozen_array(tags[:, 1], np.int64),
            "window": frozen_array(tags[:, 2], np.int64)}


def _power(conn: Connection, pk: int) -> tuple[PowerArrays, list[str]]:
    table = s.PowerSampleRow.__table__
    rows = _columns(conn, table, (*POWER_COLUMNS, "flags", *PLACEMENT_COLUMNS), pk)
    codes = [r[len(POWER_COLUMNS)] or "" for r in rows]
    numbers = np.array([r[:len(POWER_COLUMNS)] for r in rows],
                       dtype=np.float64).reshape(len(rows), len(POWER_COLUMNS))
    col = {name: numbers[:, i] for i, name in enumerate(POWER_COLUMNS)}
    arrays = PowerArrays(
        phase_index=frozen_array(col["phase_index"], np.int64), t=frozen_array(col["t"], float),
        watts=frozen_array(col["watts"], float), volts=frozen_array(col["volts"], float),
        amps=frozen_array(col["amps"], float), pf=frozen_array(col["pf"], float),
        freq_hz=frozen_array(col["freq"], float), range_v=frozen_array(col["range_v"], float),
        range_a=frozen_array(col["range_a"], float),
        uncertainty_pct=frozen_array(col["uncertainty_pct"], float),
        flags=_flag_array(codes), **_placements(rows))
    return arrays, codes


def _temperature(conn: Connection, pk: int) -> tuple[TemperatureArrays, list[str]]:
    rows = _columns(conn, s.TemperatureSampleRow.__table__,
                    ("phase_index", "t", "celsius", "flags", *PLACEMENT_COLUMNS), pk)
    codes = [r[3] or "" for r in rows]
    numbers = np.array([r[:3] for r in rows], dtype=np.float64).reshape(len(rows), 3)
    return TemperatureArrays(frozen_array(numbers[:, 0], np.int64),
                             frozen_array(numbers[:, 1], float),
                             frozen_array(numbers[:, 2], float), _flag_array(codes),
                             **_placements(rows)), codes


def _flag_array(codes: list[str]) -> np.ndarray:
    array = np.empty(len(codes), dtype=object)
    array[:] = [decode_flags(c) for c in codes]
    array.setflags(write=False)
    return array


def samples_digest(power: PowerArrays, power_codes: list[str], temperature: TemperatureArrays,
                   temp_codes: list[str], inputs: Sequence[StoredPowerInput] = ()) -> str:
    """SHA-256 over the samples in a canonical byte form (documented in docs/storage.md).

    For each column in a fixed order: ``name:count\\n`` then the values as little-endian
    int64 (phase index) or float64 with every NaN as the one quiet NaN; flags are their stored
    codes joined by ``\\n``. Independent of platform, SQL backend and load order.
    """
    digest = hashlib.sha256(DIGEST_HEADER)

    def put(name: str, values: np.ndarray, dtype: str) -> None:
        data = np.ascontiguousarray(values, dtype=dtype)
        if dtype == "<f8":
            data = np.where(np.isnan(data), np.float64("nan"), data).astype("<f8")
        digest.update(f"{name}:{len(data)}\n".encode())
        digest.update(data.tobytes())

    def put_codes(name: str, codes: list[str]) -> None:
        digest.update(f"{name}:{len(codes)}\n".encode())
        digest.update("\n".join(codes).encode())

    put("power.phase_index", power.phase_index, "<i8")
    for name in ("t", "watts", "volts", "amps", "pf", "freq_hz", "range_v", "range_a",
                 "uncertainty_pct"):
        put(f"power.{name}", getattr(power, name), "<f8")
    put_codes("power.flags", power_codes)
    put("temperature.phase_index", temperature.phase_index, "<i8")
    put("temperature.t", temperature.t, "<f8")
    put("temperature.celsius", temperature.celsius, "<f8")
    put_codes("temperature.flags", temp_codes)
    for i in inputs:  # several power inputs: each input's readings too (none: as before)
        for name in ("t", "watts", "volts", "amps", "range_v", "range_a", "uncertainty_pct"):
            put(f"input.{i.name}.{name}", getattr(i, name), "<f8")
        codes = {f: encode_flags(f) or "" for f in set(i.flags)}  # a few distinct sets
        put_codes(f"input.{i.name}.flags", [codes[f] for f in i.flags])
    return digest.hexdigest()


def _phases(conn: Connection, pk: int) -> tuple[StoredPhase, ...]:
    return tuple(
        StoredPhase(
            info=PhaseInfo(p.idx, PhaseKind(p.kind), p.name, p.profile, p.planned_s,
                           p.stabilisation_intervals, p.measurement_intervals),
            status=PhaseStatus(p.status), attempts=p.attempts, t_start=p.t_start,
            t_end=p.t_end, error=p.error,
            workload=None if p.read_ios is None else WorkloadResult(
                p.read_ios, p.write_ios, p.read_bytes, p.write_bytes, nan_if_none(p.runtime_s),
                p.exit_code or 0, p.engine or "", p.job_text or "", p.workload_error or ""),
            steady_state=steady_from_json(p.steady_state))
        for p in _rows(conn, s.Phase, pk, s.Phase.idx))


def _attempts(conn: Connection, pk: int) -> tuple[StoredAttempt, ...]:
    return tuple(
        StoredAttempt(a.phase_index, a.attempt, a.t_start, a.t_end, PhaseStatus(a.status),
                      a.error, a.window_start_s, a.window_end_s)
        for a in _rows(conn, s.PhaseAttemptRow, pk, s.PhaseAttemptRow.phase_index,
                       s.PhaseAttemptRow.attempt))


def _instruments(conn: Connection, pk: int) -> dict[str, InstrumentIdentity]:
    return {i.role: InstrumentIdentity(i.vendor, i.model, i.serial, i.firmware, i.resource,
                                       i.driver, i.calibration_date)
            for i in _rows(conn, s.InstrumentRow, pk)}


def _metrics(conn: Connection, pk: int) -> tuple[MetricResult, ...]:
    return tuple(
        MetricResult(m.name, nan_if_none(m.value), m.unit, m.valid, m.reason, m.run_length_s,
                     nan_if_none(m.avg_power_w), nan_if_none(m.ops_rate), m.ops_unit,
                     nan_if_none(m.avg_response_ms), m.phase_index)
        for m in _rows(conn, s.MetricRow, pk))


def _intervals(conn: Connection, pk: int) -> tuple[IntervalRecord, ...]:
    return tuple(
        IntervalRecord(r.phase_index, r.profile, r.idx, r.start_s, r.end_s,
                       nan_if_none(r.avg_power_w), r.n_power_samples, nan_if_none(r.ops_rate),
                       r.ops_unit, nan_if_none(r.avg_response_ms), nan_if_none(r.ep),
                       nan_if_none(r.wma), r.in_measurement, r.stable, r.attempt)
        for r in _rows(conn, s.IntervalRow, pk, s.IntervalRow.phase_index, s.IntervalRow.idx))


def _histograms(conn: Connection, pk: int) -> tuple[HistogramReady, ...]:
    """Each phase's histogram of its last attempt, the one whose figures count (a phase redone
    after a resume keeps its earlier attempt's histogram stored, as evidence)."""
    rows = _rows(conn, s.HistogramRow, pk, s.HistogramRow.phase_index)
    last: dict[int, int] = {}
    for h in rows:
        last[h.phase_index] = max(last.get(h.phase_index, h.attempt), h.attempt)
    return tuple(
        HistogramReady(h.phase_index, h.profile, dict(zip(h.bins["ns"], h.bins["count"])),
                       {float(k): v for k, v in h.confidence_ms.items()},  # None: n/a
                       nan_if_none(h.ceiling_ms), h.above_ceiling, h.attempt)
        for h in rows if h.attempt == last[h.phase_index])


def _resumptions(conn: Connection, pk: int) -> tuple[Resumption, ...]:
    return tuple(
        Resumption(r.number, r._mapping["t"], r.wall, r.restart_phase, r.cut_phase,
                   tuple(r.carried), tuple(r.redone), r.interruption)
        for r in _rows(conn, s.RunResumptionRow, pk, s.RunResumptionRow.number))


def _searches(conn: Connection, pk: int) -> tuple[SearchResult, ...]:
    return tuple(
        SearchResult(r.profile, r.queue_depth, r.jobs, nan_if_none(r.ops_rate), r.ops_unit,
                     nan_if_none(r.avg_response_ms),
                     None if r.rate_read_iops is None else (r.rate_read_iops,
                                                            r.rate_write_iops),
                     tuple((qd, nan_if_none(rate), nan_if_none(ms)) for qd, rate, ms in r.probes),
                     r.note or "", tuple(generator_from_json(r.profile, g)
                                         for g in r.generator or ()),
                     pattern_from_json(r.access_pattern), r.pre_run_basis)
        for r in _rows(conn, s.SearchResultRow, pk))


def _events(conn: Connection, pk: int) -> tuple[StoredEvent, ...]:
    # ``Row.t`` is SQLAlchemy's tuple accessor, so the ``t`` column is read by key
    return tuple(StoredEvent(e._mapping["t"], e.level, e.message, e.phase_index)
                 for e in _rows(conn, s.EventRow, pk, s.EventRow.t))


#: the workload columns a slice is built from, in the constructors' order
_SLICE_COLUMNS = ("phase_index", "t_start", "t_end", "read_ios", "write_ios", "read_bytes",
                  "write_bytes", "avg_resp_ms", "max_resp_ms", "host", "attempt", "window_code")
_WINDOWS = {w.value: w for w in Window}


def _workload(conn: Connection, pk: int) -> tuple[StoredWorkloadSlice, ...]:
    """One slice per second of a run (86,400 in 24 h): plain tuples and a window table, not
    ``Row`` attribute look-ups and an enum call per slice (issue 27)."""
    table = s.WorkloadIntervalRow.__table__
    query = (sa.select(*(table.c[n] for n in _SLICE_COLUMNS)).where(table.c.run_id == pk)
             .order_by(table.c.t_start, table.c.id))
    nan = math.nan
    return tuple(
        StoredWorkloadSlice(phase, WorkloadInterval(
            t_start, t_end, read_ios, write_ios, read_bytes, write_bytes,
            nan if avg is None else float(avg), nan if peak is None else float(peak), {}, host),
            attempt, _WINDOWS[window])
        for (phase, t_start, t_end, read_ios, write_ios, read_bytes, write_bytes, avg, peak,
             host, attempt, window) in conn.execute(query))
