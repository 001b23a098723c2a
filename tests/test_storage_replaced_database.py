"""The database file replaced under a running station (issue 25 minor): ``mv other.db runs.db``
while a run is written. The writer notices another file at its path (device and inode) and
goes on in the run journal; before, its connections kept the old file's ``-wal`` beside the
moved-in file, and the next opening applied those pages to it, altering a database the
station never wrote."""

from __future__ import annotations

import os
import shutil
import time
import sqlite3
from pathlib import Path

from app.core.records import RunConfig, RunStatus
from app.sequencer import events as ev
from app.station.session import open_session
from app.storage.opening import open_database
from app.storage.journal import read_journal
from app.storage.recover import import_journal
from drivers.clock import FakeClock
from tests.support.stored_runs import store_synthetic_run, write_with_fault
from tests.support.time_budget import budget_s
from app.storage.repository import list_runs, load_run


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
    assert load_run(open_database(f"sqlite:///{path}", recover_journals=False),
        "other-run").run_id.startswith("other-run")


def test_a_database_copied_over_the_running_one_is_never_altered(tmp_path: Path) -> None:
    """``cp other.db runs.db``: the same inode, so only the file's own identity tells."""
    other = tmp_path / "other.db"
    store_synthetic_run(f"sqlite:///{other}", "other-run-0001").close()
    with sqlite3.connect(other) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")
    before = other.read_bytes()

    path = tmp_path / "runs.db"
    database = open_database(f"sqlite:///{path}", busy_timeout_s=0.1)
    events, stored = write_with_fault(database, "live-run",
                                      lambda: shutil.copyfile(other, path))
    database.close()

    assert path.read_bytes() == before  # before: our checkpoints overwrote its pages
    assert not path.with_name("runs.db-wal").exists()  # nothing left to replay into it
    assert not stored.in_database and len(stored.journals) == 1
    assert "was replaced by another StorWatt database" in str(stored.error)
    journal = read_journal(stored.journals[0])  # the committed events too: cp took them
    assert [r.seq for r in journal.records] == list(range(1, len(events) + 1))


def test_a_run_whose_database_is_copied_over_stops_failed_with_every_sample_kept(
        tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    store_synthetic_run(f"sqlite:///{other}", "other-run-0001").close()
    before = other.read_bytes()
    db = tmp_path / "runs.db"
    published: list[tuple[int, float]] = []
    session = None

    def copy_over_in_mw1(event: ev.RunEvent) -> None:
        if isinstance(event, ev.PowerSamples):
            published.extend((event.phase_index, s.t) for s in event.samples)
        if isinstance(event, ev.PhaseStarted) and event.phase.name == "MW1":
            shutil.copyfile(other, db)
            session.writer.flush(0.01)  # commit now: the run is on a fake clock
            deadline = time.monotonic() + budget_s(2.0)
            while not session.writer.failed and time.monotonic() < deadline:
                time.sleep(0.01)

    session = open_session(RunConfig(method="smoke", taxonomy="online-2", lab="sim-direct"),
                           db_url=f"sqlite:///{db}", listeners=[copy_over_in_mw1],
                           clock=FakeClock())
    assert session.run() is RunStatus.FAILED  # before: COMPLETED, into the copied-in file
    session.database.close()
    assert db.read_bytes() == before
    assert not session.stored.in_database
    assert "storwatt db recover --db URL --journal" in session.stored.message()

    reopened = open_database(f"sqlite:///{db}")  # the next start: the run is not taken in
    assert len(reopened.recovered.failed) == 1  # kept, and said at every open
    assert "another database was copied over it" in reopened.recovered.failed[0].why
    assert [r.run_id for r in list_runs(reopened)] == ["other-run-0001"]
    reopened.close()
    rescue = open_database(f"sqlite:///{tmp_path / 'rescue.db'}", recover_journals=False)
    import_journal(rescue, session.stored.journals[0])
    run = load_run(rescue, session.run_id)
    assert run.status is RunStatus.FAILED
    assert "was replaced by another StorWatt database" in run.error
    assert set(zip(run.power.phase_index.tolist(), run.power.t.tolist())) == set(published)
    assert len(published) > 0
