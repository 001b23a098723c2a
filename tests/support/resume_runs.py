"""Runs whose station died mid-run (reopened as INTERRUPTED) and their continuation in the
same record (app/station/resume.py), on a fake clock: shared by the resume and verifier tests."""

from __future__ import annotations

from app.labs.builder import build_lab
from app.method.loader import load_method
from app.core.records import RunConfig, RunStatus, SutDescription
from app.station.resume import open_resumed_session, prepare_resume
from app.sequencer import events as ev
from app.sequencer.sequencer import Sequencer
from app.storage.opening import open_database
from app.storage.writer import RunWriter
from drivers.clock import FakeClock
from app.storage.repository import load_run

COMS = ("deduplication",)


def smoke_config(method: str = "smoke") -> RunConfig:
    return RunConfig(method=method, lab="sim-direct",
                     sut=SutDescription(coms_declared=COMS, coms_on_during_test=COMS))


class _StationDies:
    """Forwards events to the writer until ``keep`` events after phase ``name`` started:
    what a station killed there had handed to storage (the rest never arrives)."""

    def __init__(self, writer: RunWriter, name: str, keep: int) -> None:
        self.writer, self.name, self.left = writer, name, None
        self.keep = keep

    def __call__(self, event: ev.RunEvent) -> None:
        if self.left == 0 or (self.left is not None and isinstance(event, ev.RunFinished)):
            return
        if self.left is not None:
            self.left -= 1
        elif isinstance(event, ev.PhaseStarted) and event.phase.name == self.name:
            self.left = self.keep
        self.writer(event)


def interrupted_run(url: str, cut_in: str, config: RunConfig | None = None,
                    keep: int = 5) -> str:
    """A run of ``config`` (default: smoke on the in-process lab) whose station 'died' in
    phase ``cut_in``; reopening the database has marked it INTERRUPTED. Returns its id."""
    config = config or smoke_config()
    database = open_database(url)
    writer = RunWriter(database)
    clock = FakeClock()
    lab = build_lab(config, clock)
    try:
        Sequencer(load_method(config.method), config, lab, clock,
                  [_StationDies(writer, cut_in, keep)]).run()
    finally:
        lab.close()
        writer.close()
        database.close()
    database = open_database(url)
    try:
        (run_id,) = database.interrupted
        return run_id
    finally:
        database.close()


def resume(url: str, run_id: str, **given) -> object:
    database = open_database(url)
    try:
        plan = prepare_resume(database, run_id, given=given or None)
    finally:
        database.close()
    session = open_resumed_session(plan, db_url=url, clock=FakeClock(10_000.0))
    assert session.run() is RunStatus.COMPLETED
    database = open_database(url)
    try:
        return plan, load_run(database, run_id)
    finally:
        database.close()


def load(url: str, run_id: str):
    database = open_database(url)
    try:
        return load_run(database, run_id)
    finally:
        database.close()
