"""Editing a finished run's facts in a station's SQLite file, as an insider would.

Since revision 0022 the file's triggers refuse any change to a finished run's facts, so an
edit takes deliberate work: drop the triggers, change the rows, put the triggers back. Tests
of what a changed record shows (the recomputed hash, "not approved") use this to make the
change the recomputation must then catch."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from app.storage.migrations.versions.v0022_finished_runs import sqlite_statements


def tamper(path: Path | str, *statements: str | tuple[str, tuple]) -> None:
    """Run ``statements`` (SQL, or (SQL, parameters)) on the file at ``path`` with the
    finished-run triggers out of the way for that one transaction."""
    with sqlite3.connect(path) as conn:
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%finished%'")]
        for name in names:
            conn.execute(f"DROP TRIGGER {name}")
        for statement in statements:
            sql, params = statement if isinstance(statement, tuple) else (statement, ())
            conn.execute(sql, params)
        if names:
            for statement in sqlite_statements():
                conn.execute(statement)
    conn.close()
