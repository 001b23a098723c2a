"""A crashed run never stays RUNNING, and a live one is never taken over (issue 12 §4, issue
25 §1): only the station holding the run's lock may mark it INTERRUPTED; no clock, heartbeat,
host name or process id of a reader decides. The phase it was cut in says so."""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import replace
from pathlib import Path

import pytest

from app.cli import cmd_runs
from app.core.records import PhaseStatus, RunStatus
from app.sequencer import events as ev
from app.storage import liveness, writer as writer_module
from app.storage.opening import open_database
from app.storage.liveness import Machine, stop_reason
from app.storage.run_lock import RunLock, RunLockHeld, RunLockMissing, lock_dir, recorded_here
from app.storage.synthetic import full_run, run_started
from app.storage.writer import RunWriter
from tests.support.runs import stored_status
from tests.support.time_budget import budget_s
from app.storage.repository import load_run

OTHER_BOOT = "linux:00000000-0000-0000-0000-000000000000"


@pytest.fixture()
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'runs.db'}"


def _cut_in_rr(url: str) -> tuple[str, RunWriter]:
    """A run stored up to the middle of phase 1 (RR) whose writer is still open (alive)."""
    writer = RunWriter(open_database(url))
    events = []
    for event in full_run(100.0, 10):
        if isinstance(event, ev.PhaseFinished) and event.phase.index == 1 \
                and event.status is PhaseStatus.COMPLETED:
            break
        events.append(event)
    for event in events:
        writer(event)
    assert writer.flush(5.0)
    return events[0].run_id, writer


def test_a_qa_reader_with_its_clock_three_minutes_ahead_never_interrupts_a_live_run(
        url: str, tmp_path: Path) -> None:
    """Issue 25 §1: a QA PC whose clock ran 3 min ahead marked a live run INTERRUPTED."""
    run_id, writer = _cut_in_rr(url)
    try:
        qa = Machine(host="qa-pc", boot=OTHER_BOOT, now=lambda: time.time() + 180.0,
                     locks=tmp_path / "qa-data" / "run-locks")
        database = open_database(url, machine=qa)
        assert database.interrupted == ()
        assert load_run(database, run_id).status is RunStatus.RUNNING
        database.close()
    finally:
        writer.close()


def test_the_same_station_with_its_writer_alive_leaves_the_run_alone(url: str) -> None:
    """Same host, same data folder, a clock hours ahead and another boot id: the lock is held,
    so nothing the reader believes about time or boots matters."""
    run_id, writer = _cut_in_rr(url)
    try:
        skewed = replace(Machine(), boot=OTHER_BOOT, now=lambda: time.time() + 3 * 3600)
        assert open_database(url, machine=skewed).interrupted == ()
        with open_database(url).engine.begin() as conn:
            stored = conn.exec_driver_sql("SELECT writer_pid, writer_host FROM runs").one()
        assert stored == (os.getpid(), Machine().host)  # who writes it: facts for people
        assert stored_status(url, run_id) is RunStatus.RUNNING
    finally:
        writer.close()


def test_a_frozen_station_is_not_taken_over(url: str) -> None:
    """A station frozen (SIGSTOP) for 127 s beats no heartbeat but still holds its lock: here
    the lock is held by a descriptor of this process standing in for the frozen one, and the
    reader's clock is 127 s on."""
    database = open_database(url)
    writer = RunWriter(database)
    writer(run_started(0.0, "frozen-run"))
    assert writer.flush(5.0)
    writer.close()  # the writer is gone, but its stand-in below holds the lock as it would
    frozen = RunLock.take("frozen-run")
    try:
        later = replace(Machine(), now=lambda: time.time() + 127.0)
        assert open_database(url, machine=later).interrupted == ()
        assert stored_status(url, "frozen-run") is RunStatus.RUNNING
        with pytest.raises(RunLockHeld, match="being written by a running StorWatt"):
            RunLock.take("frozen-run")
    finally:
        frozen.release(finished=False)
    # thawed and then gone: the station that recorded it may now mark it
    assert open_database(url).interrupted == ("frozen-run",)


