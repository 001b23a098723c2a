"""0005: the run record as the one authority — phase attempts, placement tags, method as run.

Adds ``phase_attempts``; ``attempt``/``interval_idx``/``window_code`` on samples, ``attempt``/
``window_code`` on workload slices, ``attempt`` on intervals; ``method_json``/``method_sha256`` on
runs. Runs stored before this revision are back-filled once, here, with the rules the reports
used to re-derive at every export (frozen in this module so later code never needs them):

* a phase's last attempt starts at its interval grid (first interval start − index · Δ, Δ the
  interval length its records show), or at the stored phase start when it closed none;
* samples of the phase before that start belong to the earlier attempt(s), tagged
  ``attempts − 1`` (the old schema kept no earlier start, so several earlier attempts share
  one tag, and only the last attempt gets a ``phase_attempts`` row);
* measurement window: intervals ``stabilisation … stabilisation + measurement − 1`` of an
  active phase, ``0 … measurement − 1`` of ready idle; slices belong to it when at least half
  of each lies inside. ``intervals.in_measurement`` now means exactly that, so the old
  recorder's TRUE on intervals of phases without a metric (conditioning, pre-fill …) is cleared.

``method_json`` stays NULL for such runs: what the method files said then is not known.
"""

from __future__ import annotations

import math

import sqlalchemy as sa

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

OUTSIDE, STABILISATION, MEASUREMENT = 0, 1, 2


def _tag_columns(table: str, interval: bool, window: bool = True) -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    op.add_column(table, sa.Column("attempt", sa.Integer(), nullable=False, server_default="1"))
    if interval:
        op.add_column(table, sa.Column("interval_idx", sa.Integer(), nullable=False,
                                       server_default="-1"))
    if window:
        op.add_column(table, sa.Column("window_code", sa.SmallInteger(), nullable=False,
                                       server_default="0"))


