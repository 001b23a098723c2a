"""Checking a lab database before a station is pointed at it (issue 39).

``storwatt station lab-db URL`` used to store any text: "not a url", a relative SQLite path
or a host that does not exist were all accepted, and the station's next run then printed the
same sender error at every push and promised a lab copy that could never catch up. A lab
database is now checked once, when it is named, the way the sender will use it: the URL
parses, the server answers within a bounded time, its schema is this StorWatt's, and the role
may store a run (:mod:`app.storage.rights`). Nothing is created or upgraded here: a lab
database is made and upgraded by its owner (``storwatt db upgrade --db URL``), never as a side
effect of a station naming it.
"""

from __future__ import annotations

import os

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from app.storage import migrate
from app.storage.db import Database, create_engine
from app.storage.errors import StorageError, classify
from app.storage.opening import require_existing
from app.storage.rights import missing_write_rights
from app.storage.server_link import ServerTimeouts, shown

#: a named lab database must answer within these bounds (a technician waits at the prompt)
CHECK_TIMEOUTS = ServerTimeouts(connect_s=5, statement_s=10.0, idle_in_transaction_s=20.0,
                                reply_s=15.0)
EXAMPLE = "postgresql+psycopg://bench_3@lab-db/storwatt"


class LabDatabaseError(StorageError):
    """The URL cannot serve as this station's lab database; the message says why and who acts."""


def check_lab_database(url: str, timeouts: ServerTimeouts = CHECK_TIMEOUTS) -> str:
    """Check ``url`` as the sender would use it; returns the role the station writes as
    ("" on SQLite). Raises :class:`LabDatabaseError` (one line) otherwise."""
    where = _parsed_where(url)
    engine = None
    try:
        engine = create_engine(url, server_timeouts=timeouts)
        with engine.connect() as conn:
            found = migrate.current_revision(conn)
        _check_schema(found, where)
        role, missing = missing_write_rights(Database(url, engine, server_timeouts=timeouts))
    except (sa.exc.SQLAlchemyError, ImportError) as exc:
        raise LabDatabaseError(f"{classify(exc, where)}") from exc
    except LabDatabaseError:
        raise
    except StorageError as exc:
        raise LabDatabaseError(str(exc)) from exc
    finally:
        if engine is not None:
            engine.dispose()
    if missing:
        raise LabDatabaseError(
            f"{where}: role {role!r} cannot store a run (missing {', '.join(missing)}); ask "
            "the lab's database administrator to grant the station role its rights "
            "(docs/storage.md, \"Database roles\")")
    return role


def lab_schema_refusal(url: str, exc: StorageError) -> StorageError:
    """Why opening the lab database at ``url`` failed, when the cause is an older schema the
    station's role could not upgrade (PostgreSQL's raw "must be owner of table phases"): who
    must run ``storwatt db upgrade``. Any other failure is returned as it was."""
    engine = None
    try:
        engine = create_engine(url, server_timeouts=CHECK_TIMEOUTS)
        with engine.connect() as conn:
            found = migrate.current_revision(conn)
        _check_schema(found, shown(url))
    except LabDatabaseError as older:
        return LabDatabaseError(f"{older} (the station could not upgrade it: "
                                f"{' '.join(str(exc).split())[:200]})")
    except (sa.exc.SQLAlchemyError, StorageError, ImportError):
        pass
    finally:
        if engine is not None:
            engine.dispose()
    return exc


def _parsed_where(url: str) -> str:
    """``url`` as shown (password hidden), once it is known to name a usable database."""
    try:
        parsed = make_url(url)
    except sa.exc.ArgumentError:
        raise LabDatabaseError(f"{url!r} is not a database URL (e.g. {EXAMPLE})") from None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        path = parsed.database or ""
        if path in ("", ":memory:"):
            raise LabDatabaseError(f"{url!r} names no database file (a lab database is "
                                   f"PostgreSQL, e.g. {EXAMPLE})")
        if not os.path.isabs(path):
            raise LabDatabaseError(
                f"{url!r} is a relative path (it would mean another file in every folder a "
                f"command runs from): give an absolute one, sqlite:////abs/path.db")
        require_existing(url)
    elif backend != "postgresql":
        raise LabDatabaseError(f"{shown(url)} is a {backend} URL; a lab database is "
                               f"PostgreSQL (e.g. {EXAMPLE})")
    elif not parsed.host and not parsed.query.get("host"):
        raise LabDatabaseError(f"{shown(url)} names no server (e.g. {EXAMPLE})")
    return shown(url)


def _check_schema(found: str | None, where: str) -> None:
    head = migrate.head()
    if found == head:
        return
    upgrade = (f"the database's owner (not the station role) runs storwatt db upgrade --db "
               f"{where}")
    if found is None:
        raise LabDatabaseError(f"{where} holds no StorWatt schema: {upgrade} once to create it")
    if found not in {r.id for r in migrate.revisions()}:
        raise LabDatabaseError(f"{where} has schema {found}, newer than this StorWatt's "
                               f"{head}: update this station's StorWatt")
    raise LabDatabaseError(f"{where} has schema {found}, this StorWatt needs {head}: {upgrade}")
