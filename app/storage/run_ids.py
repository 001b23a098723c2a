"""A run's full id from what a user typed: the whole id or an unambiguous prefix.

Every command and view that names a run goes through here; it reads the ``runs`` table only,
so the audit trail and the read model can both use it without importing each other.
"""

from __future__ import annotations

import sqlalchemy as sa

from app.storage import schema as s
from app.storage.db import Database
from app.storage.errors import AmbiguousRunIdError, RunNotFoundError


def resolve_run_id(database: Database, prefix: str) -> str:
    """The full id of the one run whose id starts with ``prefix``."""
    prefix = prefix.strip()
    if not prefix:
        raise RunNotFoundError("no run id given")
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    with database.read() as conn:
        exact = conn.execute(sa.select(s.Run.uuid).where(s.Run.uuid == prefix)).scalar()
        if exact:
            return exact
        found = conn.execute(sa.select(s.Run.uuid).where(
            s.Run.uuid.like(escaped + "%", escape="\\")).limit(6)).scalars().all()
    if not found:
        raise RunNotFoundError(f"no stored run with id {prefix!r} in {database.url} "
                               "(storwatt runs list shows the stored runs)")
    if len(found) > 1:
        shown = ", ".join(found[:5]) + (" …" if len(found) > 5 else "")
        raise AmbiguousRunIdError(f"run id {prefix!r} matches several runs ({shown}): "
                                  "give more characters")
    return found[0]
