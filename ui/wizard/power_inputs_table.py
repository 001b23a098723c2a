"""The instruments page's table of power inputs: one row per input of the SUT (name, driver,
address, element, wiring, calibration date and certificate), each with its own "Test connection".

An array's inputs are often read by several meters (two WT310E and a WT333E, method-notes §10),
and a wrong address on one of them should be found before the run, on that row. The test
opens that one input's meter as the run will (``app.labs.builder.open_power_input``) on a worker
(``ui.widgets.worker``) and writes what came back into the row. An empty table means the one meter
above it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QHeaderView, QPushButton, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from app.core.records import WIRINGS, PowerInput, RunConfig
from ui.wizard.driver_labels import describe_drivers
from ui.wizard.connection import (SIMULATED, ConnectionReport, check_power_input, power_drivers,
                                  probe_raised)
from app.station.run_entries import EntryError
from ui.widgets.worker import start_worker

COLUMNS = ("Name", "Driver", "Address (or simulated model)", "Element", "Wiring",
           "Calibrated on", "Certificate", "Test", "Result")
NAME, DRIVER, RESOURCE, ELEMENT, WIRING, CALIBRATION, CERTIFICATE, TEST, RESULT = \
    range(len(COLUMNS))


class PowerInputsTable(QWidget):
    """Rows of :class:`~app.core.records.PowerInput`; ``config`` gives the run configuration a
    row's test opens its meter with (the wizard's current entries). ``changed`` fires when the
    rows a page-level test result belongs to change (:meth:`fingerprint`): a row added, removed
    or edited makes that result stale."""

    changed = Signal()

    def __init__(self, config: Callable[[], RunConfig], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._config = config
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setAccessibleName("Power inputs")
        header = self.table.horizontalHeader()
        for column in range(len(COLUMNS)):  # each header readable; the result takes the rest
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(RESULT, QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeaderItem(CALIBRATION).setToolTip(
            "YYYY-MM-DD, from the calibration certificate (a date after today is refused)")
        self.add_button = QPushButton("&Add power input")
        self.add_button.clicked.connect(lambda: self.add_row())
        self.remove_button = QPushButton("&Remove selected input")
        self.remove_button.clicked.connect(self._remove_selected)
        self.table.itemChanged.connect(
            lambda item: self.changed.emit() if item.column() in (NAME, RESOURCE, ELEMENT)
            else None)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table)
        layout.addLayout(buttons)

    def add_row(self, power_input: PowerInput | None = None) -> int:
        i = power_input or PowerInput(f"psu-{self.table.rowCount() + 1}", SIMULATED)
        row = self.table.rowCount()
        self.table.insertRow(row)
        driver = QComboBox()
        driver.addItems([SIMULATED, *power_drivers()])
        describe_drivers(driver)
        if driver.findText(i.driver) < 0:
            driver.addItem(i.driver)
        driver.setCurrentText(i.driver)
        wiring = QComboBox()
        wiring.addItems(WIRINGS)
        wiring.setCurrentText(i.wiring)
        test = QPushButton("Test connection")
        test.clicked.connect(lambda: self.test_row(self._row_of(test)))
        self.table.setCellWidget(row, DRIVER, driver)
        self.table.setCellWidget(row, WIRING, wiring)
        self.table.setCellWidget(row, TEST, test)
        for choice in (driver, wiring):
            choice.currentTextChanged.connect(lambda _text: self.changed.emit())
        for column, text in ((NAME, i.name), (RESOURCE, i.resource),
                             (ELEMENT, "" if i.element is None else str(i.element)),
                             (CALIBRATION, i.calibration_date),
                             (CERTIFICATE, i.certificate), (RESULT, "Not tested yet.")):
            self.table.setItem(row, column, QTableWidgetItem(text))
        self.changed.emit()
        return row

    def _row_of(self, button: QPushButton) -> int:
        return next(r for r in range(self.table.rowCount())
                    if self.table.cellWidget(r, TEST) is button)

    def _remove_selected(self) -> None:
        for row in sorted({i.row() for i in self.table.selectedIndexes()}, reverse=True):
            self.table.removeRow(row)
        self.changed.emit()

    def load(self, inputs: tuple[PowerInput, ...]) -> None:
        self.table.setRowCount(0)
        for i in inputs:
            self.add_row(i)

    def _text(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        return item.text().strip() if item is not None else ""

    def row_input(self, row: int) -> PowerInput:
        """The input of one row; a bad element is refused naming the row."""
        element_text = self._text(row, ELEMENT)
        if element_text and not (element_text.isdigit() and int(element_text) >= 1):
            raise EntryError("power_inputs", f"Power input row {row + 1}: element "
                             f"{element_text!r} must be a whole number from 1 (or empty).")
        driver = self.table.cellWidget(row, DRIVER)
        wiring = self.table.cellWidget(row, WIRING)
        assert isinstance(driver, QComboBox) and isinstance(wiring, QComboBox)
        return PowerInput(self._text(row, NAME), driver.currentText(),
                          self._text(row, RESOURCE),
                          int(element_text) if element_text else None,
                          wiring.currentText(), self._text(row, CALIBRATION),
                          self._text(row, CERTIFICATE))

    def fingerprint(self) -> str:
        """The rows as typed, unvalidated: a page-level test result belongs to them."""
        return "\n".join("|".join([self._text(r, c) for c in (NAME, RESOURCE, ELEMENT)] + [
            w.currentText() for w in (self.table.cellWidget(r, DRIVER),
                                      self.table.cellWidget(r, WIRING))
            if isinstance(w, QComboBox)]) for r in range(self.table.rowCount()))

    def inputs(self) -> tuple[PowerInput, ...]:
        return tuple(self.row_input(r) for r in range(self.table.rowCount()))

    # --- per-row connection test ---------------------------------------------------------------
    def test_row(self, row: int) -> None:
        """Open, identify and read this row's meter on a worker thread."""
        try:
            config = self._config()
            name = self.row_input(row).name
        except EntryError as exc:  # entries that cannot make a run: say what to fix
            self.table.item(row, RESULT).setText(f"✘ {exc.message}")
            return
        self.table.item(row, RESULT).setText("Testing…")
        start_worker(partial(check_power_input, config, name), owner=self,
                     name=f"power-input-probe-{name}",
                     on_finished=partial(self._show_report, name),
                     on_errored=lambda exc: self._show_report(name, probe_raised(exc)))

    def _show_report(self, name: str, report: ConnectionReport) -> None:
        for row in range(self.table.rowCount()):
            if self._text(row, NAME) == name:
                self.table.item(row, RESULT).setText(("✔ " if report.ok else "✘ ") + report.text)
                self.table.item(row, RESULT).setToolTip(report.text)
