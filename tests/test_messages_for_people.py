"""Messages for people where a person needs the next step (issue 40 §6).

Seen on main: a history search of 50,000 characters was reported as a database problem
(``StorageError: … LIKE or GLOB pattern too complex``); ``runs list --status NOSUCH`` or
``--station NOSUCH`` said "no runs stored in <db>" although runs were stored; a database that
failed while the run ended (a full disk, the journal working) was waited on for 60 s before
anything said that the station was waiting.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa

from app.cli.main import main
from app.storage.db import Database
from app.storage.history import MAX_FILTER_CHARS, HistoryFilter, HistoryFilterError
from app.storage.opening import open_database
from app.storage.run_pages import count_runs
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter
from tests.support.stored_runs import store_synthetic_run


@pytest.fixture()
def stored(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    store_synthetic_run(url, "stored-run-0001").close()
    return url


@pytest.mark.parametrize("field", ("text", "sut"))
def test_a_history_filter_past_its_bound_says_so_not_pattern_too_complex(stored: str,
                                                                        field: str) -> None:
    database = open_database(stored)
    try:
        at_bound = HistoryFilter(**{field: "x" * MAX_FILTER_CHARS})
        assert count_runs(database, at_bound) == 0  # searched: the bound itself is taken
        with pytest.raises(HistoryFilterError) as err:
            count_runs(database, HistoryFilter(**{field: "x" * 50_000}))
    finally:
        database.close()
    text = str(err.value)
    assert "too complex" not in text and "50,000 characters" in text, text
    assert f"at most {MAX_FILTER_CHARS:,}" in text and "\n" not in text


@pytest.mark.gui
def test_the_history_view_says_a_pasted_search_is_too_long_and_forgets_it_once_fixed(
        qtbot, stored: str) -> None:
    from ui.history.view import HistoryView

    view = HistoryView(url=stored)
    qtbot.addWidget(view)
    shown = view.model.rowCount()
    # a line edit holds 32,767 characters; 30,000 "é" are 60,000 bytes, past SQLite's
    # 50,000-byte LIKE pattern (on main: "LIKE or GLOB pattern too complex")
    view.search.setText("é" * 30_000)
    problem = view.problem.text()
    assert view.problem.isVisibleTo(view) and "Search not applied" in problem, problem
    assert "too complex" not in problem and "30,000 characters" in problem
    assert view.model.rowCount() == shown  # the list stays as it was
    view.search.setText("")
    assert not view.problem.isVisibleTo(view) and view.model.rowCount() == shown


@pytest.mark.parametrize("option", ("--status", "--station"))
def test_runs_list_with_a_filter_nothing_matches_says_how_many_are_stored(
        stored: str, option: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "list", option, "NOSUCH", "--db", stored]) == 0
    out = capsys.readouterr().out
    assert f"no run matches {option} NOSUCH" in out and "; 1 run is stored in" in out, out
    assert "no runs stored" not in out
    if option == "--status":  # a typo in a status is named as one, with the statuses
        assert "NOSUCH is no run status: RUNNING, COMPLETED, ABORTED, FAILED, INTERRUPTED" in out


def test_runs_list_of_an_empty_database_still_says_none_are_stored(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    open_database(url).close()
    assert main(["runs", "list", "--status", "COMPLETED", "--db", url]) == 0
    assert "no runs stored in" in capsys.readouterr().out


def test_the_wait_for_a_database_failing_as_the_run_ends_is_announced_before_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """The database fails only once the run's end is storing (its journal works): the
    writer's first error line says how long the end will wait, before the wait."""
    database = open_database(f"sqlite:///{tmp_path / 'full.db'}")
    writer_engine = Database.writer_engine
    writers: list[RunWriter] = []
    refusals: list[str] = []

    def full_once_the_run_ends(self: Database) -> sa.Engine:
        engine = writer_engine(self)

        def refuse(_conn: object) -> None:
            if writers and writers[0]._closed and not refusals:  # once: then space is back
                refusals.append("database or disk is full")
                raise sqlite3.OperationalError(refusals[0])
        sa.event.listen(engine, "begin", refuse)
        return engine

    monkeypatch.setattr(Database, "writer_engine", full_once_the_run_ends)
    # events are committed only at the end (a commit interval longer than the test)
    writers.append(RunWriter(database, commit_interval_s=3600.0, retry_interval_s=0.05,
                             journal_dir=tmp_path / "journals", lock_dir=tmp_path / "locks"))
    for event in full_run(run_id="full-at-end-0001"):
        writers[0](event)
    with caplog.at_level(logging.WARNING, logger="app"):
        kept = writers[0].close(timeout=30.0)
    database.close()
    assert refusals, "the database never failed: nothing was tested"
    first = next(r.getMessage() for r in caplog.records if "run writer" in r.getMessage())
    assert "the run's end waits up to 30 s for the database" in first, first
    assert not kept.journals  # stored once the space was back
