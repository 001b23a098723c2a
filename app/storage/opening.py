"""Opening a station's run database: the steps a caller needs, composed in order.

Connect (:mod:`app.storage.db`), bring the schema up to date (:mod:`app.storage.migrate`) and
mark the runs whose station crashed (:mod:`app.storage.interrupted`) in one transaction, then
import the run journals left for this database (:mod:`app.storage.recover`). Each step is its
own module and knows nothing of the others; this one sits above them all, so no storage module
below has to reach up to open a database.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine, make_url

from app.core.paths import default_db_url
from app.storage import migrate
from app.storage.db import DEFAULT_BUSY_TIMEOUT_S, Database, create_engine, is_sqlite
from app.storage.errors import (DatabaseLockedError, NoDatabaseError, ReadOnlySchemaError,
                                StorageError, classify)
from app.storage.interrupted import mark_interrupted
from app.storage.liveness import Machine
from app.storage.recover import RecoveryReport, recover_at_open
from app.storage.repository import load_run
from app.storage.server_link import ServerTimeouts
from app.storage.stored import StoredRun


@dataclass
class OpenedDatabase(Database):
    """A database as opening found it: the connection, plus what the open did to it."""

    interrupted: tuple[str, ...] = ()  # runs marked INTERRUPTED at open
    recovered: RecoveryReport | None = None  # run journals imported at open


def open_database(url: str | None = None, *,
                  busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
                  machine: Machine | None = None, recover_journals: bool = True,
                  server_timeouts: ServerTimeouts | None = None,
                  interrupt_orphans: bool = True) -> OpenedDatabase:
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
    database = OpenedDatabase(url, engine, busy_timeout_s, server_timeouts=server_timeouts)
    try:
        try:
            _prepare(database, engine, machine, interrupt_orphans)
        except DatabaseLockedError:
            if not is_sqlite(url):
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
        database.recovered = recover_at_open(database)
    return database


def _prepare(database: OpenedDatabase, engine: Engine, machine: Machine | None,
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


def require_existing(url: str | None = None) -> None:
    """Refuse a SQLite file that does not exist (issue 39): SQLite creates whatever file it is
    asked to open, so a command that only reads a database, copies from it, or adds to a run
    already in it would leave an empty file behind a typo and answer about it. Every such
    command opens through :func:`open_for_reading` or :func:`open_existing_database`, which
    call this first; only ``run`` and ``db upgrade`` (and ``db copy --to``) create one."""
    url = url or default_db_url()
    path = _sqlite_file(url)
    if path is not None and not os.path.exists(path):
        folder = os.path.dirname(os.path.abspath(path))
        hint = "" if os.path.isdir(folder) else f" (and no folder {folder})"
        raise NoDatabaseError(f"no database at {os.path.abspath(path)}{hint}: check the path; "
                              "nothing was created")


def open_existing_database(url: str | None = None, **options: Any) -> OpenedDatabase:
    """:func:`open_database` for a database that must already exist (an audit entry, a copy's
    source, the station's side of ``db sync``): a missing SQLite file is refused, not made."""
    require_existing(url)
    return open_database(url, **options)


def open_for_reading(url: str | None = None, *, must_exist: bool = True) -> OpenedDatabase:
    """Open ``url`` to read runs (``runs list``/``show``, ``report``, the history view).

    A SQLite file that does not exist is refused (:func:`require_existing`) unless
    ``must_exist`` is False (the history view, which shows a station without runs yet).

    A database that can be written is opened as :func:`open_database` does (schema upgrade,
    crash recovery). A SQLite file this process cannot write (read-only file, folder or file
    system: an archived station's database) is opened read-only instead: no migration, no
    crash-recovery writes, and a :class:`ReadOnlySchemaError` if its schema is older than
    this StorWatt, which could only read it after upgrading it."""
    url = url or default_db_url()
    if must_exist:
        require_existing(url)
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
    return OpenedDatabase(url, engine, read_only=True)


def _writable(path: str) -> bool:
    """The file and its folder (SQLite writes its journal beside the file) can be written;
    ``os.access`` also says no for root on a read-only file system."""
    folder = os.path.dirname(os.path.abspath(path)) or "."
    return os.access(path, os.W_OK) and os.access(folder, os.W_OK)


def load_one_run(url: str | None, run_id: str) -> StoredRun:
    """Open the database, load one run (id or unique prefix) and close it again — what a
    one-shot command (report, runs show) needs."""
    database = open_for_reading(url)
    try:
        return load_run(database, run_id)
    finally:
        database.close()


def upgrade(url: str | None = None) -> str:
    """Open (and thereby upgrade) the database at ``url``; returns the schema revision."""
    database = open_database(url)
    try:
        return migrate.schema_version(database)
    finally:
        database.close()
