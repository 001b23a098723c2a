"""Which database this is: its random id (revision 0017) and the name a report gives it.

A run is measured on its station's database; later revisions of its record (COM results,
dispositions, approvals) may be made on the lab's copy (issue 26). Each audit entry therefore
records where it was made, in words a QA reader recognises — the station's file or the
server and database — with the database's own id, which stays the same when the file is
moved and differs between two files of one name.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import Connection, make_url

from app.storage.schema import DatabaseIdentity


def database_id(conn: Connection) -> str | None:
    """The database's id; None before revision 0017 ran on it."""
    return conn.execute(sa.select(DatabaseIdentity.id).limit(1)).scalar()


def where_made(conn: Connection, url: str, station: str) -> str:
    """``station bench-3, storwatt.db (database 3f2c8a1d)`` or ``server lab-db/storwatt
    (database 9be01c44)``: where an entry made now on ``conn`` is made."""
    parsed = make_url(url)
    ident = database_id(conn)
    tag = f" (database {ident[:8]})" if ident else ""
    if parsed.get_backend_name() == "sqlite":
        return f"station {station}, {Path(parsed.database or 'memory').name}{tag}"
    port = f":{parsed.port}" if parsed.port else ""
    return f"server {parsed.host or 'localhost'}{port}/{parsed.database or ''}{tag}"
