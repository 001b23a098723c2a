"""``storwatt db roles``: the lab PostgreSQL's logins, one per station PC and per QA person.

Printed as SQL for the database administrator to read and run, or applied directly with
``--db`` (the schema owner's URL). What each role may do is docs/security.md's; the rows each
login may change are enforced by the server's guard (schema revision 0022), not by this
command.
"""

from __future__ import annotations

import argparse

from app.cli import arguments


def register(group: argparse._SubParsersAction) -> None:
    """Adds ``roles`` to the ``storwatt db`` actions."""
    roles = group.add_parser(
        "roles", help="set up the lab PostgreSQL's logins: one per station, one per QA person",
        description="Without --db the SQL is printed for the administrator; with --db (the "
        "schema owner's URL) it is applied. Safe to run again, e.g. for a new bench or after "
        "storwatt db upgrade.")
    roles.add_argument("--station", action="append", default=[], metavar="LOGIN",
                       help="a station PC's login (repeatable), e.g. bench_1")
    roles.add_argument("--qa", action="append", default=[], metavar="LOGIN",
                       help="a QA person's login (repeatable), e.g. qa_anna")
    roles.add_argument("--db", help="apply to this database, connected as its owner")
    roles.set_defaults(func=roles_command)


def roles_command(args: argparse.Namespace) -> int:
    from app.storage.errors import StorageError
    from app.storage.roles import RoleNameError, roles_sql

    try:
        sql = roles_sql(args.station, args.qa)
    except RoleNameError as exc:
        return arguments.refuse("db roles", exc, args)
    if not args.db:
        print(sql, end="")
        return 0
    try:
        applied = _apply(args.db, sql)
    except StorageError as exc:
        return arguments.refuse("db roles", exc, args)
    print(f"roles set up on {applied}: {len(args.station)} station login(s), "
          f"{len(args.qa)} QA login(s); give each a password (ALTER ROLE … PASSWORD) and "
          "allow it in pg_hba.conf")
    return 0


def _apply(url: str, sql: str) -> str:
    import sqlalchemy as sa

    from app.storage.errors import StorageError, classify
    from app.storage.server_link import shown

    if not url.startswith("postgresql"):
        raise StorageError(f"database {shown(url)} is not PostgreSQL: roles exist only on the "
                           "lab server (a station's SQLite file has a single user)")
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(sql)
    except sa.exc.DBAPIError as exc:
        raise classify(exc, shown(url)) from exc
    finally:
        engine.dispose()
    return shown(url)
