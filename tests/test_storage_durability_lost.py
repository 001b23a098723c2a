"""A run whose durability is gone stops, and says so (issue 40 §1).

Seen on main: a data folder on a 2 MiB disk could not reserve the run journal, the run started
anyway ("events are kept in memory only"); when the disk filled, an ``OSError`` escaped the
journal and killed the writer's thread, and the run measured every phase to its end for
nothing, then claimed "229 events are safe in the run journal" — there was no journal. Now:
the journal is reserved before the run starts or the run is refused (with the space needed,
where, and what is free); every ``OSError`` on the writer's path is a stated error; the
database failing while the journal cannot be written, or the writer's thread dying, stops the
run FAILED at once — on the holding test clock within one sample period of station time —
keeping every committed sample; and the end-of-run lines say only what was checked.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

import app.station.session
from app.cli.main import main
from app.sequencer import events as ev
from app.storage import journal as journal_module
from app.storage.db import Database
from app.storage.errors import DurabilityLostError, StorageError, WriterError
from app.storage.opening import open_database
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter
from tests.support.clocks import HoldingClock
from tests.support.small_disk import mounted_tmpfs

SAMPLE_PERIOD_S = 0.2  # resources/methods/smoke.toml
RUN_WAIT_S = 20.0  # real seconds a held run may take to notice (it needs well under 2)


def _enospc(*_args: object, **_kwargs: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _on_writer_thread(real: Callable[..., object], broken: Callable[[], bool]
                      ) -> Callable[..., object]:
    """``real``, raising ENOSPC on the run writer's thread while ``broken()``."""
    def call(*args: object, **kwargs: object) -> object:
        if broken() and threading.current_thread().name == "run-writer":
            _enospc()
        return real(*args, **kwargs)
    return call


class HeldRun:
    """``storwatt run --method smoke`` on a holding fake clock, on a thread of its own, with a
    fault set off when MW1 starts; records station time at the fault and at the run's end."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, url: str,
                 fault: Callable[[], None]) -> None:
        self.url, self.fault = url, fault
        self.clock = HoldingClock()
        self.sessions: list[app.station.session.RunSession] = []
        self.fault_at: float | None = None
        self.end_at: float | None = None
        self.committed_before = 0
        self.rc: int | None = None
        real = app.station.session.open_session

        def open_held(config, **kwargs):
            kwargs["listeners"] = [*kwargs.get("listeners", ()), self._listen]
            kwargs["clock"] = self.clock
            self.sessions.append(real(config, **kwargs))
            return self.sessions[-1]

        monkeypatch.setattr(app.station.session, "open_session", open_held)
        monkeypatch.setattr(app.station.session, "DURABLE_WAIT_S", 1.0)

    def _listen(self, e: ev.RunEvent) -> None:
        if (isinstance(e, ev.PhaseStarted) and e.phase.name == "MW1"
                and self.fault_at is None):
            writer = self.sessions[0].writer
            assert writer.flush(10.0)
            self.committed_before = _power_rows(self.url)
            self.fault()
            self.fault_at = self.clock.now()
            self.clock.hold_after(SAMPLE_PERIOD_S)  # station time stands still after one period
        elif isinstance(e, ev.RunFinished):
            self.end_at = e.t

    def run(self) -> None:
        """On this (main) thread, as the CLI needs; a watchdog lets a run that never notices
        go on after ``RUN_WAIT_S`` real seconds, so the test fails instead of hanging."""
        ended = threading.Event()
        released: list[bool] = []

        def watchdog() -> None:
            if not ended.wait(RUN_WAIT_S):
                released.append(True)
                self.clock.release()

        threading.Thread(target=watchdog, daemon=True).start()
        try:
            self.rc = main(["run", "--lab", "sim-direct", "--method", "smoke",
                            "--db", self.url])
        finally:
            ended.set()
        assert not released, "the run measured on past one sample period after its storage died"


def _power_rows(url: str) -> int:
    with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
        return conn.execute("SELECT count(*) FROM power_samples").fetchone()[0]


def _full_database(monkeypatch: pytest.MonkeyPatch, full: dict[str, bool]) -> None:
    """SQLite's own "database or disk is full" on the writer's connection while ``full``."""
    writer_engine = Database.writer_engine

    def refuse(_conn) -> None:
        if full["on"]:
            raise sqlite3.OperationalError("database or disk is full")

    def full_engine(self):
        engine = writer_engine(self)
        sa.event.listen(engine, "begin", refuse)
        return engine

    monkeypatch.setattr(Database, "writer_engine", full_engine)


def _assert_stopped_failed(run: HeldRun, out: str, cause: str) -> None:
    assert run.rc == 1
    assert "Run finished: FAILED" in out or "run FAILED" in out or "FAILED" in out
    assert cause in out
    assert run.fault_at is not None and run.end_at is not None
    assert run.end_at - run.fault_at <= SAMPLE_PERIOD_S + 1e-9
    assert "safe in the run journal" not in out  # said only where a journal was checked
    assert _power_rows(run.url) >= run.committed_before > 0  # every committed sample kept


# --- refused at the start ---------------------------------------------------------------------

def test_a_run_whose_journal_cannot_be_reserved_is_refused_before_it_starts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    monkeypatch.setattr(os, "posix_fallocate", _enospc)
    assert main(["run", "--lab", "sim-direct", "--method", "smoke", "--db", url]) == 1
    captured = capsys.readouterr()
    line, = captured.err.strip().splitlines()
    assert line.startswith("storwatt run: the run was not started: cannot reserve ")
    assert "MiB for the run journal" in line and "the disk is full" in line
    assert "MiB free in" in line and "STORWATT_DATA_DIR" in line
    assert "Run finished" not in captured.out
    assert not list(journal_module.journal_dir().glob("*.swj"))
    assert _power_rows(url) == 0


@pytest.fixture()
def tiny_data_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The station's data folder (database and journal) on a 2 MiB tmpfs, as seen in issue 40."""
    with mounted_tmpfs(tmp_path / "tiny", "2m") as mount_point:
        monkeypatch.setenv("STORWATT_DATA_DIR", str(mount_point))
        yield mount_point


