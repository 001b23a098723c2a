"""A finished run's facts are immutable in a station's SQLite file too (issue 39, revision 0022).

The file is a single-user store (docs/security.md): its triggers are no defence against a person
with the file and a SQLite shell, but they make an edit deliberate work (drop the triggers
first) instead of one UPDATE, and the recomputed record hash then shows it. What the writer
and QA still do to a finished run — its bookkeeping, audit entries — stays allowed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app.storage import schema as s
from app.storage.audit import add_audit_entry, audit_entries
from app.storage.migrations.versions import v0022_finished_runs as guard
from app.storage.opening import open_database
from app.storage.record_hash import record_sha256
from app.storage.repository import load_run
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter
from tests.support.tamper import tamper

#: every statement an insider would try on a finished run (run id 1): each is refused
EDITS = (
    "UPDATE power_samples SET watts = watts * 0.9 WHERE run_id = 1",
    "UPDATE metrics SET value = value / 0.9 WHERE run_id = 1",
    "UPDATE runs SET status = 'ABORTED' WHERE id = 1",
    "UPDATE runs SET config = '{}' WHERE id = 1",
    "DELETE FROM metrics WHERE run_id = 1",
    "DELETE FROM runs WHERE id = 1",
    "INSERT INTO power_samples (run_id, phase_index, t, watts) VALUES (1, 2, 1.0, 1.0)",
    "INSERT INTO events (run_id, t, level, message) VALUES (1, 1.0, 'INFO', 'late')",
    "UPDATE intervals SET run_id = 1 WHERE run_id = 2",  # moving rows into it
)


@pytest.fixture()
def stored(tmp_path: Path) -> tuple[Path, str]:
    """A station file with one finished run (id 1) and one still RUNNING (id 2)."""
    path = tmp_path / "runs.db"
    database = open_database(f"sqlite:///{path}")
    try:
        writer = RunWriter(database)
        events = list(full_run(samples_per_phase=5))
        for event in events:
            writer(event)
        assert writer.close().in_database
        second = RunWriter(database)
        for event in list(full_run(samples_per_phase=5))[:-1]:  # never finished
            second(event)
        second.flush()
    finally:
        database.close()
    return path, events[0].run_id


def _record(path: Path, run_id: str) -> str:
    database = open_database(f"sqlite:///{path}")
    try:
        return record_sha256(load_run(database, run_id))
    finally:
        database.close()


@pytest.mark.parametrize("sql", EDITS)
def test_each_edit_of_a_finished_run_is_refused(stored, sql: str) -> None:
    path, run_id = stored
    before = _record(path, run_id)
    with sqlite3.connect(path) as conn, pytest.raises(
            sqlite3.IntegrityError, match="run is finished, its facts are immutable"):
        conn.execute(sql)
    conn.close()
    assert _record(path, run_id) == before


def test_an_unfinished_run_and_a_finished_runs_bookkeeping_may_change(stored) -> None:
    """Late writes that stay allowed: rows of an unfinished run (the writer, a resume,
    ``db recover``), and on a finished run the writer's bookkeeping."""
    path, run_id = stored
    before = _record(path, run_id)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE power_samples SET watts = 1 WHERE run_id = 2")
        conn.execute("UPDATE runs SET status = 'INTERRUPTED' WHERE id = 2")
        conn.execute("UPDATE runs SET heartbeat_wall = 1, writer_pid = NULL, stored_seq = "
                     "stored_seq WHERE id = 1")
    conn.close()
    assert _record(path, run_id) == before


def test_the_deliberate_edit_is_shown_by_the_recomputed_hash(stored) -> None:
    path, run_id = stored
    before = _record(path, run_id)
    tamper(path, "UPDATE power_samples SET watts = watts * 0.9 WHERE run_id = 1")
    assert _record(path, run_id) != before
    with sqlite3.connect(path) as conn, pytest.raises(sqlite3.IntegrityError):
        conn.execute(EDITS[0])  # and the guard is back in place
    conn.close()


def test_an_audit_entry_records_the_station_and_the_os_account(stored, monkeypatch) -> None:
    path, run_id = stored
    monkeypatch.setattr("getpass.getuser", lambda: "tech-bo")
    monkeypatch.setattr("app.storage.audit.station_name", lambda: "bench-7")
    database = open_database(f"sqlite:///{path}")
    try:
        entry = add_audit_entry(database, run_id, "note", "fan noisy", "Bo")
        assert entry.db_role == "station bench-7, OS account tech-bo"
        assert audit_entries(database, run_id)[-1].db_role == entry.db_role
    finally:
        database.close()


def test_every_table_of_a_run_and_every_run_column_is_classified() -> None:
    """Class, not case: a table holding a run's rows that revision 0022 does not guard, or a
    run column it calls neither a fact nor bookkeeping, would be a way round the guard. A
    later revision adding either fails here until it extends the guard (or says why not)."""
    run_rows = {name for name, table in s.Base.metadata.tables.items() if "run_id" in table.c}
    # QA's trail (append-only, revision 0002) and the sealed hash cache (0021) are no facts
    assert set(guard.CHILD_TABLES) == run_rows - {"audit_entries", "record_hashes"}
    bookkeeping = {"id", "writer_host", "writer_pid", "writer_boot", "heartbeat_wall",
                   "stored_seq"}
    assert set(guard.RUN_FACTS) | bookkeeping == set(s.Run.__table__.c.keys())
    assert not set(guard.RUN_FACTS) & bookkeeping


def test_the_station_file_has_each_guard(stored) -> None:
    path, _ = stored
    with sqlite3.connect(path) as conn:
        names = {r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    conn.close()
    assert {f"{t}_finished_{op}" for t in guard.CHILD_TABLES
            for op in ("insert", "update", "delete")} | {"runs_finished_facts",
                                                         "runs_finished_delete"} <= names
