"""Crash marks: a run whose station stopped while it ran is marked INTERRUPTED, with the phase
it was cut in, and everything stored up to then kept.

Done at every open of a station's database (:mod:`app.storage.opening`) and for a journal
imported without its end (:mod:`app.storage.recover`); the run lock
(:mod:`app.storage.liveness`) decides whose run may be marked.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from app.core.records import PhaseStatus, RunStatus
from app.storage.liveness import Machine, stop_reason, take_over
from app.storage.schema import Phase, PhaseAttemptRow, PowerSampleRow, Run


def mark_interrupted(conn: Connection, machine: Machine | None = None) -> list[str]:
    """RUNNING runs this station recorded and whose writer is gone → INTERRUPTED (their
    samples stay as stored).

    Only a run whose lock this process can take is changed (:mod:`app.storage.run_lock`): a
    run another station records, or one a live — perhaps frozen — process still holds, is
    left exactly as it is, whatever its heartbeat says. The lock is held while the run is
    marked, so no continuation can start meanwhile.
    """
    machine = machine or Machine()
    runs = conn.execute(sa.select(Run.id, Run.uuid, Run.writer_host, Run.writer_pid)
                        .where(Run.status == RunStatus.RUNNING.value)).all()
    marked = []
    for pk, uuid, host, pid in runs:
        lock = take_over(uuid, machine)
        if lock is None:
            continue
        try:
            interrupt_run(conn, pk, stop_reason(host, pid))
        finally:
            lock.release(finished=False)  # kept: this station may resume the run
        marked.append(uuid)
    return marked


def interrupt_run(conn: Connection, pk: int, reason: str) -> None:
    """Mark one run and the phase it was cut in INTERRUPTED, saying which phase and why."""
    last_t = conn.execute(sa.select(sa.func.max(PowerSampleRow.t))
                          .where(PowerSampleRow.run_id == pk)).scalar()
    running = (Phase.run_id == pk, Phase.status == PhaseStatus.RUNNING.value)
    cut = conn.execute(sa.select(Phase.idx, Phase.name).where(*running)
                       .order_by(Phase.idx)).all()
    conn.execute(sa.update(Phase).where(*running).values(
        status=PhaseStatus.INTERRUPTED.value, t_end=last_t,
        error="cut short: the station stopped during this phase"))
    conn.execute(sa.update(PhaseAttemptRow).where(
        PhaseAttemptRow.run_id == pk, PhaseAttemptRow.status == PhaseStatus.RUNNING.value)
        .values(status=PhaseStatus.INTERRUPTED.value, t_end=last_t,
                error="cut short: the station stopped during this attempt"))
    during = "".join(f" during phase {idx} {name}" for idx, name in cut)
    conn.execute(sa.update(Run).where(Run.id == pk).values(
        status=RunStatus.INTERRUPTED.value, duration_s=last_t, writer_pid=None,
        error=f"the station stopped{during} ({reason}); everything stored up to then is "
              "kept"))
