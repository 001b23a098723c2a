"""QA's run list fits a lab laptop without scrolling sideways (issue 41, seen 2): at 1366×768
and 1280×720 every visible column is within the view, the widest texts elided with their
whole words in the tooltip, and the status reads in brief."""

from __future__ import annotations

import sqlite3

import pytest
from PySide6.QtCore import QSize, Qt

from app.storage.opening import open_database
from app.storage.synthetic import fill_history
from tests.support.laptop_screens import LAPTOPS, laptop_screen, place_on, settle
from ui.history.model import status_in_brief
from ui.history.view import HistoryView
from ui.widgets.column_fit import capped_widths
from ui.widgets.screen_fit import fit_to_screen


@pytest.fixture(scope="module")
def history_url(tmp_path_factory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('fit') / 'h.db'}"
    database = open_database(url)
    fill_history(database, 300)
    database.close()
    with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:  # the longest names a lab
        conn.execute("UPDATE suts SET model = model || ' Enterprise Unified Storage "
                     "Controller Pair with Expansion Shelves' WHERE id % 2 = 0")
        conn.execute("UPDATE stations SET name = name || '-bay-14-left-rack-position-3'")
    return url


@pytest.mark.parametrize("size", LAPTOPS)
def test_the_run_list_fits_the_laptop_without_a_sideways_scroll(history_url: str, size: str,
                                                               qtbot) -> None:
    view = HistoryView(url=history_url)
    qtbot.addWidget(view)
    place_on(view, laptop_screen(size))
    fit_to_screen(view, QSize(1500, 900))  # as the station opens it
    view.show()
    settle()
    table, header = view.table, view.table.horizontalHeader()
    shown = [c for c in range(header.count()) if not header.isSectionHidden(c)]
    assert len(shown) >= 9  # run, status, verdict, QA, SUT, station, started, headline, method
    assert table.horizontalScrollBar().maximum() == 0
    last = shown[-1]
    assert header.sectionViewportPosition(last) + header.sectionSize(last) \
        <= table.viewport().width()
    method = view.model.column_index("Method")
    index = view.model.index(0, method)
    assert index.data(Qt.ItemDataRole.ToolTipRole)  # the whole text, where the cell elides


def test_a_column_shown_from_the_menu_shares_the_width(history_url: str, qtbot) -> None:
    view = HistoryView(url=history_url)
    qtbot.addWidget(view)
    place_on(view, laptop_screen("1366x768"))
    fit_to_screen(view, QSize(1500, 900))
    view.show()
    settle()
    view._show_column(view.model.column_index("Operator"), True)
    settle()
    assert view.table.horizontalScrollBar().maximum() == 0


def test_the_widest_columns_give_way_first() -> None:
    assert capped_widths([50, 300, 100, 700], 2000) == [50, 300, 100, 700]  # fits: as is
    widths = capped_widths([50, 300, 100, 700], 600)
    assert widths == [50, 225, 100, 225] and sum(widths) <= 600
    assert capped_widths([500, 500], 40) == [60, 60]  # never below the narrowest


def test_the_status_in_brief_counts_what_needs_a_look() -> None:
    class Row:
        def __init__(self, text: str) -> None:
            self.status_text = text

    assert status_in_brief(Row("COMPLETED")) == "COMPLETED"
    assert status_in_brief(Row("COMPLETED — 1 metric INVALID, 2 COMs NOT VERIFIED")) == \
        "COMPLETED · 1 INVALID · 2 COM"
    assert status_in_brief(Row("FAILED — 3 metrics INVALID")) == "FAILED · 3 INVALID"