def upgrade() -> None:
    from alembic import op  # here, not at the top: alembic loads only to upgrade

    op.create_table('phase_attempts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('phase_index', sa.Integer(), nullable=False),
    sa.Column('attempt', sa.Integer(), nullable=False),
    sa.Column('t_start', sa.Float(), nullable=False),
    sa.Column('t_end', sa.Float(), nullable=True),
    sa.Column('status', sa.String(length=20), nullable=False),
    sa.Column('error', sa.Text(), nullable=False),
    sa.Column('window_start_s', sa.Float(), nullable=False),
    sa.Column('window_end_s', sa.Float(), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('run_id', 'phase_index', 'attempt',
                        name='uq_phase_attempts_run_phase_attempt')
    )
    op.add_column("runs", sa.Column("method_json", sa.JSON(), nullable=True))
    op.add_column("runs", sa.Column("method_sha256", sa.String(length=64), nullable=True))
    _tag_columns("power_samples", interval=True)
    _tag_columns("temperature_samples", interval=True)
    _tag_columns("workload_intervals", interval=False)
    _tag_columns("intervals", interval=False, window=False)
    _backfill(op.get_bind())


def _backfill(conn: sa.Connection) -> None:
    conn.execute(sa.text(
        "UPDATE intervals SET in_measurement = :no WHERE EXISTS (SELECT 1 FROM phases WHERE "
        "phases.run_id = intervals.run_id AND phases.idx = intervals.phase_index AND "
        "phases.kind NOT IN ('active', 'ready_idle'))"), {"no": False})
    phases = conn.execute(sa.text(
        "SELECT run_id, idx, kind, planned_s, stabilisation_intervals, measurement_intervals, "
        "status, attempts, t_start, t_end, error FROM phases WHERE t_start IS NOT NULL")).all()
    for (run, idx, kind, planned_s, stab, meas, status, attempts, t_start, t_end,
         error) in phases:
        attempt = max(1, attempts or 1)
        grid = conn.execute(sa.text(
            "SELECT idx, start_s, end_s FROM intervals WHERE run_id = :r AND phase_index = :p "
            "AND start_s >= :t ORDER BY idx"), {"r": run, "p": idx, "t": t_start}).first()
        delta = (grid[2] - grid[1]) if grid else 0.0
        start = grid[1] - grid[0] * delta if grid else t_start
        first, count = {"active": (stab, meas), "ready_idle": (0, meas)}.get(kind, (0, 0))
        planned = max(1, round(planned_s / delta)) if delta and planned_s else 0
        w_start = start + first * delta
        w_end = w_start + count * delta
        conn.execute(sa.text(
            "INSERT INTO phase_attempts (run_id, phase_index, attempt, t_start, t_end, status, "
            "error, window_start_s, window_end_s) VALUES (:r, :p, :a, :ts, :te, :st, :e, :ws, "
            ":we)"), {"r": run, "p": idx, "a": attempt, "ts": start, "te": t_end,
                      "st": status, "e": error or "", "ws": w_start, "we": w_end})
        params = {"r": run, "p": idx, "t": start, "a": attempt}
        for table in ("power_samples", "temperature_samples"):
            conn.execute(sa.text(f"UPDATE {table} SET attempt = :a - 1 WHERE run_id = :r AND "
                                 "phase_index = :p AND t < :t AND :a > 1"), params)
            conn.execute(sa.text(f"UPDATE {table} SET attempt = :a WHERE run_id = :r AND "
                                 "phase_index = :p AND t >= :t"), params)
            if delta:
                _place_samples(conn, table, run, idx, start, delta, planned, first, count, kind)
        conn.execute(sa.text("UPDATE intervals SET attempt = :a WHERE run_id = :r AND "
                             "phase_index = :p AND start_s >= :t"), params)
        conn.execute(sa.text("UPDATE intervals SET attempt = :a - 1 WHERE run_id = :r AND "
                             "phase_index = :p AND start_s < :t AND :a > 1"), params)
        _place_slices(conn, run, idx, start, attempt, w_start, w_end)


def _place_samples(conn: sa.Connection, table: str, run: int, idx: int, start: float,
                   delta: float, planned: int, first: int, count: int, kind: str) -> None:
    rows = conn.execute(sa.text(f"SELECT id, t FROM {table} WHERE run_id = :r AND "
                                "phase_index = :p AND t >= :t"),
                        {"r": run, "p": idx, "t": start}).all()
    updates = []
    for pk, t in rows:
        i = math.floor((t - start) / delta)
        i = i if 0 <= i and (not planned or i < planned) else -1
        window = OUTSIDE
        if i >= 0 and first <= i < first + count:
            window = MEASUREMENT
        elif i >= 0 and kind == "active" and i < first:
            window = STABILISATION
        updates.append({"pk": pk, "i": i, "w": window})
    if updates:
        conn.execute(sa.text(f"UPDATE {table} SET interval_idx = :i, window_code = :w "
                             "WHERE id = :pk"), updates)


def _place_slices(conn: sa.Connection, run: int, idx: int, start: float, attempt: int,
                  w_start: float, w_end: float) -> None:
    rows = conn.execute(sa.text("SELECT id, t_start, t_end FROM workload_intervals WHERE "
                                "run_id = :r AND phase_index = :p"), {"r": run, "p": idx}).all()
    updates = []
    for pk, a, b in rows:
        if b <= start:
            updates.append({"pk": pk, "a": max(1, attempt - 1), "w": OUTSIDE})
            continue
        span = b - a
        inside = (max(0.0, min(b, w_end) - max(a, w_start)) / span if span > 0
                  else float(w_start <= b < w_end))
        updates.append({"pk": pk, "a": attempt,
                        "w": MEASUREMENT if w_end > w_start and inside >= 0.5 else OUTSIDE})
    if updates:
        conn.execute(sa.text("UPDATE workload_intervals SET attempt = :a, window_code = :w "
                             "WHERE id = :pk"), updates)
