"""Workload page: where the IO comes from (simulated lab, fio on this station, or fio load
hosts), the targets with their safety check, and the test method or abbreviated variant."""

from __future__ import annotations

import shutil
from collections.abc import Sequence

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QButtonGroup, QComboBox, QFileDialog, QFormLayout, QHBoxLayout,
                               QLabel, QLineEdit, QListWidget, QPlainTextEdit, QPushButton,
                               QRadioButton, QVBoxLayout, QWidget)

from app.rules.compliance import assess_method
from app.method.loader import MethodError, all_methods, load_method_file
from app.method.model import Method
from ui.wizard.base import EntryPage, with_changes
from app.station.run_entries import RunEntries, check_targets, check_workload
from app.labs.target_safety import target_safety

MODES = (("simulated", "&Simulated lab (built-in simulated SUT and meters)"),
         ("local-fio", "Local &fio on this station against the targets below"),
         ("load-hosts", "fio &load hosts (fio --server on each host)"))


class AddLineEdit(QLineEdit):
    """A line whose Enter adds its text to a list, and does not also press the wizard's
    default button (QLineEdit passes Enter on to the dialog)."""

    def keyPressEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        super().keyPressEvent(event)
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            event.accept()


def method_label(m: Method, path: str = "") -> str:
    """Name, version, where it was loaded from and the verdict on its numbers (derived,
    never the file's ``compliant`` claim)."""
    where = f"  ({path})" if path else ""
    return f"{m.name} {m.version}{where}  — method numbers {assess_method(m).label}"


