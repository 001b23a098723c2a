"""Rights checked first: a database role that cannot store a run is refused before it starts.

On a database server the station writes as some role. A role without INSERT on a sample table
used to be found out at the end of the plan — the whole run measured, then nothing stored
(issue 26). :func:`missing_write_rights` asks the server (``has_table_privilege``,
``has_sequence_privilege``) for every right the run writer (``app/storage/apply.py``) uses, and
:func:`check_write_rights` refuses the run naming each missing one, before any instrument or
workload starts. The roles and their grants are in docs/storage.md ("Database roles").
SQLite has no roles: a file that cannot be written is refused when it is opened.
"""

from __future__ import annotations

import sqlalchemy as sa

from app.storage import schema as s
from app.storage.db import Database
from app.storage.errors import StorageError, classify

#: the tables a run is stored in (the audit trail is QA's, append-only, and not among them)
RUN_TABLES = tuple(m.__tablename__ for m in (
    s.Station, s.Sut, s.Run, s.Phase, s.PhaseAttemptRow, s.RunResumptionRow, s.PowerSampleRow,
    s.TemperatureSampleRow, s.WorkloadIntervalRow, s.HistogramRow, s.IntervalRow, s.MetricRow,
    s.SearchResultRow, s.InstrumentRow, s.EventRow, s.PowerInputRow, s.PowerInputSampleRow))
#: rights every run table needs: rows are looked up, added, and updated as phases end
ROW_RIGHTS = ("SELECT", "INSERT", "UPDATE")
#: tables whose rows of a run are replaced: by the writer (instrument identities named again
#: on a reconnect) and by the lab sender (every row of a run that changes while it goes on)
REPLACED = tuple(m.__tablename__ for m in (
    s.Phase, s.PhaseAttemptRow, s.RunResumptionRow, s.MetricRow, s.InstrumentRow,
    s.PowerInputRow))


class MissingRightsError(StorageError):
    """The database role lacks a right the run writer needs; the message names each one."""


def required_rights() -> list[tuple[str, str]]:
    """(right, table) pairs the run writer uses, in schema order."""
    needed = [(right, table) for table in RUN_TABLES for right in ROW_RIGHTS]
    return needed + [("DELETE", table) for table in REPLACED]


def missing_write_rights(database: Database) -> tuple[str, list[str]]:
    """This connection's role and the rights it lacks to store a run, e.g. ``INSERT on
    power_samples`` or ``USAGE on sequence public.runs_id_seq``; no rights missing when it
    has them all (and always on SQLite, which has no roles)."""
    if database.engine.dialect.name != "postgresql":
        return "", []
    try:
        with database.read() as conn:
            missing = [f"{right} on {table}" for right, table in required_rights()
                       if not conn.execute(sa.text("SELECT has_table_privilege(:t, :r)"),
                                           {"t": table, "r": right}).scalar()]
            for table in RUN_TABLES:
                sequence = conn.execute(sa.text("SELECT pg_get_serial_sequence(:t, 'id')"),
                                        {"t": table}).scalar()
                if sequence and not conn.execute(
                        sa.text("SELECT has_sequence_privilege(:q, 'USAGE')"),
                        {"q": sequence}).scalar():
                    missing.append(f"USAGE on sequence {sequence}")
            role = conn.execute(sa.text("SELECT current_user")).scalar_one()
    except sa.exc.DBAPIError as exc:
        raise classify(exc, database.url) from exc
    return role, missing


def check_write_rights(database: Database) -> None:
    """Refuse a run the database could not store, naming every missing right."""
    role, missing = missing_write_rights(database)
    if missing:
        raise MissingRightsError(
            f"database {database.engine.url.render_as_string(hide_password=True)} cannot "
            f"store a run as role {role!r}: missing {', '.join(missing)}. Ask the lab's database "
            "administrator to make it a station login (storwatt db roles; docs/storage.md, "
            "\"Database roles\"); nothing was started")
