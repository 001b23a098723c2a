"""A run's data is never dropped: the database locked or its disk full at the end of a run
leaves the run in its journal, imported at the next start or by ``storwatt db recover``.

Runs are the smoke method on the in-process simulated lab with a fake clock (a whole run in a
fraction of a second); a listener counts what the sequencer produced, so every check compares
the database with the exact number of samples and metrics of the run. The journal modules are
imported inside the tests so the behaviour tests run (and fail) on a StorWatt without them.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlalchemy as sa

import app.station.session
from app.cli.main import main
from app.cli.console import ConsoleReporter
from app.core.records import RunConfig, RunStatus
from app.sequencer import events as ev
from app.storage.db import Database
from app.storage.opening import open_database
from app.storage.errors import DiskFullError, classify
from app.storage.synthetic import full_run, run_started
from app.storage.writer import RunWriter
from drivers.clock import FakeClock
from tests.support.journals import journal_of_full_run, power_count
from drivers.interfaces import FLAG_OVERRANGE, FLAG_UNCERTAINTY_UNKNOWN, PowerSample
from app.storage.repository import load_run


class Produced:
    """Counts what the sequencer produced: the truth the database is compared with."""

    def __init__(self) -> None:
        self.power = self.temperature = 0
        self.metrics: set[str] = set()
        self.status: RunStatus | None = None

    def __call__(self, e: ev.RunEvent) -> None:
        if isinstance(e, ev.PowerSamples):
            self.power += len(e.samples)
        elif isinstance(e, ev.TemperatureSamples):
            self.temperature += len(e.samples)
        elif isinstance(e, ev.MetricComputed):
            self.metrics.add(e.metric.name)
        elif isinstance(e, ev.RunFinished):
            self.metrics.update(m.name for m in e.metrics)
            self.status = e.status

    def assert_all_stored(self, database: Database, run_id: str) -> None:
        run = load_run(database, run_id)
        assert run.status is self.status is RunStatus.COMPLETED
        assert len(run.power) == self.power > 0
        assert len(run.temperature) == self.temperature > 0
        assert {m.name for m in run.metrics} == self.metrics and len(self.metrics) == 7


class AtLastPhase:
    """When the last phase starts: let the writer commit what it has, then break storage."""

    def __init__(self, writer: Callable[[], RunWriter], act: Callable[[], None]) -> None:
        self.writer, self.act = writer, act
        self.last: int | None = None
        self.done = False

    def __call__(self, e: ev.RunEvent) -> None:
        if isinstance(e, ev.RunStarted):
            self.last = e.phases[-1].index
        elif isinstance(e, ev.PhaseStarted) and e.phase.index == self.last and not self.done:
            assert self.writer().flush(10.0)  # part of the run is in the database already
            self.act()
            self.done = True


class Lock:
    """An EXCLUSIVE transaction on the SQLite file from another connection."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn: sqlite3.Connection | None = None

    def take(self) -> None:
        self.conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.conn.execute("BEGIN EXCLUSIVE")

    def release(self) -> None:
        if self.conn is not None:
            self.conn.execute("ROLLBACK")
            self.conn.close()
            self.conn = None


class CliRuns:
    """``storwatt run`` on a fake clock with extra listeners; keeps the sessions it opened."""

    def __init__(self) -> None:
        self.opened: list[app.station.session.RunSession] = []
        self.listeners: list[Callable[[ev.RunEvent], None]] = []

    @property
    def session(self) -> app.station.session.RunSession:
        return self.opened[0]


@pytest.fixture()
def cli(monkeypatch: pytest.MonkeyPatch) -> CliRuns:
    runs = CliRuns()
    real = app.station.session.open_session

    def open_on_fake_clock(config, **kwargs):
        kwargs["listeners"] = [*kwargs.get("listeners", ()), *runs.listeners]
        kwargs["clock"] = FakeClock()  # the CLI passes its own (cmd_run.INJECTED_CLOCK)
        runs.opened.append(real(config, **kwargs))
        return runs.opened[-1]

    monkeypatch.setattr(app.station.session, "open_session", open_on_fake_clock)
    monkeypatch.setattr(app.station.session, "DURABLE_WAIT_S", 1.0, raising=False)
    return runs


def _cli_run(url: str) -> int:
    return main(["run", "--lab", "sim-direct", "--method", "smoke", "--db", url])


def _journals() -> list[Path]:
    from app.storage.journal import journal_dir

    folder = journal_dir()
    return sorted(folder.iterdir()) if folder.exists() else []


# --- (a) database locked across the end of a run -------------------------------------------

