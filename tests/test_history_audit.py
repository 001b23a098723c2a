"""The audit trail in storage: validation, no disposition on a running run, append-only."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from app.sequencer import events as ev
from app.storage.audit import AuditError, add_audit_entry, audit_entries
from app.storage.opening import open_database
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter
from app.storage.repository import list_runs


@pytest.fixture()
def database(tmp_path):
    db = open_database(f"sqlite:///{tmp_path / 'a.db'}")
    yield db
    db.close()


def _store(database, finished: bool = True) -> str:
    writer = RunWriter(database)
    events = [e for e in full_run() if finished or not isinstance(e, ev.RunFinished)]
    for e in events:
        writer(e)
    assert writer.flush(10)
    if finished:
        writer.close()
    return events[0].run_id


@pytest.mark.parametrize("kind, text, author, disposition, message", [
    ("note", "x", "  ", None, "author"),
    ("note", "", "qa", None, "text"),
    ("disposition", "", "qa", "accepted", "reason"),
    ("disposition", "why", "qa", "maybe", "accepted' or 'rejected"),
    ("note", "x", "qa", "accepted", "no disposition"),
    ("edit", "x", "qa", None, "kind"),
])
def test_bad_entries_are_refused_and_nothing_written(database, kind, text, author,
                                                     disposition, message) -> None:
    run_id = _store(database)
    with pytest.raises(AuditError, match=message):
        add_audit_entry(database, run_id, kind, text, author, disposition)
    assert audit_entries(database, run_id) == []


def test_running_run_takes_notes_but_no_disposition(database) -> None:
    run_id = _store(database, finished=False)
    add_audit_entry(database, run_id, "note", "watching", "qa")
    with pytest.raises(AuditError, match="still running"):
        add_audit_entry(database, run_id, "disposition", "ok", "qa", "accepted")


def test_latest_disposition_wins_and_trail_keeps_all(database) -> None:
    run_id = _store(database)
    add_audit_entry(database, run_id, "disposition", "first look", "ana", "accepted")
    add_audit_entry(database, run_id, "disposition", "EP_RI invalid", "ben", "rejected")
    row = list_runs(database)[0]
    assert (row.disposition, row.disposition_author) == ("rejected", "ben")
    assert [e.author for e in audit_entries(database, run_id)] == ["ana", "ben"]
    for statement in ("UPDATE audit_entries SET author = 'x'", "DELETE FROM audit_entries"):
        with pytest.raises(Exception, match="append-only"):
            with database.read() as conn:
                conn.execute(sa.text(statement))
    assert len(audit_entries(database, run_id)) == 2
