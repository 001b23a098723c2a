"""The lab's PostgreSQL server stopped or killed across a run's end (issue 25: held on main,
guarded here): the events the server could not take go to the run journal and are imported
when the server is back, so nothing is lost. A real server (``tests/pg_server.py``)."""

from __future__ import annotations

import pytest

from tests.support import pg_server
from app.core.records import RunStatus
from app.sequencer import events as ev
from app.storage.opening import open_database
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter
from tests.support.pg_control import ServerControl
from app.storage.repository import load_run

pytestmark = pytest.mark.skipif(bool(pg_server.available()), reason=pg_server.available())


@pytest.fixture(scope="module")
def pg_url():
    with pg_server.postgres_server() as url:
        yield url


@pytest.mark.realtime("a real PostgreSQL server is stopped or killed and started again")
@pytest.mark.parametrize("fault", ["stopped", "killed"])
def test_a_server_gone_across_the_end_of_a_run_loses_nothing(pg_url: str, fault: str) -> None:
    control = ServerControl(pg_url)
    database = open_database(pg_url)
    writer = RunWriter(database, retry_interval_s=0.05)
    run_id = f"pg-{fault}-run"
    events = [e for e in full_run(run_id=run_id) if not isinstance(e, ev.Progress)]
    for event in events[: len(events) // 2]:
        writer(event)
    assert writer.flush(10.0)
    try:
        control.stop() if fault == "stopped" else control.kill()
        for event in events[len(events) // 2:]:
            writer(event)
        stored = writer.close(timeout=0.5)
        database.close()
    finally:
        control.start()
    assert not stored.in_database and stored.events > 0  # the rest went to the journal
    again = open_database(pg_url)  # imports the journal
    run = load_run(again, run_id)
    power = sum(len(e.samples) for e in events if isinstance(e, ev.PowerSamples))
    assert len(run.power) == power and run.status is RunStatus.COMPLETED
    assert not stored.journals[0].exists()
    again.close()
