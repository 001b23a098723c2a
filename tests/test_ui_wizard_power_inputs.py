"""The wizard's power-input table (issue 16, item 1): rows become the run's inputs, a bad row
blocks Next naming it, each row has its own "Test connection", and Repeat keeps the table."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.core.records import PowerInput
from app.station.run_entries import RunEntries, config_from_entries, entries_from_config
from ui.wizard.power_inputs_table import ELEMENT, NAME, RESULT, TEST
from ui.wizard.profiles import SutProfileStore
from ui.wizard.wizard import NewRunWizard

from tests.support.gui import click_next, fill_sut
from tests.support.time_budget import budget_ms
@pytest.fixture
def page(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("STORWATT_DATA_DIR", str(tmp_path / "data"))
    w = NewRunWizard(entries=RunEntries(method="smoke"), simulated_lab="sim",
                     store=SutProfileStore(tmp_path / "profiles.json"))
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    click_next(qtbot, w)
    fill_sut(qtbot, w)
    click_next(qtbot, w)
    click_next(qtbot, w)
    assert w.currentPage() is w.instruments_page
    yield w.instruments_page  # the wizard stays alive (it owns the page) until the test ends
    del w


def test_rows_become_the_runs_inputs_and_each_row_tests_its_own_meter(qtbot, page) -> None:
    table = page.power_inputs
    table.add_row(PowerInput("psu-a", "sim", "wt310"))
    table.add_row(PowerInput("shelf", "sim", "wt333e", wiring="3P4W"))
    config = config_from_entries(page.entries())
    assert config.power_inputs == (PowerInput("psu-a", "sim", "wt310"),
                                   PowerInput("shelf", "sim", "wt333e", wiring="3P4W"))
    qtbot.mouseClick(table.table.cellWidget(1, TEST), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: table.table.item(1, RESULT).text().startswith(("✔", "✘")),
                    timeout=budget_ms(15_000))
    result = table.table.item(1, RESULT).text()
    assert result.startswith("✔") and "WT333E" in result, result
    assert table.table.item(0, RESULT).text() == "Not tested yet."
    assert entries_from_config(config).power_inputs == config.power_inputs  # Repeat keeps them


def test_a_bad_row_blocks_next_naming_the_row(qtbot, page) -> None:
    table = page.power_inputs
    table.add_row(PowerInput("psu-a", "sim"))
    table.add_row(PowerInput("psu-a", "sim"))
    assert not page.validatePage() and "'psu-a' is listed twice" in page.error.text()
    table.table.item(1, NAME).setText("psu-b")
    table.table.item(1, ELEMENT).setText("zero")
    assert not page.validatePage() and "row 2: element 'zero'" in page.error.text()
    table.table.item(1, ELEMENT).setText("")
    table.add_row(PowerInput("psu-c", "wt300"))
    assert not page.validatePage() and "psu-c: enter the meter's address" in page.error.text()


def test_a_test_that_raises_says_so_and_can_be_run_again(qtbot, page, monkeypatch) -> None:
    """Issue 31: a probe that raised (rather than reporting) died on its thread: "Testing…"
    and a disabled Test button stayed for ever. Now the failure arrives (``ui.widgets.worker``)."""
    def broken(*_args):
        raise RuntimeError("driver bug: no reply parser")

    monkeypatch.setattr("ui.wizard.instruments_page.check_lab_instruments", broken)
    monkeypatch.setattr("ui.wizard.power_inputs_table.check_power_input", broken)
    qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(page.test_button.isEnabled, timeout=budget_ms(5000))
    assert "could not run: RuntimeError: driver bug" in page.result.text()
    assert page.verdict() == ""  # not passed
    table = page.power_inputs
    table.add_row(PowerInput("psu-a", "sim", "wt310"))
    qtbot.mouseClick(table.table.cellWidget(0, TEST), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: table.table.item(0, RESULT).text() != "Testing…",
                    timeout=budget_ms(5000))
    assert table.table.item(0, RESULT).text() == ("✘ the test could not run: RuntimeError: "
                                                  "driver bug: no reply parser")
