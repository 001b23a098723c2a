"""Issue 27: the history never builds every stored run in Python. With 2,000 runs, opening
the history, filtering, sorting and scrolling to the end build one page of rows each and
issue a bounded number of queries (before: 2,000 rows and a Python pass over them)."""

from __future__ import annotations

from datetime import date

import pytest
from sqlalchemy import event

from app.storage import repository
from app.storage.opening import open_database
from app.storage.history import HistoryFilter
from app.storage.synthetic import fill_history
from ui.history.model import PAGE_ROWS
from ui.history.view import HistoryView

RUNS = 2_000
QUERIES_PER_ACTION = 50  # counts, choice lists, one page with its metrics, QA, verdict facts


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    database = open_database(f"sqlite:///{tmp_path_factory.mktemp('paging') / 'runs.db'}")
    fill_history(database, RUNS)
    yield database
    database.close()


class Cost:
    """Rows built as RunSummary and SQL statements issued since the last ``take``."""

    def __init__(self, database, monkeypatch) -> None:
        self.rows = self.queries = 0
        built = repository._summary

        def counting(*args, **kwargs):
            self.rows += 1
            return built(*args, **kwargs)

        monkeypatch.setattr(repository, "_summary", counting)
        event.listen(database.engine, "before_cursor_execute", self._query)
        self._engine = database.engine

    def _query(self, *_args) -> None:
        self.queries += 1

    def take(self) -> tuple[int, int]:
        taken, self.rows, self.queries = (self.rows, self.queries), 0, 0
        return taken

    def close(self) -> None:
        event.remove(self._engine, "before_cursor_execute", self._query)


def test_open_filter_sort_and_scroll_read_one_page(qtbot, history, monkeypatch) -> None:
    cost = Cost(history, monkeypatch)
    try:
        view = HistoryView(history)
        qtbot.addWidget(view)
        view.resize(1200, 700)
        view.show()
        qtbot.waitExposed(view)
        rows, queries = cost.take()
        assert view.model.rowCount() == RUNS and view.count.text() == f"{RUNS:,} runs"
        assert 0 < rows <= PAGE_ROWS and queries <= QUERIES_PER_ACTION, (rows, queries)
        for wanted in (HistoryFilter(text="acme invalid"),
                       HistoryFilter(statuses=frozenset({"INVALID"})),
                       HistoryFilter(date_from=date(2024, 3, 1), taxonomy="online-3")):
            view.apply_filter(wanted)
            qtbot.wait(1)
            view.table.viewport().repaint()
            rows, queries = cost.take()
            assert 0 < view.model.rowCount() < RUNS
            assert 0 < rows <= PAGE_ROWS and queries <= QUERIES_PER_ACTION, (wanted, rows,
                                                                              queries)
        view.clear_filters()
        view.sort_by("EP_RR", descending=True)
        qtbot.wait(1)
        view.table.viewport().repaint()
        assert view.model.row(0).metric("EP_RR").value >= view.model.row(1).metric("EP_RR").value
        view.table.scrollToBottom()
        qtbot.wait(1)
        view.table.viewport().repaint()
        last = view.model.row(RUNS - 1)
        assert last.metric("EP_RR") is None  # runs without the metric: last
        rows, queries = cost.take()
        assert rows <= 3 * PAGE_ROWS and queries <= 3 * QUERIES_PER_ACTION, (rows, queries)
    finally:
        cost.close()


def test_sqlite_gets_planner_statistics_when_the_history_grew(history) -> None:
    """Without statistics SQLite reads a station's 25 % of the runs and sorts them for one
    page; the history analyses once, and again only when the run count has moved."""
    from app.storage.planner_stats import refresh_statistics

    with history.read() as conn:
        conn.exec_driver_sql("ANALYZE")  # makes sqlite_stat1 exist …
        conn.exec_driver_sql("DELETE FROM sqlite_stat1")  # … and empty
    assert refresh_statistics(history, RUNS)
    with history.read() as conn:
        stat = conn.exec_driver_sql("SELECT stat FROM sqlite_stat1 WHERE tbl = 'runs' "
                                    "AND idx = 'ix_runs_taxonomy'").scalar()
    assert RUNS / 3 <= int(stat.split()[0]) <= RUNS * 3  # an estimate (analysis_limit)
    assert not refresh_statistics(history, RUNS)  # known: nothing to do
    assert refresh_statistics(history, 10 * RUNS)  # the history grew tenfold: analysed again


def test_a_page_that_cannot_be_read_is_said_once(qtbot, history, monkeypatch) -> None:
    from app.storage.errors import StorageError
    from ui.history import model

    view = HistoryView(history)
    qtbot.addWidget(view)
    view.resize(1200, 700)
    view.show()
    qtbot.waitExposed(view)

    def unreadable(*_args):
        raise StorageError("database went away")

    said = []
    view.model.failed.connect(said.append)
    monkeypatch.setattr(model, "run_page", unreadable)
    view.apply_filter(HistoryFilter(text="acme"))  # a new page: read while painting
    for _ in range(2):
        qtbot.wait(1)  # the view lays its rows out, then paints them
        view.table.viewport().repaint()
    assert said == ["database went away"]  # once, not once per cell painted
    assert view.problem.isVisibleTo(view) and "went away" in view.problem.text()
