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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine, make_url

from app.paths import default_db_url
from app.records import PhaseStatus, RunStatus
from app.storage import migrate, server_link
from app.storage.errors import (DatabaseLockedError, ReadOnlySchemaError, StorageError,
                                classify)
from app.storage.liveness import Machine, stop_reason, take_over
from app.storage.sqlite_file import refuse_special_path
from app.storage.schema import Phase, PhaseAttemptRow, PowerSampleRow, Run
from app.storage.server_link import READER_TIMEOUTS, WRITER_TIMEOUTS, ServerTimeouts

if TYPE_CHECKING:
    from app.storage.recover import RecoveryReport
    from app.storage.repository import RunSummary, StoredRun

DEFAULT_BUSY_TIMEOUT_S = 5.0


def _is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def create_engine(url: str, *, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
                  immediate: bool = False, read_only_file: str | None = None,
                  server_timeouts: ServerTimeouts | None = None) -> Engine:
    """An engine with StorWatt's connection settings; ``immediate`` takes the write lock at
    ``BEGIN`` (the writer's engine: avoids lock-upgrade deadlocks that no timeout can cure).
    ``read_only_file``: open that SQLite file read-only instead (:func:`open_for_reading`).
    A server database gets bounded waits (:mod:`app.storage.server_link`): the writer's
    (``immediate``) or the readers' unless ``server_timeouts`` says otherwise."""
    if not _is_sqlite(url):
        return _server_engine(url, server_timeouts or (
            WRITER_TIMEOUTS if immediate else READER_TIMEOUTS), "writer" if immediate else "reader")
    database = read_only_file or make_url(url).database
    if database not in (None, "", ":memory:") and not database.startswith("file:"):
        refuse_special_path(url, database)  # a device, pipe or /proc entry is no database
    connect_url = url if read_only_file is None else _read_only_url(read_only_file)
    engine = sa.create_engine(connect_url, connect_args={"timeout": busy_timeout_s,
                                                         "check_same_thread": False})
    begin = "BEGIN IMMEDIATE" if immediate else "BEGIN"

    @event.listens_for(engine, "connect")
    def _configure(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (below)
        cur = dbapi_conn.cursor()
        try:
            cur.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
            if make_url(url).database not in (None, "", ":memory:") and read_only_file is None:
                cur.execute("PRAGMA journal_mode = WAL")
            cur.execute("PRAGMA synchronous = NORMAL")
            cur.execute("PRAGMA foreign_keys = ON")
        finally:
            cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        conn.exec_driver_sql(begin)

    return engine


def _server_engine(url: str, timeouts: ServerTimeouts, role: str) -> Engine:
    engine = sa.create_engine(url, pool_pre_ping=True)
    if make_url(url).get_driver_name() != "psycopg":
        return engine  # another driver: its own settings (PostgreSQL URLs default to psycopg)

    @event.listens_for(engine, "do_connect")
    def _bounded(_dialect: Any, _record: Any, _cargs: Any, cparams: dict[str, Any]) -> Any:
        return server_link.connect(timeouts, role, cparams)

    return engine


@dataclass
class Database:
    """An open run database. Thread-safe for reads; runs are written by :class:`RunWriter`."""

    url: str
    engine: Engine
    busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S
    interrupted: tuple[str, ...] = field(default=())  # runs marked INTERRUPTED at open
    recovered: RecoveryReport | None = None  # run journals imported at open (app.storage.recover)
    #: opened by :func:`open_for_reading` on a file this process cannot write
    read_only: bool = False
    #: bounds on a database server's answers (None: the writer's and readers' defaults)
    server_timeouts: ServerTimeouts | None = None

    @property
    def longest_wait_s(self) -> float:
        """The longest one storage operation may block: SQLite's busy timeout, or a server's
        connect and reply bounds (what the run writer allows a commit before giving up)."""
        if _is_sqlite(self.url):
            return self.busy_timeout_s
        bounds = self.server_timeouts or WRITER_TIMEOUTS
        return max(2, bounds.connect_s) + bounds.reply_s

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
        return create_engine(self.url, busy_timeout_s=self.busy_timeout_s, immediate=True,
                             server_timeouts=self.server_timeouts)

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
                  busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
                  machine: Machine | None = None, recover_journals: bool = True,
                  server_timeouts: ServerTimeouts | None = None,
                  interrupt_orphans: bool = True) -> Database:
    """Open the database at ``url`` (default: the station's file), upgrading its schema,
    marking runs whose station crashed as INTERRUPTED (judged as seen from ``machine``, this
    one unless a test injects another) and importing the run journals left for it
    (``recover_journals``, see :mod:`app.storage.recover`); ``server_timeouts``: bounds on a
    database server's answers for every connection of this database (tests set them short);
    ``interrupt_orphans=False``: leave every run's status as it is (the lab sender: the lab
    copy follows the station's record, :mod:`app.storage.sender`).
    Raises a :class:`StorageError` subclass with an actionable message (locked, disk full,
    corrupt, unreachable, too new)."""
    url = url or default_db_url()
    try:
        engine = create_engine(url, busy_timeout_s=busy_timeout_s,
                               server_timeouts=server_timeouts)
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, ImportError) as exc:
        raise classify(exc, url) from exc
    database = Database(url, engine, busy_timeout_s, server_timeouts=server_timeouts)
    try:
        try:
            _prepare(database, engine, machine, interrupt_orphans)
        except DatabaseLockedError:
            if not _is_sqlite(url):
                raise
            # SQLite does not wait to turn a read lock into a write lock: a station that must
            # write at open (a new file's schema, crash marks) while another station writes
            # gets "locked" at once. Again with the write lock taken at BEGIN, which waits.
            # (Not always: a database merely read at open must open under a long lock.)
            opener = database.writer_engine()
            try:
                _prepare(database, opener, machine, interrupt_orphans)
            finally:
                opener.dispose()
    except StorageError:
        engine.dispose()
        raise
    if recover_journals:
        from app.storage.recover import recover_at_open
        database.recovered = recover_at_open(database)
    return database