@pytest.mark.realtime("a database locked across the run's end, past SQLite's real busy timeout")
def test_lock_across_the_end_leaves_the_run_in_the_journal_and_the_next_start_imports_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app.station.session, "DURABLE_WAIT_S", 1.0, raising=False)
    path = tmp_path / "runs.db"
    url = f"sqlite:///{path}"
    produced, lock = Produced(), Lock(path)
    holder: list = []
    session = app.station.session.open_session(
        RunConfig(method="smoke", lab="sim-direct"), db_url=url, clock=FakeClock(),
        listeners=[produced, AtLastPhase(lambda: holder[0].writer, lock.take)])
    holder.append(session)
    try:
        assert session.run() is RunStatus.COMPLETED  # today: WriterError, 36 % of samples lost
        stored = session.stored
    finally:
        lock.release()
        session.database.close()
    from app.storage.journal import journal_path

    assert not stored.in_database and stored.events > 0
    assert stored.message().startswith("run stored in JOURNAL ")
    assert "storwatt db recover" in stored.message() and "locked" in stored.message()
    assert _journals() == [journal_path(session.run_id)]

    database = open_database(url)  # the next start of the station imports the journal
    (result,) = database.recovered.imported
    assert result.run_id == session.run_id and result.applied == stored.events
    produced.assert_all_stored(database, session.run_id)
    assert _journals() == []


@pytest.mark.realtime("a database locked 7 s, past SQLite's real 5 s busy timeout")
def test_final_status_is_printed_only_once_the_run_is_in_the_database(
        tmp_path: Path, cli: CliRuns, capsys: pytest.CaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Locked longer than the 5 s busy timeout, released while the run's end waits for it."""
    path = tmp_path / "runs.db"
    url = f"sqlite:///{path}"
    produced, lock = Produced(), Lock(path)

    def lock_for_7_s() -> None:
        lock.take()
        threading.Timer(7.0, lock.release).start()

    cli.listeners += [produced, AtLastPhase(lambda: cli.session.writer, lock_for_7_s)]
    monkeypatch.setattr(app.station.session, "DURABLE_WAIT_S", 30.0, raising=False)
    seen: dict = {}
    original = ConsoleReporter._print

    def spy(self, text: str) -> None:
        if text.startswith("Run finished"):  # what the database holds at this very moment
            with sqlite3.connect(path) as conn:
                seen["status"] = conn.execute("SELECT status FROM runs").fetchone()[0]
                seen["power"] = conn.execute("SELECT count(*) FROM power_samples").fetchone()[0]
        original(self, text)

    monkeypatch.setattr(ConsoleReporter, "_print", spy)
    try:
        assert _cli_run(url) == 0
    finally:
        lock.release()
    out = capsys.readouterr().out
    assert f"Run finished: COMPLETED; stored in {url}" in out
    assert seen == {"status": "COMPLETED", "power": produced.power}
    produced.assert_all_stored(cli.session.database, cli.session.run_id)
    assert _journals() == []


# --- (b) disk full ------------------------------------------------------------------------

@pytest.fixture()
def small_disk(tmp_path: Path):
    """A 4 MiB tmpfs for the database; the journal stays in the data directory (another
    filesystem), as when the database lives on a separate or network volume."""
    mount_point = tmp_path / "small-disk"
    mount_point.mkdir()
    if os.geteuid() != 0 or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount_point)],
            capture_output=True).returncode != 0:
        pytest.skip("cannot mount a size-capped tmpfs here (needs root); "
                    "test_disk_full_injected covers the same path with SQLite's own limit")
    yield mount_point
    subprocess.run(["umount", "-l", str(mount_point)], capture_output=True)


def _fill(folder: Path) -> Path:
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as f:
        try:
            while True:
                f.write(bytes(4096))
        except OSError:
            pass
    return filler


def _recover_cli(url: str, capsys: pytest.CaptureFixture) -> str:
    assert main(["db", "recover", "--db", url]) == 0
    return capsys.readouterr().out


@pytest.mark.process
def test_disk_full_until_the_end_keeps_every_sample_in_the_journal(
        small_disk: Path, cli: CliRuns, capsys: pytest.CaptureFixture) -> None:
    url = f"sqlite:///{small_disk / 'runs.db'}"
    produced = Produced()
    filled: list[Path] = []
    cli.listeners += [produced, AtLastPhase(lambda: cli.session.writer,
                                             lambda: filled.append(_fill(small_disk)))]
    assert _cli_run(url) == 1  # not in the database (yet)
    out = capsys.readouterr().out
    assert "Run finished: COMPLETED; disk full: " in out and " samples kept in JOURNAL " in out
    assert "disk I/O error" not in out and "storwatt db recover" in out
    cli.session.database.close()
    filled[0].unlink()  # space freed

    text = _recover_cli(url, capsys)
    assert "imported from" in text and cli.session.run_id in text
    produced.assert_all_stored(open_database(url, recover_journals=False), cli.session.run_id)
    assert _journals() == []


