"""Resuming an INTERRUPTED run in its own record (app/station/resume.py), on a fake clock: where it
restarts, what it keeps by reference, what it refuses, and that two stations cannot both
continue one run. The SIGKILL drills through the CLI are in tests/test_cli_resume.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.records import PhaseStatus, RunStatus
from app.station.resume import ResumeRefused, open_resumed_session, prepare_resume
from app.storage.opening import open_database
from app.storage.journal import journal_path
from app.storage.liveness import Machine
from app.storage.resumption import claim_run, resumable_run_ids
from tests.support.runs import stored_status
from drivers.clock import FakeClock
from tests.support.resume_runs import interrupted_run, load, resume, smoke_config



def planned(url: str, run_id: str):
    """The continuation this station would run for ``run_id``."""
    database = open_database(url)
    try:
        return prepare_resume(database, run_id)
    finally:
        database.close()




@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'runs.db'}"


def test_resume_during_ready_idle_redoes_ready_idle_only_and_keeps_the_rest_as_stored(
        url: str) -> None:
    run_id = interrupted_run(url, "Ready idle")
    before = load(url, run_id)
    assert before.phase(8).status is PhaseStatus.INTERRUPTED
    plan, after = resume(url, run_id)
    assert plan.continuation.restart_phase == 8 and plan.continuation.redone == ()
    assert after.status is RunStatus.COMPLETED
    assert {p.info.name: p.attempts for p in after.phases} == {
        "Pre-fill": 1, "Intensity search": 1, "MW1": 1, "MW2": 1, "RW": 1, "RR": 1, "SW": 1,
        "SR": 1, "Ready idle": 2, "COM deduplication": 1}
    assert all(p.status is PhaseStatus.COMPLETED for p in after.phases)
    # the carried phases' figures are the stored ones, untouched (by reference)
    kept = {m.name: m for m in before.metrics}
    assert kept and all(after.metric(name) == m for name, m in kept.items())
    assert after.metric("EP_RI").valid and after.metric("COM_deduplication") is not None
    (cut,) = [a for a in after.attempts if a.phase_index == 8 and a.attempt == 1]
    assert cut.status is PhaseStatus.INTERRUPTED  # the cut attempt stays, as evidence
    # one time base: the continuation's samples all follow the stored ones
    assert (after.power.t[1:] >= after.power.t[:-1]).all()
    (resumption,) = after.resumptions
    assert resumption.cut_phase == 8 and resumption.carried == tuple(range(8))
    criterion = next(c for c in after.compliance.criteria
                     if c.name == "Resumed after interruption")
    assert not criterion.met and "during Ready idle" in criterion.evidence
    assert "resumed after interruption" in after.compliance.banner()


def test_an_interrupted_active_sequence_restarts_at_its_first_profile(url: str) -> None:
    run_id = interrupted_run(url, "RW")
    plan, after = resume(url, run_id)
    names = plan.phase_names
    assert names[plan.continuation.restart_phase] == "MW1"
    assert [names[i] for i in plan.continuation.redone] == ["MW1", "MW2"]
    attempts = {p.info.name: p.attempts for p in after.phases}
    assert attempts["MW1"] == attempts["MW2"] == attempts["RW"] == 2
    assert attempts["Pre-fill"] == attempts["Intensity search"] == attempts["RR"] == 1
    # each phase shows the histogram of the attempt that counts; MW1's first is still stored
    assert [(h.profile, h.attempt) for h in after.histograms][:3] == [
        ("MW1", 2), ("MW2", 2), ("RW", 2)]
    lines = plan.lines()
    assert "Redone from its beginning: MW1, MW2, RW" in lines[1]
    assert lines[3] == "Kept as stored (not run again): Pre-fill, Intensity search"
    # MW2's stored pre-run row is no search to resume from; redone, MW2 is pre-run again
    # before its phase (issue 30), so each attempt's job file has its own figures
    assert "MW2" not in {r.profile for r in plan.continuation.search}
    assert [r.profile for r in after.search_results if not r.searched] == ["MW2", "MW2"]


def test_resume_is_refused_with_the_reason(url: str, tmp_path: Path) -> None:
    run_id = interrupted_run(url, "SR")
    database = open_database(url)
    try:
        with pytest.raises(ResumeRefused, match=r"sut\.raw_capacity_bytes: the run has "
                                                r"7300000000000, given 1"):
            prepare_resume(database, run_id, given={"sut": {"raw_capacity_bytes": 1}})
        journal = journal_path(run_id)
        journal.parent.mkdir(parents=True, exist_ok=True)
        journal.write_bytes(b"")
        with pytest.raises(ResumeRefused, match="journal .* is not imported yet"):
            prepare_resume(database, run_id)
        journal.unlink()
    finally:
        database.close()
    resume(url, run_id)
    database = open_database(url)
    try:
        with pytest.raises(ResumeRefused, match="is COMPLETED, not INTERRUPTED"):
            prepare_resume(database, run_id)
    finally:
        database.close()


def test_a_run_cut_after_its_last_phase_has_nothing_left_to_do(url: str) -> None:
    run_id = interrupted_run(url, "COM deduplication", keep=10_000)  # only RunFinished lost
    database = open_database(url)
    try:
        assert run_id not in resumable_run_ids(database)
        with pytest.raises(ResumeRefused, match="nothing is left to do"):
            prepare_resume(database, run_id)
    finally:
        database.close()


def test_a_changed_method_is_refused(url: str, tmp_path: Path) -> None:
    variant = tmp_path / "drill.toml"
    smoke = Path(__file__).resolve().parent.parent / "resources" / "methods" / "smoke.toml"
    variant.write_text(f'base = "{smoke}"\nname = "drill"\ncompliant = false\n'
                       'description = "first"\n', encoding="utf-8")
    run_id = interrupted_run(url, "Ready idle", smoke_config(str(variant)))
    variant.write_text(variant.read_text(encoding="utf-8").replace("first", "edited"),
                       encoding="utf-8")
    database = open_database(url)
    try:
        with pytest.raises(ResumeRefused, match="as installed now .* differs from the method "
                                                "the run used"):
            prepare_resume(database, run_id)
    finally:
        database.close()


def test_only_one_station_can_claim_an_interrupted_run(url: str) -> None:
    run_id = interrupted_run(url, "Ready idle")
    database = open_database(url)
    try:
        plan = prepare_resume(database, run_id)
        assert run_id in resumable_run_ids(database)
        after = plan.continuation.after_seq
        assert claim_run(database, run_id, after)
        assert not claim_run(database, run_id, after)  # the second station is refused
        assert run_id not in resumable_run_ids(database)
    finally:
        database.close()
    with pytest.raises(ResumeRefused, match="changed since it was read"):
        open_resumed_session(plan, db_url=url, clock=FakeClock())


def test_a_continuation_the_database_refused_is_imported_from_its_journal(
        url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The continuation's events are numbered above what the record holds, so its journal
    imports completely (an import skips events numbered at or below ``runs.stored_seq``)."""
    import sqlite3

    import sqlalchemy as sa

    from app.station import session as session_module
    from app.storage.db import Database

    run_id = interrupted_run(url, "Ready idle")
    plan = planned(url, run_id)
    plain = Database.writer_engine

    def locked(self: Database) -> sa.Engine:
        engine = plain(self)

        def refuse(_conn: sa.Connection) -> None:
            raise sqlite3.OperationalError("database is locked")

        sa.event.listen(engine, "begin", refuse)
        return engine

    monkeypatch.setattr(Database, "writer_engine", locked)
    monkeypatch.setattr(session_module, "DURABLE_WAIT_S", 0.5)
    session = open_resumed_session(plan, db_url=url, clock=FakeClock(10_000.0))
    assert session.run() is RunStatus.COMPLETED
    assert not session.stored.in_database
    monkeypatch.setattr(Database, "writer_engine", plain)
    run = load(url, run_id)  # opening imports the journal
    assert run.status is RunStatus.COMPLETED and len(run.resumptions) == 1
    assert run.phase(8).attempts == 2 and run.metric("EP_RI").valid


