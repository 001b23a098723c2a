"""Every run ends with a final status: an unexpected error (a bug) ends it FAILED, stored with
its traceback, its phase FAILED, and ``storwatt runs show`` says so (issue 12 §4)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from app.cli import cmd_runs
from app.core.records import PhaseStatus, RunConfig, RunStatus
from app.sequencer import events as ev
from app.sequencer.recorder import PhaseRecorder
from app.station.session import open_session
from app.storage.opening import open_database
from drivers.clock import FakeClock
from drivers.interfaces import WorkloadError
from app.storage.repository import list_runs, load_run


class Events:
    def __init__(self) -> None:
        self.events: list[ev.RunEvent] = []

    def __call__(self, event: ev.RunEvent) -> None:
        self.events.append(event)

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]


def _session(tmp_path: Path, *listeners):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    session = open_session(RunConfig(method="demo", lab="sim-direct"), db_url=url,
                           listeners=listeners, clock=FakeClock())
    return session, url


def _divide_by_zero(self, *args, **kwargs):
    return 1 / 0


def test_an_unexpected_error_in_the_recorder_ends_the_run_failed_with_its_traceback(
        tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(PhaseRecorder, "active_result", _divide_by_zero)
    seen = Events()
    session, url = _session(tmp_path, seen)
    assert session.run() is RunStatus.FAILED  # no traceback escapes run()

    final = seen.of(ev.RunFinished)
    assert len(final) == 1 and final[0].status is RunStatus.FAILED
    assert final[0].error == "unexpected error ZeroDivisionError: division by zero"
    failed = seen.of(ev.PhaseFinished)[-1]
    assert failed.status is PhaseStatus.FAILED and failed.phase.name == "MW1"
    assert "ZeroDivisionError" in failed.error

    run = load_run(open_database(url), session.run_id)
    assert run.status is RunStatus.FAILED and "ZeroDivisionError" in run.error
    errors = [e.message for e in run.events if e.level == "ERROR"]
    assert len(errors) == 1
    assert "Traceback (most recent call last)" in errors[0]
    assert "_divide_by_zero" in errors[0] and "return 1 / 0" in errors[0]
    phases = {p.info.name: p.status for p in run.phases}
    assert phases["MW1"] is PhaseStatus.FAILED and phases["Conditioning"] is \
        PhaseStatus.COMPLETED and PhaseStatus.RUNNING not in phases.values()

    parser = argparse.ArgumentParser()
    cmd_runs.register(parser.add_subparsers())
    args = parser.parse_args(["runs", "show", session.run_id[:8], "--db", url])
    assert args.func(args) == 0
    shown = capsys.readouterr().out
    assert "FAILED  (unexpected error ZeroDivisionError: division by zero)" in shown
    assert "MW1" in shown and "Errors (from the run's event log)" in shown
    assert "return 1 / 0" in shown


def _broken_add_power(self, samples):
    raise IndexError("list index out of range")


def test_an_unexpected_error_while_sampling_fails_the_running_phase(
        tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(PhaseRecorder, "add_power", _broken_add_power)
    seen = Events()
    session, url = _session(tmp_path, seen)
    assert session.run() is RunStatus.FAILED
    assert seen.of(ev.PhaseFinished)[-1].status is PhaseStatus.FAILED
    run = load_run(open_database(url), session.run_id)
    assert [p.status for p in run.phases if p.status is PhaseStatus.RUNNING] == []
    assert run.phases[0].status is PhaseStatus.FAILED
    assert "IndexError" in run.phases[0].error


def test_the_cli_prints_the_reason_and_where_the_traceback_is(tmp_path: Path, monkeypatch,
                                                              capsys) -> None:
    from app.cli.main import main

    monkeypatch.setattr(PhaseRecorder, "add_power", _broken_add_power)
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    assert main(["run", "--lab", "sim-direct", "--db", url, "--quiet"]) == 1
    out = capsys.readouterr().out
    (run,) = list_runs(open_database(url))
    assert f"Run {run.run_id} FAILED" in out
    assert "Reason: unexpected error IndexError: list index out of range" in out
    assert f"storwatt runs show {run.run_id[:8]} --db {url}" in out
    assert "Traceback" not in out and "lines in the run's stored log" in out


class BrokenTerminal:
    """A listener like the console after SIGHUP closed its terminal: every write fails."""

    def __call__(self, event: ev.RunEvent) -> None:
        if isinstance(event, (ev.PowerSamples, ev.LogMessage, ev.RunFinished)):
            raise OSError(5, "Input/output error")


def test_a_listener_that_breaks_mid_run_cannot_keep_the_final_status_from_storage(
        tmp_path: Path) -> None:
    session, url = _session(tmp_path, BrokenTerminal())
    assert session.run() is RunStatus.FAILED
    run = load_run(open_database(url), session.run_id)
    assert run.status is RunStatus.FAILED and "OSError" in run.error
    assert any("Input/output error" in e.message for e in run.events if e.level == "ERROR")


def test_an_engine_error_caused_by_the_stop_request_ends_the_run_aborted(
        tmp_path: Path) -> None:
    seen = Events()
    session, url = _session(tmp_path, seen)
    engine = session.lab.engine
    real_poll = engine.poll

    def killed_with_the_station(*args):
        if engine.running and seen.of(ev.PhaseStarted)[-1].phase.name == "RR":
            session.sequencer.abort("stopped by SIGTERM")
            raise WorkloadError("fio exited with signal 15")
        return real_poll(*args)

    engine.poll = killed_with_the_station
    assert session.run() is RunStatus.ABORTED
    final = seen.of(ev.RunFinished)[0]
    assert final.error == "stopped by SIGTERM"
    assert seen.of(ev.PhaseFinished)[-1].status is PhaseStatus.ABORTED
    assert any("fio exited with signal 15 after the stop request" in e.message
               for e in seen.of(ev.LogMessage))
    assert load_run(open_database(url), session.run_id).status is RunStatus.ABORTED


@pytest.mark.parametrize("error", [ZeroDivisionError("division by zero"), KeyError("x")])
def test_the_failure_reason_names_the_exception_type(error: Exception) -> None:
    from app.sequencer.sequencer import failure_reason

    assert failure_reason(error).startswith(f"unexpected error {type(error).__name__}")
    assert failure_reason(WorkloadError("fio: bad job")) == "fio: bad job"
