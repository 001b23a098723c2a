"""The database file replaced under a running station (issue 25 minor): ``mv other.db runs.db``
while a run is written. The writer notices another file at its path (device and inode) and
goes on in the run journal; before, its connections kept the old file's ``-wal`` beside the
moved-in file, and the next opening applied those pages to it, altering a database the
station never wrote."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from app.storage.db import open_database
from tests.support.stored_runs import store_synthetic_run, write_with_fault


def _rows(path: Path) -> dict[str, list]:
    with sqlite3.connect(path) as conn:
        return {name: conn.execute(f"SELECT * FROM {name}").fetchall() for (name,) in
                conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_a_database_moved_over_the_running_one_is_never_altered(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    store_synthetic_run(f"sqlite:///{other}", "other-run-0001").close()
    with sqlite3.connect(other) as conn:  # a whole file, no -wal of its own
        conn.execute("PRAGMA journal_mode = DELETE")
    before = _rows(other)

    path = tmp_path / "runs.db"
    database = open_database(f"sqlite:///{path}", busy_timeout_s=0.1)
    _, stored = write_with_fault(database, "live-run", lambda: os.replace(other, path))
    database.close()

    assert not stored.in_database and len(stored.journals) == 1  # the run went on, journaled
    assert _rows(path) == before  # before: the stale -wal's pages were applied to it
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert open_database(f"sqlite:///{path}", recover_journals=False).load_run(
        "other-run").run_id.startswith("other-run")
