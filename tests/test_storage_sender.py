"""The lab sender (issue 26): a station's runs reach the lab's PostgreSQL while they go on and
after they end, resumed from where the lab copy ends, idempotent, never holding the run up;
revision 1 of the lab copy has the station's record hash."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.support import pg_server
from app.storage import sender as sender_module
from app.storage.opening import open_database
from app.storage.record_hash import record_sha256
from app.storage.sender import Sender, lag, push_run, read_state, sync
from app.storage.server_link import ServerTimeouts
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter
from tests.support.silent_server import silent_server
from tests.support.time_budget import budget_s
from app.storage.repository import load_run


@pytest.fixture(scope="module")
def lab_url():
    if pg_server.available():
        pytest.skip(pg_server.available())
    with pg_server.postgres_server() as url:  # its own port and data folder
        yield url


@pytest.fixture()
def station(tmp_path: Path):
    database = open_database(f"sqlite:///{tmp_path / 'station.db'}")
    yield database
    database.close()


@pytest.fixture()
def lab(lab_url):
    database = open_database(lab_url, recover_journals=False, interrupt_orphans=False)
    yield database
    database.close()


def _same_record(station, lab, run_id: str) -> None:
    ours, theirs = load_run(station, run_id), load_run(lab, run_id)
    assert theirs.status is ours.status
    assert theirs.samples_sha256 == ours.samples_sha256
    assert record_sha256(theirs) == record_sha256(ours)  # revision 1, on either copy


@pytest.mark.process
def test_a_run_is_sent_while_it_goes_on_and_completed_after_it_ends(station, lab) -> None:
    writer = RunWriter(station)
    events = list(full_run(samples_per_phase=30))
    run_id = events[0].run_id
    half = len(events) // 2
    for event in events[:half]:
        writer(event)
    assert writer.flush(5.0)
    assert [item.run_id for item in lag(station, lab)] == [run_id]
    assert push_run(station, lab, run_id).rows > 0
    assert lag(station, lab) == []  # the lab copy holds everything stored so far
    partial = load_run(lab, run_id)
    assert partial.status.value == "RUNNING" and 0 < len(partial.power)
    for event in events[half:]:
        writer(event)
    writer.close()
    assert sync(station, lab) > 0
    _same_record(station, lab, run_id)
    assert sync(station, lab) == 0 and push_run(station, lab, run_id).rows == 0  # idempotent


@pytest.mark.process
def test_after_an_outage_the_lab_copy_resumes_where_it_ends(station, lab, monkeypatch) -> None:
    """Small batches stand in for a long backlog: each push sends the next rows after the
    lab copy's last, and the run row claims the run's end only once everything is there."""
    monkeypatch.setattr(sender_module, "BATCH_ROWS", 7)
    writer = RunWriter(station)
    events = list(full_run(samples_per_phase=20))
    run_id = events[0].run_id
    for event in events:
        writer(event)
    writer.close()
    pushes = 0
    while push_run(station, lab, run_id).more:
        pushes += 1
        copy = load_run(lab, run_id)
        assert copy.status.value == "RUNNING"  # not yet claimed complete
    assert pushes > 3
    _same_record(station, lab, run_id)


@pytest.mark.realtime("the sender meets a server that never answers: its connect bound")
def test_a_lab_that_does_not_answer_never_holds_the_run_up(station, lab_url) -> None:
    writer = RunWriter(station)
    events = list(full_run(samples_per_phase=10))
    short = ServerTimeouts(connect_s=2, statement_s=1.0, idle_in_transaction_s=2.0,
                           reply_s=1.0)
    with silent_server() as frozen:
        sender = Sender(station, frozen, interval_s=0.1,
                        opener=lambda url: open_database(
                            url, server_timeouts=short, recover_journals=False,
                            interrupt_orphans=False)).start()
        for event in events:
            writer(event)
        # stored at once: the sender is no part of storing. "At once" is the budget's patience
        # (2 s on a quiet machine, scaled), less than a wait on the frozen server would take
        # there (its connect bound, then every retry)
        assert writer.flush(budget_s(2.0))
        state = sender.stop(final_wait_s=8.0)
    writer.close()
    assert "timeout expired" in state.last_error and state.last_success == ""
    assert read_state().last_error == state.last_error  # what `storwatt db status` shows
    back = Sender(station, lab_url, interval_s=0.1).start()  # the server answers again
    state = back.stop(final_wait_s=30.0)
    assert state.last_error == "" and state.events_behind == 0 and state.last_success
    lab = open_database(lab_url, recover_journals=False, interrupt_orphans=False)
    try:
        _same_record(station, lab, events[0].run_id)
    finally:
        lab.close()


@pytest.mark.process
def test_db_sync_and_db_status_say_what_the_lab_copy_lacks(station, lab_url, capsys) -> None:
    from app.cli.main import main

    writer = RunWriter(station)
    events = list(full_run(samples_per_phase=5))
    for event in events:
        writer(event)
    writer.close()
    db = ["--db", station.url]
    assert main(["db", "status", *db]) == 1  # no lab database named yet
    assert "no lab database" in capsys.readouterr().out
    assert main(["station", "lab-db", lab_url]) == 0
    capsys.readouterr()
    assert main(["db", "status", *db]) == 0
    out = capsys.readouterr().out
    assert f"run {events[0].run_id[:8]}" in out and "not in the lab copy" in out
    assert main(["db", "sync", *db]) == 0
    assert "the lab copy now holds every run of this station" in capsys.readouterr().out
    assert main(["db", "status", *db, "--json"]) == 0
    assert '"runs_behind": []' in capsys.readouterr().out
    assert main(["db", "sync", *db]) == 0
    assert capsys.readouterr().out.startswith("0 rows sent")  # nothing twice


def _qa(data: Path, *argv: str) -> str:
    """``storwatt`` as a QA user in another process, with its own data folder."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-m", "app.cli.main", *argv], cwd=root,
                          env={**os.environ, "STORWATT_DATA_DIR": str(data),
                               "PYTHONPATH": str(root)},
                          capture_output=True, text=True, timeout=budget_s(60))
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.realtime("QA's commands run in another process, as on another PC")
def test_qa_in_another_process_follows_and_approves_a_run_a_station_is_recording(
        station, lab_url, tmp_path) -> None:
    import json

    writer = RunWriter(station)
    events = list(full_run(samples_per_phase=10))
    run_id = events[0].run_id
    sender = Sender(station, lab_url, interval_s=0.2).start()
    half = len(events) // 2
    for event in events[:half]:
        writer(event)
    assert writer.flush(5.0)
    qa_data = tmp_path / "qa-pc"
    deadline = time.monotonic() + budget_s(20.0)
    listed: list = []
    while time.monotonic() < deadline and not listed:
        listed = [r for r in json.loads(_qa(qa_data, "runs", "list", "--db", lab_url,
                                            "--json")) if r["run_id"] == run_id]
    assert listed and listed[0]["status"] == "RUNNING"  # watched while it goes on
    for event in events[half:]:
        writer(event)
    writer.close()
    assert sender.stop(30.0).events_behind == 0
    ours = record_sha256(load_run(station, run_id))  # revision 1 as the station computes it
    _qa(qa_data, "runs", "approve", run_id, "--by", "qa-anna", "--statement",
        "figures checked against the station's record", "--confirm",
        "simulated run, approved to test the lab copy", "--db", lab_url)
    shown = json.loads(_qa(qa_data, "runs", "show", run_id, "--db", lab_url, "--json"))
    assert shown["status"] == "COMPLETED"
    assert [(a["by"], a["revision"]) for a in shown["approvals"]] == [("qa-anna", 1)]
    assert shown["approvals"][0]["record_sha256"] == ours  # the lab copy's revision 1
    # issue 26: revision 1 is the station's measurement; the approval was made on the lab copy
    lab_host = sa.engine.make_url(lab_url)
    assert shown["revisions"][0]["made_on"].endswith(", as measured")
    assert shown["approvals"][0]["made_on"].startswith(
        f"server {lab_host.host}:{lab_host.port}/{lab_host.database} (database ")
    assert sync(station, lab := open_database(lab_url, recover_journals=False,
                                              interrupt_orphans=False)) == 0
    assert len(load_run(lab, run_id).power) == len(load_run(station, run_id).power)
    lab.close()


