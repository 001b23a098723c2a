"""Nothing waits for ever on a database server (issue 25 §2, issue 26): a server that accepts
and never answers, one that stops answering after the start-up, and a real PostgreSQL server
frozen (SIGSTOP) across a run's end — every wait ends within its bound and no event is lost."""

from __future__ import annotations

import time

import pytest
import sqlalchemy as sa

from app.storage.opening import open_database
from app.storage.errors import DatabaseUnreachableError
from app.storage.server_link import READER_TIMEOUTS, WRITER_TIMEOUTS, ServerTimeouts
from tests.support.bounded import outcome_within, within
from tests.support.silent_server import frozen_server, mute_after_startup, silent_server
from tests.support.time_budget import budget_s
from app.storage.repository import load_run

SHORT = ServerTimeouts(connect_s=2, statement_s=1.0, idle_in_transaction_s=2.0, reply_s=1.0)


@pytest.mark.realtime("libpq's connect timeout counts whole seconds, at least 2")
def test_a_server_that_accepts_and_never_answers_is_given_up_after_the_connect_timeout(
) -> None:
    with silent_server() as url:
        began = time.monotonic()
        # given up within 5 s on a quiet machine: the test's patience, scaled by the budget
        error = outcome_within(lambda: open_database(url, server_timeouts=SHORT),
                               "opening a silent server", budget_s(5.0))
        waited = time.monotonic() - began
    assert isinstance(error, DatabaseUnreachableError) and "timeout expired" in str(error)
    assert waited > 1.5  # the connect bound was waited out (load only stretches it)


@pytest.mark.realtime("the reply bound is measured on the real clock (1 s here)")
def test_a_server_that_stops_answering_after_the_start_up_is_given_up_after_the_reply_bound(
) -> None:
    with mute_after_startup() as url:
        began = time.monotonic()
        error = outcome_within(lambda: open_database(url, server_timeouts=SHORT),
                               "opening a server mute after its start-up", budget_s(4.0))
        waited = time.monotonic() - began
    assert isinstance(error, DatabaseUnreachableError), error
    assert "did not answer within 1 s" in str(error)
    assert waited > 0.9  # the reply bound was waited out (load only stretches it)


def test_every_server_connection_carries_its_bounds() -> None:
    params = WRITER_TIMEOUTS.libpq_parameters("writer")
    assert params["connect_timeout"] == 5
    assert "statement_timeout=10000" in params["options"]
    assert "idle_in_transaction_session_timeout=30000" in params["options"]
    assert params["keepalives"] == 1 and params["keepalives_count"] == 3
    assert params["application_name"].startswith("StorWatt ")
    assert " writer on " in params["application_name"]
    assert len(params["application_name"].encode()) <= 63
    assert READER_TIMEOUTS.reply_s > READER_TIMEOUTS.statement_s  # a reader may fetch long
    assert WRITER_TIMEOUTS.reply_s > WRITER_TIMEOUTS.statement_s  # the server's own fires first


def test_the_url_s_own_parameters_win(tmp_path) -> None:
    from app.storage import server_link

    seen: dict = {}

    class Recorder:
        @classmethod
        def connect(cls, conninfo: str = "", *, reply_s: float, **kwargs):
            seen.update(kwargs, reply_s=reply_s)
            raise sa.exc.OperationalError("stop", {}, Exception("stop"))

    original = server_link._connection_class
    server_link._connection_class = lambda: Recorder
    try:
        with pytest.raises(sa.exc.OperationalError):
            server_link.connect(SHORT, "reader", {"connect_timeout": 9, "host": "h"})
    finally:
        server_link._connection_class = original
    assert seen["connect_timeout"] == 9 and seen["host"] == "h"
    assert "statement_timeout=1000" in seen["options"] and seen["reply_s"] == 1.0


@pytest.fixture()
def frozen_able_server():
    from tests.support import pg_server

    if pg_server.available():
        pytest.skip(pg_server.available())
    with pg_server.postgres_server() as url:  # its own port and data folder: runs in parallel
        yield url


@pytest.mark.realtime("a real PostgreSQL server frozen for a few seconds of real time")
def test_a_run_ending_while_the_server_is_frozen_loses_no_event(frozen_able_server) -> None:
    """Issue 25 §2: a run ending during a freeze printed "122 run events could not be stored …
    nor in the run journal". Every server process is stopped (SIGSTOP) after the run's first
    half is stored; the second half and the end go to the journal within the bounds, and the
    journal is imported once the server answers again: every sample of the run is stored."""
    from app.sequencer import events as ev
    from app.storage.synthetic import full_run
    from app.storage.writer import RunWriter

    url = frozen_able_server
    database = open_database(url, server_timeouts=SHORT)
    writer = RunWriter(database, retry_interval_s=0.2)
    events = list(full_run(samples_per_phase=20))
    half = len(events) // 2
    for event in events[:half]:
        writer(event)
    assert writer.flush(10.0)
    with frozen_server(url) as frozen:
        assert frozen, "no server process to freeze"
        for event in events[half:]:
            writer(event)
        # the writer's own bounds (its close timeout, a retry, the longest server wait) plus
        # 5 s of the test's patience, scaled: a close that waited for the server never ends
        stored = within(lambda: writer.close(timeout=2.0), "closing the writer",
                        2.0 + 0.2 + database.longest_wait_s + budget_s(5.0))
    assert not stored.in_database and len(stored.journals) == 1
    samples = sum(len(e.samples) for e in events
                  if isinstance(e, (ev.PowerSamples, ev.TemperatureSamples)))
    database.close()
    again = open_database(url, server_timeouts=SHORT)  # imports the journal at open
    try:
        assert again.recovered is not None and again.recovered.imported
        run = load_run(again, events[0].run_id)
        assert run.status.value == "COMPLETED"
        assert len(run.power) + len(run.temperature) == samples  # 0 samples lost
    finally:
        again.close()
