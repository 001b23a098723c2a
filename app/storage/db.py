"""Opening the run database: engine set-up, schema upgrade and crash recovery.

SQLite is the station's default (one file in the data directory): WAL so the GUI can read
while a run writes, ``synchronous=NORMAL`` (a committed transaction survives a process crash;
only a power cut can lose the last commits), a busy timeout so short lock waits are absorbed.
pysqlite's own transaction handling is switched off and ``BEGIN`` is issued explicitly, so DDL
(schema upgrades) is transactional too. Any SQLAlchemy URL works; SQLite-only settings are
applied only to SQLite.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine, make_url

from app.paths import default_db_url
from app.records import RunStatus
from app.storage import migrate
from app.storage.errors import StorageError, classify
from app.storage.schema import PowerSampleRow, Run

if TYPE_CHECKING:
    from app.storage.repository import RunSummary, StoredRun

DEFAULT_BUSY_TIMEOUT_S = 5.0
#: A RUNNING run whose writer is on another host is orphaned after this long without a commit.
STALE_HEARTBEAT_S = 120.0


def _is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def create_engine(url: str, *, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
                  immediate: bool = False) -> Engine:
    """An engine with StorWatt's connection settings; ``immediate`` takes the write lock at
    ``BEGIN`` (the writer's engine: avoids lock-upgrade deadlocks that no timeout can cure)."""
    if not _is_sqlite(url):
        return sa.create_engine(url, pool_pre_ping=True)
    engine = sa.create_engine(url, connect_args={"timeout": busy_timeout_s,
                                                 "check_same_thread": False})
    begin = "BEGIN IMMEDIATE" if immediate else "BEGIN"

    @event.listens_for(engine, "connect")
    def _configure(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (below)
        cur = dbapi_conn.cursor()
        try:
            cur.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
            if make_url(url).database not in (None, "", ":memory:"):
                cur.execute("PRAGMA journal_mode = WAL")
            cur.execute("PRAGMA synchronous = NORMAL")
            cur.execute("PRAGMA foreign_keys = ON")
        finally:
            cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        conn.exec_driver_sql(begin)

    return engine


@dataclass
class Database:
    """An open run database. Thread-safe for reads; runs are written by :class:`RunWriter`."""

    url: str
    engine: Engine
    busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S
    interrupted: tuple[str, ...] = field(default=())  # runs marked INTERRUPTED at open

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A connection in a read transaction (one consistent snapshot under WAL)."""
        try:
            with self.engine.begin() as conn:
                yield conn
        except sa.exc.DBAPIError as exc:
            raise classify(exc, self.url) from exc

    def writer_engine(self) -> Engine:
        """A separate engine for the writer thread (its own connection, immediate BEGIN)."""
        return create_engine(self.url, busy_timeout_s=self.busy_timeout_s, immediate=True)

    def schema_version(self) -> str:
        with self.read() as conn:
            return migrate.current_revision(conn) or ""

    def list_runs(self, **filters: Any) -> list[RunSummary]:
        from app.storage.repository import list_runs
        return list_runs(self, **filters)

    def load_run(self, run_id: str) -> StoredRun:
        from app.storage.repository import load_run
        return load_run(self, run_id)

    def resolve_run_id(self, prefix: str) -> str:
        from app.storage.repository import resolve_run_id
        return resolve_run_id(self, prefix)

    def close(self) -> None:
        self.engine.dispose()


def open_database(url: str | None = None, *,
                  busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S) -> Database:
    """Open the database at ``url`` (default: the station's file), upgrading its schema and
    marking runs whose station crashed as INTERRUPTED. Raises a :class:`StorageError`
    subclass with an actionable message (locked, disk full, corrupt, unreachable, too new)."""
    url = url or default_db_url()
    try:
        engine = create_engine(url, busy_timeout_s=busy_timeout_s)
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, ImportError) as exc:
        raise classify(exc, url) from exc
    database = Database(url, engine, busy_timeout_s)
    try:
        with engine.begin() as conn:
            migrate.upgrade_connection(conn, url)
            database.interrupted = tuple(mark_interrupted(conn))
    except StorageError:
        engine.dispose()
        raise
    except sa.exc.SQLAlchemyError as exc:
        engine.dispose()
        raise classify(exc, url) from exc
    return database


# --- crash recovery ---------------------------------------------------------------------------

def writer_identity() -> tuple[str, int]:
    """(host, pid) recorded on a run while this process writes it."""
    return socket.gethostname(), os.getpid()


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists on this machine (never signals it)."""
    if sys.platform == "win32":  # os.kill(pid, 0) would terminate the process on Windows
        import ctypes

        handle = ctypes.windll.kernel32.OpenProcess(0x1000, False, pid)  # QUERY_LIMITED_INFO
        if not handle:
            return False
        code = ctypes.c_ulong()
        ctypes.windll.kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        ctypes.windll.kernel32.CloseHandle(handle)
        return code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _orphaned(host: str | None, pid: int | None, heartbeat: float | None) -> bool:
    """A RUNNING run is orphaned when no live writer owns it any more."""
    if pid is None:
        return True  # its writer closed without a RunFinished
    if host == socket.gethostname():
        return not pid_alive(pid)
    return heartbeat is None or time.time() - heartbeat > STALE_HEARTBEAT_S


def mark_interrupted(conn: Connection) -> list[str]:
    """RUNNING runs whose writer is gone → INTERRUPTED (their samples stay as stored).

    A run still being written by a live process (the GUI reading while the CLI runs, or this
    very process) is left alone, which is why the writer records its host and pid.
    """
    runs = conn.execute(sa.select(Run.id, Run.uuid, Run.writer_host, Run.writer_pid,
                                  Run.heartbeat_wall)
                        .where(Run.status == RunStatus.RUNNING.value)).all()
    marked = []
    for pk, uuid, host, pid, heartbeat in runs:
        if not _orphaned(host, pid, heartbeat):
            continue
        last_t = conn.execute(sa.select(sa.func.max(PowerSampleRow.t))
                              .where(PowerSampleRow.run_id == pk)).scalar()
        conn.execute(sa.update(Run).where(Run.id == pk).values(
            status=RunStatus.INTERRUPTED.value, duration_s=last_t, writer_pid=None,
            error="the station stopped while this run was in progress; everything stored "
                  "up to then is kept"))
        marked.append(uuid)
    return marked


def load_one_run(url: str | None, run_id: str) -> StoredRun:
    """Open the database, load one run (id or unique prefix) and close it again — what a
    one-shot command (report, runs show) needs."""
    database = open_database(url)
    try:
        return database.load_run(run_id)
    finally:
        database.close()