def test_a_station_that_stopped_is_interrupted_by_its_own_station_only(
        url: str, tmp_path: Path) -> None:
    run_id, writer = _cut_in_rr(url)
    writer.close()  # closed without RunFinished: the station stopped
    assert (lock_dir() / f"{run_id}.lock").exists()  # kept: this station may resume it
    other = Machine(host="bench-2", locks=tmp_path / "bench-2" / "run-locks")
    assert open_database(url, machine=other).interrupted == ()  # not its run
    database = open_database(url)
    assert database.interrupted == (run_id,)
    run = load_run(database, run_id)
    assert run.status is RunStatus.INTERRUPTED
    assert "during phase 1 RR" in run.error and "closed without finishing" in run.error
    statuses = [p.status for p in run.phases]
    assert statuses == [PhaseStatus.COMPLETED, PhaseStatus.INTERRUPTED, PhaseStatus.PENDING]
    assert run.phases[1].t_end == run.power.t[-1]
    assert "cut short" in run.phases[1].error
    database.close()


def test_a_finished_run_gives_its_lock_up(url: str) -> None:
    writer = RunWriter(open_database(url))
    run_id = None
    for event in full_run(100.0, 5):
        run_id = run_id or event.run_id
        writer(event)
    assert writer.flush(5.0)
    assert run_id not in recorded_here()  # its end is stored: nothing left to take over
    writer.close()
    with pytest.raises(RunLockMissing, match="recorded by another station"):
        RunLock.take(run_id)


def test_runs_show_says_which_phase_was_cut(url: str, capsys) -> None:
    run_id, writer = _cut_in_rr(url)
    writer.close()  # closed without RunFinished: the station stopped
    parser = argparse.ArgumentParser()
    cmd_runs.register(parser.add_subparsers())
    args = parser.parse_args(["runs", "show", run_id, "--db", url])
    assert args.func(args) == 0
    text = capsys.readouterr().out
    assert f"Run {run_id}  INTERRUPTED  (the station stopped during phase 1 RR" in text
    rr = next(line for line in text.splitlines() if line.strip().startswith("1 RR"))
    assert "INTERRUPTED" in rr and "cut short" in rr


def test_the_stop_reason() -> None:
    assert stop_reason("bench-1", None) == "its writer closed without finishing it"
    assert stop_reason("bench-1", 42) == "its process 42 on bench-1 ended"


def test_boot_identity_without_linux_uses_the_boot_time(monkeypatch, tmp_path: Path) -> None:
    assert liveness.boot_id().startswith("linux:")  # these machines run Linux
    monkeypatch.setattr(liveness, "LINUX_BOOT_ID", tmp_path / "missing")
    kind, _, value = liveness.boot_id().partition(":")
    assert kind == "boot-time"
    assert abs(float(value) - (time.time() - time.monotonic())) < 2


def test_a_paused_run_keeps_beating(url: str, monkeypatch) -> None:
    """While nothing is stored (a paused run) the writer still refreshes the heartbeat, so
    another window opening the database does not take the run for crashed."""
    monkeypatch.setattr(writer_module, "HEARTBEAT_INTERVAL_S", 0.05)
    database = open_database(url)
    writer = RunWriter(database)
    try:
        writer(run_started(0.0, "paused-run"))
        assert writer.flush(5.0)

        def heartbeat() -> float:
            with database.read() as conn:
                return conn.exec_driver_sql("SELECT heartbeat_wall FROM runs").scalar()

        first = heartbeat()
        deadline = time.monotonic() + budget_s(10.0)
        while heartbeat() == first and time.monotonic() < deadline:
            time.sleep(0.05)
        assert heartbeat() > first
    finally:
        writer.close()
