"""Opening databases: upgrades, crash recovery, and clear errors for broken situations."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from app.core.records import RunStatus
from app.sequencer import events as ev
from app.storage import migrate
from app.storage.opening import open_database
from app.storage.errors import (CorruptDatabaseError, DatabaseLockedError,
                                DatabaseUnreachableError, DiskFullError, SchemaTooNewError,
                                StorageError, WriterError)
from app.storage.schema import Base
from app.storage.synthetic import full_run, outside, power_sample, run_started
from app.storage.writer import RunWriter
from app.storage.repository import load_run
from tests.support.time_budget import budget_s


@pytest.fixture()
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'runs.db'}"


def test_migrations_create_exactly_the_model_schema(url: str) -> None:
    database = open_database(url)
    with database.engine.connect() as conn:
        diffs = compare_metadata(MigrationContext.configure(conn), Base.metadata)
        assert diffs == []
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 5000
    assert migrate.schema_version(database) == migrate.head() == "0022"


def _unfinished_run(url: str) -> str:
    database = open_database(url)
    writer = RunWriter(database)
    events = [e for e in full_run(100.0, 10) if not isinstance(e, ev.RunFinished)]
    for event in events:
        writer(event)
    assert writer.flush(5.0)
    return events[0].run_id, database, writer


def test_every_revision_file_is_listed() -> None:
    """Revisions are imported by name, not discovered: a file left out would never run."""
    from app.storage.migrations import versions

    files = {p.stem for p in Path(versions.__file__).parent.glob("*.py")} - {"__init__"}
    assert files == {m.__name__.rsplit(".", 1)[1] for m in migrate.revision_modules()}
    assert [r.id for r in migrate.revisions()] == sorted(r.id for r in migrate.revisions())


@pytest.mark.process
@pytest.mark.parametrize("module", ["app.storage.db", "app.storage.migrate",
                                    "app.storage.audit", "app.station.session"])
def test_each_storage_module_imports_first_in_a_fresh_interpreter(module: str) -> None:
    """``app.storage`` re-exports nothing (the CLI catches its errors without SQLAlchemy), so
    an import cycle between db, migrate and a revision would show only in some orders."""
    result = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True,
                            text=True, timeout=budget_s(60),
                            cwd=Path(__file__).resolve().parent.parent)
    assert result.returncode == 0, result.stderr[-500:]


@pytest.mark.process
def test_an_up_to_date_database_opens_without_alembic(tmp_path: Path) -> None:
    """Every GUI and CLI start opens the database: alembic loads only when a revision runs."""
    url = f"sqlite:///{tmp_path / 'station.db'}"
    open_database(url).close()  # creates it: alembic runs here
    code = ("import sys; from app.storage.opening import open_database; "
            f"d = open_database({url!r}); from app.storage.migrate import schema_version; "
            f"print(schema_version(d), 'alembic' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=budget_s(60), cwd=Path(__file__).resolve().parent.parent,
                            check=True)
    assert result.stdout.split() == [migrate.head(), "False"]


def test_running_run_becomes_interrupted_on_reopen(url: str) -> None:
    run_id, database, writer = _unfinished_run(url)
    live = open_database(url)  # the writer is alive in this process: leave the run alone
    assert live.interrupted == () and load_run(live, run_id).status is RunStatus.RUNNING
    writer.close()  # closed without RunFinished: the station stopped
    reopened = open_database(url)
    assert reopened.interrupted == (run_id,)
    run = load_run(reopened, run_id)
    assert run.status is RunStatus.INTERRUPTED and "stopped" in run.error
    assert len(run.power) == 4 * 10  # samples intact
    assert run.duration_s == run.power.t[-1]
    assert open_database(url).interrupted == ()  # only once


def test_run_of_a_dead_process_is_interrupted(url: str) -> None:
    run_id, database, writer = _unfinished_run(url)
    writer.close()
    with database.engine.begin() as conn:  # as if its writer process had been killed
        conn.exec_driver_sql("UPDATE runs SET writer_pid = 2147483000")
    assert load_run(open_database(url), run_id).status is RunStatus.INTERRUPTED


def _hold_lock(url: str) -> sqlite3.Connection:
    holder = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO stations (name) VALUES ('lock holder')")
    return holder


def test_locked_database_gives_a_clear_error(url: str) -> None:
    _, _, writer = _unfinished_run(url)
    writer.close()  # an orphaned run: opening must write (mark it INTERRUPTED)
    holder = _hold_lock(url)
    try:
        with pytest.raises(DatabaseLockedError, match="locked by another program"):
            open_database(url, busy_timeout_s=0.2)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert open_database(url).interrupted  # fine once the lock is gone


def test_writer_waits_out_a_lock_and_reports_it(url: str) -> None:
    database = open_database(url, busy_timeout_s=0.1)
    errors: list[StorageError] = []
    writer = RunWriter(database, on_error=errors.append, retry_interval_s=0.05)
    holder = _hold_lock(url)
    try:
        writer(run_started(0.0, "locked-run"))
        assert not writer.flush(2.0)
        assert writer.failed and isinstance(writer.error, DatabaseLockedError)
        assert len(errors) == 1
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert writer.flush(5.0) and not writer.failed
    writer.close()
    assert load_run(database, "locked-run").status is RunStatus.RUNNING


def test_corrupt_file_gives_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    path.write_bytes(b"this is a spreadsheet, not a database" * 200)
    with pytest.raises(CorruptDatabaseError, match="not a readable StorWatt database"):
        open_database(f"sqlite:///{path}")
    assert path.read_bytes().startswith(b"this is a spreadsheet")  # nothing overwritten


def test_newer_schema_is_refused_with_both_versions(url: str) -> None:
    open_database(url).close()
    newer = f"{int(migrate.head()) + 1:04d}"
    with sa.create_engine(url).begin() as conn:
        conn.exec_driver_sql(f"UPDATE alembic_version SET version_num = '{newer}'")
    with pytest.raises(SchemaTooNewError) as info:
        open_database(url)
    assert (info.value.found, info.value.supported) == (newer, migrate.head())
    assert newer in str(info.value) and migrate.head() in str(info.value)


def test_foreign_revision_is_refused(url: str) -> None:
    open_database(url).close()
    with sa.create_engine(url).begin() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = 'ae1027a6acf'")
    with pytest.raises(StorageError, match="not written by StorWatt"):
        open_database(url)


@pytest.mark.parametrize("bad", ["sqlite:////nonexistent-folder/x/runs.db",
                                 "nosuchdialect://user@127.0.0.1/db", "not a url"])
def test_unreachable_url_gives_a_clear_error(bad: str) -> None:
    with pytest.raises(DatabaseUnreachableError, match="cannot open database"):
        open_database(bad)


def test_full_disk_keeps_samples_queued_reports_and_recovers(url: str) -> None:
    database = open_database(url)
    limit = {"pages": 1_000_000}
    engine_factory = database.writer_engine

    def limited_engine():
        engine = engine_factory()
        sa.event.listen(engine, "begin", lambda conn: conn.exec_driver_sql(
            f"PRAGMA max_page_count = {limit['pages']}"))
        return engine

    database.writer_engine = limited_engine
    errors: list[StorageError] = []
    writer = RunWriter(database, on_error=errors.append, retry_interval_s=0.05)
    writer(run_started(0.0, "full-disk-run"))
    assert writer.flush(5.0)
    with database.engine.connect() as conn:
        limit["pages"] = conn.exec_driver_sql("PRAGMA page_count").scalar()
    samples = [power_sample(i * 0.01, i) for i in range(5000)]
    writer(ev.PowerSamples(0, tuple(samples), outside(len(samples))))
    deadline = time.monotonic() + budget_s(5)
    # the writer thread sets ``failed`` before it calls ``on_error``: wait for both (a CI run
    # under load looked in between)
    while not (writer.failed and errors) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert writer.failed and isinstance(writer.error, DiskFullError)
    assert len(errors) == 1 and "full" in str(errors[0])
    assert writer.backlog >= 1  # kept, not dropped
    limit["pages"] = 1_000_000  # space freed
    assert writer.flush(5.0) and not writer.failed
    writer.close()
    assert len(load_run(database, "full-disk-run").power) == 5000


def _full_writer_engine(database) -> None:
    """The writer's connections see a database that cannot grow (SQLite's own "full")."""
    engine_factory = database.writer_engine

    def full_engine():
        engine = engine_factory()
        sa.event.listen(engine, "begin", lambda conn: conn.exec_driver_sql(
            "PRAGMA max_page_count = 1"))
        return engine

    database.writer_engine = full_engine


def test_close_leaves_what_the_database_refused_in_the_journal(url: str) -> None:
    database = open_database(url)
    _full_writer_engine(database)
    writer = RunWriter(database, retry_interval_s=0.05)
    writer(run_started(0.0, "never-stored"))
    writer(ev.PowerSamples(0, tuple(power_sample(i * 0.01, i) for i in range(5000)),
                           outside(5000)))
    stored = writer.close(timeout=0.5)
    assert not stored.in_database and stored.samples == 5000 and stored.events == 2
    assert stored.message().startswith("disk full: 5000 samples kept in JOURNAL ")
    assert "storwatt db recover" in stored.message()
    assert all(p.exists() for p in stored.journals)
    with pytest.raises(WriterError, match="closed"):
        writer(run_started(0.0))


def test_close_raises_for_events_neither_database_nor_journal_took(url: str,
                                                                   tmp_path: Path) -> None:
    database = open_database(url)
    _full_writer_engine(database)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the journal folder should be")
    writer = RunWriter(database, retry_interval_s=0.05, journal_dir=blocker)
    writer(run_started(0.0, "nowhere"))
    writer(ev.PowerSamples(0, tuple(power_sample(i * 0.01, i) for i in range(5000)),
                           outside(5000)))
    with pytest.raises(WriterError, match="could not be stored .* nor in the run journal"):
        writer.close(timeout=0.5)
    assert isinstance(writer.journal_error, StorageError)
