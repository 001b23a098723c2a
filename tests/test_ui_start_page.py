"""The start page keeps the selected *run* across refreshes (issue 28): it kept the row
number, so after a new run was listed on top "Repeat selected run's set-up" repeated
another run."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from app.storage.opening import open_database
from app.storage.repository import list_runs
from tests.support.recorded_runs import record_smoke_run
from ui.shell.start_page import StartPage


def test_the_selection_follows_the_run_when_a_new_run_is_listed(qtbot, tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    first, _ = record_smoke_run(url)
    second, _ = record_smoke_run(url)
    page = StartPage()
    qtbot.addWidget(page)
    database = open_database(url)
    try:
        page.show_runs(list_runs(database))
        ids = [page.runs.item(r, 0).data(256) for r in range(page.runs.rowCount())]
        page.runs.selectRow(ids.index(first))
        assert page.selected_run_id() == first
        third, _ = record_smoke_run(url)  # listed on top: every row moves down one
        page.show_runs(list_runs(database))
        assert page.selected_run_id() == first
        page.show_runs([r for r in list_runs(database) if r.run_id != first])
        assert page.selected_run_id() is None  # gone from the list: nothing selected
    finally:
        database.close()
