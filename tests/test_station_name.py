"""Stations are named (issue 26): set once per station, recorded in every run started there,
shown in the history, ``runs list``/``runs show``, the report and compare; QA filters by it."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.station_settings import StationNameError, check_name, set_station_name, station_name
from app.storage.history import HistoryFilter
from app.storage.repository import list_runs, load_run


def test_a_station_is_named_once_and_keeps_its_name(capsys) -> None:
    assert station_name() == socket.gethostname()  # never nothing, even before naming
    assert main(["station", "name", " bench-3 "]) == 0
    assert station_name() == "bench-3"
    assert main(["station", "name", "bench-4"]) == 1
    assert "already named 'bench-3'" in capsys.readouterr().err
    assert station_name() == "bench-3"
    assert main(["station", "name", "bench-4", "--rename"]) == 0
    assert station_name() == "bench-4"
    assert main(["station", "show"]) == 0
    assert "Station: bench-4" in capsys.readouterr().out


@pytest.mark.parametrize("bad, why", [("", "empty"), ("   ", "empty"), ("x" * 65, "at most 64"),
                                      ("bench\n3", "control, bidi or zero-width characters")])
def test_a_bad_station_name_is_refused(bad: str, why: str) -> None:
    with pytest.raises(StationNameError, match=why):
        check_name(bad)


def test_every_run_records_its_station_and_qa_filters_by_it(tmp_path: Path, capsys) -> None:
    from app.cli.cmd_run import config_from_args
    from app.cli.main import build_parser
    from app.station.session import open_session
    from app.storage.opening import open_database
    from drivers.clock import FakeClock

    db = f"sqlite:///{tmp_path / 'lab.db'}"
    set_station_name("bench-7")
    config = config_from_args(build_parser().parse_args(
        ["run", "--method", "smoke", "--lab", "sim-direct", "--com", "deduplication"]))
    assert config.station == "bench-7"
    session = open_session(config, db_url=db, clock=FakeClock())
    try:
        session.run()
    finally:
        session.close()
    database = open_database(db)
    try:
        runs = list_runs(database)
        assert len(runs) == 1 and runs[0].station == "bench-7"  # the history's Station column
        assert list_runs(database, station="bench-7") == runs
        assert list_runs(database, station="bench-8") == []
        assert HistoryFilter(station="bench-7").mask(runs) == [True]  # the history's filter
        assert HistoryFilter(station="bench-8").mask(runs) == [False]
        assert load_run(database, runs[0].run_id).config.station == "bench-7"  # report, compare
    finally:
        database.close()
    assert main(["runs", "list", "--db", db, "--station", "bench-7"]) == 0
    out = capsys.readouterr().out
    assert "STATION" in out and "bench-7" in out
    assert main(["runs", "list", "--db", db, "--station", "elsewhere"]) == 0
    assert "no run matches --station elsewhere; 1 run is stored" in capsys.readouterr().out
    assert main(["runs", "show", runs[0].run_id, "--db", db]) == 0
    assert "Station  bench-7" in capsys.readouterr().out