def test_disk_full_injected(tmp_path: Path, cli: CliRuns, capsys: pytest.CaptureFixture,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The same with SQLite's "database or disk is full" raised on the writer's connection
    (injected at the engine level), for machines that cannot mount a tmpfs."""
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    full = {"on": False}
    writer_engine = Database.writer_engine

    def refuse(_conn) -> None:
        if full["on"]:
            raise sqlite3.OperationalError("database or disk is full")

    def full_engine(self):
        engine = writer_engine(self)
        sa.event.listen(engine, "begin", refuse)
        return engine

    monkeypatch.setattr(Database, "writer_engine", full_engine)
    produced = Produced()
    cli.listeners += [produced, AtLastPhase(lambda: cli.session.writer,
                                             lambda: full.update(on=True))]
    assert _cli_run(url) == 1
    out = capsys.readouterr().out
    assert "Run finished: COMPLETED; disk full: " in out and " samples kept in JOURNAL " in out
    monkeypatch.setattr(Database, "writer_engine", writer_engine)

    assert cli.session.run_id in _recover_cli(url, capsys)
    produced.assert_all_stored(open_database(url, recover_journals=False), cli.session.run_id)


def test_disk_io_error_on_a_full_disk_is_reported_as_disk_full(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite reports a WAL write into a full disk as "disk I/O error"."""
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    io_error = sqlite3.OperationalError("disk I/O error")
    assert not isinstance(classify(io_error, url), DiskFullError)  # plenty of space here
    monkeypatch.setattr(shutil, "disk_usage", lambda _p: shutil._ntuple_diskusage(10, 10, 0))
    error = classify(io_error, url)
    assert isinstance(error, DiskFullError) and "is full" in str(error)


# --- (c) torn tail, (d) idempotent import --------------------------------------------------

@pytest.mark.parametrize("tear", ["zeroed", "truncated", "flipped"])
def test_a_torn_tail_is_ignored_and_everything_before_it_imported(tmp_path: Path,
                                                                  tear: str) -> None:
    from app.storage.recover import recover

    url = f"sqlite:///{tmp_path / 'runs.db'}"
    path, events, cut = journal_of_full_run(url, "torn-run")
    data = bytearray(path.read_bytes())
    end = data.index(bytes(8), cut + 8)  # the end marker after the last record
    half = cut + (end - cut) // 2
    if tear == "zeroed":  # the crash hit while the last record was written
        data[half:end] = bytes(end - half)
    elif tear == "truncated":  # and the file was not pre-allocated
        del data[half:]
    else:  # a bit flipped on the disk
        data[end - 3] ^= 0x40
    path.write_bytes(bytes(data))

    database = open_database(url, recover_journals=False)
    report = recover(database)
    (result,) = report.imported
    assert result.torn_at == cut and result.applied == len(events) - 1
    assert "cut short by a crash" in result.describe()
    run = load_run(database, "torn-run")
    assert len(run.power) == power_count(events)  # RunFinished was the torn record
    assert run.status is RunStatus.INTERRUPTED and run.duration_s == run.power.t[-1]
    assert not path.exists()


def test_recovering_twice_stores_every_event_once(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    path, events, _ = journal_of_full_run(url, "twice-run")
    copy = tmp_path / "copy.swj"
    shutil.copy(path, copy)
    assert main(["db", "recover", "--db", url]) == 0
    assert "twice-run" in capsys.readouterr().out
    database = open_database(url, recover_journals=False)
    first = load_run(database, "twice-run")
    assert len(first.power) == power_count(events) and first.status is RunStatus.COMPLETED

    assert main(["db", "recover", "--db", url, "--journal", str(copy)]) == 0
    out = capsys.readouterr().out
    assert f"0 events (0 power samples) imported from {copy}" in out
    assert f"{len(events)} were already in the database" in out
    again = load_run(database, "twice-run")
    assert again.samples_sha256 == first.samples_sha256
    assert (len(again.events), len(again.intervals), len(again.metrics)) == \
        (len(first.events), len(first.intervals), len(first.metrics))
    assert [p.attempts for p in again.phases] == [p.attempts for p in first.phases]


def test_part_stored_part_journaled_is_completed_without_duplicates(tmp_path: Path) -> None:
    """The writer committed the start, then the database locked: the import adds the rest
    only, however often it runs."""
    from app.storage.recover import recover

    path = tmp_path / "runs.db"
    url = f"sqlite:///{path}"
    database = open_database(url, busy_timeout_s=0.1)
    writer = RunWriter(database, retry_interval_s=0.05)
    events = [e for e in full_run(run_id="half-run") if not isinstance(e, ev.Progress)]
    for event in events[:10]:
        writer(event)
    assert writer.flush(5.0)
    lock = Lock(path)
    lock.take()
    try:
        for event in events[10:]:
            writer(event)
        stored = writer.close(timeout=0.5)
    finally:
        lock.release()
    assert stored.events == len(events) - 10
    (journal,) = stored.journals
    shutil.copy(journal, tmp_path / "again.swj")
    assert len(recover(database).imported) == 1
    assert recover(database, [tmp_path / "again.swj"]).imported[0].applied == 0
    run = load_run(database, "half-run")
    assert len(run.power) == power_count(events) and run.status is RunStatus.COMPLETED


# --- the journal itself ---------------------------------------------------------------------

def test_journal_is_reserved_at_run_start_and_removed_when_the_run_is_stored(
        tmp_path: Path) -> None:
    from app.storage.journal import journal_path, reserve_bytes
    from app.storage.recover import recover

    database = open_database(f"sqlite:///{tmp_path / 'runs.db'}")
    writer = RunWriter(database, samples_per_s=5.0)
    started = run_started(0.0, "reserved-run")
    writer(started)
    assert writer.flush(5.0)
    path = journal_path("reserved-run")
    reserved = reserve_bytes(started.planned_s, 5.0)
    assert path.stat().st_size == reserved
    assert path.stat().st_blocks * 512 >= reserved  # real blocks, not a sparse file
    assert recover(database).in_use == (path,)  # a live writer's journal is left alone
    writer(ev.RunFinished(RunStatus.COMPLETED, 1.0))
    assert writer.close().in_database
    assert not path.exists()


def test_a_sample_fits_the_reservation_bound() -> None:
    from app.core.records import Placement, Window
    from app.storage.journal import (SAMPLE_BOUND_B, JournalFile, journal_path, new_header,
                                     reserve_bytes)

    worst = PowerSample(t=1.2345678901234567e9, watts=-1.2345678901234567e-300,
                        volts=1.2345678901234567e300, amps=float("nan"), pf=-0.1234567890123456,
                        freq_hz=float("inf"), range_v=1.2345678901234567e300,
                        range_a=-1.2345678901234567e300, uncertainty_pct=1.2345678901234567e-7,
                        flags=frozenset({FLAG_OVERRANGE, FLAG_UNCERTAINTY_UNKNOWN}))
    sizes = []
    for batch in (1, 10, 100):
        journal = JournalFile.create(journal_path(f"bound-{batch}"), new_header(
            f"bound-{batch}", "sqlite:///x.db", reserve_bytes(1.0, 1.0)))
        where = Placement(2_000_000, 2_000_000, Window.MEASUREMENT)
        journal.append([(1, ev.PowerSamples(12, (worst,) * batch, (where,) * batch))])
        sizes.append((journal.end - 4096) / batch)
        journal.discard()
    assert max(sizes) < SAMPLE_BOUND_B, sizes


def test_the_journal_is_emptied_when_the_database_works_again_and_reused(
        tmp_path: Path) -> None:
    from app.storage.journal import journal_path, read_journal

    path = tmp_path / "runs.db"
    database = open_database(f"sqlite:///{path}", busy_timeout_s=0.1)
    writer = RunWriter(database, retry_interval_s=0.05)
    events = [e for e in full_run(run_id="twice-locked") if not isinstance(e, ev.Progress)]
    journal = journal_path("twice-locked")
    for end in (8, 16):  # locked twice, released twice
        lock = Lock(path)
        lock.take()
        for event in events[end - 8:end]:
            writer(event)
        assert not writer.flush(0.5)
        # what the database refused, after what it had committed: a SQLite file's journal
        # keeps the committed events too (cp over the file would take them, issue 25)
        kept = read_journal(journal).records
        assert [type(r.event) for r in kept] == [type(e) for e in events[:end]]
        assert [r.seq for r in kept] == list(range(1, end + 1))
        lock.release()
        assert writer.flush(5.0) and not writer.failed
        assert [r.seq for r in read_journal(journal).records] == list(range(1, end + 1))
        assert load_run(database, "twice-locked").power is not None  # in the database too
    for event in events[16:]:
        writer(event)
    assert writer.close().in_database and not journal.exists()
    run = load_run(database, "twice-locked")
    assert len(run.power) == power_count(events) and run.status is RunStatus.COMPLETED
