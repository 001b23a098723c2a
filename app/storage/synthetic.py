"""Synthetic run event streams: for the storage benchmark, its tests and crash drills.

They exercise every event type and every awkward value (NaN, ``None``, flags, unknown flags,
restarted phases) with plausible numbers, without a sequencer or instruments. Like the
sequencer's, their times are run-relative; ``t0`` is only the station clock they claim.
"""

from __future__ import annotations

import math
import random
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import sqlalchemy as sa

from app.core.records import (IntervalRecord, MetricResult, PhaseInfo, PhaseKind, PhaseStatus,
                              Placement, RunConfig, RunStatus, SutDescription, Window)
from app.sequencer import events as ev
from app.storage import schema as s
from app.storage.db import Database
from drivers import interfaces as di

PHASES = (
    PhaseInfo(0, PhaseKind.CONDITIONING, "Conditioning", "MW1", 60.0),
    PhaseInfo(1, PhaseKind.ACTIVE, "RR", "RR", 120.0, 2, 3),
    PhaseInfo(2, PhaseKind.READY_IDLE, "Ready idle", None, 60.0, 0, 1),
)


def outside(count: int, attempt: int = 1) -> tuple[Placement, ...]:
    """Placements for ``count`` samples that lie in no interval (a stand-in recorder's tags)."""
    return (Placement(attempt, -1, Window.OUTSIDE),) * count


def power_sample(t: float, seq: int) -> di.PowerSample:
    """A sample whose values are derived from ``seq`` (so a test can recognise it)."""
    flags: frozenset[str] = frozenset()
    if seq % 97 == 0:
        flags = frozenset({di.FLAG_OVERRANGE, di.FLAG_UNCERTAINTY_UNKNOWN})
    elif seq % 101 == 0:
        flags = frozenset({"vendor_specific"})
    watts = float("nan") if seq % 97 == 0 else 400.0 + (seq % 50) * 0.25
    return di.PowerSample(t=t, watts=watts, volts=230.0 + seq % 3, amps=watts / 230.0,
                          pf=0.98, freq_hz=50.0, range_v=300.0,
                          range_a=None if seq % 13 == 0 else 5.0,
                          uncertainty_pct=None if flags else 0.2 + (seq % 7) / 100, flags=flags)


def run_started(t0: float, run_id: str | None = None) -> ev.RunStarted:
    config = RunConfig(method="demo", taxonomy="online-3", lab="sim", station="bench-1",
                       sut=SutDescription(coms_declared=("deduplication",), targets=("/dev/x",)),
                       operator="tester")
    return ev.RunStarted(run_id or str(uuid.uuid4()), config, "demo", "1.0", False, PHASES, t0,
                         "2024-05-01T10:00:00+00:00", sum(p.planned_s for p in PHASES))


def full_run(t0: float = 1000.0, samples_per_phase: int = 40,
             run_id: str | None = None) -> Iterator[ev.RunEvent]:
    """A complete run touching every event type; phase 1 is restarted once after a pause."""
    yield run_started(t0, run_id)
    yield ev.InstrumentsIdentified(
        di.InstrumentIdentity("Yokogawa", "WT310E", "C2XX", "F1.03", "TCPIP::127.0.0.1", "wt300",
                              "2024-01-15"),
        di.InstrumentIdentity("Sim", "Thermo", driver="sim"), "simulated SUT")
    t, seq = 0.0, 0
    yield ev.SearchResult("RR", 32, 2, 12000.5, "IOPS", 9.8, (8400, 3600),
                          ((8, 5000.0, 2.1), (32, 12000.5, 9.8)))
    for phase in PHASES:
        attempts = 2 if phase.index == 1 else 1
        for attempt in range(1, attempts + 1):
            yield ev.PhaseStarted(phase, t, attempt, t, t)
            yield ev.LogMessage("INFO", f"{phase.name} started (attempt {attempt})", t,
                                phase.index)
            power = []
            for _ in range(samples_per_phase):
                t += 0.5
                power.append(power_sample(t, seq))
                seq += 1
            yield ev.PowerSamples(phase.index, tuple(power), outside(len(power), attempt))
            yield ev.TemperatureSamples(phase.index, (
                di.TemperatureSample(t - 1.0, 23.4),
                di.TemperatureSample(t, float("nan"), frozenset({di.FLAG_SENSOR_ERROR}))),
                outside(2, attempt))
            if phase.profile:
                yield ev.WorkloadIntervals(phase.index, (
                    di.WorkloadInterval(t - 2.0, t - 1.0, 800, 200, 800 * 8192, 200 * 8192, 1.5,
                                        20.0, {50_000: 700, 2_000_000: 300}, "127.0.0.1:8765"),
                    di.WorkloadInterval(t - 1.0, t, 810, 190, 810 * 8192, 190 * 8192,
                                        float("nan"), 21.0)), attempt,
                    (Window.OUTSIDE, Window.MEASUREMENT))
            if attempt < attempts:
                yield ev.PhaseFinished(phase, PhaseStatus.ABORTED, t, "paused by the operator",
                                       attempt=attempt)
        for i in range(phase.stabilisation_intervals + phase.measurement_intervals):
            yield ev.IntervalClosed(IntervalRecord(
                phase.index, phase.profile, i, t - 60 + i, t - 59 + i,
                410.0 + i, 120, 12000.0 if phase.profile else math.nan,
                "IOPS" if phase.profile else "", 2.5, 29.3, math.nan if i == 0 else 29.1,
                i >= phase.stabilisation_intervals, None if i == 0 else True, attempts))
        workload = (di.WorkloadResult(10_000, 2_000, 10_000 * 8192, 2_000 * 8192, 55.0, 0,
                                      "simulated SUT", f"[{phase.profile}]\nrw=randrw\n")
                    if phase.profile else None)
        if phase.kind is PhaseKind.ACTIVE:
            yield ev.HistogramReady(phase.index, phase.profile or "", {50_000: 10, 2_000_000: 3},
                                    {90.0: 1.5, 99.9: float("nan")}, 30.0, 0)
            yield ev.MetricComputed(MetricResult("EP_RR", 29.3, "IOPS/W", True, "", 1800.0,
                                                 410.0, 12000.0, "IOPS", 2.5, phase.index))
        yield ev.Progress(t, 10.0, 0.5, phase.index, 1.0)
        yield ev.PhaseFinished(phase, PhaseStatus.COMPLETED, t, "", workload, attempts)
    idle = MetricResult("EP_RI", float("nan"), "GB/W", False, "power not stable", 600.0)
    yield ev.MetricComputed(idle)
    yield ev.LogMessage("WARNING", "EP_RI INVALID: power not stable", t, None)
    yield ev.RunFinished(RunStatus.COMPLETED, t + 0.25, (
        MetricResult("EP_RR", 29.3, "IOPS/W", True, "", 1800.0, 410.0, 12000.0, "IOPS", 2.5, 1),
        idle))


