"""Storage side of resuming an INTERRUPTED run: which runs can be resumed, and claiming one.

A continuation writes into the run it continues (``app/station/resume.py`` explains why), so two
processes must never continue the same run. Two guards hold it: only the station holding the
run's local record can take its lock (:mod:`app.storage.run_lock`), and :func:`claim_run` is
one guarded update: in one transaction it turns the run from INTERRUPTED (and unchanged since
it was planned) into RUNNING with this process as its writer; a second claim then finds it
RUNNING and is refused. If the continuation dies in turn, the ordinary crash rule
(:mod:`app.storage.liveness`) marks the run INTERRUPTED again, and it can be resumed again.
"""

from __future__ import annotations

import sqlalchemy as sa

from app.core.records import PhaseStatus, RunStatus
from app.storage import schema as s
from app.storage.db import Database
from app.storage.errors import classify
from app.storage.liveness import Machine, writer_identity
from app.storage.run_lock import recorded_here

#: phase states that leave nothing to redo
DONE = (PhaseStatus.COMPLETED.value, PhaseStatus.SKIPPED.value)


def resumable_run_ids(database: Database, machine: Machine | None = None) -> set[str]:
    """INTERRUPTED runs with a phase left to do that this station recorded (only it may
    resume them), by id (one query; ``runs list``, the start page). Whether the installed
    method still matches is checked when one is resumed."""
    unfinished = sa.select(s.Phase.run_id).where(s.Phase.status.not_in(DONE))
    query = sa.select(s.Run.uuid).where(s.Run.status == RunStatus.INTERRUPTED.value,
                                        s.Run.id.in_(unfinished))
    with database.read() as conn:
        return set(conn.execute(query).scalars()) & recorded_here((machine or Machine()).lock_dir())


def stored_seq(database: Database, run_id: str) -> int:
    """The last event number the database holds for the run (0 for runs stored before the
    writer numbered events)."""
    with database.read() as conn:
        return conn.execute(sa.select(s.Run.stored_seq)
                            .where(s.Run.uuid == run_id)).scalar() or 0


def claim_run(database: Database, run_id: str, after_seq: int,
              machine: Machine | None = None) -> bool:
    """Make this process the writer of INTERRUPTED run ``run_id`` if its record still ends at
    event ``after_seq``; False when another station got there first or the run changed."""
    try:
        with database.engine.begin() as conn:
            claimed = conn.execute(
                sa.update(s.Run)
                .where(s.Run.uuid == run_id, s.Run.status == RunStatus.INTERRUPTED.value,
                       sa.func.coalesce(s.Run.stored_seq, 0) == after_seq)
                .values(status=RunStatus.RUNNING.value, **writer_identity(machine)))
    except sa.exc.DBAPIError as exc:
        raise classify(exc, database.url) from exc
    return claimed.rowcount == 1
