"""The database's folder renamed while a run is written (issue 25 minor): the writer cannot put
the file back, so the rest of the run goes to its journal, and the journal names the old path.
Before, ``storwatt db recover --db NEW`` found nothing and the run stayed cut; now a journal
whose run the database holds and whose named file is gone belongs to that database."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.records import RunStatus
from app.storage.opening import open_database
from app.storage.recover import recover
from tests.support.stored_runs import power_samples, write_with_fault
from app.storage.repository import load_run


def test_db_recover_in_the_renamed_folder_imports_the_rest_of_the_run(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    old, new = tmp_path / "lab", tmp_path / "lab-2026"
    old.mkdir()
    database = open_database(f"sqlite:///{old / 'runs.db'}", busy_timeout_s=0.1)
    events, stored = write_with_fault(database, "moved-run", lambda: old.rename(new))
    assert not stored.in_database and len(stored.journals) == 1
    database.close()
    url = f"sqlite:///{new / 'runs.db'}"

    assert main(["db", "recover", "--db", url]) == 0
    out = capsys.readouterr().out
    assert "moved-run" in out and "nothing to recover" not in out  # before: found nothing
    run = load_run(open_database(url), "moved-run")
    assert len(run.power) == power_samples(events) and run.status is RunStatus.COMPLETED
    assert not stored.journals[0].exists()


def test_a_copy_of_a_database_does_not_take_the_originals_journal(tmp_path: Path) -> None:
    """The original still exists: its journal stays for it."""
    (tmp_path / "a").mkdir()
    original = tmp_path / "a" / "runs.db"
    database = open_database(f"sqlite:///{original}", busy_timeout_s=0.1)

    def lock():  # another program holds the write lock: the rest goes to the journal
        conn = database.engine.raw_connection()
        conn.driver_connection.execute("BEGIN EXCLUSIVE")

        def release() -> None:
            conn.driver_connection.execute("ROLLBACK")
            conn.close()
        return release

    _, stored = write_with_fault(database, "copied-run", lock, close_timeout_s=0.5)
    assert not stored.in_database
    copy = tmp_path / "copy.db"
    shutil.copy(original, copy)
    assert recover(open_database(f"sqlite:///{copy}", recover_journals=False)).imported == ()
    assert stored.journals[0].exists()