class WorkloadPage(EntryPage):
    """``protected``: the station's own files (``app.core.protected``), refused as targets here
    exactly as the run refuses them."""

    def __init__(self, simulated_lab: str = "sim", protected: Sequence[str] = ()) -> None:
        super().__init__("Workload", "Choose where the IO runs and which method to follow.")
        self.simulated_lab = simulated_lab
        self.protected = tuple(protected)
        self.mode_group = QButtonGroup(self)
        self.mode_buttons: dict[str, QRadioButton] = {}
        modes = QVBoxLayout()
        for key, text in MODES:
            button = QRadioButton(text)
            self.mode_group.addButton(button)
            self.mode_buttons[key] = button
            modes.addWidget(button)
            button.toggled.connect(self._mode_changed)
        fio = shutil.which("fio")
        self.fio_status = QLabel(f"fio found: {fio}" if fio else
                                 "fio not found on PATH: local fio runs are not possible")

        self.targets = QListWidget()
        self.targets.setAccessibleName("Targets")
        self.targets.setMaximumHeight(90)
        self.target_entry = AddLineEdit()
        self.target_entry.setPlaceholderText("/path/to/scratch-file or /dev/sdX, then Add")
        self.target_entry.returnPressed.connect(self.add_target)
        self.add_button = QPushButton("&Add target")
        self.add_button.clicked.connect(self.add_target)
        self.remove_button = QPushButton("&Remove")
        self.remove_button.clicked.connect(self.remove_target)
        self.target_size = QLineEdit("")
        self.target_size.setPlaceholderText("e.g. 64M, only to create a missing target")
        self.target_size.setToolTip("size of the scratch file the station creates for a target "
                                    "that does not exist yet: 64M, 1G (fio's binary multiples), "
                                    "10 GB (decimal, as the capacity), 10 GiB (binary); "
                                    "empty: a missing target is refused")
        self.confirm_device = QLineEdit()
        self.confirm_device.setPlaceholderText("type a block device's or existing file's path "
                                               "to allow overwriting it (several: a,b)")
        for entry in (self.target_size, self.confirm_device):
            entry.textChanged.connect(lambda _t: self._show_safety(
                self.targets.currentItem().text() if self.targets.currentItem() else ""))
        self.safety = QLabel("")
        self.safety.setWordWrap(True)
        self.safety.hide()
        self.targets.currentTextChanged.connect(self._show_safety)
        self.hosts = QPlainTextEdit()
        self.hosts.setTabChangesFocus(True)
        self.hosts.setPlaceholderText("one host[:port] per line (default port 8765)")
        self.hosts.setMaximumHeight(60)

        self.methods = all_methods()
        self.method = QComboBox()
        ordered = sorted(self.methods.values(),
                         key=lambda m: (not assess_method(m).compliant, m.name))
        for m in ordered:
            self.method.addItem(method_label(m), m.name)
        self.method.setToolTip("a shipped method, or a lab's method file added with Browse…")
        self.browse_button = QPushButton("Bro&wse…")
        self.browse_button.setToolTip("use a method file (a lab variant: base = "
                                      "\"emerald-block-v3\" or a file beside it)")
        self.browse_button.clicked.connect(self.browse_method)
        self.method_note = QLabel("")
        self.method_note.setWordWrap(True)
        self.method.currentIndexChanged.connect(self._method_changed)

        target_row = QHBoxLayout()
        target_row.addWidget(self.target_entry, 1)
        target_row.addWidget(self.add_button)
        target_row.addWidget(self.remove_button)
        self.target_box = QWidget()
        tb = QVBoxLayout(self.target_box)
        tb.setContentsMargins(0, 0, 0, 0)
        tb.addWidget(self.targets)
        tb.addLayout(target_row)
        options = QFormLayout()
        options.addRow("Scratch file si&ze:", self.target_size)
        options.addRow("Confirm tar&get:", self.confirm_device)
        tb.addLayout(options)
        tb.addWidget(self.safety)
        form = QFormLayout()
        form.addRow("IO source:", modes)
        form.addRow("", self.fio_status)
        form.addRow("&Targets:", self.target_box)
        form.addRow("Load &hosts:", self.hosts)
        method_row = QHBoxLayout()
        method_row.addWidget(self.method, 1)
        method_row.addWidget(self.browse_button)
        method_caption = QLabel("&Method:")  # a row holding a layout gets no buddy by itself:
        method_caption.setBuddy(self.method)  # the & showed literally, Alt+M did nothing
        form.addRow(method_caption, method_row)
        form.addRow("", self.method_note)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addStretch(1)  # spare height below the form, not between its rows
        layout.addWidget(self.error)
        self.widgets = {"targets": self.target_entry, "load_hosts": self.hosts,
                        "method": self.method}
        self.mode_buttons["simulated"].setChecked(True)
        self._method_changed()

    # --- entries ----------------------------------------------------------------------------
    def mode(self) -> str:
        return next(k for k, b in self.mode_buttons.items() if b.isChecked())

    def collect(self, e: RunEntries) -> RunEntries:
        return with_changes(
            e, workload_mode=self.mode(), simulated_lab=self.simulated_lab,
            targets=tuple(self.targets.item(i).text() for i in range(self.targets.count())),
            target_size=self.target_size.text().strip(),
            confirm_device=self.confirm_device.text().strip(),
            load_hosts=tuple(h for h in self.hosts.toPlainText().splitlines() if h.strip()),
            method=self.method.currentData() or "")

    def load(self, e: RunEntries) -> None:
        self.mode_buttons.get(e.workload_mode, self.mode_buttons["simulated"]).setChecked(True)
        self.simulated_lab = e.simulated_lab
        self.targets.clear()
        self.targets.addItems(list(e.targets))
        self.target_size.setText(e.target_size)
        self.confirm_device.setText(e.confirm_device)
        self.hosts.setPlainText("\n".join(e.load_hosts))
        self.select_method(e.method)

    def check(self, e: RunEntries) -> None:
        check_workload(e)
        check_targets(e, self.protected)

    def select_method(self, name: str) -> None:
        """Select a shipped method by name, or a method file by path (added if new)."""
        index = self.method.findData(name)
        if index < 0 and name.endswith(".toml"):
            self.add_method_file(name)
            return
        if index >= 0:
            self.method.setCurrentIndex(index)

    def browse_method(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Method file", "",
                                              "Method files (*.toml);;All files (*)")
        if path:
            self.add_method_file(path)

    def add_method_file(self, path: str) -> bool:
        """Load ``path`` with the run's own loader and offer it; a file that does not load
        stays out of the list and the note shows why (file, key, reason)."""
        try:
            method = load_method_file(Path(path))
        except MethodError as exc:
            self.method_note.setText(f"This method file cannot be used:\n{exc}")
            self.method_note.setStyleSheet("color: #c03030;")
            return False
        key = str(Path(path))
        self.methods[key] = method
        index = self.method.findData(key)
        if index < 0:
            self.method.addItem(method_label(method, key), key)
            index = self.method.count() - 1
        self.method.setCurrentIndex(index)
        self._method_changed()
        return True

    def selected_method(self) -> Method | None:
        return self.methods.get(self.method.currentData() or "")

    # --- reactions --------------------------------------------------------------------------
    def add_target(self) -> None:
        path = self.target_entry.text().strip()
        if not path:
            return
        self.targets.addItem(path)
        self.targets.setCurrentRow(self.targets.count() - 1)
        self.target_entry.clear()

    def remove_target(self) -> None:
        row = self.targets.currentRow()
        if row >= 0:
            self.targets.takeItem(row)
            # a refusal of the removed target must not stay on screen beside the others
            self.clear_error()
            current = self.targets.currentItem()
            self._show_safety(current.text() if current is not None else "")

    def _show_safety(self, path: str) -> None:
        if self.mode() == "load-hosts":  # a path on the hosts, not on this station
            path = ""
        verdict = target_safety(path, self.target_size.text().strip(),
                                self.confirm_device.text().strip(),
                                self.protected) if path else None
        self.safety.setText(verdict.text if verdict else "")
        self.safety.setStyleSheet("" if verdict is None or verdict.ok else "color: #c03030;")
        self.safety.setVisible(verdict is not None)

    def _mode_changed(self) -> None:
        mode = self.mode() if any(b.isChecked() for b in self.mode_buttons.values()) else ""
        self.target_box.setEnabled(mode in ("local-fio", "load-hosts"))
        self.hosts.setEnabled(mode == "load-hosts")

    def _method_changed(self) -> None:
        m = self.selected_method()
        if m is None:
            return
        verdict = assess_method(m)
        text = m.title
        if not verdict.compliant:
            text = (f"NON-COMPLIANT: {m.title}. Its numbers do not meet the method's minimums "
                    f"({verdict.summary().removeprefix('NON-COMPLIANT: ')}); its figures are "
                    "not Emerald results, whatever the file claims.")
        self.method_note.setText(text)
        self.method_note.setStyleSheet("" if verdict.compliant else "color: #c03030;")
