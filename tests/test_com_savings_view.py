"""The COM savings view in the history: the seed's RAID 1 → RAID 5 example from two stored
runs, the OPEX rate edited live, baseline and optimised swapped, a missing figure named."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QApplication, QWidget

from app.storage.opening import open_database
from tools.com_savings_shot import store_seed_runs
from ui.history.view import HistoryView


def _view(tmp_path: Path):
    app = QApplication.instance() or QApplication([])
    database = open_database(f"sqlite:///{tmp_path / 'h.db'}")
    base, opt = store_seed_runs(database)
    history = HistoryView(database)
    return app, database, history, base, opt


def test_seed_example_opens_from_two_selected_runs(tmp_path: Path) -> None:
    app, database, history, base, opt = _view(tmp_path)
    history.table.selectAll()
    app.processEvents()
    assert history.savings_button.isEnabled() and not history.open_button.isEnabled()
    view = history.savings(base, opt)
    # an attribute named like a Qt method (``metric``) hides it from Qt itself: painting the
    # view asked the metric combo box for the device metrics and killed the process (SIGSEGV)
    shadowed = sorted(name for name in vars(view) if hasattr(QWidget, name)
                      and not isinstance(getattr(QWidget, name), Signal))  # PySide binds those
    assert shadowed == [], f"attributes hiding QWidget methods: {shadowed}"
    assert not view.grab().isNull()  # a real paint of the whole view
    rows = {r[0]: r[1:] for r in view.rows()}
    assert rows["Capacity per idle watt (GB/W)"] == ("15.25", "23.02", "+51 %")
    assert rows["IOs per active watt (IO/W)"] == ("11.49", "7.75", "-33 %")
    assert rows["OPEX saved (tested system)"] == ("$497/month",)
    view.opex.setValue(10_000)  # the site's own rate: 934 W at $1 per W-month
    assert {r[0]: r[1:] for r in view.rows()}["OPEX saved (tested system)"] == ("$934/month",)
    view.base_enclosures.setValue(2)
    assert {r[0]: r[1:] for r in view.rows()}["CAPEX saved (tested system)"] == ("$34,517",)
    xlsx, pdf = view.export(tmp_path)
    sheet = openpyxl.load_workbook(xlsx)["COM savings"]
    gbw = next(r for r in sheet.iter_rows(values_only=True) if r[0] == "Capacity per idle "
               "watt (GB/W)")
    assert gbw[1] == pytest.approx(36_000 / 2360, rel=1e-9) and pdf.read_bytes().startswith(b"%PDF")
    view.swap()
    assert {r[0]: r[1:] for r in view.rows()}["Capacity per idle watt (GB/W)"][2] == "-34 %"
    history.close()
    database.close()


def test_a_missing_metric_is_named_and_export_disabled(tmp_path: Path) -> None:
    app, database, history, base, opt = _view(tmp_path)
    view = history.savings(base, opt)
    view.active_metric.addItem("EP_OLTP")
    view.active_metric.setCurrentText("EP_OLTP")
    assert not view.problem.isHidden()
    assert "run 5eed0001 has no EP_OLTP (its metrics: EP_MW1, EP_RI)" in view.problem.text()
    assert not view.export_button.isEnabled() and view.rows() == []
    history.close()
    database.close()
