"""A run that ended in its journal only and that the database then refuses to store (issue 24:
three PTDaemon channels overflowed a PostgreSQL VARCHAR(200), and ``db recover`` said nothing
useful, so the run looked lost). The import must say which run, why (the storage error as the
database gave it), that the journal is kept, and what to do — and doing what it says must
store the run.

The refusal is the database's own: a trigger on the power samples table aborts the insert
with PostgreSQL's message, the way a column too small for a value refuses a row.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.records import RunStatus
from app.storage.opening import open_database
from tests.support.journals import journal_of_full_run, power_count
from app.storage.repository import list_runs, load_run

REFUSAL = "value too long for type character varying(200)"


def _refusing_database(path: Path) -> str:
    url = f"sqlite:///{path}"
    open_database(url, recover_journals=False).close()
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TRIGGER refuse BEFORE INSERT ON power_samples BEGIN "
                     f"SELECT RAISE(ABORT, '{REFUSAL}'); END")
    return url


def test_a_run_the_database_refuses_is_named_kept_and_the_way_out_works(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    url = _refusing_database(tmp_path / "station.db")
    journal, events, _ = journal_of_full_run(url, "refused-run")

    assert main(["db", "recover", "--db", url]) == 1
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if "NOT imported" in x]
    assert line.startswith("run refused-run (started 20"), line  # which run, and when
    assert REFUSAL in line  # why: the database's own words
    assert f"the journal is kept unchanged at {journal}" in line  # kept, and where
    assert "importing again into it changes nothing" in line  # what to do, and what not
    assert f"--journal {journal}" in line
    assert journal.exists()
    database = open_database(url, recover_journals=False)
    try:  # the import is one transaction: nothing half-stored
        assert "refused-run" not in {r.run_id for r in list_runs(database)}
    finally:
        database.close()

    # the advice, followed: a new station file takes the run whole
    rescued = f"sqlite:///{tmp_path / 'rescued.db'}"
    assert main(["db", "recover", "--db", rescued, "--journal", str(journal)]) == 0
    database = open_database(rescued, recover_journals=False)
    try:
        run = load_run(database, "refused-run")
        assert run.status is RunStatus.COMPLETED and len(run.power) == power_count(events)
    finally:
        database.close()
    assert not journal.exists()  # deleted only once stored


def test_a_locked_database_says_to_close_the_other_program(tmp_path: Path) -> None:
    from app.storage.errors import DatabaseLockedError
    from app.storage.recover import not_imported

    url = f"sqlite:///{tmp_path / 'station.db'}"
    journal, _, _ = journal_of_full_run(url, "locked-run")
    told = not_imported(journal, DatabaseLockedError(f"database {url} is locked"), url)
    text = told.describe()
    assert text.startswith("run locked-run (started ") and "is locked" in text
    assert f"close the program holding the database, then storwatt db recover --db {url} " \
           f"--journal {journal}" in text
