"""Editing a finished run's facts as an insider with the station's SQLite file would.

Since revision 0022 the file's triggers refuse any change to a finished run's facts, so an
edit takes deliberate work: drop the triggers, change the rows, put the triggers back (the
recomputed record hash then shows the edit). Tests of what a changed record shows (the
recomputed hash, "not approved") and tests that need an odd stored state use these helpers,
never a plain UPDATE. On a PostgreSQL test server the tests connect as the schema owner, whom
the guard lets through (docs/security.md: the administrator can rewrite anything)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from app.storage.migrations.versions.v0022_finished_runs import sqlite_statements

_GUARDS = "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%finished%'"


def tamper(path: Path | str, *statements: str | tuple[str, tuple]) -> None:
    """Run ``statements`` (SQL, or (SQL, parameters)) on the file at ``path`` with the
    finished-run triggers out of the way for that one transaction."""
    with sqlite3.connect(path) as conn:
        names = [r[0] for r in conn.execute(_GUARDS)]
        for name in names:
            conn.execute(f"DROP TRIGGER {name}")
        for statement in statements:
            sql, params = statement if isinstance(statement, tuple) else (statement, ())
            conn.execute(sql, params)
        if names:
            for statement in sqlite_statements():
                conn.execute(statement)
    conn.close()


@contextmanager
def guards_lifted(conn: Connection) -> Iterator[Connection]:
    """The same deliberate work inside an open SQLAlchemy transaction on ``conn``: on SQLite
    the finished-run triggers are dropped for the block and put back at its end."""
    if conn.dialect.name != "sqlite":
        yield conn
        return
    names = [r[0] for r in conn.execute(sa.text(_GUARDS))]
    for name in names:
        conn.execute(sa.text(f"DROP TRIGGER {name}"))
    yield conn
    if names:
        for statement in sqlite_statements():
            conn.execute(sa.text(statement))