def _prepare(database: Database, engine: Engine, machine: Machine | None,
             interrupt_orphans: bool = True) -> None:
    """Bring the schema up to date and mark crashed runs INTERRUPTED, in one transaction."""
    try:
        with engine.begin() as conn:
            migrate.upgrade_connection(conn, database.url)
            if interrupt_orphans:
                database.interrupted = tuple(mark_interrupted(conn, machine))
    except sa.exc.SQLAlchemyError as exc:
        raise classify(exc, database.url) from exc


def _sqlite_file(url: str) -> str | None:
    """The SQLite file ``url`` names; None for another database, or for a URL that does not
    parse (``open_database`` then refuses it with its reason)."""
    try:
        parsed = make_url(url)
    except sa.exc.ArgumentError:
        return None
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return parsed.database


def _read_only_url(path: str) -> str:
    """SQLite's read-only URI. In a folder nobody can write (a read-only file system) the file
    is also ``immutable``: SQLite then needs no ``-shm``/lock file beside it, which it could
    not create there."""
    folder = os.path.dirname(os.path.abspath(path)) or "."
    immutable = "&immutable=1" if not os.access(folder, os.W_OK) else ""
    return f"sqlite:///file:{quote(os.path.abspath(path))}?mode=ro{immutable}&uri=true"


def open_for_reading(url: str | None = None) -> Database:
    """Open ``url`` to read runs (``runs list``/``show``, ``report``, the history view).

    A database that can be written is opened as :func:`open_database` does (schema upgrade,
    crash recovery). A SQLite file this process cannot write (read-only file, folder or file
    system: an archived station's database) is opened read-only instead: no migration, no
    crash-recovery writes, and a :class:`ReadOnlySchemaError` if its schema is older than
    this StorWatt, which could only read it after upgrading it."""
    url = url or default_db_url()
    path = _sqlite_file(url)
    if path is None or not os.path.exists(path) or _writable(path):
        return open_database(url)
    engine = create_engine(url, read_only_file=path)
    try:
        with engine.begin() as conn:
            found = migrate.current_revision(conn)
    except sa.exc.SQLAlchemyError as exc:
        engine.dispose()
        raise classify(exc, url) from exc
    if found != migrate.head():
        engine.dispose()
        raise ReadOnlySchemaError(
            f"read-only database at schema {found or 'none'}; open it writable once to "
            f"upgrade (this StorWatt reads schema {migrate.head()}): {path}")
    return Database(url, engine, read_only=True)


def _writable(path: str) -> bool:
    """The file and its folder (SQLite writes its journal beside the file) can be written;
    ``os.access`` also says no for root on a read-only file system."""
    folder = os.path.dirname(os.path.abspath(path)) or "."
    return os.access(path, os.W_OK) and os.access(folder, os.W_OK)


# --- crash recovery ---------------------------------------------------------------------------

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


def load_one_run(url: str | None, run_id: str) -> StoredRun:
    """Open the database, load one run (id or unique prefix) and close it again — what a
    one-shot command (report, runs show) needs."""
    database = open_for_reading(url)
    try:
        return database.load_run(run_id)
    finally:
        database.close()
