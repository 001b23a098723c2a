"""The connection to a run database: engine settings and the :class:`Database` handle.

SQLite is the station's default (one file in the data directory): WAL so the GUI can read
while a run writes, ``synchronous=NORMAL`` (a committed transaction survives a process crash;
only a power cut can lose the last commits), a busy timeout so short lock waits are absorbed.
pysqlite's own transaction handling is switched off and ``BEGIN`` is issued explicitly, so DDL
(schema upgrades) is transactional too. Any SQLAlchemy URL works; SQLite-only settings are
applied only to SQLite.

This module knows only the connection. Opening a station's database composes the steps above
it: connect here, upgrade the schema (:mod:`app.storage.migrate`), mark crashed runs
(:mod:`app.storage.interrupted`), import journals (:mod:`app.storage.recover`), all in
:mod:`app.storage.opening`; reading runs is :mod:`app.storage.repository`'s.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine, make_url

from app.storage import server_link
from app.storage.errors import classify
from app.storage.sqlite_file import refuse_special_path
from app.storage.server_link import READER_TIMEOUTS, WRITER_TIMEOUTS, ServerTimeouts

DEFAULT_BUSY_TIMEOUT_S = 5.0


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def create_engine(url: str, *, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
                  immediate: bool = False, read_only_file: str | None = None,
                  server_timeouts: ServerTimeouts | None = None) -> Engine:
    """An engine with StorWatt's connection settings; ``immediate`` takes the write lock at
    ``BEGIN`` (the writer's engine: avoids lock-upgrade deadlocks that no timeout can cure).
    ``read_only_file``: open that SQLite file read-only instead
    (:func:`app.storage.opening.open_for_reading`).
    A server database gets bounded waits (:mod:`app.storage.server_link`): the writer's
    (``immediate``) or the readers' unless ``server_timeouts`` says otherwise."""
    if not is_sqlite(url):
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
    """A connection to a run database. Thread-safe for reads; runs are written by
    :class:`~app.storage.writer.RunWriter`."""

    url: str
    engine: Engine
    busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S
    #: opened by :func:`app.storage.opening.open_for_reading` on a file this process cannot write
    read_only: bool = False
    #: bounds on a database server's answers (None: the writer's and readers' defaults)
    server_timeouts: ServerTimeouts | None = None

    @property
    def longest_wait_s(self) -> float:
        """The longest one storage operation may block: SQLite's busy timeout, or a server's
        connect and reply bounds (what the run writer allows a commit before giving up)."""
        if is_sqlite(self.url):
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

    def close(self) -> None:
        self.engine.dispose()


def _read_only_url(path: str) -> str:
    """SQLite's read-only URI. In a folder nobody can write (a read-only file system) the file
    is also ``immutable``: SQLite then needs no ``-shm``/lock file beside it, which it could
    not create there."""
    folder = os.path.dirname(os.path.abspath(path)) or "."
    immutable = "&immutable=1" if not os.access(folder, os.W_OK) else ""
    return f"sqlite:///file:{quote(os.path.abspath(path))}?mode=ro{immutable}&uri=true"
