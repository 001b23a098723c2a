"""Migration 0005 back-fills runs stored before the record kept attempts and placements.

An old run is written with plain SQL into a database at revision 0004 (the old writer's
layout: one phase row holding only its last attempt's start), then opened; the tags must say
which samples the old reports counted — earlier attempt, stabilisation, measurement, past the
plan — so old runs read exactly as new ones do.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic.migration import MigrationContext
from alembic.operations import Operations

from app.core.records import PhaseStatus, Window
from app.storage import migrate
from app.storage.opening import open_database
from app.storage.record_hash import canonical_json
from app.storage.repository import load_run

RUN = "0ld-run-0000"
DELTA = 10.0  # interval length of the old run


def database_at(url: str, revision: str) -> None:
    """An empty database upgraded only to ``revision``."""
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        ctx = MigrationContext.configure(conn)
        with Operations.context(ctx):
            for rev in migrate.revisions():
                rev.module.upgrade()
                if rev.id == revision:
                    break
        migrate.VERSION_TABLE.create(conn)
        conn.execute(migrate.VERSION_TABLE.insert().values(version_num=revision))
    engine.dispose()


def old_run(url: str) -> None:
    """An active phase (2 stabilisation + 3 measurement intervals of 10 s) restarted once:
    its last attempt starts at 100 s; samples every second from 50 s to 169 s."""
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        run = conn.execute(sa.text(
            "INSERT INTO runs (uuid, config, method_name, method_version, method_compliant, "
            "taxonomy, lab, operator, status, started_wall, t0, planned_s, error, "
            "workload_engine) VALUES (:u, '{}', 'demo', '1.0', 0, 'online-3', 'sim', '', "
            "'COMPLETED', '2024-01-01T00:00:00+00:00', 1000.0, 200.0, '', '') RETURNING id"),
            {"u": RUN}).scalar()
        conn.execute(sa.text(
            "INSERT INTO phases (run_id, idx, kind, name, profile, planned_s, "
            "stabilisation_intervals, measurement_intervals, status, attempts, t_start, t_end, "
            "error) VALUES (:r, 0, 'active', 'RR', 'RR', 50.0, 2, 3, 'COMPLETED', 2, 99.5, "
            "170.0, '')"), {"r": run})
        conn.execute(sa.text(  # conditioning before it: the old recorder flagged its intervals
            "INSERT INTO phases (run_id, idx, kind, name, profile, planned_s, "
            "stabilisation_intervals, measurement_intervals, status, attempts, t_start, t_end, "
            "error) VALUES (:r, 1, 'conditioning', 'Conditioning', 'MW1', 10.0, 0, 0, "
            "'COMPLETED', 1, 0.0, 10.0, '')"), {"r": run})
        conn.execute(sa.text(
            "INSERT INTO intervals (run_id, phase_index, profile, idx, start_s, end_s, "
            "n_power_samples, ops_unit, in_measurement) VALUES (:r, 1, 'MW1', 0, 0.0, 10.0, "
            "10, '', 1)"), {"r": run})
        for i in range(5):
            conn.execute(sa.text(
                "INSERT INTO intervals (run_id, phase_index, profile, idx, start_s, end_s, "
                "n_power_samples, ops_unit, in_measurement) VALUES (:r, 0, 'RR', :i, :s, :e, "
                "10, 'IOPS', :m)"),
                {"r": run, "i": i, "s": 100.0 + i * DELTA, "e": 110.0 + i * DELTA, "m": i >= 2})
        conn.execute(sa.text(
            "INSERT INTO power_samples (run_id, phase_index, t, watts) VALUES (:r, 0, :t, 500)"),
            [{"r": run, "t": float(t)} for t in range(50, 170)])
        conn.execute(sa.text(
            "INSERT INTO workload_intervals (run_id, phase_index, t_start, t_end, read_ios, "
            "write_ios, read_bytes, write_bytes, host) VALUES (:r, 0, :a, :b, 1, 0, 8192, 0, "
            "'')"), [{"r": run, "a": a, "b": a + 1.0} for a in (60.0, 110.0, 125.0, 149.6)])
    engine.dispose()


def test_old_runs_get_the_tags_their_reports_used(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    database_at(url, "0004")
    old_run(url)
    run = load_run(open_database(url), RUN)
    t = run.power.t
    assert (run.power.attempt[t < 100] == 1).all() and (run.power.attempt[t >= 100] == 2).all()
    expected = {50.0: (-1, Window.OUTSIDE), 100.0: (0, Window.STABILISATION),
                119.0: (1, Window.STABILISATION), 120.0: (2, Window.MEASUREMENT),
                149.0: (4, Window.MEASUREMENT), 150.0: (-1, Window.OUTSIDE)}
    for when, (interval, window) in expected.items():
        i = int((t == when).nonzero()[0][0])
        assert (run.power.interval[i], run.power.window[i]) == (interval, window), when
    (attempt,) = [a for a in run.attempts if a.phase_index == 0]
    assert (attempt.attempt, attempt.t_start, attempt.status) == (2, 100.0,
                                                                  PhaseStatus.COMPLETED)
    assert (attempt.window_start_s, attempt.window_end_s) == (120.0, 150.0)
    assert {r.attempt for r in run.attempt_intervals(0)} == {2}
    assert [(w.attempt, w.window) for w in run.workload] == [
        (1, Window.OUTSIDE), (2, Window.OUTSIDE), (2, Window.MEASUREMENT),
        (2, Window.OUTSIDE)]  # 149.6–150.6: less than half inside the window
    assert run.method is None and run.method_sha256 is None
    (conditioning,) = run.attempt_intervals(1)
    assert not conditioning.in_measurement  # a phase without a metric has no window


def test_runs_stored_before_0020_get_no_steady_state_verdict_and_keep_their_hash(
        tmp_path: Path) -> None:
    """Migration 0020 adds ``phases.steady_state`` and back-fills nothing: no StorWatt judged
    an old run's rounds while it went on, so its phases read without a verdict (views say
    "not recorded") and hash exactly as before (an added field is left out while None)."""
    url = f"sqlite:///{tmp_path / 'old.db'}"
    database_at(url, "0019")
    old_run(url)
    database = open_database(url)
    assert migrate.schema_version(database) == migrate.head()
    run = load_run(database, RUN)
    assert [p.steady_state for p in run.phases] == [None, None]
    assert b"steady_state" not in canonical_json(run.phases[0])
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM phases WHERE steady_state IS NULL")
                            ).scalar() == 2
    engine.dispose()
