"""Schema upgrades with alembic, driven from code (no ``alembic.ini``, no script folder).

Revisions are the modules of :mod:`app.storage.migrations.versions`, each named in
:func:`revision_modules` and imported by an ordinary import statement, so they are found
installed and frozen alike (tests/test_storage_database.py checks none is left out). Each one
runs inside the caller's transaction through alembic's ``Operations`` and the revision is
recorded in alembic's own ``alembic_version`` table, so the ``alembic`` command line still
understands the database. Alembic itself is imported only when a revision has to run. SQLite
runs DDL transactionally here (see :mod:`app.storage.db`), so a crash mid-upgrade leaves the old
schema.
A revision imports nothing of the live storage code: every table it creates is defined in
:mod:`app.storage.schema`. Opening a database runs the upgrade (:mod:`app.storage.opening`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from types import ModuleType

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from app.storage.db import Database
from app.storage.errors import SchemaOwnerError, SchemaTooNewError, StorageError
from app.storage.server_link import shown
from app.storage.migrations.versions import (v0001_initial, v0002_audit, v0003_writer_boot,
                                             v0004_stored_seq, v0005_run_record,
                                             v0006_range_plan, v0007_resume, v0008_signoff,
                                             v0009_search_note, v0010_power_inputs,
                                             v0011_identity_text, v0012_approval_verdict,
                                             v0013_generator_ceiling, v0014_access_pattern,
                                             v0015_record_hashes, v0016_history_indexes,
                                             v0017_database_identity, v0018_pre_run_basis,
                                             v0019_run_search_text, v0020_steady_state,
                                             v0021_writer_roles, v0022_finished_runs)

VERSION_TABLE = sa.Table("alembic_version", sa.MetaData(),
                         sa.Column("version_num", sa.String(32), primary_key=True))


@dataclass(frozen=True)
class Revision:
    id: str
    down: str | None
    module: ModuleType


def revision_modules() -> tuple[ModuleType, ...]:
    """Every schema revision; a new ``vNNNN_*.py`` is imported above and added here."""
    return (v0001_initial, v0002_audit, v0003_writer_boot, v0004_stored_seq, v0005_run_record,
            v0006_range_plan, v0007_resume, v0008_signoff, v0009_search_note, v0010_power_inputs,
            v0011_identity_text, v0012_approval_verdict, v0013_generator_ceiling,
            v0014_access_pattern, v0015_record_hashes, v0016_history_indexes,
            v0017_database_identity, v0018_pre_run_basis, v0019_run_search_text,
            v0020_steady_state, v0021_writer_roles, v0022_finished_runs)


@cache
def revisions() -> tuple[Revision, ...]:
    """All revisions in upgrade order; the chain is checked so a bad revision fails loudly."""
    found = [Revision(m.revision, m.down_revision, m) for m in revision_modules()]
    found.sort(key=lambda r: int(r.id))
    previous = None
    for rev in found:
        if rev.down != previous:
            raise RuntimeError(f"migration {rev.id} follows {rev.down}, expected {previous}")
        previous = rev.id
    return tuple(found)


def head() -> str:
    return revisions()[-1].id


def current_revision(conn: Connection) -> str | None:
    """The schema revision stored in the database, ``None`` for an empty database.

    Read from alembic's ``alembic_version`` table directly: every open asks, and loading
    alembic only when there is something to upgrade keeps it off the GUI's and the CLI's
    start-up (docs/performance.md)."""
    if not sa.inspect(conn).has_table(VERSION_TABLE.name):
        return None
    return conn.execute(sa.select(VERSION_TABLE.c.version_num)).scalar()


def pending(current: str | None, url: str) -> list[Revision]:
    """Revisions still to apply; refuses a database from a newer StorWatt."""
    ids = [r.id for r in revisions()]
    if current is None:
        return list(revisions())
    if current not in ids:
        if current.isdigit() and int(current) > int(head()):
            raise SchemaTooNewError(url, current, head())
        raise StorageError(f"database {url} has unknown schema revision {current!r} "
                           f"(this StorWatt knows {', '.join(ids)}): it was not written by "
                           "StorWatt")
    return list(revisions()[ids.index(current) + 1:])


def upgrade_connection(conn: Connection, url: str) -> str:
    """Bring the schema to head inside the caller's transaction; returns the head revision."""
    current = current_revision(conn)
    todo = pending(current, url)
    if not todo:
        return current or head()
    if current is not None:
        _check_owner(conn, url, current)
    from alembic.migration import MigrationContext
    from alembic.operations import Operations

    ctx = MigrationContext.configure(conn)
    with Operations.context(ctx):
        for rev in todo:
            rev.module.upgrade()
    VERSION_TABLE.create(conn, checkfirst=True)
    conn.execute(VERSION_TABLE.delete())
    conn.execute(VERSION_TABLE.insert().values(version_num=todo[-1].id))
    return todo[-1].id


def _check_owner(conn: Connection, url: str, current: str) -> None:
    """An existing lab schema is upgraded by its owner only (docs/storage.md, "Database
    roles"): any other login is told who must run ``storwatt db upgrade``, instead of the
    server's "must be owner of table …" half-way through."""
    if conn.dialect.name != "postgresql":
        return
    role, owner, may = conn.execute(sa.text(
        "SELECT session_user, pg_get_userbyid(c.relowner), "
        "(SELECT rolsuper FROM pg_roles WHERE rolname = session_user) "
        "OR pg_has_role(session_user, c.relowner, 'MEMBER') "
        "FROM pg_class c WHERE c.oid = 'alembic_version'::regclass")).one()
    if not may:
        raise SchemaOwnerError(
            f"database {shown(url)} has schema revision {current} and this StorWatt needs "
            f"{head()}: role {role!r} may not upgrade it; the schema's owner ({owner}) must "
            f"run: storwatt db upgrade --db <the database URL as {owner}> (docs/storage.md, "
            "\"Database roles\")")


def schema_version(database: Database) -> str:
    """The schema revision of an open database ("" for an empty one)."""
    with database.read() as conn:
        return current_revision(conn) or ""


__all__ = ["upgrade_connection", "current_revision", "head", "revisions", "schema_version"]
