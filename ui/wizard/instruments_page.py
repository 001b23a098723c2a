"""Instruments page: power meter and thermometer (driver + address), or the simulated lab's,
with a live 'Test connection' that shows the identity, range and a reading with uncertainty.

The test opens the meters exactly as the run will (``app.labs.builder.open_lab_meters``), its result
belongs to the settings it tested (changing a driver or address clears it), and Next needs a
passed test or an explicit override that the run's configuration records."""

from __future__ import annotations

import html
from functools import partial

from PySide6.QtWidgets import (QCheckBox, QComboBox, QFormLayout, QLabel, QLineEdit,
                               QPushButton, QVBoxLayout)

from app.core.records import RunConfig
from app.station.instrument_profile import StationProfile, StationProfileError
from ui.wizard.base import EntryPage, with_changes
from ui.wizard.driver_labels import describe_drivers
from ui.wizard.connection import (SIMULATED, ConnectionReport, check_lab_instruments,
                                  driver_models, power_drivers, temperature_drivers,
                                  probe_raised)
from ui.wizard.power_inputs_table import PowerInputsTable
from ui.widgets.worker import start_worker
from app.station.run_entries import (EntryError, RunEntries, check_instruments, check_power_inputs,
                                     check_instruments_tested, config_from_entries)

THERMO_DRIVERS = (SIMULATED, "none")
NOT_TESTED = "Not tested yet."


def _calibration_fields() -> tuple[QLineEdit, QLineEdit]:
    """A calibration date and certificate reference field pair."""
    when, certificate = QLineEdit(), QLineEdit()
    when.setPlaceholderText("YYYY-MM-DD, from the calibration certificate")
    certificate.setPlaceholderText("certificate number (optional)")
    return when, certificate