@pytest.mark.process
def test_a_data_folder_on_a_two_mebibyte_disk_refuses_the_run_with_the_space_needed(
        tiny_data_disk: Path, capsys: pytest.CaptureFixture) -> None:
    url = f"sqlite:///{tiny_data_disk / 'runs.db'}"
    assert main(["run", "--lab", "sim-direct", "--method", "smoke", "--db", url]) == 1
    err = capsys.readouterr().err
    assert "the run was not started: cannot reserve " in err and str(tiny_data_disk) in err
    assert "MiB free in" in err and "the disk is full" in err
    assert not list((tiny_data_disk / "journal").glob("*.swj"))


# --- stopped at once mid-run --------------------------------------------------------------------

def test_a_full_disk_with_an_unwritable_journal_stops_the_run_failed_within_one_sample_period(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture) -> None:
    full = {"on": False}
    _full_database(monkeypatch, full)
    monkeypatch.setattr(journal_module, "_write_at",
                        _on_writer_thread(journal_module._write_at, lambda: full["on"]))
    run = HeldRun(monkeypatch, f"sqlite:///{tmp_path / 'runs.db'}",
                  lambda: full.update(on=True))
    run.run()
    captured = capsys.readouterr()
    out = captured.out + captured.err
    _assert_stopped_failed(run, out, "its data can no longer be kept")
    assert "disk full" in out or "is full" in out
    assert "cannot write the run journal" in out and "Traceback" not in out


def test_a_writer_thread_that_dies_stops_the_run_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture) -> None:
    broken = {"on": False}
    monkeypatch.setattr(RunWriter, "_commit", _raising_commit(RunWriter._commit, broken))
    run = HeldRun(monkeypatch, f"sqlite:///{tmp_path / 'runs.db'}",
                  lambda: broken.update(on=True))
    run.run()
    captured = capsys.readouterr()
    _assert_stopped_failed(run, captured.out + captured.err,
                           "the run writer stopped: RuntimeError: planted writer bug")


def _raising_commit(real: Callable[[RunWriter], bool], broken: dict[str, bool]
                    ) -> Callable[[RunWriter], bool]:
    """A bug outside the commit's own error handling (which keeps every event): the thread
    dies of it, as it died of the journal's raw OSError on main."""
    def commit(self: RunWriter) -> bool:
        if broken["on"]:
            raise RuntimeError("planted writer bug")
        return real(self)
    return commit


# --- the class: no OSError on the journal's path kills the writer ------------------------------

JOURNAL_OS_CALLS = ("write", "fsync", "posix_fallocate", "lseek", "open", "unlink")


@pytest.mark.parametrize("call", JOURNAL_OS_CALLS)
@pytest.mark.parametrize("nth", [1, 2, 4])
def test_an_os_error_anywhere_on_the_journal_path_is_a_stated_error_never_a_dead_writer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: str, nth: int) -> None:
    """The database fails half-way through a synthetic run, so every later event goes to the
    journal; the ``nth`` call of one ``os`` function on the writer's thread fails with ENOSPC.
    The writer must never die of it: the run is either kept (database or journal) or the loss
    is stated through ``on_error`` as :class:`DurabilityLostError` and by ``close``."""
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    database = open_database(url)
    full = {"on": False}
    _full_database(monkeypatch, full)
    calls = {"n": 0}
    real = getattr(os, call)

    def failing(*args: object, **kwargs: object) -> object:
        if full["on"] and threading.current_thread().name == "run-writer":
            calls["n"] += 1
            if calls["n"] == nth:
                _enospc()
        return real(*args, **kwargs)

    monkeypatch.setattr(os, call, failing)
    errors: list[StorageError] = []
    writer = RunWriter(database, on_error=errors.append, retry_interval_s=0.05,
                       commit_interval_s=0.05)
    events = list(full_run())
    half = len(events) // 2
    for event in events[:half]:
        writer(event)
    assert writer.flush(10.0)
    full["on"] = True
    for event in events[half:]:
        writer(event)
    try:
        outcome: object = writer.close(1.0)
    except WriterError as exc:
        outcome = exc
    finally:
        database.close()
    assert writer._crash is None  # the property under test: the thread never died
    if isinstance(outcome, WriterError):
        assert any(isinstance(e, DurabilityLostError) for e in errors), errors
        assert "OSError" not in str(outcome) and "Errno" not in str(outcome)
