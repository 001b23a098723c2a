"""SQLite's and PostgreSQL's planner statistics for the history's queries.

Why: without statistics SQLite guesses that an indexed equality selects about ten rows, so
"runs of station lab-pc-2, newest first" reads 25,000 runs through the station index and sorts
them instead of walking the start-time index and stopping after a page; measured on 100,000
runs: 122 ms of CPU for one page instead of 9 ms (docs/performance.md). A station's SQLite file
gets them here, when the history opens and the run count is more than three times off the one
SQLite estimated the last time. ``analysis_limit`` keeps it to a few milliseconds however large
the tables; a locked or read-only file is left as it is.

PostgreSQL's autovacuum keeps its own statistics, but only a while after rows arrive: a lab
database that has just been filled (an import, a copy of another lab's runs) has none, and then
PostgreSQL guesses that "the metrics of these 200 runs" are a fifth of all metrics and reads
all 500,000 of them for every page the history shows (~50–100 ms per filter change, issue 27).
So a table of the history's that was never analysed is analysed here when the history opens;
one that has statistics is left to autovacuum. Not the owner (a QA role), a read-only session
or a lock held by a running VACUUM: it is left as it is.
"""

from __future__ import annotations

import sqlalchemy as sa

from app.storage.db import Database

#: rows sampled per index (SQLite's ``PRAGMA analysis_limit``): enough to tell 4 from 100,000
ANALYSIS_LIMIT = 1000
#: the history's tables (the sample tables are read by run and time only)
TABLES = ("runs", "metrics", "audit_entries")
LOCK_WAIT_MS = 200
#: PostgreSQL: the tables whose look-ups by run the history's pages make (analysing ``runs``
#: too took ~0.3–0.6 s more per 100,000 runs, and its plans were the same without)
POSTGRESQL_TABLES = ("metrics", "audit_entries")


def refresh_statistics(database: Database, runs: int) -> bool:
    """Analyse the history's tables if SQLite has no statistics for ``runs`` runs (none, or
    estimated — ``analysis_limit`` samples — at under a third or over three times as many),
    or PostgreSQL none at all. True if it did."""
    if database.read_only or runs == 0:
        return False
    if database.engine.dialect.name == "postgresql":
        return _refresh_postgresql(database)
    if database.engine.dialect.name != "sqlite":
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


def _refresh_postgresql(database: Database) -> bool:
    """``ANALYZE`` the tables of :data:`POSTGRESQL_TABLES` that have no statistics yet (no
    column of theirs in ``pg_stats``); True if it analysed any."""
    with database.read() as conn:
        known = set(conn.execute(sa.text(
            "SELECT DISTINCT tablename FROM pg_stats WHERE schemaname = current_schema() "
            "AND tablename IN :tables").bindparams(sa.bindparam("tables", expanding=True)),
            {"tables": list(POSTGRESQL_TABLES)}).scalars())
    missing = [t for t in POSTGRESQL_TABLES if t not in known]
    if not missing:
        return False
    try:
        with database.engine.begin() as conn:
            conn.exec_driver_sql(f"SET LOCAL lock_timeout = {LOCK_WAIT_MS}")
            conn.exec_driver_sql(f"ANALYZE {', '.join(missing)}")
    except sa.exc.DBAPIError:
        return False  # read-only, or a VACUUM holds the table: autovacuum will do it
    return True