class InstrumentsPage(EntryPage):
    def __init__(self) -> None:
        super().__init__("Instruments", "Power analyzer at the SUT's input and the inlet "
                         "thermometer. 'sim' uses the simulated lab's meters.")
        self.meter_driver = QComboBox()
        self.meter_driver.addItems([SIMULATED, *power_drivers()])
        describe_drivers(self.meter_driver)
        self.meter_resource = QLineEdit()
        self.meter_resource.setPlaceholderText("VISA resource, e.g. TCPIP::127.0.0.1::10001::"
                                               "SOCKET (not needed for sim)")
        self.thermo_driver = QComboBox()
        self.thermo_driver.addItems([*THERMO_DRIVERS, *temperature_drivers()])
        describe_drivers(self.thermo_driver)
        self.thermo_resource = QLineEdit()
        self.thermo_resource.setPlaceholderText("address (not needed for sim)")
        #: each instrument's calibration, as on its certificate (a later date is refused)
        self.meter_calibration, self.meter_certificate = _calibration_fields()
        self.thermo_calibration, self.thermo_certificate = _calibration_fields()
        self.test_button = QPushButton("&Test connection")
        self.test_button.clicked.connect(self.test_connection)
        self.result = QLabel(NOT_TESTED)
        self.result.setWordWrap(True)
        self.result.setAccessibleName("Connection test result")
        self.override = QCheckBox("Continue &without a passed test (recorded with the run)")
        self.override.setToolTip("For an instrument that cannot be reached from here yet: the "
                                 "run's configuration and report say it was not tested.")
        #: what the last passed test says, for the settings it tested
        self.passed: tuple[tuple[str, ...], str] | None = None
        #: the last test's settings and what it found, passed or not (an override records it)
        self.tested: tuple[tuple[str, ...], str] | None = None
        self.meter_driver.currentTextChanged.connect(self._driver_changed)
        self.thermo_driver.currentTextChanged.connect(self._driver_changed)
        for field in (self.meter_driver, self.thermo_driver):
            field.currentTextChanged.connect(self._settings_changed)
        for field in (self.meter_resource, self.thermo_resource):
            field.textChanged.connect(self._settings_changed)
            field.editingFinished.connect(self.fill_known_calibration)
        for box in (self.meter_driver, self.thermo_driver):
            box.currentTextChanged.connect(lambda _text: self.fill_known_calibration())
        # the models each driver id speaks to, on the page (an id alone means nothing to a
        # technician holding a meter; the list's tooltips say it too)
        self.meter_models, self.thermo_models = QLabel(), QLabel()
        for label in (self.meter_models, self.thermo_models):
            label.setWordWrap(True)
            label.setStyleSheet("color: palette(mid);")
        form = QFormLayout()
        form.addRow("&Power meter driver:", self.meter_driver)
        form.addRow("", self.meter_models)
        form.addRow("Power meter addr&ess:", self.meter_resource)
        form.addRow("Power meter calibrated on:", self.meter_calibration)
        form.addRow("Power meter certificate:", self.meter_certificate)
        self.power_inputs = PowerInputsTable(self._row_config)
        # a row added or edited after a passed test: the result no longer says "passed"
        self.power_inputs.changed.connect(self._settings_changed)
        self._table_error: EntryError | None = None
        form.addRow("Power &inputs (several\nmeters or elements;\nempty: the meter above):",
                    self.power_inputs)
        form.addRow("T&hermometer driver:", self.thermo_driver)
        form.addRow("", self.thermo_models)
        form.addRow("Thermometer a&ddress:", self.thermo_resource)
        form.addRow("Thermometer calibrated on:", self.thermo_calibration)
        form.addRow("Thermometer certificate:", self.thermo_certificate)
        form.addRow("", self.test_button)
        form.addRow("Result:", self.result)
        form.addRow("", self.override)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addStretch(1)
        layout.addWidget(self.error)
        self.widgets = {"meter_resource": self.meter_resource,
                        "power_inputs": self.power_inputs,
                        "thermo_resource": self.thermo_resource,
                        "meter_calibration": self.meter_calibration,
                        "meter_certificate": self.meter_certificate,
                        "thermo_calibration": self.thermo_calibration,
                        "thermo_certificate": self.thermo_certificate,
                        "test_connection": self.test_button}
        self._driver_changed()

    def collect(self, e: RunEntries) -> RunEntries:
        try:  # a bad table row is reported by check(), naming the row
            inputs, self._table_error = self.power_inputs.inputs(), None
        except EntryError as exc:
            inputs, self._table_error = e.power_inputs, exc
        # the simulated meters and "no thermometer" have no address: a switched driver never
        # carries the old one into the review or the run ("sim TCPIP::…")
        return with_changes(e, meter_driver=self.meter_driver.currentText(),
                            meter_resource=self._address(self.meter_resource),
                            thermo_driver=self.thermo_driver.currentText(),
                            thermo_resource=self._address(self.thermo_resource),
                            meter_calibration=self.meter_calibration.text(),
                            meter_certificate=self.meter_certificate.text(),
                            thermo_calibration=self.thermo_calibration.text(),
                            thermo_certificate=self.thermo_certificate.text(),
                            power_inputs=inputs,
                            instrument_check=self.verdict())

    def _takes_address(self, field: QLineEdit) -> bool:
        """Whether the driver of ``field`` needs an address (not the simulated meters, not
        "no thermometer")."""
        if field is self.meter_resource:
            return self.meter_driver.currentText() != SIMULATED
        return self.thermo_driver.currentText() not in THERMO_DRIVERS

    def _address(self, field: QLineEdit) -> str:
        """The typed address, or none for a driver that takes none (the field is disabled but
        keeps the text, should the technician switch back)."""
        return field.text().strip() if self._takes_address(field) else ""

    def settings(self) -> tuple[str, ...]:
        """The instrument settings a test result belongs to."""
        return (self.meter_driver.currentText(), self._address(self.meter_resource),
                self.thermo_driver.currentText(), self._address(self.thermo_resource),
                self.power_inputs.fingerprint())

    def verdict(self) -> str:
        """What the run records: the passed test, the operator's override, or nothing."""
        if self.passed is not None and self.passed[0] == self.settings():
            return f"passed: {self.passed[1]}"
        if self.override.isChecked():
            tested = (self.tested[1] if self.tested is not None
                      and self.tested[0] == self.settings() else "not tested with these settings")
            # what the test found stays with the override (issue 41: the review's line
            # dropped the failure the technician overrode)
            return f"OVERRIDE: the operator continued without a passed connection test ({tested})"
        return ""

    def _settings_changed(self) -> None:
        """A result describes the settings it tested; any change makes it stale."""
        if self.passed is not None or self.result.text() != NOT_TESTED:
            self.passed = None
            self.result.setText(NOT_TESTED)
            self.result.setStyleSheet("")

    def load(self, e: RunEntries) -> None:
        if self.meter_driver.findText(e.meter_driver) < 0:
            self.meter_driver.addItem(e.meter_driver)
        self.meter_driver.setCurrentText(e.meter_driver)
        self.meter_resource.setText(e.meter_resource)
        if self.thermo_driver.findText(e.thermo_driver) < 0:
            self.thermo_driver.addItem(e.thermo_driver)
        self.thermo_driver.setCurrentText(e.thermo_driver)
        self.thermo_resource.setText(e.thermo_resource)
        self.meter_calibration.setText(e.meter_calibration)
        self.meter_certificate.setText(e.meter_certificate)
        self.thermo_calibration.setText(e.thermo_calibration)
        self.thermo_certificate.setText(e.thermo_certificate)
        self.power_inputs.load(e.power_inputs)

    def _row_config(self) -> RunConfig:
        """The run configuration a row's test opens its input with."""
        return config_from_entries(self.entries())

    def check(self, e: RunEntries) -> None:
        if self._table_error is not None:
            raise self._table_error
        check_power_inputs(e.power_inputs)
        check_instruments(e)
        check_instruments_tested(e)

    def _driver_changed(self) -> None:
        for field in (self.meter_resource, self.thermo_resource):
            field.setEnabled(self._takes_address(field))
        for choice, label in ((self.meter_driver, self.meter_models),
                              (self.thermo_driver, self.thermo_models)):
            models = driver_models(choice.currentText())
            label.setText(f"speaks to: {models}" if models else "")
            label.setVisible(bool(models))

    def fill_known_calibration(self) -> None:
        """An empty calibration date of an instrument the station knows (same driver and
        address, ``app.station.instrument_profile``) is filled in, visibly, for the technician to
        check."""
        try:
            profile = StationProfile()
            pairs = ((self.meter_driver, self.meter_resource, self.meter_calibration,
                      self.meter_certificate),
                     (self.thermo_driver, self.thermo_resource, self.thermo_calibration,
                      self.thermo_certificate))
            for driver, resource, when, certificate in pairs:
                known = profile.known(driver.currentText(), resource.text())
                if known is not None and not when.text().strip():
                    when.setText(known.calibration_date)
                    if not certificate.text().strip():
                        certificate.setText(known.certificate)
        except StationProfileError as exc:
            self.show_error(str(exc))

    # --- connection test --------------------------------------------------------------------
    def test_connection(self) -> None:
        try:  # the run's own configuration: same lab kind, drivers, resources and SUT model
            config = config_from_entries(self.entries())
        except EntryError as exc:
            self.show_error(exc.message, exc.field)
            return
        self.clear_error()
        self.test_button.setEnabled(False)
        self.result.setText("Testing… (opening the meters as the run will, reading once)")
        self.result.setStyleSheet("")
        settings = self.settings()
        start_worker(partial(check_lab_instruments, config), owner=self,
                     name="instrument-probe",
                     on_finished=lambda reports: self._show_reports(settings, *reports),
                     on_errored=partial(self._show_probe_failure, settings))

    def _show_probe_failure(self, settings: tuple[str, ...], exc: Exception) -> None:
        """The test itself failed (a driver raising what it should have reported): both
        instruments untested, the reason on the page."""
        self._show_reports(settings, probe_raised(exc), ConnectionReport(False, "not tested"))

    def _show_reports(self, settings: tuple[str, ...], power: ConnectionReport,
                      thermo: ConnectionReport) -> None:
        self.test_button.setEnabled(True)
        if settings != self.settings():
            return  # the technician changed a setting while the test ran: it is stale
        # each line in its own colour: a passing thermometer is not red beside a failed meter
        self.result.setText("<br>".join(
            f"<span style='color:{'#287a46' if r.ok else '#c03030'}'>{'✔' if r.ok else '✘'} "
            f"{what}: {html.escape(r.text)}</span>"
            for what, r in (("Power meter", power), ("Thermometer", thermo))))
        self.result.setStyleSheet("")
        self.passed = ((settings, f"power meter {power.text}; thermometer {thermo.text}")
                       if power.ok and thermo.ok else None)
        self.tested = (settings, "; ".join(
            f"{what} {'passed' if r.ok else 'FAILED'}: {r.text}"
            for what, r in (("power meter", power), ("thermometer", thermo))))
        self.last_reports = (power, thermo)