def test_another_station_cannot_resume_a_run_it_did_not_record(
        url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 25 §1: ``run --resume`` from another host resumed a live run and both stations
    wrote it. Only the station holding the run's local record (its lock) may resume it."""
    run_id = interrupted_run(url, "Ready idle")
    database = open_database(url)
    try:
        plan = prepare_resume(database, run_id)  # its own station may
        other = tmp_path / "bench-2"
        with pytest.raises(ResumeRefused, match="cannot be resumed here: this station holds no "
                                                "record of run .* recorded by another station"):
            prepare_resume(database, run_id, lock_dir=other / "run-locks")
        assert run_id not in resumable_run_ids(database, Machine(locks=other / "run-locks"))
    finally:
        database.close()
    monkeypatch.setenv("STORWATT_DATA_DIR", str(tmp_path / "bench-2"))  # the other station
    with pytest.raises(ResumeRefused, match="no record of run"):
        open_resumed_session(plan, db_url=url, clock=FakeClock())
    assert stored_status(url, run_id) is RunStatus.INTERRUPTED  # untouched: nothing claimed


def test_a_run_whose_station_still_holds_it_cannot_be_resumed(url: str) -> None:
    from app.storage.run_lock import RunLock

    run_id = interrupted_run(url, "Ready idle")
    plan = planned(url, run_id)
    live = RunLock.take(run_id)  # another process of this station (say a second window) has it
    try:
        with pytest.raises(ResumeRefused, match="being written by a running StorWatt"):
            open_resumed_session(plan, db_url=url, clock=FakeClock())
    finally:
        live.release(finished=False)
    assert stored_status(url, run_id) is RunStatus.INTERRUPTED
