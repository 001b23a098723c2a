"""The lab-wide database: the same schema, writer and read model on a real PostgreSQL server,
and `storwatt db copy` moving runs from a station's SQLite file without duplicates."""

from __future__ import annotations

import pytest

from tests.support import pg_server
from app.cli.main import main
from app.core.records import RunStatus
from app.storage.audit import add_audit_entry, audit_entries
from app.storage.opening import open_database
from app.storage.synthetic import full_run
from app.storage.transfer import copy_runs
from app.storage.writer import RunWriter
from app.storage.repository import list_runs, load_run
from tests.support.stored_runs import LAST_VERDICT, same_verdict, with_steady_verdicts

pytestmark = pytest.mark.skipif(bool(pg_server.available()), reason=pg_server.available())


@pytest.fixture(scope="module")
def pg_url():
    with pg_server.postgres_server() as url:
        yield url


def _store_synthetic(url: str) -> str:
    database = open_database(url)
    writer = RunWriter(database)
    events = with_steady_verdicts(list(full_run()))
    for event in events:
        writer(event)
    writer.close()
    database.close()
    return events[0].run_id


@pytest.mark.process
def test_postgres_holds_the_same_run_as_sqlite(pg_url: str, tmp_path) -> None:
    sqlite_url = f"sqlite:///{tmp_path / 'station.db'}"
    run_id = _store_synthetic(sqlite_url)
    pg_run_id = _store_synthetic(pg_url)
    lite = load_run(open_database(sqlite_url), run_id)
    pg = load_run(open_database(pg_url), pg_run_id)
    assert pg.status is lite.status is RunStatus.COMPLETED
    assert len(pg.power) == len(lite.power) > 0
    assert [m.name for m in pg.metrics] == [m.name for m in lite.metrics]
    assert [m.value for m in pg.metrics] == pytest.approx([m.value for m in lite.metrics],
                                                          nan_ok=True)
    # same samples → same digest, whatever the backend
    assert pg.samples_sha256 == lite.samples_sha256
    # the stored PTS steady-state verdict (revision 0020, JSON with NaN as null) on both
    assert same_verdict(pg.phase(1).steady_state, LAST_VERDICT)
    assert same_verdict(lite.phase(1).steady_state, LAST_VERDICT)


@pytest.mark.process
def test_db_copy_moves_runs_once(pg_url: str, tmp_path, capsys) -> None:
    station = f"sqlite:///{tmp_path / 'station.db'}"
    run_id = _store_synthetic(station)
    add_audit_entry(open_database(station), run_id, "disposition", "EP figures checked",
                    "qa-anna", "accepted")
    before = {r.run_id for r in list_runs(open_database(pg_url))}
    assert main(["db", "copy", "--from", station, "--to", pg_url]) == 0
    assert "1 run(s) copied" in capsys.readouterr().out
    assert main(["db", "copy", "--from", station, "--to", pg_url]) == 0
    assert "0 run(s) copied, 1 already present" in capsys.readouterr().out
    after = {r.run_id for r in list_runs(open_database(pg_url))}
    assert after - before == {run_id}
    copied = load_run(open_database(pg_url), run_id)
    original = load_run(open_database(station), run_id)
    assert copied.samples_sha256 == original.samples_sha256
    assert len(copied.intervals) == len(original.intervals)
    assert same_verdict(copied.phase(1).steady_state, LAST_VERDICT)
    audit = audit_entries(open_database(pg_url), run_id)
    assert [(e.author, e.text) for e in audit] == [("qa-anna", "EP figures checked")]


@pytest.mark.process
def test_copy_skips_running_runs(tmp_path) -> None:
    src = open_database(f"sqlite:///{tmp_path / 'a.db'}")
    writer = RunWriter(src)
    events = list(full_run())
    for event in events[:-1]:  # no RunFinished: still RUNNING
        writer(event)
    writer.flush(5)
    dst = open_database(f"sqlite:///{tmp_path / 'b.db'}")
    report = copy_runs(src, dst)
    assert report.skipped_running == [events[0].run_id] and not report.copied
    writer.close()


@pytest.mark.process
def test_unreachable_postgres_is_a_clear_error(capsys) -> None:
    url = "postgresql+psycopg://nobody@127.0.0.1:1/storwatt"
    assert main(["db", "info", "--db", url]) == 1
    err = capsys.readouterr().err
    assert "127.0.0.1" in err and "storwatt db info" in err
