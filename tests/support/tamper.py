"""Editing a finished run's facts in a station's SQLite file, as an insider would.

Tests of what a changed record shows (the recomputed hash, "not approved") make the change
here, in one transaction, so the change the recomputation must then catch is written the way
a person with the file would write it (issue 39, attack 1)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def tamper(path: Path | str, *statements: str | tuple[str, tuple]) -> None:
    """Run ``statements`` (SQL, or (SQL, parameters)) on the file at ``path`` in one
    transaction."""
    with sqlite3.connect(path) as conn:
        for statement in statements:
            sql, params = statement if isinstance(statement, tuple) else (statement, ())
            conn.execute(sql, params)
    conn.close()
