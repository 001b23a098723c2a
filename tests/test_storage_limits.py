"""Storage limits are a contract (issue 24 item 7): an instrument identity the station cannot
bound (a PTDaemon identity combined over 2–3 channels: 242, 271 characters) is stored alike on
SQLite and PostgreSQL; ``db copy`` refuses a row the destination rejects in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy.exc

from tests.support import pg_server
from app.cli.main import main
from app.sequencer import events as ev
from app.storage.opening import open_database
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter
from drivers import interfaces as di
from app.storage.repository import load_run

#: what three PTDaemon channels' identities combine to (the length seen in the issue)
LONG_MODEL = "PTDaemon YokogawaWT330_multichannel channel 1 + " * 5 + "x" * 21


def store_run_with_a_long_identity(url: str) -> str:
    database = open_database(url)
    writer = RunWriter(database)
    events = list(full_run())
    for event in events:
        if isinstance(event, ev.InstrumentsIdentified):
            long = di.InstrumentIdentity("SPEC", LONG_MODEL, "C2PH", "1.10.0", "h:8888", "ptd",
                                         "2026-01-05")
            event = ev.InstrumentsIdentified(long, event.temperature_meter, event.workload_engine)
        writer(event)
    writer.close()
    database.close()
    return events[0].run_id


def test_a_long_identity_is_stored_on_sqlite(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'station.db'}"
    run_id = store_run_with_a_long_identity(url)
    assert len(LONG_MODEL) > 250
    assert load_run(open_database(url), run_id).power_meter.model == LONG_MODEL


@pytest.mark.skipif(bool(pg_server.available()), reason=pg_server.available())
@pytest.mark.process
def test_the_same_run_is_stored_and_copied_to_postgresql(tmp_path: Path, capsys) -> None:
    station = f"sqlite:///{tmp_path / 'station.db'}"
    run_id = store_run_with_a_long_identity(station)
    with pg_server.postgres_server() as pg_url:
        direct = store_run_with_a_long_identity(pg_url)
        assert load_run(open_database(pg_url), direct).power_meter.model == LONG_MODEL
        assert main(["db", "copy", "--from", station, "--to", pg_url]) == 0, \
            capsys.readouterr().err
        assert load_run(open_database(pg_url), run_id).power_meter.model == LONG_MODEL


def test_db_copy_refuses_a_rejected_row_in_one_line(tmp_path: Path, capsys,
                                                   monkeypatch) -> None:
    station = f"sqlite:///{tmp_path / 'station.db'}"
    store_run_with_a_long_identity(station)

    def refused(*_a, **_k):
        raise sqlalchemy.exc.DataError("INSERT …", {}, Exception(
            "value too long for type character varying(200)\nDETAIL: …"))

    monkeypatch.setattr("app.storage.transfer.copy_runs", refused)
    assert main(["db", "copy", "--from", station, "--to",
                 f"sqlite:///{tmp_path / 'lab.db'}"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["storwatt db copy: the destination refused a run (value too long for type "
                   "character varying(200)); the runs copied before it are kept, the refused "
                   "one is not copied (rolled back)"]


@pytest.mark.parametrize(("argv", "message"), [
    (["--vendor", "v" * 201], "--vendor: 'vvvvv"),
    (["--operator", "o" * 201], "is longer than 200 characters"),
    (["--power-input", f"name={'n' * 101},driver=sim"], "is longer than 100 characters"),
])
def test_what_the_operator_types_is_bounded_where_it_is_typed(argv: list[str], message: str,
                                                              capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["run", *argv])
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err
