"""SQLite's planner statistics for the history's queries.

Why: without statistics SQLite guesses that an indexed equality selects about ten rows, so
"runs of station lab-pc-2, newest first" reads 25,000 runs through the station index and sorts
them instead of walking the start-time index and stopping after a page; measured on 100,000
runs: 122 ms of CPU for one page instead of 9 ms (docs/performance.md). PostgreSQL's autovacuum
keeps its own statistics; a station's SQLite file gets them here, when the history opens and
the run count is more than three times off the one SQLite estimated the last time. ``analysis_limit`` keeps it to
a few milliseconds however large the tables; a locked or read-only file is left as it is.
"""

from __future__ import annotations

import sqlalchemy as sa

from app.storage.db import Database

#: rows sampled per index (SQLite's ``PRAGMA analysis_limit``): enough to tell 4 from 100,000
ANALYSIS_LIMIT = 1000
#: the history's tables (the sample tables are read by run and time only)
TABLES = ("runs", "metrics", "audit_entries")
LOCK_WAIT_MS = 200


def refresh_statistics(database: Database, runs: int) -> bool:
    """Analyse the history's tables if SQLite has no statistics for ``runs`` runs (none, or
    estimated — ``analysis_limit`` samples — at under a third or over three times as many).
    True if it did."""
    if database.engine.dialect.name != "sqlite" or database.read_only or runs == 0:
        return False
    with database.read() as conn:
        known = conn.exec_driver_sql(
            "SELECT name FROM sqlite_master WHERE name = 'sqlite_stat1'").scalar()
        stat = known and conn.exec_driver_sql(
            "SELECT stat FROM sqlite_stat1 WHERE tbl = 'runs' AND idx = 'ix_runs_taxonomy'"
        ).scalar()
    counted = int(stat.split()[0]) if stat else 0
    if counted and runs / 3 <= counted <= runs * 3:
        return False
    try:
        with database.engine.begin() as conn:
            conn.exec_driver_sql(f"PRAGMA busy_timeout = {LOCK_WAIT_MS}")
            try:
                conn.exec_driver_sql(f"PRAGMA analysis_limit = {ANALYSIS_LIMIT}")
                for table in TABLES:
                    conn.exec_driver_sql(f"ANALYZE {table}")
            finally:
                conn.exec_driver_sql(
                    f"PRAGMA busy_timeout = {int(database.busy_timeout_s * 1000)}")
    except sa.exc.DBAPIError:
        return False  # a writer holds the file, or it is read-only: the planner guesses
    return True
