"""The driver drop-downs say what each driver speaks to (issue 41, seen 5: bare ids): every
registry id in the instruments page's and the power-input table's lists is drawn with its
models; the items the page reads stay the ids."""

from __future__ import annotations

from PySide6.QtCore import QLocale

from drivers.meters.registry import POWER_DRIVERS, TEMPERATURE_DRIVERS
from ui.wizard.driver_labels import DriverLabels, driver_label
from ui.wizard.instruments_page import InstrumentsPage


def shown(choice) -> list[str]:
    delegate = choice.itemDelegate()
    assert isinstance(delegate, DriverLabels)
    return [delegate.displayText(choice.itemText(i), QLocale()) for i in range(choice.count())]


def test_every_driver_in_the_lists_names_its_models(qtbot) -> None:
    page = InstrumentsPage()
    qtbot.addWidget(page)
    meters, thermometers = shown(page.meter_driver), shown(page.thermo_driver)
    for driver, cls in POWER_DRIVERS.items():
        assert f"{driver} — {', '.join(cls.MODELS)}" in meters
    for driver, cls in TEMPERATURE_DRIVERS.items():
        assert f"{driver} — {', '.join(cls.MODELS)}" in thermometers
    assert "sim — the simulated lab's instrument" in meters
    assert page.meter_driver.itemText(0) == "sim"  # what the page reads: the id
    row = page.power_inputs.add_row()
    row_choice = page.power_inputs.table.cellWidget(row, 1)
    assert all(" — " in label for label in shown(row_choice))


def test_an_unknown_id_is_shown_as_it_is() -> None:
    assert driver_label("lab-custom") == "lab-custom"


def test_every_power_input_column_has_a_heading(qtbot) -> None:
    """Issue 41, seen 5: the test-button column had no heading."""
    page = InstrumentsPage()
    qtbot.addWidget(page)
    table = page.power_inputs.table
    assert all(table.horizontalHeaderItem(c).text().strip() for c in range(table.columnCount()))