@pytest.mark.process
def test_with_a_lab_database_named_audit_entries_go_to_the_lab_copy_only(
        station, lab, monkeypatch) -> None:
    """Issue 26: one run's audit entries live in one place."""
    from app.storage.audit import AuditError, add_audit_entry, audit_entries

    writer = RunWriter(station)
    events = list(full_run(samples_per_phase=5))
    for event in events:
        writer(event)
    writer.close()
    run_id = events[0].run_id
    sync(station, lab)
    monkeypatch.setenv("STORWATT_LAB_DB", lab.url)
    with pytest.raises(AuditError, match="reviewed on the lab database .* add audit entries "
                                         "there"):
        add_audit_entry(station, run_id, "disposition", "checked", "qa-anna", "accepted")
    assert audit_entries(station, run_id) == []
    add_audit_entry(lab, run_id, "disposition", "checked", "qa-anna", "accepted")
    assert [e.author for e in audit_entries(lab, run_id)] == ["qa-anna"]


@pytest.mark.realtime("the sender meets a server that never answers (its 5 s connect bound)")
def test_a_run_gets_a_sender_only_when_a_lab_database_is_named(station, monkeypatch) -> None:
    from app.storage.sender import sender_for

    assert sender_for(station) is None  # no lab database: runs stay on the station
    assert sender_for(station, station.url) is None  # --db names the lab itself: no copy
    with silent_server() as frozen:
        monkeypatch.setenv("STORWATT_LAB_DB", frozen)
        sender = sender_for(station)
        assert sender is not None and sender.running
        state = sender.stop(final_wait_s=20.0)
    assert "timeout expired" in state.last_error
    assert "the run is safe on this station" in state.summary()
    assert "not reaching" in state.summary() and "since the run began" in state.summary()