#: the shape of a lab's history for :func:`fill_history`
HISTORY_TAXONOMIES = ("online-2", "online-3", "online-4", "near-online-3", "virtual-2")
HISTORY_PROFILES = (("EP_RR", "IOPS/W", 30.0), ("EP_RW", "IOPS/W", 12.0),
                    ("EP_SR", "MiB/s/W", 3.0), ("EP_SW", "MiB/s/W", 2.0),
                    ("EP_MW1", "IOPS/W", 20.0), ("EP_MW2", "IOPS/W", 6.0),
                    ("EP_RI", "GB/W", 12.3))
HISTORY_STATUSES = (RunStatus.COMPLETED,) * 8 + (RunStatus.ABORTED, RunStatus.INTERRUPTED,
                                                RunStatus.FAILED)


def fill_history(database: Database, count: int, seed: int = 8, *,
                 config: dict | None = None, method_json: dict | None = None) -> list[str]:
    """Insert ``count`` runs with their metrics in bulk (no samples): the shape of a lab's
    history, for the history benchmark, its tests and the history screenshots. Returns the run ids,
    oldest first. ``config`` and ``method_json`` give every run a real run's snapshots (the
    benchmark's full-width rows); they are stored with the run, never added later, because a
    finished run's row is immutable (revision 0022)."""
    rnd = random.Random(seed)
    start = datetime(2024, 1, 1, tzinfo=timezone.utc)
    with database.read() as conn:
        stations = [conn.execute(sa.insert(s.Station).values(name=f"lab-pc-{i + 1}")
                                 .returning(s.Station.id)).scalar_one() for i in range(4)]
        suts = [conn.execute(sa.insert(s.Sut).values(
            vendor=("Acme", "Globex", "Initech")[i % 3], model=f"Array {100 + i}",
            serial=f"SN-{i:04d}", raw_capacity_bytes=7_300_000_000_000, drive_count=50,
            drive_type="HDD").returning(s.Sut.id)).scalar_one() for i in range(30)]
        first = (conn.execute(sa.select(sa.func.max(s.Run.id))).scalar() or 0) + 1
        runs, ids = [], []
        finals: dict[int, str] = {}  # run id -> its status, stored once its rows are in
        for i in range(count):
            run_id = f"{rnd.getrandbits(128):032x}"
            run_id = "-".join((run_id[:8], run_id[8:12], run_id[12:16], run_id[16:20],
                               run_id[20:]))
            ids.append(run_id)
            status = rnd.choice(HISTORY_STATUSES)
            finals[first + i] = status.value
            began = start + timedelta(hours=i * 2.5)
            runs.append(dict(
                id=first + i, uuid=run_id, station_id=rnd.choice(stations),
                sut_id=rnd.choice(suts), config=config or {"taxonomy": "", "sut": {}},
                method_json=method_json,
                method_name="emerald" if i % 4 else "demo",
                method_version="3.0" if i % 4 else "1.0", method_compliant=bool(i % 4),
                taxonomy=rnd.choice(HISTORY_TAXONOMIES), lab="hardware",
                operator=rnd.choice(("ana", "ben", "chloé", "dmitri")),
                status=RunStatus.RUNNING.value,
                started_wall=began.isoformat(), finished_wall=(
                    began + timedelta(hours=2)).isoformat(), t0=0.0, planned_s=7200.0,
                duration_s=7200.0 if status is RunStatus.COMPLETED else 1800.0, error="",
                workload_engine="fio 3.33"))
        conn.execute(sa.insert(s.Run), runs)
        metrics = [dict(run_id=pk, name=name, value=base * rnd.uniform(0.8, 1.2),
                        unit=unit, valid=valid, reason="" if valid else "EPᵢ left the ±5 % band",
                        run_length_s=1800.0, avg_power_w=600.0, ops_rate=1.0, ops_unit="",
                        avg_response_ms=5.0, phase_index=k)
                   for pk, final in finals.items() if final == RunStatus.COMPLETED.value
                   for k, (name, unit, base) in enumerate(HISTORY_PROFILES)
                   for valid in (rnd.random() > 0.03,)]
        conn.execute(sa.insert(s.MetricRow), metrics)
        # each run's status last, as the run writer stores it: a finished run's rows are
        # immutable (revision 0022), so its metrics go in while it is still unfinished
        conn.execute(sa.update(s.Run).where(s.Run.id == sa.bindparam("pk"))
                     .values(status=sa.bindparam("final")),
                     [{"pk": pk, "final": final} for pk, final in finals.items()])
    return ids
