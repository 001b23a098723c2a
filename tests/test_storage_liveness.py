"""A crashed run never stays RUNNING: boot id, process and heartbeat decide, and the phase it
was cut in says so (issue 12 §4)."""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import replace
from pathlib import Path

import pytest

from app.cli import cmd_runs
from app.records import PhaseStatus, RunStatus
from app.sequencer import events as ev
from app.storage import liveness, writer as writer_module
from app.storage.db import open_database
from app.storage.liveness import Machine, WriterMark, orphan_reason, same_boot
from app.storage.synthetic import full_run, run_started
from app.storage.writer import RunWriter

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


def test_a_live_pid_recorded_under_another_boot_is_interrupted(url: str) -> None:
    run_id, writer = _cut_in_rr(url)
    try:
        here = Machine()
        assert open_database(url, machine=here).interrupted == ()  # same boot, pid alive
        with open_database(url).engine.begin() as conn:
            stored = conn.exec_driver_sql("SELECT writer_pid, writer_boot FROM runs").one()
        assert stored == (os.getpid(), here.boot)  # the pid is alive: only the boot tells
        after_reboot = replace(here, boot=OTHER_BOOT)
        database = open_database(url, machine=after_reboot)
        assert database.interrupted == (run_id,)
        run = database.load_run(run_id)
        assert run.status is RunStatus.INTERRUPTED
        assert "during phase 1 RR" in run.error and "restarted" in run.error
        statuses = [p.status for p in run.phases]
        assert statuses == [PhaseStatus.COMPLETED, PhaseStatus.INTERRUPTED, PhaseStatus.PENDING]
        assert run.phases[1].t_end == run.power.t[-1]
        assert "cut short" in run.phases[1].error
    finally:
        writer.close()


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


def test_a_silent_writer_is_interrupted_even_with_a_live_pid(url: str) -> None:
    run_id, writer = _cut_in_rr(url)
    try:
        later = replace(Machine(), now=lambda: time.time() + liveness.STALE_HEARTBEAT_S + 60)
        database = open_database(url, machine=later)
        assert database.interrupted == (run_id,)
        assert "no sign of life from its process" in database.load_run(run_id).error
    finally:
        writer.close()


def test_the_orphan_rule() -> None:
    now = 1_000_000.0
    here = Machine(host="station", boot="linux:b1", pid_alive=lambda pid: pid == 42,
                   now=lambda: now)
    fresh, stale = now - 5, now - liveness.STALE_HEARTBEAT_S - 1

    def reason(host="station", pid=42, boot="linux:b1", heartbeat=fresh) -> str:
        return orphan_reason(WriterMark(host, pid, boot, heartbeat), here)

    assert reason() == ""  # alive
    assert reason(boot=None) == ""  # a run written before boot ids were recorded
    assert "restarted" in reason(boot="linux:b0")
    assert "process 7 ended" in reason(pid=7)
    assert "no sign of life" in reason(heartbeat=stale)
    assert "closed without finishing" in reason(pid=None)
    assert reason(host="other", pid=7, boot="linux:zz") == ""  # other host: heartbeat only
    assert "no sign of life from host other" in reason(host="other", heartbeat=stale)
    assert "no heartbeat from host other" in reason(host="other", heartbeat=None)


def test_boot_identity_without_linux_uses_the_boot_time(monkeypatch, tmp_path: Path) -> None:
    assert liveness.boot_id().startswith("linux:")  # these machines run Linux
    monkeypatch.setattr(liveness, "LINUX_BOOT_ID", tmp_path / "missing")
    kind, _, value = liveness.boot_id().partition(":")
    assert kind == "boot-time"
    assert abs(float(value) - (time.time() - time.monotonic())) < 2
    assert same_boot("boot-time:1000", "boot-time:1030")  # clock corrections
    assert not same_boot("boot-time:1000", "boot-time:5000")  # rebooted
    assert not same_boot("boot-time:1000", "linux:1000")


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
        deadline = time.monotonic() + 10.0
        while heartbeat() == first and time.monotonic() < deadline:
            time.sleep(0.05)
        assert heartbeat() > first
    finally:
        writer.close()
