"""Instruments page: power meter and thermometer (driver + address), or the simulated lab's,
with a live 'Test connection' that shows the identity, range and a reading with uncertainty."""

from __future__ import annotations

import threading
from dataclasses import replace

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (QComboBox, QFormLayout, QLabel, QLineEdit, QPushButton,
                               QVBoxLayout)

from app.records import RunConfig
from ui.wizard.base import EntryPage, with_changes
from ui.wizard.connection import (SIMULATED, ConnectionReport, check_power_meter,
                                  check_thermometer, power_drivers,
                                  temperature_drivers)
from ui.wizard.model import EntryError, WizardEntries, check_instruments, check_sut

THERMO_DRIVERS = (SIMULATED, "none")


class _Reports(QObject):
    """Carries a connection report from the probe thread to the GUI thread (queued)."""

    ready = Signal(object, object)  # ConnectionReport (power), ConnectionReport (thermo)


class InstrumentsPage(EntryPage):
    def __init__(self) -> None:
        super().__init__("Instruments", "Power analyzer at the SUT's input and the inlet "
                         "thermometer. 'sim' uses the simulated lab's meters.")
        self.meter_driver = QComboBox()
        self.meter_driver.addItems([SIMULATED, *power_drivers()])
        self.meter_resource = QLineEdit()
        self.meter_resource.setPlaceholderText("VISA resource, e.g. TCPIP::127.0.0.1::10001::"
                                               "SOCKET (not needed for sim)")
        self.thermo_driver = QComboBox()
        self.thermo_driver.addItems([*THERMO_DRIVERS, *temperature_drivers()])
        self.thermo_resource = QLineEdit()
        self.thermo_resource.setPlaceholderText("address (not needed for sim)")
        self.test_button = QPushButton("&Test connection")
        self.test_button.clicked.connect(self.test_connection)
        self.result = QLabel("Not tested yet.")
        self.result.setWordWrap(True)
        self.result.setAccessibleName("Connection test result")
        self._reports = _Reports(self)
        self._reports.ready.connect(self._show_reports)
        self.meter_driver.currentTextChanged.connect(self._driver_changed)
        self.thermo_driver.currentTextChanged.connect(self._driver_changed)
        form = QFormLayout()
        form.addRow("&Power meter driver:", self.meter_driver)
        form.addRow("Power meter &address:", self.meter_resource)
        form.addRow("T&hermometer driver:", self.thermo_driver)
        form.addRow("Thermometer a&ddress:", self.thermo_resource)
        form.addRow("", self.test_button)
        form.addRow("Result:", self.result)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addStretch(1)
        layout.addWidget(self.error)
        self.widgets = {"meter_resource": self.meter_resource,
                        "thermo_resource": self.thermo_resource}
        self._driver_changed()

    def collect(self, e: WizardEntries) -> WizardEntries:
        return with_changes(e, meter_driver=self.meter_driver.currentText(),
                            meter_resource=self.meter_resource.text(),
                            thermo_driver=self.thermo_driver.currentText(),
                            thermo_resource=self.thermo_resource.text())

    def load(self, e: WizardEntries) -> None:
        if self.meter_driver.findText(e.meter_driver) < 0:
            self.meter_driver.addItem(e.meter_driver)
        self.meter_driver.setCurrentText(e.meter_driver)
        self.meter_resource.setText(e.meter_resource)
        if self.thermo_driver.findText(e.thermo_driver) < 0:
            self.thermo_driver.addItem(e.thermo_driver)
        self.thermo_driver.setCurrentText(e.thermo_driver)
        self.thermo_resource.setText(e.thermo_resource)

    def check(self, e: WizardEntries) -> None:
        check_instruments(e)

    def _driver_changed(self) -> None:
        self.meter_resource.setEnabled(self.meter_driver.currentText() != SIMULATED)
        self.thermo_resource.setEnabled(self.thermo_driver.currentText() not in THERMO_DRIVERS)

    # --- connection test --------------------------------------------------------------------
    def test_connection(self) -> None:
        e = self.entries()
        try:
            sut = check_sut(e)  # the simulated meters model the described SUT
            check_instruments(e)
        except EntryError as exc:
            self.show_error(exc.message, exc.field)
            return
        config = replace(RunConfig(), sut=sut)
        self.clear_error()
        self.test_button.setEnabled(False)
        self.result.setText("Testing… (reading the meter once)")
        threading.Thread(target=self._probe, args=(e, config), daemon=True,
                         name="instrument-probe").start()

    def _probe(self, e: WizardEntries, config) -> None:
        power = check_power_meter(e.meter_driver, e.meter_resource.strip(), config,
                                  dict(e.meter_options))
        thermo = check_thermometer(e.thermo_driver, e.thermo_resource.strip(), config)
        self._reports.ready.emit(power, thermo)

    def _show_reports(self, power: ConnectionReport, thermo: ConnectionReport) -> None:
        self.test_button.setEnabled(True)
        mark = {True: "✔", False: "✘"}
        self.result.setText(f"{mark[power.ok]} Power meter: {power.text}\n"
                            f"{mark[thermo.ok]} Thermometer: {thermo.text}")
        self.result.setStyleSheet("" if power.ok and thermo.ok else "color: #c03030;")
        self.last_reports = (power, thermo)
