"""SUT page: who and what is tested — identity, raw capacity (decimal GB/TB, stored in
bytes), drives, RAID, supply and ASHRAE class (every sample is checked against them),
each COM available and/or on during the test, notes — with saved profiles to reuse."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QLocale
from PySide6.QtWidgets import (QComboBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel,
                               QLineEdit, QPlainTextEdit, QPushButton, QSpinBox, QVBoxLayout)

from app.method.loader import all_methods
from app.core.records import SutDescription
from app.station.sut_file import SutFileError, load_sut_file, save_sut_file
from ui.wizard.base import EntryPage, with_changes
from ui.wizard.com_choices import ComChoices
from app.station.run_entries import (CAPACITY_UNITS, DRIVE_TYPES, RAID_LEVELS, EntryError,
                                     RunEntries, check_coms, check_sut, sut_entries)
from ui.wizard.profiles import ProfileStoreError, SutProfileStore


SUT_FILE_FILTER = "SUT description (*.json);;All files (*)"


def declared_com_choices() -> dict[str, str]:
    """COM id → title, from every installed method (they share the Emerald list)."""
    choices: dict[str, str] = {}
    for method in all_methods().values():
        for com in method.coms:
            choices.setdefault(com.id, com.title)
    return choices


def site_choices() -> tuple[dict[str, str], dict[str, str]]:
    """(supply id → description, ASHRAE class → allowable range), from the installed methods:
    the SUT declares both, and the run checks every sample against them."""
    supplies: dict[str, str] = {}
    classes: dict[str, str] = {}
    for method in all_methods().values():
        for r in method.instruments.voltage_ranges:
            supplies.setdefault(r.id, r.describe())
        for c in method.instruments.inlet_classes:
            classes.setdefault(c.name, f"{c.min_c:g}–{c.max_c:g} °C allowable inlet")
    return supplies, classes


def _choice_box(choices: dict[str, str], name: str) -> QComboBox:
    box = QComboBox()
    for key, text in choices.items():
        box.addItem(f"{key} — {text}", key)
    box.setAccessibleName(name)
    return box


def _buddy(text: str, widget) -> QLabel:
    """A row label whose mnemonic focuses ``widget`` (rows holding a layout have no buddy)."""
    label = QLabel(text)
    label.setBuddy(widget)
    return label


class SutPage(EntryPage):
    def __init__(self, store: SutProfileStore | None = None) -> None:
        super().__init__("System under test", "Describe the storage system as it is configured "
                         "for this test. Capacity is decimal: 1 GB = 10⁹ bytes.")
        self.store = store or SutProfileStore()
        self.profile_choice = QComboBox()
        self.profile_choice.setAccessibleName("Saved SUT profile")
        self.load_button = QPushButton("&Load profile")
        self.load_button.clicked.connect(self.load_selected_profile)
        self.profile_name = QLineEdit()
        self.profile_name.setPlaceholderText("name for this SUT profile")
        self.save_button = QPushButton("Save as ne&w profile")
        self.save_button.clicked.connect(self.save_profile)

        self.file_load_button = QPushButton("Load SUT fil&e…")
        self.file_load_button.setToolTip("A SUT description file the lab keeps (JSON; "
                                         "storwatt run --sut takes the same file)")
        self.file_load_button.clicked.connect(self._ask_load_file)
        self.file_save_button = QPushButton("Save SUT f&ile…")
        self.file_save_button.clicked.connect(self._ask_save_file)
        self.vendor = QLineEdit()
        self.model = QLineEdit()
        self.serial = QLineEdit()
        self.firmware = QLineEdit()
        self.psu_count = QSpinBox()
        self.psu_count.setRange(0, 1000)
        self.psu_count.setSpecialValueText("not declared")
        self.psu_count.setAccessibleName("Power supply count")
        self.psu_redundancy = QLineEdit()
        self.psu_redundancy.setPlaceholderText("N+M, e.g. 1+1")
        self.psu_redundancy.setAccessibleName("Power supply redundancy")
        self.psu_nameplate = QLineEdit()
        self.psu_nameplate.setPlaceholderText("e.g. 1600")
        self.psu_nameplate.setAccessibleName("Power supply nameplate watts")
        self.capacity = QLineEdit()
        self.capacity.setPlaceholderText("e.g. 7300, 7300 GB or 7.3 TB")
        self.capacity.setToolTip("A unit typed here (GB, TB, GiB …) wins over the unit box; "
                                 "a decimal comma is fine (7,3 TB).")
        self.capacity_unit = QComboBox()
        self.capacity_unit.addItems(list(CAPACITY_UNITS))
        self.capacity_unit.setAccessibleName("Capacity unit")
        self.drive_count = QSpinBox()
        self.drive_count.setRange(0, 100_000)
        self.drive_count.setValue(1)
        self.drive_type = QComboBox()
        self.drive_type.addItems(list(DRIVE_TYPES))
        self.raid = QComboBox()
        self.raid.setEditable(True)
        self.raid.addItems(list(RAID_LEVELS))
        supplies, classes = site_choices()
        self.supply = _choice_box(supplies, "Supply")
        self.supply.setToolTip("The SUT's nominal supply: every power sample's voltage and "
                               "frequency is checked against it (outside → INVALID)")
        self.ashrae_class = _choice_box(classes, "ASHRAE class")
        self.ashrae_class.setToolTip("The thermal class the SUT is specified for: every inlet "
                                     "reading is checked against its allowable range")
        self.notes = QPlainTextEdit()
        self.notes.setTabChangesFocus(True)  # keyboard-only use: Tab leaves the field
        self.notes.setMaximumHeight(70)
        self.coms = ComChoices(declared_com_choices())
        #: which power input measures which supply: kept from a SUT file or earlier run (the
        #: inputs themselves are named on the instruments page)
        self.input_supplies: tuple[tuple[str, int], ...] = ()

        capacity_row = QHBoxLayout()
        capacity_row.addWidget(self.capacity, 1)
        capacity_row.addWidget(self.capacity_unit)
        profile_row = QHBoxLayout()  # load and save share a row: the COM grid needs it
        profile_row.addWidget(self.profile_choice, 1)
        profile_row.addWidget(self.load_button)
        profile_row.addSpacing(12)
        profile_row.addWidget(self.profile_name, 1)
        profile_row.addWidget(self.save_button)
        form = QFormLayout()
        form.addRow(_buddy("Saved &profiles:", self.profile_choice), profile_row)
        form.addRow("&Vendor:", self.vendor)
        form.addRow("&Model:", self.model)
        form.addRow("&Serial number:", self.serial)
        form.addRow("&Firmware:", self.firmware)
        form.addRow(_buddy("Raw &capacity:", self.capacity), capacity_row)
        form.addRow("&Drive count:", self.drive_count)
        form.addRow("", self.conflict)  # the drives against the maximum configuration
        form.addRow("Drive &type:", self.drive_type)
        form.addRow("&RAID:", self.raid)
        form.addRow("Suppl&y:", self.supply)
        form.addRow("&ASHRAE class:", self.ashrae_class)
        supplies_row = QHBoxLayout()
        for widget, stretch in ((self.psu_count, 0), (QLabel("redundancy"), 0),
                                (self.psu_redundancy, 1), (QLabel("nameplate W each"), 0),
                                (self.psu_nameplate, 1)):
            supplies_row.addWidget(widget, stretch)
        form.addRow(_buddy("Power s&upplies:", self.psu_count), supplies_row)
        file_row = QHBoxLayout()
        file_row.addWidget(self.file_load_button)
        file_row.addWidget(self.file_save_button)
        file_row.addStretch(1)
        form.addRow("SUT file:", file_row)
        form.addRow("N&otes:", self.notes)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.coms)
        layout.addWidget(self.error)
        self.widgets = {"vendor": self.vendor, "model": self.model, "serial": self.serial,
                        "capacity": self.capacity, "drive_count": self.drive_count,
                        "capacity_unit": self.capacity_unit, "coms": self.coms,
                        "psu_count": self.psu_count,
                        "psu_redundancy": self.psu_redundancy,
                        "psu_nameplate_w": self.psu_nameplate, "raid": self.raid,
                        "notes": self.notes, "firmware": self.firmware,
                        "drive_type": self.drive_type}
        self.refresh_profiles()

    # --- entries ----------------------------------------------------------------------------
    def collect(self, e: RunEntries) -> RunEntries:
        on, off = self.coms.declared()
        return with_changes(
            e, vendor=self.vendor.text(), model=self.model.text(), serial=self.serial.text(),
            firmware=self.firmware.text(), psu_count=self.psu_count.value(),
            psu_redundancy=self.psu_redundancy.text(), psu_nameplate_w=self.psu_nameplate.text(),
            input_supplies=self.input_supplies,
            capacity=self.capacity.text(), capacity_unit=self.capacity_unit.currentText(),
            decimal_point=QLocale().decimalPoint(),
            drive_count=self.drive_count.value(), drive_type=self.drive_type.currentText(),
            raid=self.raid.currentText(), notes=self.notes.toPlainText(),
            supply=self.supply.currentData(), ashrae_class=self.ashrae_class.currentData(),
            coms=on, coms_off=off)

    def load(self, e: RunEntries) -> None:
        self.vendor.setText(e.vendor)
        self.model.setText(e.model)
        self.serial.setText(e.serial)
        self.firmware.setText(e.firmware)
        self.psu_count.setValue(e.psu_count)
        self.psu_redundancy.setText(e.psu_redundancy)
        self.psu_nameplate.setText(e.psu_nameplate_w)
        self.input_supplies = e.input_supplies
        self.capacity.setText(e.capacity)
        self.capacity_unit.setCurrentText(e.capacity_unit)
        self.drive_count.setValue(e.drive_count)
        self.drive_type.setCurrentText(e.drive_type)
        self.raid.setCurrentText(e.raid)
        self.supply.setCurrentIndex(max(0, self.supply.findData(e.supply)))
        self.ashrae_class.setCurrentIndex(max(0, self.ashrae_class.findData(e.ashrae_class)))
        self.notes.setPlainText(e.notes)
        unknown = self.coms.show_declared(e.coms, e.coms_off)
        if unknown:  # an earlier run's or profile's COM that no installed method offers
            self.show_error(f"Not carried over: COM {', '.join(unknown)} is offered by no "
                            f"installed method (offered: {', '.join(self.coms.rows)}).")

    def check(self, e: RunEntries) -> None:
        check_coms(self.coms.rows, check_sut(e))  # the review page checks the method's list

    # --- profiles ---------------------------------------------------------------------------
    def refresh_profiles(self) -> None:
        self.profile_choice.clear()
        try:
            names = sorted(self.store.load_all())
        except ProfileStoreError as exc:
            self.show_error(str(exc))
            names = []
        self.profile_choice.addItems(names)
        self.load_button.setEnabled(bool(names))
        self.profile_choice.setEnabled(bool(names))
        if not names:
            self.profile_choice.setPlaceholderText("no saved profiles yet")

    def load_selected_profile(self) -> None:
        name = self.profile_choice.currentText()
        try:
            sut = self.store.load_all()[name]
        except (KeyError, ProfileStoreError) as exc:
            self.show_error(f"cannot load profile {name!r}: {exc}")
            return
        self.clear_error()  # before loading: it may name a COM it could not carry over
        self.load_sut(sut)
        self.profile_name.setText(name)

    def load_sut(self, sut: SutDescription) -> None:
        self.load(with_changes(self.collect(RunEntries()), **sut_entries(sut)))

    # --- the SUT file a lab keeps (app.station.sut_file; storwatt run --sut reads it) -------------
    def load_file(self, path: Path) -> bool:
        try:
            sut = load_sut_file(path)
        except SutFileError as exc:
            self.show_error(str(exc))
            return False
        self.clear_error()
        self.load_sut(sut)
        return True

    def save_file(self, path: Path) -> bool:
        try:
            save_sut_file(path, check_sut(self.collect(RunEntries())))
        except EntryError as exc:
            self.show_error(exc.message, exc.field)
            return False
        except SutFileError as exc:
            self.show_error(str(exc))
            return False
        self.clear_error()
        return True

    def _ask_load_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load SUT description", "",
                                              SUT_FILE_FILTER)
        if path:
            self.load_file(Path(path))

    def _ask_save_file(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save SUT description",
                                              f"{self.serial.text().strip() or 'sut'}.json",
                                              SUT_FILE_FILTER)
        if path:
            self.save_file(Path(path))

    def save_profile(self) -> None:
        try:
            sut = check_sut(self.collect(RunEntries()))
            self.store.save(self.profile_name.text(), sut)
        except EntryError as exc:
            self.show_error(exc.message, exc.field)
            return
        except ProfileStoreError as exc:
            self.show_error(str(exc))
            return
        self.clear_error()
        name = self.profile_name.text().strip()
        self.refresh_profiles()
        self.profile_choice.setCurrentText(name)
